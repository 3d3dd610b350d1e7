package e2e

import "testing"

func TestConnectFourAndChessLeagues(t *testing.T) {
	for _, tc := range []struct {
		game, strategy string
		players        int
	}{
		{"connect_four", "alphabeta", 5},
		{"chess", "alphabeta", 4},
		{"chess", "random", 3},
	} {
		t.Run(tc.game+"_"+tc.strategy, func(t *testing.T) {
			run := runLeague(t, leagueOpts{players: tc.players, referees: 2, game: tc.game, strategy: tc.strategy, seed: 31})
			run.checkLeague(t, 1)
			t.Logf("%s with %s: %d players in %v", tc.game, tc.strategy, tc.players, run.elapsed)
		})
	}
}
