package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/bench"
	"github.com/agentleague/agentleague/internal/proctest"
	"go.uber.org/goleak"
)

// The tests of this package run the built `league` binary where the process is the
// point: its command line, exit codes and stdout. What a command does is tested in the
// package that does it (league/server, league/replay, internal/demo, internal/bench ...).

// leagueBin is the `league` binary built once for every test of this package.
var leagueBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "league-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	leagueBin = filepath.Join(dir, "league")
	if err := proctest.Build(dir, "league"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// runLeague runs the binary to completion.
func runLeague(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return proctest.Run(t, leagueBin, env, args...)
}

// startServe starts `league serve` with its files in dir and extra flags.
func startServe(t *testing.T, dir string, extra ...string) *proctest.LM {
	t.Helper()
	return proctest.Serve(t, leagueBin, dir, extra...)
}

// Each outcome has its exit code: 0 for success, 2 for a bad command line (-h too), and
// for verify and replay 3 for a torn tail (the last line cut mid-write, every line
// before it good) and 1 for a log damaged in its middle; their usage lists the codes.
// bench-echo is internal: the usage does not offer it. (What the commands do is tested
// in their packages: league/replay, internal/demo, internal/bench, league/export.)
func TestExitCodes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "league", "replay", "testdata", "golden", "tic_tac_toe_4.audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	dir := t.TempDir()
	logs := map[string][]byte{"whole": data, "torn": data[:len(data)-20], "garbled": bytes.Join(append([][]byte{lines[0], lines[1][:10], {'\n'}}, lines[2:]...), nil)}
	for name, log := range logs {
		if err := os.WriteFile(filepath.Join(dir, name), log, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{nil, 2, "usage: league <command>"}, {[]string{"nope"}, 2, `unknown command "nope"`}, {[]string{"help"}, 0, ""},
		{[]string{"demo", "--grace", "0s"}, 2, "--grace must be positive"}, {[]string{"bench", "--runs", "0"}, 2, "--runs must be at least 1"},
		{[]string{"export", "--format", "xml"}, 2, `unknown format "xml"`},
		{[]string{"verify", "whole"}, 0, ""}, {[]string{"replay", "whole"}, 0, ""},
		{[]string{"verify", "torn"}, 3, "torn last line"}, {[]string{"replay", "torn"}, 3, "torn last line"},
		{[]string{"verify", "garbled"}, 1, "line 2: not a JSON audit entry"}, {[]string{"replay", "garbled"}, 1, "line 2: not a JSON audit entry"},
		{[]string{"verify", "-h"}, 2, "usage: league verify AUDIT"}, {[]string{"replay", "-h"}, 2, "exit codes:\n  0  every check passed"},
	} {
		args := slices.Clone(tc.args)
		if len(args) == 2 && logs[args[1]] != nil {
			args[1] = filepath.Join(dir, args[1])
		}
		if code, _, stderr := runLeague(t, nil, args...); code != tc.code || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("league %v: exit %d, want %d and %q on stderr:\n%s", tc.args, code, tc.code, tc.stderr, stderr)
		}
	}
	if strings.Contains(usage, bench.EchoCommand) {
		t.Errorf("the usage names %s:\n%s", bench.EchoCommand, usage)
	}
}
