package uci

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/corentings/chess/v2"
	"go.uber.org/goleak"
)

// The test binary is also the fake engine: run with envFakeModes set, it speaks UCI on
// stdin and stdout instead of running tests.
const (
	// envFakeModes lists the behaviour of each start of the engine, comma-separated; the
	// last one repeats. See fakeEngine.
	envFakeModes = "UCI_FAKE_ENGINE"
	// envFakeLog is the file where every start of the engine appends "start <pid> <mode>"
	// and then every line it receives.
	envFakeLog = "UCI_FAKE_LOG"
)

func TestMain(m *testing.M) {
	if modes := os.Getenv(envFakeModes); modes != "" {
		os.Exit(fakeEngine(strings.Split(modes, ","), os.Getenv(envFakeLog)))
	}
	goleak.VerifyTestMain(m)
}

// fakeEngine answers like a UCI engine whose bestmove is the first legal move in UCI
// order, except as its mode says:
//   - silent: answers nothing at all;
//   - no-uciok: names itself and its options but never sends uciok;
//   - hang: never answers go, nor stop;
//   - stop: answers go only when told to stop;
//   - die: exits at go;
//   - garbage: surrounds every answer with junk: lines too long to keep that start with
//     "bestmove a1a1", stray bestmoves after position and before readyok, blank lines and
//     gibberish;
//   - illegal: answers bestmove a1h8;
//   - none: answers bestmove (none);
//   - deaf: ignores quit and the end of its input.
func fakeEngine(modes []string, logPath string) int {
	before, _ := os.ReadFile(logPath)
	n := strings.Count(string(before), "start ")
	mode := modes[min(n, len(modes)-1)]
	logf, err := os.OpenFile(logPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return 9
	}
	defer logf.Close()
	fmt.Fprintf(logf, "start %d %s\n", os.Getpid(), mode)
	say := func(lines ...string) {
		for _, l := range lines {
			fmt.Fprintln(os.Stdout, l)
		}
	}
	junk := func() {
		if mode == "garbage" {
			say("bestmove a1a1 "+strings.Repeat("x", 3*maxLineBytes), "", "   ", "\x00\xff nonsense", "info depth many score cp lots")
		}
	}
	pos := chess.StartingPosition()
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		line := in.Text()
		fmt.Fprintln(logf, line)
		w := strings.Fields(line)
		if len(w) == 0 || mode == "silent" {
			continue
		}
		switch w[0] {
		case "uci":
			junk()
			say("id name Fake Engine", "id author the tests", "option name Skill Level type spin default 20 min 0 max 20",
				"option name Clear Hash type button")
			if mode != "no-uciok" {
				say("uciok")
			}
		case "isready":
			junk()
			if mode == "garbage" {
				say("bestmove a1a2")
			}
			say("readyok")
		case "position":
			pos = fakePosition(w)
			if mode == "garbage" {
				say("bestmove a1a3") // unasked: only what follows readyok answers
			}
		case "go":
			switch mode {
			case "hang", "stop":
				continue
			case "die":
				return 3
			}
			move := firstLegal(pos)
			switch mode {
			case "illegal":
				move = "a1h8"
			case "none":
				move = "(none)"
			}
			junk()
			say("info depth 1 score cp 3 nodes 10 pv "+move,
				"info depth 3 seldepth 4 multipv 1 score cp 25 nodes 1234 nps 5000 time 2 pv "+move,
				"info depth 3 multipv 2 score cp -90 pv a2a3",
				"info string the search is over")
			junk()
			say("bestmove " + move + " ponder a7a6")
		case "stop":
			if mode == "stop" {
				say("bestmove " + firstLegal(pos))
			}
		case "quit":
			if mode != "deaf" {
				return 0
			}
		}
	}
	if mode == "deaf" {
		time.Sleep(time.Hour) // until killed
	}
	return 0
}

// fakePosition reads "position startpos|fen <fen> [moves ...]"; anything it cannot read
// leaves the start position, and the test that sent it fails on the move it gets.
func fakePosition(w []string) *chess.Position {
	pos := chess.StartingPosition()
	k := 2
	if len(w) > 7 && w[1] == "fen" {
		p := new(chess.Position)
		if err := p.UnmarshalText([]byte(strings.Join(w[2:8], " "))); err != nil {
			return pos
		}
		pos, k = p, 8
	}
	if k < len(w) && w[k] == "moves" {
		for _, m := range w[k+1:] {
			mv, err := chess.UCINotation{}.Decode(pos, m)
			if err != nil {
				return chess.StartingPosition()
			}
			pos = pos.Update(mv)
		}
	}
	return pos
}

func firstLegal(pos *chess.Position) string {
	var moves []string
	for _, m := range pos.ValidMoves() {
		moves = append(moves, m.String())
	}
	slices.Sort(moves)
	if len(moves) == 0 {
		return "(none)"
	}
	return moves[0]
}

// fakeConfig makes the test binary the engine, with the modes given, and returns its
// configuration and the file it logs to.
func fakeConfig(t *testing.T, modes string) (Config, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "engine.log")
	t.Setenv(envFakeModes, modes)
	t.Setenv(envFakeLog, logPath)
	// A binary built with -race sleeps a second at exit unless told otherwise: the fake
	// must quit as fast as an engine does.
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	// The handshake timeout is a hang guard: built with -race on a loaded machine, the
	// fake once took over 2 s to start and answer uciok.
	return Config{Path: exe, Nodes: 1000, HandshakeTimeout: 10 * time.Second}, logPath
}

// fakeLog is what the fake engine logged: each start's pid and mode, and every line it
// received, in order.
type fakeLog struct {
	pids     []int
	modes    []string
	received []string
}

func readFakeLog(t *testing.T, path string) fakeLog {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var l fakeLog
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if rest, ok := strings.CutPrefix(line, "start "); ok {
			pid, mode, _ := strings.Cut(rest, " ")
			n, _ := strconv.Atoi(pid)
			l.pids, l.modes = append(l.pids, n), append(l.modes, mode)
			continue
		}
		l.received = append(l.received, line)
	}
	return l
}

// chessRequest is the REQUEST_MOVE of the player to move after moves, as our referee sends it.
func chessRequest(t *testing.T, deadlineMS int, moves ...string) strategy.Request {
	t.Helper()
	g := chessGame(t)
	s := g.NewState(0)
	for _, m := range moves {
		var err error
		if s, err = s.Apply([]json.RawMessage{json.RawMessage(`"` + m + `"`)}); err != nil {
			t.Fatalf("apply %s: %v", m, err)
		}
	}
	raw, err := json.Marshal(s.Context(s.ToMove()[0]))
	if err != nil {
		t.Fatal(err)
	}
	return strategy.Request{MatchID: "m1", GameType: game.TypeChess, StepNumber: len(moves) + 1, Context: raw, DeadlineMS: deadlineMS, ConversationID: "conv-1"}
}

// fenRequest is a REQUEST_MOVE that gives only the position, as a referee that sends no
// moves would.
func fenRequest(t *testing.T, fen string, deadlineMS int) strategy.Request {
	t.Helper()
	f := strings.Fields(fen)
	moveNumber, err := strconv.Atoi(f[5])
	if err != nil {
		t.Fatal(err)
	}
	side := map[string]string{"w": "white", "b": "black"}[f[1]]
	raw, err := json.Marshal(map[string]any{"fen": fen, "side_to_move": side, "your_color": side, "last_move": nil,
		"move_number": moveNumber, "ply": 0})
	if err != nil {
		t.Fatal(err)
	}
	return strategy.Request{MatchID: "m1", GameType: game.TypeChess, StepNumber: 1, Context: raw, DeadlineMS: deadlineMS}
}

func chessGame(t *testing.T) game.Game {
	t.Helper()
	g, err := game.Default().New(game.TypeChess, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
