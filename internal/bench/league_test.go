package bench

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/proctest"
	"github.com/agentleague/agentleague/internal/testtools"
)

// A real bench of one small league prints every row with sane figures, and --profile
// leaves a CPU profile of every process.
func TestBenchRunsARealLeague(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a league of processes")
	}
	bin := t.TempDir()
	if err := proctest.Build(bin, "league", "referee", "player"); err != nil {
		t.Fatal(err)
	}
	profiles := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "league"), "bench", "--players", "4", "--referees", "2", "--runs", "1",
		"--config", proctest.ConfigPath(), "--timeout", "60s", "--profile", profiles)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("league bench: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	text := string(out)
	t.Log(text)
	if !strings.HasPrefix(text, "league bench: 4 players, 2 referees, tic_tac_toe, strategy random, think 0s, median of 1 run\n") {
		t.Errorf("header missing:\n%s", text)
	}
	rows := testtools.BenchRows(text)
	for _, label := range []string{"league time", "first player to last result", "matches", "matches/s", "per-move overhead p50", "per-move overhead p99",
		"CPU league manager", "CPU referees (sum)", "CPU players (sum)", "exchanges per match", "exchanges/s", "CPU per exchange",
		"moves in live view", "exchanges/s of floor", "overhead p50 / round trip", "CPU per exchange / floor between processes"} {
		if _, ok := rows[label]; !ok {
			t.Errorf("no row %q:\n%s", label, text)
		}
	}
	num := func(label string) float64 {
		f := strings.Fields(rows[label])
		if len(f) == 0 {
			return 0
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(f[0], "x"), 64)
		if err != nil {
			t.Errorf("row %q: %v", label, err)
		}
		return v
	}
	// Four players meet each other once: six matches.
	if got := num("matches"); got != 6 {
		t.Errorf("got %v matches, want 6", got)
	}
	for _, label := range []string{"league time", "matches/s", "per-move overhead p50", "exchanges per match", "exchanges/s",
		"CPU per exchange", "CPU per exchange / floor between processes"} {
		if v := num(label); v <= 0 {
			t.Errorf("row %q is %v, want more than 0", label, v)
		}
	}
	// Each match: an assignment, a report, two invitations, two GAME_OVERs and a move
	// at least five times.
	if v := num("exchanges per match"); v < 11 {
		t.Errorf("got %v exchanges per match, want at least 11", v)
	}
	if p50, p99 := num("per-move overhead p50"), num("per-move overhead p99"); p99 < p50 {
		t.Errorf("per-move overhead p99 %v is below p50 %v", p99, p50)
	}
	if cpu := num("CPU league manager") + num("CPU referees (sum)") + num("CPU players (sum)"); cpu <= 0 {
		t.Errorf("the league used %v CPU seconds, want more than 0", cpu)
	}
	m := regexp.MustCompile(`^(\d+) of (\d+)$`).FindStringSubmatch(rows["moves in live view"])
	if m == nil {
		t.Fatalf("moves in live view %q, want X of Y", rows["moves in live view"])
	}
	shown, stored := atoi(t, m[1]), atoi(t, m[2])
	// Six tic-tac-toe matches take at least five moves each.
	if stored < 30 || shown > stored {
		t.Errorf("moves in live view %d of %d, want at most all of at least 30", shown, stored)
	}
	for _, floor := range []string{"floor in one process: net/http loopback echo, sequential ", "floor between processes: the echo in a child process, sequential "} {
		if !strings.Contains(text, floor) {
			t.Errorf("no line %q:\n%s", floor, text)
		}
	}
	for _, name := range []string{"league_manager", "referee_ref1", "referee_ref2", "player_p01", "player_p04"} {
		if fi, err := os.Stat(filepath.Join(profiles, name+".pprof")); err != nil || fi.Size() == 0 {
			t.Errorf("no CPU profile of %s: %v", name, err)
		}
	}
}

// With --outbound, a real bench runs the league with relayed players and all direct,
// and reports relayed against direct matches: the figures are there, not their speed.
func TestBenchOutboundReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a league of processes")
	}
	bin := t.TempDir()
	if err := proctest.Build(bin, "league", "referee", "player"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "league"), "bench", "--players", "5", "--referees", "2", "--outbound", "2", "--runs", "1",
		"--config", proctest.ConfigPath(), "--timeout", "60s")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("league bench: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	text := string(out)
	t.Log(text)
	if !strings.HasPrefix(text, "league bench: 5 players (2 outbound, then all direct), 2 referees,") {
		t.Errorf("header missing:\n%s", text)
	}
	rows := testtools.BenchRows(text)
	if got := strings.Fields(rows["matches"]); len(got) < 3 || got[0] != "1" || got[1] != "6" || got[2] != "3" {
		// The report's row comes after the table's (10 matches in each league).
		t.Errorf("report's matches %q, want 1 relayed (p04-p05), 6 mixed, 3 direct", rows["matches"])
	}
	for _, label := range []string{"per-move overhead p50", "per-move overhead p99"} {
		f := strings.Fields(rows[label])
		if len(f) != 7 || !strings.HasSuffix(f[6], "x") {
			t.Errorf("report's row %q is %q, want relayed, mixed and direct in ms and a ratio", label, rows[label])
		}
	}
	if !regexp.MustCompile(`relay CPU per relayed move: -?\d+ µs \(-?\d+ µs per relayed call\)`).MatchString(text) {
		t.Errorf("no relay CPU line:\n%s", text)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Bad settings are a bad command line, refused before any process starts.
func TestBenchRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--runs", "0"}, {"--players", "1"}, {"--players", "4990", "--referees", "11"}, {"--think", "-1s"}, {"--against", "/tmp/x"}, {"--against-config", "x.yaml"},
		{"--outbound", "1"}, {"--outbound", "-1"}, {"--players", "10", "--outbound", "9"}, {"--outbound", "2", "--against", "/tmp/x", "--against-config", "x.yaml"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var usage cli.UsageError
			if err := Run(context.Background(), args); !errors.As(err, &usage) {
				t.Errorf("league bench %v: %v, want a bad command line", args, err)
			}
		})
	}
}
