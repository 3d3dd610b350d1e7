package e2e

import (
	"strings"
	"testing"
	"time"
)

// A league of four players on the starter kits (two Python, examples/python, two Node,
// examples/node; in each language one listening and one outbound through the relay) and
// four of ours, real binaries under two of our referees: every pair plays once (the
// standings agree with a recount, replay and verify pass), no match names a violation or
// ends abnormally, each kit player logs its rank when the league completes
// (LEAGUE_COMPLETED), and leaves by itself with exit code 0 on LEAGUE_SHUTDOWN.
func TestKitLeague(t *testing.T) {
	py, pyScript := pythonExample(t, "python/tic_tac_toe_player.py")
	node, jsScript := nodeExample(t, "tic_tac_toe_player.js")
	kits := map[string]*proc{}
	run := runLeague(t, leagueOpts{players: 4, referees: 2, seed: 43, extraPlayers: func(t *testing.T, lmURL string) int {
		kits["kpy1"] = startOutbound(t, "kpy1", py, pyScript, "--id", "kpy1", "--league", lmURL, "--port", "0")
		kits["kpy2"] = startOutbound(t, "kpy2", py, pyScript, "--id", "kpy2", "--league", lmURL, "--outbound")
		kits["kjs1"] = startOutbound(t, "kjs1", node, jsScript, "--id", "kjs1", "--league", lmURL, "--port", "0")
		kits["kjs2"] = startOutbound(t, "kjs2", node, jsScript, "--id", "kjs2", "--league", lmURL, "--outbound")
		return len(kits)
	}})
	run.checkLeague(t, 1)

	played := map[string]int{}
	rs := results(t, run)
	for _, r := range rs {
		for _, p := range r.players {
			played[p]++
		}
		if r.termination != "normal" || r.forfeit != "" {
			t.Errorf("match %v ended %q (loser %q, forfeit %q), want normal", r.players, r.termination, r.loser, r.forfeit)
		}
		if vs, _ := r.metadata["violations"].([]any); len(vs) > 0 {
			t.Errorf("match %v has violations %v, want none", r.players, vs)
		}
	}
	if len(rs) != 28 {
		t.Errorf("%d results, want 28 (8 players)", len(rs))
	}
	for id := range kits {
		if played[id] != 7 {
			t.Errorf("%s played %d matches, want 7", id, played[id])
		}
	}

	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d on SIGTERM, want 0", code)
	}
	for id, p := range kits {
		select {
		case <-p.done:
			out := p.out.String()
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s exited %d, want 0; output:\n%s", id, code, out)
			}
			for _, want := range []string{"completed: rank ", "league shut down"} {
				if !strings.Contains(out, want) {
					t.Errorf("%s did not log %q; output:\n%s", id, want, out)
				}
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s did not leave on LEAGUE_SHUTDOWN", id)
		}
	}
	acked := auditShutdownAcks(t, run.audit)
	for id := range kits {
		if !acked["player:"+id] {
			t.Errorf("the audit log has no LEAGUE_SHUTDOWN_ACK from %s", id)
		}
	}
}
