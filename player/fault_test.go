package player

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/agentleague/agentleague/referee"
	"github.com/rs/zerolog"
)

func TestParseFault(t *testing.T) {
	tests := []struct {
		in      string
		want    fault
		wantErr string
	}{
		{"", fault{}, ""},
		{"slow:800ms", fault{mode: FaultSlow, delay: 800 * time.Millisecond}, ""},
		{"slow:2s", fault{mode: FaultSlow, delay: 2 * time.Second}, ""},
		{"garbage", fault{mode: FaultGarbage}, ""},
		{"illegal", fault{mode: FaultIllegal}, ""},
		{"crash-after:3", fault{mode: FaultCrashAfter, after: 3}, ""},
		{"slow", fault{}, "slow:DURATION"},
		{"slow:fast", fault{}, "slow:DURATION"},
		{"slow:-1s", fault{}, "slow:DURATION"},
		{"slow:0s", fault{}, "slow:DURATION"},
		{"crash-after", fault{}, "crash-after:N"},
		{"crash-after:0", fault{}, "crash-after:N"},
		{"crash-after:x", fault{}, "crash-after:N"},
		{"garbage:1", fault{}, "takes no argument"},
		{"sleepy", fault{}, "unknown fault"},
		{":", fault{}, "unknown fault"},
		{"Garbage", fault{}, "unknown fault"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseFault(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseFault(%q): %+v, %v; want an error mentioning %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseFault(%q): %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
	cfg := Config{ID: "p01", Addr: "127.0.0.1:0", LeagueURL: "http://127.0.0.1:8000/mcp", Strategy: "random", Fault: "sleepy"}
	if _, err := New(cfg, testLogger(t)); err == nil || !strings.Contains(err.Error(), "unknown fault") {
		t.Errorf("New with an unknown fault: %v", err)
	}
}

// inProcess reaches players through their JSON-RPC server in memory, so a referee's
// MatchRunner drives them under synctest's fake clock. Like the HTTP client, it gives up
// at the attempt's deadline.
type inProcess map[string]*Player

func (c inProcess) Call(ctx context.Context, url string, m *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error) {
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	body, err := json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: m, ID: json.RawMessage(`1`)})
	if err != nil {
		return nil, err
	}
	out := c[url].rpc.Process(ctx, body)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s to %s: %w", m.Envelope.MessageType, url, err)
	}
	var resp protocol.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, fmt.Errorf("%w: %v", protocol.ErrBadResponse, err)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// registeredPlayer is a player as registration leaves it (league announcing every
// protection), without a server. Build it inside the synctest bubble that uses it.
func registeredPlayer(t *testing.T, id, fault string) *Player {
	t.Helper()
	p, err := New(Config{ID: id, Addr: "127.0.0.1:0", LeagueURL: "http://league.test/mcp", Strategy: "random", Seed: 1, Fault: fault, Stdout: io.Discard},
		testLogger(t).With().Str("player_id", id).Logger())
	if err != nil {
		t.Fatal(err)
	}
	p.link.token, p.link.leagueID, p.link.features, p.state = "tok-"+id, testLeagueID, allFeatures, StateActive
	close(p.link.registered)
	return p
}

// faultMatch is a match between a faulty p1 and a well-behaved p2, refereed by the real
// MatchRunner with 100 ms move deadlines and the ladder warning, forced move, loss.
func faultMatch(t *testing.T, gameType string, caller referee.Caller, endpoints, tokens map[string]string) *referee.MatchRunner {
	t.Helper()
	g, err := game.Default().New(gameType, nil)
	if err != nil {
		t.Fatal(err)
	}
	const matchID = "R1M1"
	creds := map[string]string{}
	for id, tok := range tokens {
		creds[id] = protocol.MatchCredential(tok, matchID)
	}
	return &referee.MatchRunner{
		RefereeID: "ref1", LeagueID: testLeagueID, Game: g, Caller: caller, Log: testLogger(t).With().Str("component", "referee").Logger(),
		JoinTimeout: 100 * time.Millisecond, MoveTimeout: 100 * time.Millisecond,
		Penalties: protocol.Penalties{MoveWarnings: 1, ForcedMoves: 1},
		A: protocol.Assignment{
			MatchID: matchID, RoundID: "round-1", GameType: gameType, Players: []string{"p1", "p2"},
			PlayerEndpoints: endpoints, MatchSeed: 7, MatchCredentials: creds,
		},
	}
}

// inProcessMatch builds the players in memory; fault applies to p1.
func inProcessMatch(t *testing.T, gameType, fault string) (*referee.MatchRunner, *Player, *Player) {
	t.Helper()
	p1, p2 := registeredPlayer(t, "p1", fault), registeredPlayer(t, "p2", "")
	caller := inProcess{"mem://p1": p1, "mem://p2": p2}
	r := faultMatch(t, gameType, caller, map[string]string{"p1": "mem://p1", "p2": "mem://p2"}, map[string]string{"p1": p1.link.token, "p2": p2.link.token})
	return r, p1, p2
}

// ladder lists the violations of a report as kind/action.
func ladder(rep *referee.Report) []string {
	var out []string
	for _, v := range rep.Metadata.Violations {
		out = append(out, string(v.Kind)+"/"+string(v.Action))
	}
	return out
}

func wantTechnicalLoss(t *testing.T, rep *referee.Report, termination protocol.Termination, violations ...string) {
	t.Helper()
	if rep.Outcome["p1"] != "loss" || rep.Outcome["p2"] != "win" || rep.Metadata.Termination != termination || rep.Metadata.Loser != "p1" {
		t.Errorf("outcome %v, termination %s, loser %s; want p1 to lose by %s", rep.Outcome, rep.Metadata.Termination, rep.Metadata.Loser, termination)
	}
	if got := ladder(rep); fmt.Sprint(got) != fmt.Sprint(violations) {
		t.Errorf("violations %v, want %v", got, violations)
	}
}

func TestFaultSlowLosesOnTheTimeoutLadder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _, p2 := inProcessMatch(t, game.TypeTicTacToe, "slow:300ms")
		start := time.Now()
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Three move deadlines of 100 ms pass before any slow answer: a warning (the request
		// re-sent), a forced move, then the technical loss.
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Errorf("match took %v of fake time, want 300ms", got)
		}
		wantTechnicalLoss(t, rep, protocol.TerminationTimeout, "timeout/warning", "timeout/forced_move", "timeout/technical_loss")
		if st := p2.Status(); st.Wins != 1 {
			t.Errorf("opponent status %+v, want a win", st)
		}
		// The slow handlers gave up with the referee; nothing is left running in the bubble.
		synctest.Wait()
	})
}

func TestFaultSlowAnswersWhenTheDeadlineAllows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _, _ := inProcessMatch(t, game.TypeTicTacToe, "slow:80ms")
		start := time.Now()
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Metadata.Termination != protocol.TerminationNormal || len(rep.Metadata.Violations) != 0 {
			t.Errorf("termination %s, violations %v; want a normal match", rep.Metadata.Termination, ladder(rep))
		}
		var p1Moves int
		for _, m := range rep.Metadata.Moves {
			if m.Player == "p1" {
				p1Moves++
				if m.ElapsedMS != 80 {
					t.Errorf("p1 answered in %d ms, want 80", m.ElapsedMS)
				}
			}
		}
		if got := time.Since(start); got != time.Duration(p1Moves)*80*time.Millisecond {
			t.Errorf("match took %v for %d slow moves", got, p1Moves)
		}
	})
}

func TestFaultIllegalLosesInEveryGame(t *testing.T) {
	for _, gameType := range game.Default().Types() {
		t.Run(gameType, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, _, _ := inProcessMatch(t, gameType, "illegal")
				rep, err := r.Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				wantTechnicalLoss(t, rep, protocol.TerminationIllegalMove, "invalid_move/technical_loss")
			})
		})
	}
}

func TestIllegalMove(t *testing.T) {
	g, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := g.NewState(1)
	view := func(i int) json.RawMessage {
		b, err := json.Marshal(st.Context(i))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if got := string(illegalMove(g, view(0))); got != `{"row":3,"col":3}` {
		t.Errorf("empty board: %s, want a cell off the board", got)
	}
	if st, err = st.Apply([]json.RawMessage{json.RawMessage(`{"row":1,"col":2}`)}); err != nil {
		t.Fatal(err)
	}
	mv := illegalMove(g, view(1))
	if string(mv) != `{"row":1,"col":2}` {
		t.Errorf("after X at (1, 2): %s, want that occupied cell", mv)
	}
	if _, err := st.ParseMove(1, mv); err == nil || !strings.Contains(err.Error(), game.ErrIllegalMove.Error()) {
		t.Errorf("the rules judge %s: %v, want an illegal move", mv, err)
	}
	rps, err := game.Default().New(game.TypeRockPaperScissors, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rps.NewState(1).Context(0))
	if got := string(illegalMove(rps, b)); got != `{"choice":"ckro"}` {
		t.Errorf("rock_paper_scissors: %s, want a choice outside the options", got)
	}
	if got := string(illegalMove(rps, json.RawMessage(`{"nonsense":true}`))); got != `"not a move"` {
		t.Errorf("unreadable context: %s, want a malformed move", got)
	}
}

func TestFaultCrashAfterExitsWithoutAnswering(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, p1, _ := inProcessMatch(t, game.TypeTicTacToe, "crash-after:2")
		var mu sync.Mutex
		var codes []int
		p1.fault.exit = func(code int) {
			mu.Lock()
			defer mu.Unlock()
			codes = append(codes, code)
		}
		start := time.Now()
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(codes) != 1 || codes[0] != CrashExitCode {
			t.Fatalf("exit called with %v, want once with %d", codes, CrashExitCode)
		}
		// The first move is answered; from the second request on nothing is, as if the
		// process were gone: the referee's ladder ends in a technical loss.
		if rep.Metadata.Moves[0].Player != "p1" || rep.Metadata.Moves[0].Outcome != protocol.MoveSuccess {
			t.Errorf("first move %+v, want p1's answered move", rep.Metadata.Moves[0])
		}
		wantTechnicalLoss(t, rep, protocol.TerminationTimeout, "timeout/warning", "timeout/forced_move", "timeout/technical_loss")
		if got := time.Since(start); got != 300*time.Millisecond {
			t.Errorf("match took %v, want three 100 ms deadlines", got)
		}
		if n := p1.fault.moveRequests.Load(); n != 4 {
			t.Errorf("p1 received %d move requests, want 4", n)
		}
	})
}

func TestFaultGarbageLosesOverHTTP(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	p1 := startPlayer(t, lg, Config{ID: "p1", Fault: "garbage"}, nil)
	p2 := startPlayer(t, lg, Config{ID: "p2"}, nil)
	p1.waitState(t, StateActive)
	p2.waitState(t, StateActive)

	// On the wire: HTTP 200 with a body that is not JSON-RPC.
	m, err := protocol.NewMessage(protocol.RequestMove, protocol.RefereeSender("ref1"), map[string]any{
		"step_number": 1, "step_context": map[string]any{"board": [][]string{{"", "", ""}, {"", "", ""}, {"", "", ""}}, "your_mark": "X", "move_number": 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Envelope.MatchID, m.Envelope.GameType, m.Envelope.AuthToken = "R0M0", game.TypeTicTacToe, p1.credential("R0M0")
	body, _ := json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: m, ID: json.RawMessage(`1`)})
	hc := &http.Client{Timeout: callTimeout}
	defer hc.CloseIdleConnections()
	res, err := hc.Post(p1.url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(got) != garbageBody || json.Valid(got) {
		t.Errorf("REQUEST_MOVE answered %d %q, want 200 with the garbage body", res.StatusCode, got)
	}
	// Other messages are still answered properly: the garbage player joins matches.
	if ans, err := newSender(t).invite(p1, "R0M1", p1.credential("R0M1")); err != nil || decode[protocol.JoinAck](t, ans).Status != "accepted" {
		t.Fatalf("invitation: %v", err)
	}

	client := protocol.NewClient(validator(t), nil)
	defer client.Close()
	r := faultMatch(t, game.TypeTicTacToe, client, map[string]string{"p1": p1.url, "p2": p2.url},
		map[string]string{"p1": lg.token("p1"), "p2": lg.token("p2")})
	// Hang guards: garbage is answered at once, and p2 must never miss a deadline.
	r.MoveTimeout, r.JoinTimeout = callTimeout, callTimeout
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantTechnicalLoss(t, rep, protocol.TerminationTimeout, "malformed_answer/warning", "malformed_answer/forced_move", "malformed_answer/technical_loss")
	if st := p1.Status(); st.Losses != 1 {
		t.Errorf("garbage player status %+v, want the loss recorded from GAME_OVER", st)
	}
}

func TestFaultIsLoggedAtStart(t *testing.T) {
	lg := startLeague(t, &fakeLeague{})
	var buf syncWriter
	p, err := New(Config{ID: "p1", Addr: "127.0.0.1:0", LeagueURL: lg.url, Strategy: "random", Fault: "slow:1s", Stdout: io.Discard,
		RegisterTimeout: callTimeout}, zerolog.New(&buf))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), `"fault":"slow:1s"`) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"level":"warn","fault":"slow:1s"`) {
		t.Errorf("log %s, want a warning naming the fault", buf.String())
	}
}

// syncWriter is a log sink safe for concurrent writes.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
