package conform

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Our referee passes every required check and every recommended one; inbound, it has the
// outbound check skipped.
func TestRefereeOurs(t *testing.T) {
	logs := t.TempDir()
	rep, _ := conformRun(t, "referee", options(t, "tic_tac_toe"), func(url string) *agent {
		return startAgent(t, filepath.Join(binDir, "referee"), "--id", "ref1", "--addr", "127.0.0.1:0", "--league", url, "--log-dir", logs)
	})
	wantConforms(t, rep)
	for _, r := range rep.Results() {
		if r.Status != Pass && r.ID != "referee.outbound.register" {
			t.Errorf("%s: %s: %s", r.ID, r.Status, r.Reason)
		}
	}
	wantInbound(t, rep, "referee")
}

// Our referee with --outbound takes its assignments and probes through the tool's relay
// and passes every check, the outbound one included.
func TestRefereeOutbound(t *testing.T) {
	logs := t.TempDir()
	rep, _ := conformRun(t, "referee", options(t, "tic_tac_toe"), func(url string) *agent {
		return startAgent(t, filepath.Join(binDir, "referee"), "--id", "ref1", "--outbound", "--league", url, "--log-dir", logs)
	})
	wantOutbound(t, rep)
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

// Referees broken on purpose fail the check their fault breaks, with its reason.
func TestRefereeBroken(t *testing.T) {
	script := filepath.Join(moduleRoot(), "internal", "conform", "testdata", "broken_referee.py")
	// resultTimeout is short where no report ever comes, so the run does not wait long for
	// it; where the reports come (late only on a loaded machine) it is the options' 10 s.
	for _, tc := range []struct {
		fault, check, reason string
		resultTimeout        time.Duration
	}{
		{"wrong-outcome", "referee.outcome", "the report of conform-m1 says conform-p1 loss, conform-p2 win, the rules say conform-p1 win, conform-p2 loss", 0},
		{"no-report", "referee.result", "no MATCH_RESULT_REPORT for conform-m1 within 1.5s of its end", 1500 * time.Millisecond},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			opt := options(t, "tic_tac_toe")
			if tc.resultTimeout > 0 {
				opt.ResultTimeout = tc.resultTimeout
			}
			opt.Grace = 200 * time.Millisecond
			rep, _ := conformRun(t, "referee", opt, func(url string) *agent {
				return startAgent(t, python(t), script, "--fault", tc.fault, "--id", "badref", "--league", url)
			})
			if !rep.Failed() {
				t.Error("a broken referee conforms")
			}
			got := result(t, rep, tc.check)
			if got.Status != Fail || !strings.Contains(got.Reason, tc.reason) || got.Hint == "" {
				t.Errorf("%s: got %s %q (hint %q), want fail containing %q with a hint", tc.check, got.Status, got.Reason, got.Hint, tc.reason)
			}
		})
	}
}
