package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/testtools"
)

// stockfishPath is Debian's Stockfish (make deps installs it), or one on PATH.
func stockfishPath(t *testing.T) string {
	t.Helper()
	p, err := testtools.DebianTool("stockfish")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chessConfig is the repository's configuration with chess games capped at maxPlies.
func chessConfig(t *testing.T, maxPlies int) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"league.yaml", "game_registry.yaml", "timeout_policy.yaml"} {
		data, err := os.ReadFile(filepath.Join(moduleRoot(), "config", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "league.yaml")
	capChessPlies(t, cfg, maxPlies)
	return cfg
}

// capChessPlies caps the chess games of the configuration of league.yaml cfg (the
// game_registry.yaml beside it, the shipped one's copy) at maxPlies.
func capChessPlies(t *testing.T, cfg string, maxPlies int) {
	t.Helper()
	reg := filepath.Join(filepath.Dir(cfg), "game_registry.yaml")
	data, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	const shipped = "max_plies: 200"
	if bytes.Count(data, []byte(shipped)) != 1 {
		t.Fatalf("%s has no single %q to replace", reg, shipped)
	}
	data = bytes.Replace(data, []byte(shipped), []byte(fmt.Sprintf("max_plies: %d", maxPlies)), 1)
	if err := os.WriteFile(reg, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A chess league of Stockfish through the uci strategy (a fixed node budget, so that its
// games repeat), alphabeta and random, games capped at 120 plies: every game is played to
// the end by the rules, Stockfish's moves carry its search in their metadata, it beats
// random and scores at least 1.5 of 2, and the PGN export passes pgn-extract.
func TestChessLeagueWithStockfish(t *testing.T) {
	run := runLeague(t, leagueOpts{players: 3, referees: 2, game: "chess", seed: 13, config: chessConfig(t, 120),
		playerArgs: map[string][]string{
			"p01": {"--strategy", "uci", "--engine", stockfishPath(t), "--nodes", "20000", "--engine-option", "Threads=1"},
			"p02": {"--strategy", "alphabeta"},
		}})
	run.checkLeague(t, 1)
	checkPGNExport(t, run, 3)

	score := 0.0
	for _, r := range results(t, run) {
		final, _ := r.metadata["final_state"].(map[string]any)
		moves, _ := r.metadata["moves"].([]any)
		t.Logf("%v: %v, %s after %d moves", r.players, r.outcome, final["termination"], len(moves))
		switch r.outcome["p01"] {
		case "win":
			score++
		case "draw":
			score += 0.5
		case "":
			continue // a match without Stockfish
		}
		if r.outcome["p03"] != "" && r.outcome["p01"] != "win" {
			t.Errorf("Stockfish against random: %v, want a win", r.outcome)
		}
		for _, m := range moves {
			move, _ := m.(map[string]any)
			if move["player"] != "p01" {
				continue
			}
			md, _ := move["metadata"].(map[string]any)
			engine, _ := md["engine"].(map[string]any)
			if engine == nil || engine["nodes"] == nil || engine["depth"] == nil {
				t.Errorf("Stockfish's move %v lacks the engine's search in its metadata", move)
				break
			}
		}
	}
	t.Logf("Stockfish scored %.1f of 2 in %v", score, run.elapsed)
	if score < 1.5 {
		t.Errorf("Stockfish scored %.1f of 2, want at least 1.5", score)
	}
	// Every match is over: so is every engine of the uci player.
	pid := run.players[0].cmd.Process.Pid
	for end := time.Now().Add(10 * time.Second); len(childrenOf(pid)) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("engines %v of the uci player still run after the league", childrenOf(pid))
		}
	}
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var pids []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold anything, so read after its last ')'.
		fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path, "/proc/"), "/stat"))
			pids = append(pids, child)
		}
	}
	return pids
}
