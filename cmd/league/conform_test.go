package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `league conform player` exits 0 for a conforming player and 1 for a broken one;
// --json writes the report as one document.
func TestConformExitCodes(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the stand-in players (make deps installs it): %v", err)
	}
	root, _ := filepath.Abs("../..")
	for _, tc := range []struct {
		name   string
		agent  []string
		code   int
		failed string
	}{
		{"python stand-in conforms", []string{filepath.Join(root, "internal", "e2e", "testdata", "python_player.py")}, 0, ""},
		{"illegal move", []string{filepath.Join(root, "internal", "conform", "testdata", "broken_player.py"), "--fault", "illegal"}, 1, "player.move.legal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout := conformWith(t, python, tc.agent)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d; report:\n%s", code, tc.code, stdout)
			}
			var doc struct {
				Subject  string `json:"subject"`
				Conforms bool   `json:"conforms"`
				Results  []struct {
					ID     string `json:"id"`
					Level  string `json:"level"`
					Status string `json:"status"`
					Reason string `json:"reason"`
					Hint   string `json:"hint"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatalf("--json output is not one JSON document: %v\n%s", err, stdout)
			}
			if doc.Subject != "player" || doc.Conforms != (tc.code == 0) || len(doc.Results) == 0 {
				t.Errorf("report: subject %q, conforms %v, %d results", doc.Subject, doc.Conforms, len(doc.Results))
			}
			for _, r := range doc.Results {
				isFailed := r.Status == "fail"
				if isFailed != (r.ID == tc.failed) {
					t.Errorf("%s: %s (%s)", r.ID, r.Status, r.Reason)
				}
				if isFailed && (r.Level != "required" || r.Hint == "") {
					t.Errorf("%s fails as %s with hint %q", r.ID, r.Level, r.Hint)
				}
			}
		})
	}
}

// conformWith runs `league conform player --json`, starts agent once the tool says
// where it listens, and returns the exit code and stdout. --grace is the tool's default
// (5 s), not 1 s: every agent here leaves at once, and the grace only bounds how long a
// Python process on a loaded machine may take to exit after LEAGUE_SHUTDOWN.
func conformWith(t *testing.T, python string, agent []string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, leagueBin, "conform", "player", "--listen", "127.0.0.1:0", "--json",
		"--wait", "20s", "--move-timeout", "5s", "--grace", "5s")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	const marker = "start the player with --league "
	i := strings.Index(line, marker)
	if err != nil || i < 0 {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("league conform did not say where it listens: %q (%v)", line, err)
	}
	url := strings.Fields(line[i+len(marker):])[0]
	ag := exec.CommandContext(ctx, python, append(agent, "--id", "cli1", "--league", url)...)
	if err := ag.Start(); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r) // until league conform exits
	err = cmd.Wait()
	// A broken agent may still run: it is stopped with the run.
	_ = ag.Process.Kill()
	_ = ag.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String()
	case errors.As(err, &exit):
		if exit.ExitCode() != 1 {
			t.Logf("stderr:\n%s", rest)
		}
		return exit.ExitCode(), stdout.String()
	}
	t.Fatalf("league conform: %v", err)
	return 0, ""
}

// A subject that does not exist, or a game the tool cannot play, is a usage error: no
// report is printed, so nothing says CONFORMS.
func TestConformUsage(t *testing.T) {
	for _, args := range [][]string{{"conform"}, {"conform", "nobody"}, {"conform", "player", "--grace", "0s"}, {"conform", "referee", "--game", "nim"}} {
		code, stdout, stderr := runLeague(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, "league conform") {
			t.Errorf("league %v: exit %d, stderr %q; want 2 and a usage message", args, code, stderr)
		}
		if stdout != "" {
			t.Errorf("league %v printed a report on a bad command line: %q", args, stdout)
		}
	}
}

// The line that says where the tool listens tells how to start an agent, outbound ones
// too; the report lists the outbound check.
func TestConformReadyLine(t *testing.T) {
	code, stdout, stderr := runLeague(t, nil, "conform", "referee", "--listen", "127.0.0.1:0", "--wait", "1s")
	for _, want := range []string{"start the referee with --league http://127.0.0.1:", "registers outbound, with no endpoint_url (ours: add --outbound)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
	if code != 1 || !strings.Contains(stdout, "skip  recommended  referee.outbound.register: not reached: the referee never registered") {
		t.Errorf("exit %d, report:\n%s", code, stdout)
	}
}
