package conform

import (
	"path/filepath"
	"testing"
)

// Our player passes every required check and every recommended one.
func TestPlayerOurs(t *testing.T) {
	logs := t.TempDir()
	rep, _ := conformRun(t, "player", options(t, "tic_tac_toe"), func(url string) *agent {
		return startAgent(t, filepath.Join(binDir, "player"), "--id", "p1", "--addr", "127.0.0.1:0", "--league", url,
			"--strategy", "random", "--seed", "3", "--log-dir", logs)
	})
	wantConforms(t, rep)
	for _, r := range rep.Results() {
		if r.Status != Pass {
			t.Errorf("%s: %s: %s", r.ID, r.Status, r.Reason)
		}
	}
}

// The stand-in of the Python implementation's player passes every required check; it
// announces no extension, so those are skipped or warned about.
func TestPlayerPython(t *testing.T) {
	rep, _ := conformRun(t, "player", options(t, "tic_tac_toe"), func(url string) *agent {
		return startAgent(t, python(t), filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "python_player.py"),
			"--id", "py1", "--league", url)
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
}
