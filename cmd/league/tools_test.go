package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// An export is written whole or not at all: a failed write keeps the old file and
// leaves no temporary file behind.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "results.csv")
	if err := writeFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "first\n"); return err }); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := writeFileAtomic(path, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half of the sec")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("failed write returned %v, want %v", err, boom)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "first\n" {
		t.Errorf("after a failed write the file holds %q (%v), want the first export", data, err)
	}
	if st, err := os.Stat(path); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o644 {
		t.Errorf("export mode %v, want 0644", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the export", len(entries))
	}
	if err := writeFileAtomic(filepath.Join(dir, "missing", "x.csv"), func(io.Writer) error { return nil }); err == nil {
		t.Error("export into a missing directory succeeded")
	}
}

// playedLeague runs `league serve` in dir through a league of one match: a referee
// (this test) and two players register, the league starts, the referee reports a result
// without moves, and the League Manager stops on SIGINT. It returns the audit log's and
// the database's paths.
func playedLeague(t *testing.T, dir string) (auditPath, dbPath string) {
	t.Helper()
	lm := startServe(t, dir)
	w := newWire(t, lm)
	ref := newFakeRef(t, w.v, "ref1")
	var reg struct {
		AuthToken string `json:"auth_token"`
	}
	if err := w.ok(regReferee(t, "ref1", ref.url())).Decode(&reg); err != nil || reg.AuthToken == "" {
		t.Fatalf("referee registration without a token: %v", err)
	}
	w.ok(regPlayer(t, "p01"))
	w.ok(regPlayer(t, "p02"))
	w.ok(adminStartMsg(t, e2eAdminToken))
	lm.waitStatus(t, "the match in progress", func(s map[string]any) bool { return matchesIn(s, "IN_PROGRESS") == 1 })
	ref.mu.Lock()
	assignment := ref.got[0]
	ref.mu.Unlock()
	var a struct {
		MatchID  string    `json:"match_id"`
		RoundID  string    `json:"round_id"`
		GameType string    `json:"game_type"`
		Players  [2]string `json:"players"`
	}
	if err := assignment.Decode(&a); err != nil {
		t.Fatal(err)
	}
	win, loss := a.Players[0], a.Players[1]
	report := msgOf(t, protocol.MatchResultReport, protocol.RefereeSender("ref1"), map[string]any{
		"game_type": a.GameType, "players": a.Players, "match_id": a.MatchID, "round_id": a.RoundID,
		"outcome": map[string]string{win: "win", loss: "loss"}, "points": map[string]int{win: 3, loss: 0},
	})
	e := &report.Envelope
	e.AuthToken, e.MatchID, e.RoundID, e.GameType = reg.AuthToken, a.MatchID, a.RoundID, a.GameType
	if ack := w.ok(report); ack.Envelope.MessageType != protocol.MatchResultAck {
		t.Fatalf("result answered %s", ack.Envelope.MessageType)
	}
	lm.waitStatus(t, "the match completed", func(s map[string]any) bool { return matchesIn(s, "COMPLETED") == 1 })
	if err := lm.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	lm.exited(time.Now())
	return filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "league.db")
}

// logLines returns the lines of the log at path, each with its newline.
func logLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(data, []byte("\n"))[:bytes.Count(data, []byte("\n"))]
}

// lineOf returns the 1-based number of the first line holding s.
func lineOf(t *testing.T, lines [][]byte, s string) int {
	t.Helper()
	for i, l := range lines {
		if bytes.Contains(l, []byte(s)) {
			return i + 1
		}
	}
	t.Fatalf("no line holds %s", s)
	return 0
}

func writeLog(t *testing.T, path string, lines ...[]byte) {
	t.Helper()
	if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// wantRun runs league with args and checks its exit code and that stdout and stderr
// hold the given strings.
func wantRun(t *testing.T, code int, stdout, stderr []string, args ...string) {
	t.Helper()
	got, out, errs := runLeague(t, nil, args...)
	if got != code {
		t.Errorf("league %s exited %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, out, errs)
		return
	}
	for _, s := range stdout {
		if !strings.Contains(out, s) {
			t.Errorf("league %s: stdout lacks %q:\n%s", strings.Join(args, " "), s, out)
		}
	}
	for _, s := range stderr {
		if !strings.Contains(errs, s) {
			t.Errorf("league %s: stderr lacks %q:\n%s", strings.Join(args, " "), s, errs)
		}
	}
}

// verify and replay name the line an audit log stops at and check the lines before it.
// Their exit code tells a torn tail (3: the last line cut mid-write, every line before it
// good), which the League Manager recovers from when it starts, from a log changed or
// damaged in its middle, a broken chain or a check that fails (1).
func TestVerifyAndReplayOfTornAndGarbledLogs(t *testing.T) {
	auditPath, dbPath := playedLeague(t, t.TempDir())
	orig := logLines(t, auditPath)
	n := len(orig)
	wantRun(t, 0, []string{fmt.Sprintf("verified %d lines: hash chain intact", n)}, nil, "verify", auditPath, "--db", dbPath)
	wantRun(t, 0, []string{"check: every round snapshot"}, nil, "replay", auditPath, "--check", dbPath)

	report := lineOf(t, orig, `"message_type":"MATCH_RESULT_REPORT"`)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	half := func(l []byte) []byte { return slices.Clone(l[:len(l)/2]) }
	edited := bytes.Replace(orig[1], []byte(`"direction":"`), []byte(`"direction":"x`), 1)
	cases := []struct {
		name  string
		lines [][]byte
		// code and what stdout and stderr say, for verify and for replay
		code           int
		verify, replay []string
		stderr         []string
	}{
		{"last line without its newline", append(slices.Clone(orig[:n-1]), orig[n-1][:len(orig[n-1])-1]),
			3, []string{fmt.Sprintf("verified the %d lines before line %d: hash chain intact", n-1, n)},
			[]string{fmt.Sprintf("the log stops at line %d", n), "standings:"},
			[]string{fmt.Sprintf("line %d: torn last line:", n), "without a newline"}},
		{"last line cut mid-write", append(slices.Clone(orig[:n-1]), half(orig[n-1])),
			3, []string{fmt.Sprintf("verified the %d lines before line %d", n-1, n)}, []string{"pairings:"},
			[]string{fmt.Sprintf("line %d: torn last line:", n)}},
		{"last line cut, then a newline", append(slices.Clone(orig[:n-1]), append(half(orig[n-1]), '\n')),
			3, []string{fmt.Sprintf("verified the %d lines before line %d", n-1, n)}, []string{"pairings:"},
			[]string{fmt.Sprintf("line %d: torn last line: its JSON is cut short", n), fmt.Sprintf("cuts the file to its first %d bytes when it starts", len(bytes.Join(orig[:n-1], nil)))}},
		{"the result report cut mid-write", append(slices.Clone(orig[:report-1]), half(orig[report-1])),
			3, []string{fmt.Sprintf("verified the %d lines before line %d", report-1, report)}, []string{"0 results"},
			[]string{fmt.Sprintf("line %d: torn last line:", report)}},
		{"a garbled line in the middle", append(append(slices.Clone(orig[:report-1]), half(orig[report-1])), orig[report:]...),
			1, []string{fmt.Sprintf("verified the %d lines before line %d", report-1, report)}, []string{"0 results"},
			[]string{fmt.Sprintf("line %d: not a JSON audit entry", report), "more lines follow it: the log was changed or damaged here"}},
		{"a garbled line in the middle, cut JSON", append(append(slices.Clone(orig[:report-1]), append(half(orig[report-1]), '\n')), orig[report:]...),
			1, []string{fmt.Sprintf("verified the %d lines before line %d", report-1, report)}, nil,
			[]string{fmt.Sprintf("line %d: not a JSON audit entry", report), "more lines follow it"}},
		{"a complete last line that is no entry", append(slices.Clone(orig), []byte("{\"log_id\":\"x\"}\n")),
			1, []string{fmt.Sprintf("verified the %d lines before line %d", n, n+1)}, nil,
			[]string{fmt.Sprintf("line %d: missing log_id, timestamp, direction or message (the last line)", n+1)}},
		{"an edited line", append(append(slices.Clone(orig[:1]), edited), orig[2:]...),
			1, nil, nil, []string{"line 3: prev_hash does not match line 2"}},
		{"an edited line and a torn tail", append(append(append(slices.Clone(orig[:1]), edited), orig[2:n-1]...), half(orig[n-1])),
			1, nil, nil, []string{"line 3: prev_hash does not match line 2", fmt.Sprintf("and the log stops at line %d: torn last line", n)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			writeLog(t, path, tc.lines...)
			wantRun(t, tc.code, tc.verify, tc.stderr, "verify", path)
			if tc.name == "an edited line" || tc.name == "an edited line and a torn tail" {
				return // replay does not check the chain
			}
			wantRun(t, tc.code, tc.replay, tc.stderr, "replay", path)
		})
	}

	// A log whose torn line is the result's: the database holds the result, the log lacks
	// it. --db and --check say so and exit 1; after the League Manager has started once
	// again (it cuts the line and writes what the log lacks), both pass.
	dir := t.TempDir()
	tornPath := filepath.Join(dir, "audit.jsonl")
	copyFile(t, dbPath, filepath.Join(dir, "league.db"))
	writeLog(t, tornPath, append(slices.Clone(orig[:report-1]), half(orig[report-1]))...)
	wantRun(t, 1, nil, []string{"lines were cut from the end", fmt.Sprintf("and the log stops at line %d: torn last line", report)}, "verify", tornPath, "--db", filepath.Join(dir, "league.db"))
	wantRun(t, 1, nil, []string{"log and database differ", "the log's last line is torn", fmt.Sprintf("and the log stops at line %d: torn last line", report)}, "replay", tornPath, "--check", filepath.Join(dir, "league.db"))
	lm := startServe(t, dir)
	if err := lm.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	lm.exited(time.Now())
	wantRun(t, 0, []string{"verified"}, nil, "verify", tornPath, "--db", filepath.Join(dir, "league.db"))
	wantRun(t, 0, []string{"check: every round snapshot"}, nil, "replay", tornPath, "--check", filepath.Join(dir, "league.db"))
}

// The usage of verify and replay (-h) documents their exit codes.
func TestVerifyAndReplayUsageListsExitCodes(t *testing.T) {
	for _, cmd := range []string{"verify", "replay"} {
		wantRun(t, 2, nil, []string{"usage: league " + cmd, "exit codes:", "3  a torn tail", "flags:"}, cmd, "-h")
	}
}
