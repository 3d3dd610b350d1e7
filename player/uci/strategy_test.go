package uci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/protocol"
	"github.com/corentings/chess/v2"
	"github.com/rs/zerolog"
)

// Deadlines of the tests: generous where the engine answers (the test ends as soon as it
// does), shorter where it never will, yet long enough for the fake engine (this test
// binary, which takes some 200 ms to start when built with -race, 1.5 to 2 s on a machine
// at load 14) to start and handshake within the move: 400 ms failed every time under
// -race, 2 s once at load 9. A move of hangingMS stops the search 3.35 s in and gives up
// at 3.6 s (strategy.MoveBudget).
const (
	answeredMS = 10000
	hangingMS  = 4000
)

func newStrategy(t *testing.T, cfg Config) *Strategy {
	t.Helper()
	s, err := NewStrategy(cfg, chessGame(t), "m1", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// checkGone fails unless every engine the fake log names has exited and been reaped.
func checkGone(t *testing.T, l fakeLog) {
	t.Helper()
	for _, pid := range l.pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("engine %d is still there (kill 0: %v)", pid, err)
		}
	}
}

// wantMove decodes a move payload's UCI.
func wantMove(t *testing.T, raw json.RawMessage, want string) {
	t.Helper()
	var m struct {
		UCI string `json:"uci"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || m.UCI != want || string(raw) != `{"uci":"`+want+`"}` {
		t.Errorf("got move %s, want {\"uci\":%q}", raw, want)
	}
}

func TestProbe(t *testing.T) {
	tests := []struct {
		name, modes string
		change      func(*Config)
		wantErr     string
		// short: the engine never answers, so a short handshake timeout ends the test
		// sooner; where it answers, fakeConfig's leaves it time to start.
		short bool
	}{
		{name: "handshake, options, quit", modes: "ok"},
		{name: "silent engine", modes: "silent", wantErr: "uci: no uciok: engine did not answer in time", short: true},
		{name: "no uciok", modes: "no-uciok", wantErr: "uci: no uciok: engine did not answer in time", short: true},
		{name: "missing binary", modes: "ok", change: func(c *Config) { c.Path = "/nonexistent/engine" },
			wantErr: "engine /nonexistent/engine: start: fork/exec /nonexistent/engine: no such file or directory"},
		{name: "unknown option", modes: "ok", change: func(c *Config) { c.Options = append(c.Options, Option{"Skil Level", "5"}) },
			wantErr: `the engine has no option "Skil Level"`},
		{name: "two limits", modes: "ok", change: func(c *Config) { c.Depth = 5 }, wantErr: "set one search limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, logPath := fakeConfig(t, tt.modes)
			if tt.short {
				cfg.HandshakeTimeout = 200 * time.Millisecond
			}
			cfg.Options = []Option{{"skill level", "5"}, {"Clear Hash", ""}}
			if tt.change != nil {
				tt.change(&cfg)
			}
			name, err := Probe(context.Background(), cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "engine "+cfg.Path+": ") {
					t.Errorf("got error %v, want one naming %s and saying %q", err, cfg.Path, tt.wantErr)
				}
			} else if err != nil || name != "Fake Engine" {
				t.Fatalf("got name %q and error %v, want Fake Engine", name, err)
			}
			l := fakeLogIfAny(t, logPath)
			checkGone(t, l)
			if tt.wantErr != "" {
				return
			}
			want := []string{"uci", "setoption name skill level value 5", "setoption name Clear Hash", "ucinewgame", "isready", "quit"}
			if !slices.Equal(l.received, want) {
				t.Errorf("the engine received %q, want %q", l.received, want)
			}
		})
	}
}

// fakeLogIfAny is readFakeLog, or nothing when no engine ever started.
func fakeLogIfAny(t *testing.T, path string) fakeLog {
	t.Helper()
	if _, err := os.ReadFile(path); err != nil {
		return fakeLog{}
	}
	return readFakeLog(t, path)
}

func TestMovesOfAMatch(t *testing.T) {
	cfg, logPath := fakeConfig(t, "ok")
	var logs bytes.Buffer
	s, err := NewStrategy(cfg, chessGame(t), "m1", zerolog.New(&logs))
	if err != nil {
		t.Fatal(err)
	}
	move, meta, err := s.MoveWithMetadata(chessRequest(t, answeredMS, "e2e4"))
	if err != nil {
		t.Fatal(err)
	}
	wantMove(t, move, "a7a5")
	var note map[string]map[string]any
	if err := json.Unmarshal(meta, &note); err != nil {
		t.Fatalf("metadata %s: %v", meta, err)
	}
	e := note["engine"]
	delete(e, "elapsed_ms")
	want := map[string]any{"name": "Fake Engine", "depth": 3.0, "seldepth": 4.0, "score_cp": 25.0, "nodes": 1234.0, "nps": 5000.0, "time_ms": 2.0, "pv": []any{"a7a5"}}
	if got, _ := json.Marshal(e); !bytes.Equal(got, mustJSON(t, want)) {
		t.Errorf("got metadata %s, want %s and elapsed_ms", meta, mustJSON(t, want))
	}
	// A second move of the match goes to the same engine; a referee that sends no moves
	// gets the position as a FEN.
	if move, err = s.Move(chessRequest(t, answeredMS, "e2e4", "a7a5", "d2d4")); err != nil {
		t.Fatal(err)
	}
	wantMove(t, move, "a5a4")
	const fen = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
	if move, err = s.Move(fenRequest(t, fen, answeredMS)); err != nil {
		t.Fatal(err)
	}
	wantMove(t, move, "e1d1")
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	l := readFakeLog(t, logPath)
	want2 := []string{"uci", "ucinewgame", "isready",
		"position startpos moves e2e4", "isready", "go nodes 1000",
		"position startpos moves e2e4 a7a5 d2d4", "isready", "go nodes 1000",
		"position fen " + fen, "isready", "go nodes 1000", "quit"}
	if len(l.pids) != 1 || !slices.Equal(l.received, want2) {
		t.Errorf("%d engines received %q, want one receiving %q", len(l.pids), l.received, want2)
	}
	checkGone(t, l)
	if !strings.Contains(logs.String(), `"match_id":"m1"`) || !strings.Contains(logs.String(), `"conversation_id":"conv-1"`) ||
		!strings.Contains(logs.String(), `"engine started"`) {
		t.Errorf("logs lack the engine's start with match and conversation ids:\n%s", logs.String())
	}
	if _, err := s.Move(chessRequest(t, answeredMS)); !errors.Is(err, strategy.ErrNoMove) {
		t.Errorf("got error %v after Close, want ErrNoMove", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestMisbehavingEngines plays moves against engines that fail in every way: each move
// either is the engine's, as it gave it, or fails with ErrNoMove.
// clockRequest is chessRequest under a clock: the referee's deadline is then the mover's
// whole clock and bank.
func clockRequest(t *testing.T, clocks protocol.Clocks, moves ...string) strategy.Request {
	t.Helper()
	req := chessRequest(t, int(clocks.You.RemainingMS+clocks.You.BankMS), moves...)
	req.Clocks = &clocks
	return req
}

// Under a clock the engine keeps time by both clocks (go wtime btime winc binc, its own as
// black being btime) instead of the configured nodes, and movestogo in a period.
func TestMovesUnderAClock(t *testing.T) {
	cfg, logPath := fakeConfig(t, "ok")
	s := newStrategy(t, cfg)
	black := protocol.Clocks{You: protocol.Clock{RemainingMS: 9000}, Opponent: protocol.Clock{RemainingMS: 8500}, IncrementMS: 100}
	move, err := s.Move(clockRequest(t, black, "e2e4"))
	if err != nil {
		t.Fatal(err)
	}
	wantMove(t, move, "a7a5")
	period := protocol.Clocks{You: protocol.Clock{RemainingMS: 7000, BankMS: 2000, MovesToGo: 12},
		Opponent: protocol.Clock{RemainingMS: 8000, MovesToGo: 13}, IncrementMS: 0}
	if move, err = s.Move(clockRequest(t, period, "e2e4", "a7a5", "d2d4")); err != nil {
		t.Fatal(err)
	}
	wantMove(t, move, "a5a4")
	// Without clocks, the configured limit again.
	if move, err = s.Move(chessRequest(t, answeredMS, "e2e4", "a7a5", "d2d4", "a5a4", "d4d5")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	var gos []string
	for _, line := range readFakeLog(t, logPath).received {
		if strings.HasPrefix(line, "go ") {
			gos = append(gos, line)
		}
	}
	// The first move started the engine: its own clock (btime) is less the start-up.
	var btime int
	if len(gos) != 3 {
		t.Fatalf("the engine was told %q, want three go lines", gos)
	}
	if _, err := fmt.Sscanf(gos[0], "go wtime 8500 btime %d winc 100 binc 100", &btime); err != nil || btime > 9000 || btime < 8000 {
		t.Errorf("first go line %q, want wtime 8500 and btime 9000 less the engine's start-up", gos[0])
	}
	if want := []string{"go wtime 8000 btime 9000 winc 0 binc 0 movestogo 12", "go nodes 1000"}; !slices.Equal(gos[1:], want) {
		t.Errorf("the engine was told %q, want %q after the first", gos[1:], want)
	}
}

// An engine that does not stop by itself is stopped at the clock's budget
// (protocol.TimeControl.Budget: 150 s / 30 = 5 s, stop 250 ms before), not at the
// referee's deadline, which is the whole clock.
func TestAClockStopsTheSearchAtItsBudget(t *testing.T) {
	cfg, logPath := fakeConfig(t, "stop")
	s := newStrategy(t, cfg)
	clocks := protocol.Clocks{You: protocol.Clock{RemainingMS: 150000}, Opponent: protocol.Clock{RemainingMS: 150000}}
	begin := time.Now()
	move, meta, err := s.MoveWithMetadata(clockRequest(t, clocks))
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	wantMove(t, move, "a2a3")
	if took < 4750*time.Millisecond || took > 10*time.Second {
		t.Errorf("the move took %v, want the clock's budget: stop at 4.75 s, answer by 5 s", took)
	}
	if !strings.Contains(string(meta), `"stopped":true`) {
		t.Errorf("metadata %s does not say the search was stopped", meta)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	// wtime is the clock less the engine's start-up, which the player's clock paid for.
	l := readFakeLog(t, logPath)
	tail := l.received[len(l.received)-3 : len(l.received)-1]
	var wtime int
	if _, err := fmt.Sscanf(tail[0], "go wtime %d btime 150000 winc 0 binc 0", &wtime); err != nil || wtime > 150000 || wtime < 140000 || tail[1] != "stop" {
		t.Errorf("the engine received %q, want it to end with go wtime (150 s less the start-up) btime 150000, stop and quit", l.received)
	}
}

func TestMisbehavingEngines(t *testing.T) {
	const first = "a2a3" // the fake's bestmove at the start
	tests := []struct {
		name, modes string
		deadlineMS  int
		// moves are the moves wanted from successive requests; "" is ErrNoMove.
		moves []string
		// starts is the number of engines started in all.
		starts int
		// stopped: the engine was told to stop on the first move.
		stopped bool
		// restarts is the restart count in the first good move's metadata.
		restarts float64
	}{
		{name: "answers stop in time", modes: "stop", deadlineMS: hangingMS, moves: []string{first}, starts: 1, stopped: true},
		{name: "never answers go, then a good engine", modes: "hang,ok", deadlineMS: hangingMS, moves: []string{"", first}, starts: 2, stopped: true, restarts: 1},
		{name: "never answers go, twice", modes: "hang", deadlineMS: hangingMS, moves: []string{"", "", ""}, starts: 2, stopped: true},
		{name: "dies and is restarted within the move", modes: "die,ok", deadlineMS: answeredMS, moves: []string{first, first}, starts: 2, restarts: 1},
		{name: "dies twice", modes: "die", deadlineMS: answeredMS, moves: []string{"", ""}, starts: 2},
		{name: "says nothing", modes: "silent", deadlineMS: hangingMS, moves: []string{"", ""}, starts: 2},
		{name: "garbage and oversized lines", modes: "garbage", deadlineMS: answeredMS, moves: []string{first, first}, starts: 1},
		{name: "illegal bestmove is passed on", modes: "illegal", deadlineMS: answeredMS, moves: []string{"a1h8"}, starts: 1},
		{name: "bestmove (none)", modes: "none", deadlineMS: answeredMS, moves: []string{"", ""}, starts: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, logPath := fakeConfig(t, tt.modes)
			s := newStrategy(t, cfg)
			for k, want := range tt.moves {
				move, meta, err := s.MoveWithMetadata(chessRequest(t, tt.deadlineMS))
				if want == "" {
					if !errors.Is(err, strategy.ErrNoMove) || move != nil || !strings.Contains(err.Error(), "engine "+cfg.Path) {
						t.Errorf("move %d: got %s, error %v; want ErrNoMove naming the engine", k+1, move, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("move %d: %v", k+1, err)
				}
				wantMove(t, move, want)
				var note struct {
					Engine struct {
						Stopped  bool    `json:"stopped"`
						Restarts float64 `json:"restarts"`
					} `json:"engine"`
				}
				if err := json.Unmarshal(meta, &note); err != nil {
					t.Fatal(err)
				}
				if k == 0 && note.Engine.Stopped != tt.stopped {
					t.Errorf("move %d: got stopped %t, want %t", k+1, note.Engine.Stopped, tt.stopped)
				}
				if note.Engine.Restarts != tt.restarts && k == slices.IndexFunc(tt.moves, func(m string) bool { return m != "" }) {
					t.Errorf("move %d: got restarts %v, want %v", k+1, note.Engine.Restarts, tt.restarts)
				}
			}
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			l := readFakeLog(t, logPath)
			if len(l.pids) != tt.starts {
				t.Errorf("%d engines started (%v), want %d", len(l.pids), l.modes, tt.starts)
			}
			if stops := slices.Contains(l.received, "stop"); stops != tt.stopped {
				t.Errorf("stop sent: %t, want %t (received %q)", stops, tt.stopped, l.received)
			}
			checkGone(t, l)
		})
	}
}

func TestCloseKillsAnEngineThatIgnoresQuit(t *testing.T) {
	// fakeConfig's handshake timeout leaves the engine time to start; the grace after
	// quit is that timeout, at most maxQuitGrace.
	cfg, logPath := fakeConfig(t, "deaf")
	s := newStrategy(t, cfg)
	if _, err := s.Move(chessRequest(t, answeredMS)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "did not quit within "+cfg.quitGrace().String()+"; killed") {
		t.Errorf("got close error %v, want the engine killed", err)
	}
	l := readFakeLog(t, logPath)
	if l.received[len(l.received)-1] != "quit" {
		t.Errorf("the engine received %q, want quit last", l.received)
	}
	checkGone(t, l)
}

func TestCloseEndsAMoveInProgress(t *testing.T) {
	cfg, logPath := fakeConfig(t, "hang")
	s := newStrategy(t, cfg)
	errs := make(chan error, 1)
	// Ends when Close makes the move give up.
	go func() {
		_, err := s.Move(chessRequest(t, answeredMS))
		errs <- err
	}()
	eventually(t, func() bool {
		data, _ := os.ReadFile(logPath)
		return strings.Contains(string(data), "go nodes")
	})
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := <-errs; !errors.Is(err, strategy.ErrNoMove) || !errors.Is(err, errAborted) {
		t.Errorf("got error %v from the move, want ErrNoMove for a closed strategy", err)
	}
	checkGone(t, readFakeLog(t, logPath))
}

// eventually waits for cond, failing after 30 seconds (a hang guard).
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("condition not met in 30s")
		}
	}
}

func TestBadContextIsNotTheEngines(t *testing.T) {
	cfg, logPath := fakeConfig(t, "ok")
	s := newStrategy(t, cfg)
	// After 1. e4 e5, moves that lead elsewhere: the engine would play another game.
	elsewhere := chessRequest(t, answeredMS, "e2e4", "e7e5")
	elsewhere.Context = bytes.Replace(elsewhere.Context, []byte(`"moves":["e2e4","e7e5"]`), []byte(`"moves":["d2d4","e7e5"]`), 1)
	for _, ctx := range []json.RawMessage{json.RawMessage(`{"fen":"nonsense"}`), elsewhere.Context} {
		_, err := s.Move(strategy.Request{MatchID: "m1", GameType: game.TypeChess, Context: ctx})
		if err == nil || errors.Is(err, strategy.ErrNoMove) {
			t.Errorf("got error %v for %s, want a context error that is not ErrNoMove", err, ctx)
		}
	}
	if _, err := os.ReadFile(logPath); err == nil {
		t.Error("an engine started for a context that is no position")
	}
}

func TestNewStrategyPlaysOnlyChess(t *testing.T) {
	ttt, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewStrategy(Config{Path: "/usr/games/stockfish"}, ttt, "m1", zerolog.Nop()); err == nil {
		t.Error("got a uci strategy for tic-tac-toe")
	}
	if _, err := NewStrategy(Config{}, chessGame(t), "m1", zerolog.Nop()); err == nil {
		t.Error("got a uci strategy without an engine")
	}
}

func TestParseOption(t *testing.T) {
	tests := []struct {
		in      string
		want    Option
		wantErr string
	}{
		{in: "Skill Level=5", want: Option{"Skill Level", "5"}},
		{in: " Threads = 2 ", want: Option{"Threads", "2"}},
		{in: "Clear Hash", want: Option{"Clear Hash", ""}},
		{in: "SyzygyPath=/a=b", want: Option{"SyzygyPath", "/a=b"}},
		{in: "=5", wantErr: "empty name"},
		{in: "Hash=16\ngo infinite", wantErr: "control character"},
		{in: "My value=3", wantErr: "the words name and value"},
	}
	for _, tt := range tests {
		got, err := ParseOption(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseOption(%q): got %+v, %v; want an error saying %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseOption(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
	if got := (Option{"Skill Level", "5"}).command(); got != "setoption name Skill Level value 5" {
		t.Errorf("got %q", got)
	}
}

func TestConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg     Config
		wantErr string
		wantGo  string // with 2 s to go
	}{
		{cfg: Config{Path: "e"}, wantGo: "go movetime 100"},
		{cfg: Config{Path: "e", MoveTime: 5 * time.Second}, wantGo: "go movetime 2000"},
		{cfg: Config{Path: "e", Nodes: 20000}, wantGo: "go nodes 20000"},
		{cfg: Config{Path: "e", Depth: 8}, wantGo: "go depth 8"},
		{cfg: Config{}, wantErr: "no engine path"},
		{cfg: Config{Path: "e", Nodes: 1, Depth: 1}, wantErr: "set one search limit"},
		{cfg: Config{Path: "e", MoveTime: time.Microsecond}, wantErr: "movetime must be"},
		{cfg: Config{Path: "e", Nodes: -1}, wantErr: "nodes must be"},
		{cfg: Config{Path: "e", Depth: 101}, wantErr: "depth must be"},
		{cfg: Config{Path: "e", HandshakeTimeout: -1}, wantErr: "negative handshake timeout"},
		{cfg: Config{Path: "e", Options: []Option{{"a\rb", ""}}}, wantErr: "control character"},
	} {
		err := tt.cfg.Validate()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%+v: got %v, want an error saying %q", tt.cfg, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tt.cfg, err)
		}
		if got := tt.cfg.withDefaults().goCommand(2*time.Second, nil, true); got != tt.wantGo {
			t.Errorf("%+v: got %q, want %q", tt.cfg, got, tt.wantGo)
		}
	}
}

// Under a clock the go line is the clocks, whatever the configured limit: the mover's is
// clocks.You, its bank included, white's or black's by its colour.
func TestGoCommandUnderAClock(t *testing.T) {
	clocks := &protocol.Clocks{You: protocol.Clock{RemainingMS: 60000, BankMS: 5000, MovesToGo: 7},
		Opponent: protocol.Clock{RemainingMS: 41000, MovesToGo: 8}, IncrementMS: 500}
	for _, tt := range []struct {
		cfg   Config
		white bool
		want  string
	}{
		{Config{Path: "e"}, true, "go wtime 65000 btime 41000 winc 500 binc 500 movestogo 7"},
		{Config{Path: "e", Nodes: 20000}, false, "go wtime 41000 btime 65000 winc 500 binc 500 movestogo 7"},
		{Config{Path: "e", Depth: 8}, true, "go wtime 65000 btime 41000 winc 500 binc 500 movestogo 7"},
	} {
		if got := tt.cfg.withDefaults().goCommand(2*time.Second, clocks, tt.white); got != tt.want {
			t.Errorf("%+v, white %v: got %q, want %q", tt.cfg, tt.white, got, tt.want)
		}
	}
}

func TestSearchInfo(t *testing.T) {
	var s searchInfo
	for _, line := range []string{
		"info depth 12 seldepth 18 multipv 1 score cp 31 lowerbound nodes 90000 nps 900000 hashfull 12 tbhits 0 time 100 pv e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7",
		"info depth 12 multipv 2 score cp -50 pv d2d4",        // another line of a multi-PV search
		"info currmove e2e4 currmovenumber 1",                 // nothing kept
		"info string NNUE evaluation using nn.nnue enabled",   // free text
		"info depth x nodes 99999999999999999999999 score cp", // numbers that do not parse
		"info depth 13 score mate -3 pv e2e4 E7E5 g1f3",       // the pv ends at what is no move
	} {
		s.update(strings.Fields(line))
	}
	got := string(mustJSON(t, s))
	want := `{"depth":13,"seldepth":18,"score_mate":-3,"nodes":90000,"nps":900000,"time_ms":100,"pv":["e2e4"]}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	// The largest note a move can carry stays far from the referee's 1 KiB.
	huge := moveNote{Name: clipName(strings.Repeat("é", 100)), ElapsedMS: 1 << 62, Stopped: true, Restarts: 1}
	n := int64(-1 << 63)
	huge.searchInfo = searchInfo{Depth: n, SelDepth: n, ScoreCP: &n, Nodes: n, NPS: n, TimeMS: n}
	huge.update(strings.Fields("info pv " + strings.Repeat("a7a8q ", 50)))
	if meta := huge.metadata(); len(meta) > 600 || len(huge.PV) != maxPV || len(huge.Name) > maxNameBytes {
		t.Errorf("the largest note has %d bytes, %d pv moves, a name of %d bytes: %s", len(meta), len(huge.PV), len(huge.Name), meta)
	}
}

// The fake engine's first legal move at the start is a2a3, and its moves after the ones
// TestMovesOfAMatch sends are a7a5 and a5a4; this checks the fake, so that those tests
// check the strategy.
func TestFakeEngineMoves(t *testing.T) {
	for _, tt := range []struct {
		moves []string
		want  string
	}{
		{nil, "a2a3"},
		{[]string{"e2e4"}, "a7a5"},
		{[]string{"e2e4", "a7a5", "d2d4"}, "a5a4"},
	} {
		w := append([]string{"position", "startpos", "moves"}, tt.moves...)
		if got := firstLegal(fakePosition(w)); got != tt.want {
			t.Errorf("after %v: got %s, want %s", tt.moves, got, tt.want)
		}
	}
	if got := firstLegal(chess.StartingPosition()); got != "a2a3" {
		t.Errorf("got %s", got)
	}
}
