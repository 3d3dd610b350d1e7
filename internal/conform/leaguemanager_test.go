package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/league/server"
	"github.com/rs/zerolog"
)

const testAdminToken = "conform-admin-token-for-tests"

// lmOptions are the options of an in-process run against url.
func lmOptions(t *testing.T, url string) Options {
	return Options{
		Listen: "127.0.0.1:0", URL: url, Game: "tic_tac_toe", Wait: 30 * time.Second, MoveTimeout: 5 * time.Second,
		Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel),
	}
}

// runLM runs the league-manager subject in process and returns its report.
func runLM(t *testing.T, opt Options) *Report {
	t.Helper()
	rep := NewReport("league-manager", opt.Game)
	if err := runLeagueManager(context.Background(), opt, rep); err != nil {
		t.Fatalf("run: %v", err)
	}
	var text bytes.Buffer
	_ = rep.WriteText(&text)
	t.Logf("report:\n%s", text.String())
	return rep
}

// statuses maps each check id to its status; every check must be reported once.
func statuses(t *testing.T, rep *Report) map[string]Result {
	t.Helper()
	got := map[string]Result{}
	for _, r := range rep.Results() {
		if _, dup := got[r.ID]; dup {
			t.Errorf("check %s reported twice", r.ID)
		}
		got[r.ID] = r
	}
	for _, c := range lmChecks {
		if _, ok := got[c.id]; !ok {
			t.Errorf("check %s missing from the report", c.id)
		}
	}
	return got
}

// failedRequired lists the required checks with status fail, sorted.
func failedRequired(rep *Report) []string {
	var out []string
	for _, r := range rep.Results() {
		if r.Level == Required && r.Status == Fail {
			out = append(out, r.ID)
		}
	}
	slices.Sort(out)
	return out
}

// configWithShortResultReport copies config/ with result_report at 2 s, so a held
// result draws a RESULT_REMINDER soon. Not shorter: the League Manager fails a match
// whose result is still missing after max_attempts reminders, one result_report apart,
// and with 300 ms a loaded machine could take that long (1.2 s) to send a report.
func configWithShortResultReport(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"league.yaml", "game_registry.yaml", "timeout_policy.yaml"} {
		b, err := os.ReadFile(filepath.Join(moduleRoot(), "config", name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "timeout_policy.yaml" {
			s := strings.Replace(string(b), "result_report: 60000", "result_report: 2000", 1)
			if s == string(b) {
				t.Fatal("config/timeout_policy.yaml has no result_report: 60000 to shorten")
			}
			b = []byte(s)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "league.yaml")
}

// startOurLM starts our League Manager in-process (league/server, what `league serve`
// runs) on 127.0.0.1:0 with the configuration and overrides given; adminToken "" keeps
// one in admin.token beside the database. It is stopped (its context ended) when the
// test ends.
func startOurLM(t *testing.T, config, adminToken string, ov server.Overrides) *subjectProc {
	t.Helper()
	dir := t.TempDir()
	p := &subjectProc{stderr: &lockedBuffer{}}
	ov.GameType = "tic_tac_toe"
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Start(ctx, server.Options{
		ConfigPath: config, Addr: "127.0.0.1:0", DBPath: filepath.Join(dir, "league.db"), AuditPath: filepath.Join(dir, "audit.jsonl"),
		LogPath: filepath.Join(dir, "league_manager.log"), Overrides: ov, Drain: league.DefaultDrain, AdminToken: adminToken, Stderr: p.stderr,
	})
	if err != nil {
		cancel()
		t.Fatalf("start our League Manager: %v\nstderr:\n%s", err, p.stderr.String())
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-srv.Done():
			if err := srv.Wait(); err != nil {
				t.Errorf("our League Manager ended with %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("our League Manager did not stop; stderr:\n%s", p.stderr.String())
		}
	})
	p.url = srv.URL()
	return p
}

// Our League Manager passes every check, the extensions included, when the tool may start
// the league and wait for a reminder.
func TestLeagueManagerOursPassesEveryCheck(t *testing.T) {
	t.Parallel()
	lm := startOurLM(t, configWithShortResultReport(t), testAdminToken, server.Overrides{WindowSeconds: new(3600.0)})
	opt := lmOptions(t, lm.url)
	opt.AdminToken, opt.ReminderWait = testAdminToken, 20*time.Second
	rep := runLM(t, opt)
	for id, r := range statuses(t, rep) {
		if r.Status != Pass {
			t.Errorf("%s: %s %s, want pass", id, r.Status, r.Reason)
		}
	}
	if t.Failed() {
		t.Logf("League Manager stderr:\n%s", lm.stderr.String())
	}
}

// Without an admin token the tool waits for the League Manager to close registration
// itself: here at once, when the fourth player makes min_players.
func TestLeagueManagerOursStartsByItself(t *testing.T) {
	t.Parallel()
	lm := startOurLM(t, filepath.Join(moduleRoot(), "config", "league.yaml"), "", server.Overrides{WindowSeconds: new(0.0), MinPlayers: 4})
	rep := runLM(t, lmOptions(t, lm.url))
	got := statuses(t, rep)
	if rep.Failed() {
		t.Errorf("required checks failed: %v", failedRequired(rep))
	}
	if r := got[ckStart]; r.Status != Pass || !strings.Contains(r.Reason, "closed registration itself") {
		t.Errorf("%s: %s %q", ckStart, r.Status, r.Reason)
	}
	if r := got[ckReminder]; r.Status != Skip || !strings.Contains(r.Reason, "--reminder-wait is 0") {
		t.Errorf("%s: %s %q, want a skip naming --reminder-wait", ckReminder, r.Status, r.Reason)
	}
}

// The stand-in for the Python implementation passes every required check; what it lacks
// of our extensions warns or is skipped.
func TestLeagueManagerSeedStandIn(t *testing.T) {
	t.Parallel()
	lm := startPythonLM(t, seedStandIn())
	rep := runLM(t, lmOptions(t, lm.url))
	got := statuses(t, rep)
	if rep.Failed() {
		t.Errorf("required checks failed: %v", failedRequired(rep))
	}
	want := map[string]Status{
		ckParseCode: Warn, ckOversized: Warn, ckFeatures: Warn, ckCompletion: Warn,
		ckSigned: Skip, ckCredentials: Skip, ckQueryMatch: Skip, ckHeartbeat: Skip, ckReminder: Skip,
		ckResultOwner: Pass, ckResultDup: Pass, ckStandings: Pass, ckRespected: Pass,
	}
	for id, st := range want {
		if got[id].Status != st {
			t.Errorf("%s: %s %q, want %s", id, got[id].Status, got[id].Reason, st)
		}
	}
	if t.Failed() {
		t.Logf("stand-in stderr:\n%s", lm.stderr.String())
	}
}

// Each broken League Manager fails exactly the required checks its defect breaks, for
// the right reason.
func TestLeagueManagerBroken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		script string
		fails  []string
		// check and reason: the failure that names the defect.
		check, reason string
	}{
		{"lm_no_echo.py", []string{ckConversation}, ckConversation, "the request's was"},
		{"lm_any_token.py", []string{ckBadAuth, ckResultToken}, ckBadAuth, "unknown token: accepted"},
		{"lm_crash_unknown.py", []string{ckBadType, ckSurvived}, ckBadType, "CONFORM_NO_SUCH_MESSAGE: no answer"},
		{"lm_bad_standings.py", []string{ckStandings}, ckStandings, "the acknowledged results give"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			t.Parallel()
			lm := startPythonLM(t, filepath.Join("testdata", tc.script))
			opt := lmOptions(t, lm.url)
			opt.Wait = 10 * time.Second
			rep := runLM(t, opt)
			got := statuses(t, rep)
			if !rep.Failed() {
				t.Error("the run conforms; want it not to")
			}
			want := slices.Clone(tc.fails)
			slices.Sort(want)
			if f := failedRequired(rep); !slices.Equal(f, want) {
				t.Errorf("failed required checks %v, want %v", f, want)
			}
			if r := got[tc.check]; !strings.Contains(r.Reason, tc.reason) || r.Hint == "" {
				t.Errorf("%s: reason %q, hint %q; want the reason to say %q, and a hint", tc.check, r.Reason, r.Hint, tc.reason)
			}
		})
	}
}

// After the League Manager crashed, what was not reached is skipped with the reason.
func TestLeagueManagerCrashSkipsTheRest(t *testing.T) {
	t.Parallel()
	lm := startPythonLM(t, filepath.Join("testdata", "lm_crash_unknown.py"))
	opt := lmOptions(t, lm.url)
	opt.Wait = 10 * time.Second
	got := statuses(t, runLM(t, opt))
	for _, id := range []string{ckBadEnvelope, ckPlayerReg, ckStart, ckStandings} {
		if r := got[id]; r.Status != Skip || !strings.Contains(r.Reason, "stopped answering after an unknown message type") {
			t.Errorf("%s: %s %q, want a skip saying the League Manager stopped answering", id, r.Status, r.Reason)
		}
	}
}

// Whatever a League Manager answers, the tool reports it and ends: no panic, no hang.
func TestLeagueManagerGarbageAnswers(t *testing.T) {
	t.Parallel()
	for name, handler := range map[string]http.HandlerFunc{
		"result that is no message": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","result":{"envelope":"nope"},"id":7}`))
		},
		"html error": func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "<html>oops</html>", http.StatusInternalServerError)
		},
		"error code not a number": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":"x","message":[]},"id":null}`))
		},
		"closed connection": func(w http.ResponseWriter, _ *http.Request) {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = c.Close()
			}
		},
		"endless body": func(w http.ResponseWriter, _ *http.Request) {
			chunk := bytes.Repeat([]byte("["), 1<<16)
			for range (maxAnswerBytes / len(chunk)) + 2 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(handler)
			defer srv.Close()
			rep := runLM(t, lmOptions(t, srv.URL+"/mcp"))
			got := statuses(t, rep)
			if !rep.Failed() {
				t.Error("a League Manager answering garbage conforms")
			}
			if r := got[ckOrder]; r.Status != Fail {
				t.Errorf("%s: %s %q, want fail", ckOrder, r.Status, r.Reason)
			}
		})
	}
}

// A URL where nothing listens fails the first check with the connection error and skips
// the others.
func TestLeagueManagerNotRunning(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	got := statuses(t, runLM(t, lmOptions(t, "http://"+addr+"/mcp")))
	if r := got[ckOrder]; r.Status != Fail || !strings.Contains(r.Reason, "connection refused") {
		t.Errorf("%s: %s %q", ckOrder, r.Status, r.Reason)
	}
	if r := got[ckStandings]; r.Status != Skip || !strings.Contains(r.Reason, "does not answer") {
		t.Errorf("%s: %s %q", ckStandings, r.Status, r.Reason)
	}
}

// The real command line: exit 0 and a conforming JSON report for the stand-in, exit 1 and
// the failed check for a broken League Manager.
func TestConformCommandLeagueManager(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		script   string
		code     int
		conforms bool
		failed   string
	}{
		{seedStandIn(), 0, true, ""},
		{filepath.Join("testdata", "lm_no_echo.py"), 1, false, ckConversation},
	} {
		t.Run(filepath.Base(tc.script), func(t *testing.T) {
			t.Parallel()
			lm := startPythonLM(t, tc.script)
			cmd := exec.Command(filepath.Join(binDir, "league"), "conform", "league-manager", "--url", lm.url,
				"--listen", "127.0.0.1:0", "--wait", "20s", "--json")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr.String())
			}
			var doc struct {
				Subject  string   `json:"subject"`
				Conforms bool     `json:"conforms"`
				Results  []Result `json:"results"`
			}
			if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
				t.Fatalf("stdout is not the JSON report: %v\n%s", err, stdout.String())
			}
			if doc.Subject != "league-manager" || doc.Conforms != tc.conforms || len(doc.Results) != len(lmChecks) {
				t.Errorf("report: subject %q, conforms %v, %d results; want league-manager, %v, %d",
					doc.Subject, doc.Conforms, len(doc.Results), tc.conforms, len(lmChecks))
			}
			if tc.failed != "" && !slices.ContainsFunc(doc.Results, func(r Result) bool { return r.ID == tc.failed && r.Status == Fail }) {
				t.Errorf("%s did not fail:\n%s", tc.failed, stdout.String())
			}
		})
	}
}
