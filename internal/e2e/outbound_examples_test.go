package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// startOutbound starts an agent that listens on nothing (--outbound). Unlike startProc it
// waits for no endpoint: the League Manager's status shows the registration. Its stdout
// and stderr are both in p.out, to be read once it has exited.
func startOutbound(t *testing.T, name, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), protocol.SelfCheckEnv+"=1")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: &out.Buffer, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// The example players of examples/ with --outbound play a whole league through the League
// Manager's relay, beside our player with --outbound and an ordinary one, under our referee
// with --outbound: so every call of the league, the referee's to the examples included,
// goes through the relay. Every pair plays once, no match ends abnormally or names a
// violation, the audit log verifies, and each example logs the relay endpoint it was given,
// acknowledges LEAGUE_SHUTDOWN and exits 0 unasked.
func TestOutboundExamplePlayersPlayALeague(t *testing.T) {
	py, pyScript := pythonExample(t, "python/tic_tac_toe_player.py")
	node, jsScript := nodeExample(t, "tic_tac_toe_player.js")
	logs := t.TempDir()
	examples := map[string]*proc{}
	run := runLeague(t, leagueOpts{players: 1, seed: 37,
		extraReferees: func(t *testing.T, lmURL string) int {
			startOutbound(t, "ref1", filepath.Join(binDir, "referee"), "--id", "ref1", "--outbound", "--league", lmURL,
				"--log-dir", logs, "--max-matches", "2")
			return 1
		},
		extraPlayers: func(t *testing.T, lmURL string) int {
			startOutbound(t, "p02", filepath.Join(binDir, "player"), "--id", "p02", "--outbound", "--league", lmURL,
				"--seed", "39", "--log-dir", logs)
			examples["py1"] = startOutbound(t, "py1", py, pyScript, "--id", "py1", "--league", lmURL, "--outbound")
			examples["js1"] = startOutbound(t, "js1", node, jsScript, "--id", "js1", "--league", lmURL, "--outbound")
			return 1 + len(examples)
		}})
	run.checkLeague(t, 1) // each pair exactly once; league replay and league verify pass

	checkCleanLeague(t, run, 6, 3, "ref1", examples)
	checkLeftOnShutdown(t, run, examples, func(id string) []string {
		return []string{run.lm.base() + "/relay/player/" + id + "/mcp", "league shut down"}
	})
}
