package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Python kit's examples (examples/python/agentleague.py and the players built on it)
// pass `league conform player` for their game with every required check passed, not
// skipped, both listening on a port (--port 0) and outbound through the tool's relay (no
// port, the kit's default); each acknowledges LEAGUE_SHUTDOWN and exits 0 unasked.
func TestKitPythonExamplesConform(t *testing.T) {
	py := interpreter(t, "python3")
	for _, tc := range []struct{ game, script string }{
		{"tic_tac_toe", "tic_tac_toe_player.py"},
		{"connect_four", "connect_four_player.py"},
		{"chess", "chess_player.py"},
	} {
		for _, outbound := range []bool{false, true} {
			mode := "inbound"
			if outbound {
				mode = "outbound"
			}
			t.Run(tc.game+"/"+mode, func(t *testing.T) {
				t.Parallel()
				args := []string{filepath.Join(moduleRoot(), "examples", "python", tc.script), "--port", "0"}
				if outbound {
					args = append(args[:1], "--outbound")
				}
				code, rep, out, agCode := conformAgent(t, tc.game, "kit1", py, args...)
				checkKitConforms(t, outbound, code, rep, out, agCode, "kit1: match conform-m1: ", "league shut down")
			})
		}
	}
}

// A kit player whose strategy misbehaves once, in a short real league beside two of ours:
// too slow, raising, or returning an illegal move. The kit logs the cause; for a slow or
// raising strategy it answers without a move (a JSON-RPC error), which the referee counts
// as a miss: a warning and the request again, then the match goes on; an illegal move is
// sent as given and loses the match by the referee's rules. Every kit player keeps
// serving, plays all its matches, gets LEAGUE_COMPLETED, and exits 0 on LEAGUE_SHUTDOWN.
func TestKitPythonBadStrategy(t *testing.T) {
	py := interpreter(t, "python3")
	script := filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "kit_bad_player.py")
	config := fastConfig(t, func(_, policy map[string]any) {
		ml := policy["timeouts"].(map[string]any)["match_level"].(map[string]any)
		ml["game_join_ack"], ml["move_response"] = 5000, 3000
	})
	kits := map[string]*proc{}
	faults := map[string]string{"kit-slow": "slow", "kit-raise": "raise", "kit-illegal": "illegal"}
	run := runLeague(t, leagueOpts{players: 2, referees: 2, seed: 41, config: config,
		extraPlayers: func(t *testing.T, lmURL string) int {
			for id, fault := range faults {
				args := []string{script, "--fault", fault, "--id", id, "--league", lmURL}
				if fault != "slow" { // the slow one plays outbound, the others listen
					args = append(args, "--port", "0")
				}
				// startOutbound keeps stdout, where the kit logs; the League Manager's status
				// shows the registration, inbound or not.
				kits[id] = startOutbound(t, id, py, args...)
			}
			return len(kits)
		}})
	run.checkLeague(t, 1)

	played := map[string]int{}
	violations := map[string][]map[string]any{}
	rs := results(t, run)
	for _, r := range rs {
		for _, p := range r.players {
			played[p]++
		}
		if r.forfeit != "" {
			t.Errorf("match %v was forfeited (%s)", r.players, r.forfeit)
		}
		vs, _ := r.metadata["violations"].([]any)
		for _, v := range vs {
			m, _ := v.(map[string]any)
			p, _ := m["player"].(string)
			violations[p] = append(violations[p], m)
		}
		if r.loser == "kit-illegal" && r.termination == "illegal_move" {
			played["illegal losses"]++
		}
	}
	if len(rs) != 10 {
		t.Errorf("%d results, want 10 (5 players)", len(rs))
	}
	for id := range kits {
		if played[id] != 4 {
			t.Errorf("%s played %d matches, want 4", id, played[id])
		}
	}
	// The referee's rules decide: one illegal move, one lost match; a miss, one warning.
	if played["illegal losses"] != 1 {
		t.Errorf("kit-illegal lost %d matches by illegal_move, want 1; violations %v", played["illegal losses"], violations["kit-illegal"])
	}
	if vs := violations["kit-illegal"]; len(vs) != 1 || vs[0]["kind"] != "invalid_move" || vs[0]["action"] != "technical_loss" {
		t.Errorf("kit-illegal's violations %v, want one invalid_move (technical_loss)", vs)
	}
	for _, id := range []string{"kit-slow", "kit-raise"} {
		if vs := violations[id]; len(vs) != 1 || vs[0]["kind"] != "refused" || vs[0]["action"] != "warning" {
			t.Errorf("%s's violations %v, want one refused move (warning)", id, vs)
		}
	}

	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d on SIGTERM, want 0", code)
	}
	logs := map[string]string{
		"kit-slow":    "choose_move gave no move within",
		"kit-raise":   "choose_move raised ValueError: deliberately broken strategy",
		"kit-illegal": `{"row": 7, "col": 7} is not a legal move; sending it as given`,
	}
	for id, p := range kits {
		select {
		case <-p.done:
			out := p.out.String()
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s exited %d, want 0; output:\n%s", id, code, out)
			}
			for _, want := range []string{logs[id], "league shut down", id + ": league ", "completed: rank "} {
				if !strings.Contains(out, want) {
					t.Errorf("%s's log lacks %q; output:\n%s", id, want, out)
				}
			}
			if id == "kit-illegal" && !strings.Contains(out, `loss against`) {
				t.Errorf("kit-illegal's log has no lost match; output:\n%s", out)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not leave on LEAGUE_SHUTDOWN", id)
		}
	}
}
