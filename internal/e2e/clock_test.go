package e2e

import (
	"testing"
)

// A league under a 2+0.1 clock, real binaries: every REQUEST_MOVE carries both clocks,
// every move record the clock left and the network credit; a player that thinks 1.2 s a
// move (2 s, less 1.1, leaves 0.9 s for its second move, which every game reaches) loses
// its matches on time, while the fast players' matches end by play; verify and replay pass.
func TestLeagueUnderAClock(t *testing.T) {
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["time_control"] = map[string]any{"clock": "2+0.1"}
	})
	run := runLeague(t, leagueOpts{players: 4, referees: 2, seed: 21, config: cfg,
		playerArgs: map[string][]string{"p01": {"--think", "1200ms"}}})
	run.checkLeague(t, 1)
	for _, r := range results(t, run) {
		moves, _ := r.metadata["moves"].([]any)
		for _, m := range moves {
			mv := m.(map[string]any)
			if _, ok := mv["clock_ms"]; !ok {
				t.Errorf("match %v: move %v has no clock_ms", r.players, mv)
			}
			if _, ok := mv["network_ms"]; !ok {
				t.Errorf("match %v: move %v has no network_ms", r.players, mv)
			}
		}
		slow := r.players[0] == "p01" || r.players[1] == "p01"
		switch {
		case slow && (r.termination != "timeout" || r.loser != "p01"):
			t.Errorf("match %v: %s, loser %q; want p01 lost on time", r.players, r.termination, r.loser)
		case !slow && r.termination != "normal":
			t.Errorf("match %v of fast players ended %s", r.players, r.termination)
		}
	}
}
