package conform

import (
	"path/filepath"
	"testing"
	"time"
)

// Our referee passes every required check and every recommended one.
func TestRefereeOurs(t *testing.T) {
	logs := t.TempDir()
	rep, _ := conformRun(t, "referee", options(t, "tic_tac_toe"), func(url string) *agent {
		return startAgent(t, filepath.Join(binDir, "referee"), "--id", "ref1", "--addr", "127.0.0.1:0", "--league", url, "--log-dir", logs)
	})
	wantConforms(t, rep)
	for _, r := range rep.Results() {
		if r.Status != Pass {
			t.Errorf("%s: %s: %s", r.ID, r.Status, r.Reason)
		}
	}
}

// The seed-only referee, a stand-in of the Python implementation's, passes every
// required check; it implements no extension and does not leave on LEAGUE_SHUTDOWN.
func TestRefereeSeed(t *testing.T) {
	opt := options(t, "tic_tac_toe")
	opt.Grace = 500 * time.Millisecond
	rep, _ := conformRun(t, "referee", opt, func(url string) *agent {
		return startAgent(t, python(t), filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "seed_referee.py"),
			"--id", "seedref", "--league", url)
	})
	wantConforms(t, rep)
	wantStatus(t, rep, map[string]Status{
		"referee.features":                      Warn,
		"referee.credentials":                   Skip,
		"referee.player_answer.conversation_id": Warn,
		"referee.assignment.auth_token":         Warn,
		"referee.result.retry":                  Pass,
		"referee.shutdown":                      Warn,
		"referee.shutdown.leaves":               Warn,
	})
}
