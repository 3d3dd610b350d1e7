package e2e

import (
	"fmt"
	"testing"
)

func TestThreePlayersTwoReferees(t *testing.T) {
	run := runLeague(t, leagueOpts{players: 3, referees: 2, seed: 3})
	run.checkLeague(t, 1)
	for _, p := range append(run.players, run.refs...) {
		if code := p.stop(t); code != 0 {
			t.Errorf("%s exited %d on SIGTERM, want 0", p.name, code)
		}
	}
	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d on SIGTERM, want 0", code)
	}
}

func TestTenPlayersFiveRefereesEveryGame(t *testing.T) {
	for _, tc := range []struct{ game, strategy string }{
		{"tic_tac_toe", "random"},
		{"rock_paper_scissors", "adaptive"},
		{"even_odd", "seeded"},
	} {
		t.Run(tc.game, func(t *testing.T) {
			run := runLeague(t, leagueOpts{players: 10, referees: 5, game: tc.game, strategy: tc.strategy, seed: 10})
			run.checkLeague(t, 1)
			t.Logf("%s: 45 matches in %v of league time", tc.game, run.elapsed)
		})
	}
}

func TestOddPlayerCountGivesByes(t *testing.T) {
	run := runLeague(t, leagueOpts{players: 5, referees: 2, seed: 5})
	run.checkLeague(t, 1)
}

func TestSameSeedSameStandings(t *testing.T) {
	a := runLeague(t, leagueOpts{players: 6, referees: 3, seed: 77})
	b := runLeague(t, leagueOpts{players: 6, referees: 3, seed: 77})
	if got, want := fmt.Sprint(b.standings(t)), fmt.Sprint(a.standings(t)); got != want {
		t.Errorf("same seed, different standings:\n%s\n%s", got, want)
	}
}
