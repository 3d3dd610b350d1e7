package player

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/agentleague/agentleague/player/uci"
	"github.com/agentleague/agentleague/protocol"
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

// children lists the processes whose parent is this test process: the engines.
func children(t *testing.T) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold anything, so read after its last ')'.
		fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) {
			pid, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(path, "/proc/"), "/stat"))
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestUCIPlayerWhoseEngineCannotStartDoesNotRegister(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	p, err := New(Config{ID: "p01", Addr: "127.0.0.1:0", LeagueURL: lg.url, Strategy: StrategyUCI, Stdout: io.Discard,
		Engine: uci.Config{Path: "/nonexistent/stockfish"}}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	err = p.Run(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "engine /nonexistent/stockfish: start: ") {
		t.Errorf("Run: %v, want an error naming the engine", err)
	}
	if reg := lg.registration("p01"); reg != nil {
		t.Errorf("the player registered: %v", reg)
	}
}

// TestUCIPlayerEndsItsEngines plays chess moves through Stockfish and checks that each
// match's engine is gone when its match ends, and every engine when the player stops.
func TestUCIPlayerEndsItsEngines(t *testing.T) {
	if n := len(children(t)); n != 0 {
		t.Fatalf("%d child processes before the test", n)
	}
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	r := startPlayer(t, lg, Config{ID: "p01", Strategy: StrategyUCI, Engine: uci.Config{Path: stockfishPath(t), Nodes: 2000}}, nil)
	r.waitState(t, StateActive)
	s := newSender(t)
	s.timeout = 10 * time.Second // the engine's start and search, on a loaded machine
	g, err := game.Default().New(game.TypeChess, nil)
	if err != nil {
		t.Fatal(err)
	}
	view, err := json.Marshal(g.NewState(0).Context(0))
	if err != nil {
		t.Fatal(err)
	}
	play := func(matchID string) {
		t.Helper()
		cred := r.credential(matchID)
		e := envelope{matchID: matchID, gameType: game.TypeChess, auth: cred}
		if _, err := s.send(r.url, protocol.GameInvitation, e, map[string]any{"match_id": matchID, "game_type": game.TypeChess, "opponents": []string{"p02"}}); err != nil {
			t.Fatal(err)
		}
		ans, err := s.send(r.url, protocol.RequestMove, e, map[string]any{"step_number": 1, "step_context": json.RawMessage(view), "deadline_ms": 9000})
		if err != nil {
			t.Fatal(err)
		}
		mv := decode[protocol.MoveAnswer](t, ans)
		if _, err := g.NewState(0).ParseMove(0, mv.MovePayload); err != nil || !strings.Contains(string(mv.Metadata), `"engine":{"name":"Stockfish`) {
			t.Errorf("got move %s (%v) with metadata %s, want a legal move and the engine's note", mv.MovePayload, err, mv.Metadata)
		}
	}
	play("R1M1")
	if n := len(children(t)); n != 1 {
		t.Errorf("%d engines run during a match, want 1", n)
	}
	if _, err := s.send(r.url, protocol.GameOver, envelope{matchID: "R1M1", gameType: game.TypeChess, auth: r.credential("R1M1")},
		map[string]any{"outcome": "draw", "final_state": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(5 * time.Second); len(children(t)) > 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the engine of a finished match still runs: %v", children(t))
		}
	}
	play("R2M1")
	r.cancel()
	if err := r.wait(t); err != nil {
		t.Fatal(err)
	}
	if pids := children(t); len(pids) != 0 {
		t.Errorf("engines %v run after the player stopped", pids)
	}
}
