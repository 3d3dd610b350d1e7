package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Node kit's example passes `league conform player` through the real binary, listening
// (--port 0) and outbound (--outbound): every required check passes, and so do the
// recommended checks the kit is written for (it announces match_credentials, checks and
// shows credentials, confirms an uncredentialed invitation with QUERY_MATCH, acknowledges
// GAME_OVER and LEAGUE_SHUTDOWN and leaves, registers outbound without an endpoint). The
// example exits 0 by itself.
func TestKitNodeExampleConforms(t *testing.T) {
	node, script := nodeExample(t, "tic_tac_toe_player.js")
	for _, tc := range []struct {
		name     string
		args     []string
		outbound bool
	}{
		{"inbound", []string{"--port", "0"}, false},
		{"outbound", []string{"--outbound"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, rep, out, agCode := conformAgent(t, "tic_tac_toe", "kit1", node, append([]string{script}, tc.args...)...)
			checkKitConforms(t, tc.outbound, code, rep, out, agCode, "kit1: match conform-m1 ", "kit1: league shut down")
		})
	}
}

// A Node kit player whose strategy is too slow, then throws, then (next match) returns an
// illegal move (testdata/kit_bad_node.js) plays a league with two of our players under a
// referee with a 2 s move deadline. The kit logs each cause and the referee's words,
// answers a missed move with an error (the referee's ladder: a warning, then a forced
// move) and the illegal move as given (the referee's rules: a loss), keeps serving (every
// match ends, and the match after is played), and the player exits 0 on LEAGUE_SHUTDOWN.
func TestKitNodeBadStrategy(t *testing.T) {
	node := interpreter(t, "node")
	script := filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "kit_bad_node.js")
	cfg := fastConfig(t, func(_, policy map[string]any) {
		// Three violations must not suspend the player: the test is about the kit.
		policy["timeouts"].(map[string]any)["enforcement"].(map[string]any)["suspend_after_violations"] = 10
	})
	var bad *proc
	run := runLeague(t, leagueOpts{players: 2, referees: 1, seed: 41, config: cfg, extraPlayers: func(t *testing.T, lmURL string) int {
		bad = startOutbound(t, "kb1", node, script, "--id", "kb1", "--league", lmURL, "--outbound")
		return 1
	}})
	run.checkLeague(t, 1)

	var slowMatch, illegalMatch bool
	for _, r := range results(t, run) {
		var kinds []string
		vs, _ := r.metadata["violations"].([]any)
		for _, v := range vs {
			m, _ := v.(map[string]any)
			if m["player"] != "kb1" {
				t.Errorf("match %v: violation %v by another player than kb1", r.players, m)
				continue
			}
			kinds = append(kinds, m["kind"].(string)+"/"+m["action"].(string))
		}
		switch {
		case r.players[0] != "kb1" && r.players[1] != "kb1":
			if r.termination != "normal" {
				t.Errorf("match %v ended %q, want normal", r.players, r.termination)
			}
		case r.termination == "illegal_move":
			illegalMatch = true
			if r.loser != "kb1" || r.outcome["kb1"] != "loss" || !strings.Contains(strings.Join(kinds, " "), "invalid_move/technical_loss") {
				t.Errorf("match %v: loser %q, outcome %v, violations %v: want kb1 to lose for its invalid move", r.players, r.loser, r.outcome, kinds)
			}
		default:
			// The slow move draws a warning, the exception a forced move; then it plays on.
			slowMatch = true
			if r.termination != "normal" || len(kinds) != 2 || !strings.HasSuffix(kinds[0], "/warning") || !strings.HasSuffix(kinds[1], "/forced_move") {
				t.Errorf("match %v ended %q with violations %v, want normal after a warning and a forced move", r.players, r.termination, kinds)
			}
		}
	}
	if !slowMatch || !illegalMatch {
		t.Errorf("slow match %v, illegal match %v: want both", slowMatch, illegalMatch)
	}

	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d, want 0", code)
	}
	select {
	case <-bad.done:
	case <-time.After(15 * time.Second):
		t.Fatal("the kit player did not leave on LEAGUE_SHUTDOWN")
	}
	out := bad.out.String()
	if code := bad.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the kit player exited %d, want 0", code)
	}
	for _, want := range []string{
		"the strategy is too slow: no move within",                  // the cause, logged
		"the strategy failed: Error: deliberate failure",            // the exception, logged
		"warning from the referee: ",                                // the referee's words after the miss
		"FORCED (refused: the first legal move was played for you)", // last_result of the forced move
		"is not a legal move; sending it as given",                  // the illegal move, sent
		"loss (illegal_move)",                                       // the referee's verdict in the match line
		"the referee refused your move",
		"league shut down",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the kit player's log does not say %q", want)
		}
	}
	if t.Failed() {
		t.Logf("kit player output:\n%s", out)
	}
}
