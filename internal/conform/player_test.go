package conform

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/netsec"
)

// Our player passes every required check and every recommended one; inbound, it has the
// outbound check skipped.
func TestPlayerOurs(t *testing.T) {
	logs := t.TempDir()
	rep, _ := conformRun(t, "player", options(t, "tic_tac_toe"), func(url string) *agent {
		return startAgent(t, filepath.Join(binDir, "player"), "--id", "p1", "--addr", "127.0.0.1:0", "--league", url,
			"--strategy", "random", "--seed", "3", "--log-dir", logs)
	})
	wantConforms(t, rep)
	for _, r := range rep.Results() {
		if r.Status != Pass && r.ID != "player.outbound.register" {
			t.Errorf("%s: %s: %s", r.ID, r.Status, r.Reason)
		}
	}
	wantInbound(t, rep, "player")
}

// Our player with --outbound registers without an endpoint, is given one on the tool's
// relay and plays through it: it passes every check, the outbound one included.
func TestPlayerOutbound(t *testing.T) {
	logs := t.TempDir()
	rep, _ := conformRun(t, "player", options(t, "tic_tac_toe"), func(url string) *agent {
		return startAgent(t, filepath.Join(binDir, "player"), "--id", "p1", "--outbound", "--league", url,
			"--strategy", "random", "--seed", "3", "--log-dir", logs)
	})
	wantOutbound(t, rep)
}

// Our player serving HTTPS with a certificate of a private CA passes every check when the
// tool trusts that CA; when it does not, a failed call says so and names --tls-ca.
func TestPlayerOursOverTLS(t *testing.T) {
	certs := t.TempDir()
	if _, err := netsec.MakeCerts(certs, []string{"127.0.0.1"}, 1, false); err != nil {
		t.Fatal(err)
	}
	cert, key := netsec.CertFiles(certs, "127.0.0.1")
	start := func(url string) *agent {
		return startAgent(t, filepath.Join(binDir, "player"), "--id", "p1", "--addr", "127.0.0.1:0", "--league", url,
			"--tls-cert", cert, "--tls-key", key, "--strategy", "random", "--seed", "3", "--log-dir", t.TempDir())
	}
	opt := options(t, "tic_tac_toe")
	var err error
	if opt.ClientTLS, err = netsec.ClientConfig(filepath.Join(certs, netsec.CAFile)); err != nil {
		t.Fatal(err)
	}
	rep, _ := conformRun(t, "player", opt, start)
	for _, r := range rep.Results() {
		if r.Status != Pass && r.ID != "player.outbound.register" {
			t.Errorf("trusting the CA: %s: %s: %s", r.ID, r.Status, r.Reason)
		}
	}
	rep, _ = conformRun(t, "player", options(t, "tic_tac_toe"), start)
	named := false
	for _, r := range rep.Results() {
		named = named || r.Status == Fail && strings.Contains(r.Reason, "certificate signed by unknown authority (signed by a private CA? trust it with --tls-ca)")
	}
	if !named {
		t.Error("not trusting the CA: no failed check names the certificate and --tls-ca")
	}
}

// The stand-in of the Python implementation's player passes every required check,
// answering with no auth_token (as that implementation does) or with its own league
// token (as seed 004 §8.2 reads); it announces no extension, so those are skipped or
// warned about.
func TestPlayerPython(t *testing.T) {
	for _, auth := range []string{"none", "own"} {
		t.Run(auth, func(t *testing.T) {
			rep, _ := conformRun(t, "player", options(t, "tic_tac_toe"), func(url string) *agent {
				return startAgent(t, python(t), filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "python_player.py"),
					"--id", "py1", "--league", url, "--auth", auth)
			})
			wantConforms(t, rep)
			wantStatus(t, rep, map[string]Status{
				"player.features":           Warn,
				"player.credentials.refuse": Skip,
				"player.stale_step.answer":  Warn,
				"player.oversized":          Warn,
				"player.game_over.ack":      Pass,
				"player.shutdown.leaves":    Pass,
			})
		})
	}
}

// The example players of examples/ (Python with the standard library, Node with no
// packages) pass every required check: what the README tells agent authors to copy
// conforms.
func TestPlayerExamples(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is needed for the Node example (make deps installs it): %v", err)
	}
	for name, cmd := range map[string][]string{
		"python": {python(t), filepath.Join(moduleRoot(), "examples", "python", "tic_tac_toe_player.py")},
		"node":   {node, filepath.Join(moduleRoot(), "examples", "node", "tic_tac_toe_player.js")},
	} {
		t.Run(name, func(t *testing.T) {
			rep, _ := conformRun(t, "player", options(t, "tic_tac_toe"), func(url string) *agent {
				return startAgent(t, cmd[0], cmd[1], "--id", "ex1", "--league", url)
			})
			wantConforms(t, rep)
			for _, r := range rep.Results() {
				if r.Status != Pass {
					t.Logf("%s: %s: %s", r.ID, r.Status, r.Reason)
				}
			}
		})
	}
}

// Players broken on purpose fail the check their fault breaks, with its reason.
func TestPlayerBroken(t *testing.T) {
	script := filepath.Join(moduleRoot(), "internal", "conform", "testdata", "broken_player.py")
	for _, tc := range []struct {
		name, check, reason string
		args                []string
	}{
		{"wrong token to the League Manager", "player.league.token", "AGENT_READY_REQUEST carries no auth_token or one the League Manager did not issue", []string{script, "--fault", "wrong-token"}},
		{"illegal move", "player.move.legal", "is refused by the rules: illegal move: cell (0, 0) holds X", []string{script, "--fault", "illegal"}},
		{"no conversation echo", "player.answer.conversation_id", "answer to GAME_INVITATION of conform-m1 has conversation_id", []string{script, "--fault", "no-echo"}},
		{"crash on an unknown message", "player.unknown_message", "CONFORM_UNKNOWN_MESSAGE: the connection closed without an answer", []string{script, "--fault", "crash-unknown"}},
		{"wrong token in answers", "player.answer.auth_token", "carries an auth_token that is neither the player's token nor its match credential",
			[]string{filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "python_player.py"), "--auth", "wrong"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := options(t, "tic_tac_toe")
			opt.Grace = 500 * time.Millisecond
			rep, _ := conformRun(t, "player", opt, func(url string) *agent {
				return startAgent(t, python(t), append(tc.args, "--id", "bad1", "--league", url)...)
			})
			if !rep.Failed() {
				t.Error("a broken player conforms")
			}
			got := result(t, rep, tc.check)
			if got.Status != Fail || !strings.Contains(got.Reason, tc.reason) || got.Hint == "" {
				t.Errorf("%s: got %s %q (hint %q), want fail containing %q with a hint", tc.check, got.Status, got.Reason, got.Hint, tc.reason)
			}
		})
	}
}
