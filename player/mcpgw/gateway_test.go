package mcpgw

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolsAndRules(t *testing.T) {
	g := startGateway(t, startLeague(t), nil)
	cs := connect(t, g, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s lacks a description, an input or an output schema", tool.Name)
		}
	}
	want := []string{"get_match", "get_standings", "join_league", "leave_league", "make_move", "wait_for_turn"}
	if slices.Sort(names); !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	rr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "rules://tic_tac_toe"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "Three of your marks in a row") {
		t.Errorf("rules of tic_tac_toe: %+v", rr.Contents)
	}
	lr, err := cs.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lr.Resources) != 5 {
		t.Errorf("%d resources, want the rules of the 5 games", len(lr.Resources))
	}
}

func TestJoinRefusals(t *testing.T) {
	lg := startLeague(t)
	g := startGateway(t, lg, nil)
	cs := connect(t, g, nil)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want string
	}{
		{"id that is a path", "join_league", map[string]any{"player_id": "../p1"}, "player id"},
		{"no id", "join_league", map[string]any{}, "player_id"},
		{"move without a seat", "make_move", map[string]any{"move": "1,1"}, "holds no seat"},
		{"wait without a seat", "wait_for_turn", map[string]any{}, "holds no seat"},
		{"standings with no seat on the gateway", "get_standings", nil, "join_league first"},
		{"leave without a seat", "leave_league", nil, "holds no seat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := call(t, cs, tt.tool, tt.args, nil); !strings.Contains(got, tt.want) {
				t.Errorf("%s: error %q, want one mentioning %q", tt.tool, got, tt.want)
			}
		})
	}
	// None of it took a seat: the session joins now.
	var j JoinOutput
	mustCall(t, cs, "join_league", map[string]any{"player_id": "p1", "display_name": "Claude"}, &j)
	if j.PlayerID != "p1" || j.LeagueID != testLeagueID {
		t.Errorf("join: %+v", j)
	}
	if got := lg.endpoint("p1"); got != g.Base()+"/seats/p1" {
		t.Errorf("registered endpoint %q, want %q", got, g.Base()+"/seats/p1")
	}
	if got := call(t, cs, "join_league", map[string]any{"player_id": "p2"}, nil); !strings.Contains(got, "already holds the seat of p1") {
		t.Errorf("second join: %q", got)
	}
	if got := call(t, cs, "wait_for_turn", map[string]any{"timeout_s": 601}, nil); !strings.Contains(got, "timeout_s must be 1 to 600") {
		t.Errorf("wait_for_turn 601 s: %q", got)
	}
}

func TestIllegalMoveThenLegal(t *testing.T) {
	lg := startLeague(t)
	g := startGateway(t, lg, nil)
	cs := connect(t, g, nil)
	mustCall(t, cs, "join_league", map[string]any{"player_id": "p2"}, nil)
	ref := newReferee(t, lg)
	ref.invite("p2", "p1")
	answer := ref.requestMove("p2", 30*time.Second)

	var w WaitResult
	mustCall(t, cs, "wait_for_turn", map[string]any{"timeout_s": 10}, &w)
	if w.Status != StatusYourTurn || w.Turn == nil {
		t.Fatalf("wait_for_turn: %+v, want your_turn", w)
	}
	tu := w.Turn
	if tu.MatchID != "R1M1" || tu.GameType != "tic_tac_toe" || tu.Opponent != "p1" || tu.StepNumber != 2 || len(tu.LegalMoves) != 8 ||
		tu.SecondsLeft <= 0 || tu.SecondsLeft > 30 || tu.Deadline == "" || !strings.Contains(tu.Board, "You play O") || tu.State["your_mark"] != "O" {
		t.Errorf("turn %+v", tu)
	}
	for _, bad := range []string{"0,0", "3,3", "e2e4", `{"row":0,"col":0}`} {
		got := call(t, cs, "make_move", map[string]any{"move": bad}, nil)
		if !strings.Contains(got, "illegal move") || !strings.Contains(got, "is not one of the legal moves") || !strings.Contains(got, `"1,1"`) {
			t.Errorf("make_move %s: %q, want an illegal move error naming the legal moves", bad, got)
		}
	}
	for _, bad := range []struct {
		move any
		want string
	}{{"", "move is empty"}, {true, "validating"}, {nil, "validating"}} {
		if got := call(t, cs, "make_move", map[string]any{"move": bad.move}, nil); !strings.Contains(got, bad.want) {
			t.Errorf("make_move %v: %q, want %q", bad.move, got, bad.want)
		}
	}
	// The turn is still there.
	mustCall(t, cs, "wait_for_turn", map[string]any{"timeout_s": 1}, &w)
	if w.Status != StatusYourTurn {
		t.Fatalf("after illegal moves: %+v, want your_turn still", w)
	}
	var m MoveResult
	mustCall(t, cs, "make_move", map[string]any{"move": "1,1"}, &m)
	if m.Status != "sent" || m.Move != "1,1" || m.MatchID != "R1M1" || m.StepNumber != 2 {
		t.Errorf("make_move: %+v", m)
	}
	a := <-answer
	wantMove(t, a, 1, 1)
	if got := call(t, cs, "make_move", map[string]any{"move": "2,2"}, nil); !strings.Contains(got, "no move is awaited") {
		t.Errorf("second make_move: %q", got)
	}
}

func TestDeadlineMissed(t *testing.T) {
	lg := startLeague(t)
	clk := newFakeClock()
	g := startGateway(t, lg, clk)
	cs := connect(t, g, nil)
	mustCall(t, cs, "join_league", map[string]any{"player_id": "p2"}, nil)
	ref := newReferee(t, lg)
	ref.invite("p2", "p1")
	answer := ref.requestMove("p2", 10*time.Second)
	var w WaitResult
	waitTurn(t, cs, clk, &w)
	// The client's time is the referee's less a tenth, at most half a second.
	if w.Turn.SecondsLeft != 9.5 {
		t.Errorf("seconds_left %v, want 9.5", w.Turn.SecondsLeft)
	}
	clk.Advance(9500 * time.Millisecond)
	// The seat withdraws the turn on its own goroutine, then holds the request until the
	// referee gives up, at most holdGrace more: once that timer is set, the turn is gone
	// (a make_move sent before could still take it).
	clk.waitTimer(t, clk.Now().Add(holdGrace))
	got := call(t, cs, "make_move", map[string]any{"move": "1,1"}, nil)
	if !strings.Contains(got, "deadline of match R1M1 step 2 passed") {
		t.Errorf("late make_move: %q", got)
	}
	select {
	case a := <-answer:
		t.Fatalf("referee answered before its own deadline: %s, %v", a.move, a.err)
	default:
	}
	clk.Advance(holdGrace)
	if a := <-answer; a.err == nil {
		t.Fatalf("referee got move %s after the deadline, want none", a.move)
	}
	// The seat plays on: the referee's next request is a turn again.
	answer = ref.requestMove("p2", 10*time.Second)
	waitTurn(t, cs, clk, &w)
	mustCall(t, cs, "make_move", map[string]any{"move": "2,2"}, nil)
	wantMove(t, <-answer, 2, 2)
}

// Under a clock wait_for_turn shows both clocks, and the turn's time is the clock's
// budget (protocol.TimeControl.Budget: 60 s / 30 + 3/4 of 1 s), not the referee's
// deadline, which is the whole clock: the seat gives the turn up then.
func TestTurnUnderAClock(t *testing.T) {
	lg := startLeague(t)
	clk := newFakeClock()
	g := startGateway(t, lg, clk)
	cs := connect(t, g, nil)
	mustCall(t, cs, "join_league", map[string]any{"player_id": "p2"}, nil)
	ref := newReferee(t, lg)
	ref.invite("p2", "p1")
	clocks := &protocol.Clocks{You: protocol.Clock{RemainingMS: 60000, BankMS: 0}, Opponent: protocol.Clock{RemainingMS: 45000, BankMS: 3000}, IncrementMS: 1000}
	answer := ref.requestMoveOn("p2", 60200*time.Millisecond, clocks)
	var w WaitResult
	waitTurn(t, cs, clk, &w)
	if w.Turn.SecondsLeft != 2.75 {
		t.Errorf("seconds_left %v, want the clock's budget 2.75", w.Turn.SecondsLeft)
	}
	if w.Turn.Clocks == nil || *w.Turn.Clocks != *clocks {
		t.Errorf("clocks %+v, want %+v", w.Turn.Clocks, clocks)
	}
	msg := turnMessage(*w.Turn)
	if want := "Clocks: yours 60.0 s, your opponent's 45.0 s (bank 3.0 s), 1.0 s added after each move; out of time loses."; !strings.Contains(msg, want) {
		t.Errorf("turn message %q lacks %q", msg, want)
	}
	clk.Advance(2750 * time.Millisecond)
	clk.waitTimer(t, clk.Now().Add(holdGrace))
	if got := call(t, cs, "make_move", map[string]any{"move": "1,1"}, nil); !strings.Contains(got, "deadline of match R1M1 step 2 passed") {
		t.Errorf("make_move after the clock's budget: %q", got)
	}
	clk.Advance(holdGrace)
	if a := <-answer; a.err == nil {
		t.Fatalf("referee got move %s after the budget, want none", a.move)
	}
	// Without clocks the turn tells none.
	if msg := turnMessage(TurnInfo{MatchID: "m", GameType: "tic_tac_toe"}); strings.Contains(msg, "Clocks") {
		t.Errorf("turn message without clocks: %q", msg)
	}
}

// waitTurn calls wait_for_turn until a turn comes; the fake clock stands still, so
// only the turn ends the wait.
func waitTurn(t *testing.T, cs *sdk.ClientSession, clk *fakeClock, w *WaitResult) {
	t.Helper()
	mustCall(t, cs, "wait_for_turn", map[string]any{"timeout_s": 60}, w)
	if w.Status != StatusYourTurn {
		t.Fatalf("wait_for_turn: %+v, want your_turn", w)
	}
}

func TestProgressWhileWaiting(t *testing.T) {
	lg := startLeague(t)
	clk := newFakeClock()
	g := startGateway(t, lg, clk)
	progress := make(chan *sdk.ProgressNotificationParams, 4)
	cs := connect(t, g, &sdk.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
		progress <- r.Params
	}})
	mustCall(t, cs, "join_league", map[string]any{"player_id": "p1"}, nil)
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		params := &sdk.CallToolParams{Name: "wait_for_turn", Arguments: map[string]any{"timeout_s": 12}}
		params.SetProgressToken("wait-1")
		res, err := cs.CallTool(context.Background(), params)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	start := clk.Now()
	for k := 1; k <= 2; k++ {
		clk.waitTimer(t, start.Add(time.Duration(k)*DefaultProgressEvery))
		clk.Advance(DefaultProgressEvery)
		p := <-progress
		if p.ProgressToken != "wait-1" || p.Progress != float64(5*k) || !strings.Contains(p.Message, "waiting for a referee") {
			t.Errorf("progress %d: %+v", k, p)
		}
	}
	clk.waitTimer(t, start.Add(12*time.Second))
	clk.Advance(2 * time.Second)
	res := <-done
	var w WaitResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &w); err != nil || w.Status != StatusWaiting {
		t.Errorf("wait_for_turn after its timeout: %s, %v; want waiting", b, err)
	}
}

func TestSessionsCannotTouchEachOthersSeat(t *testing.T) {
	lg := startLeague(t)
	clk := newFakeClock()
	g := startGateway(t, lg, clk)
	a, b := connect(t, g, nil), connect(t, g, nil)
	mustCall(t, a, "join_league", map[string]any{"player_id": "p1"}, nil)
	mustCall(t, b, "join_league", map[string]any{"player_id": "p2"}, nil)
	if got := call(t, b, "join_league", map[string]any{"player_id": "p1"}, nil); !strings.Contains(got, "already holds the seat of p2") {
		t.Errorf("b joins as p1: %q", got)
	}
	c := connect(t, g, nil)
	if got := call(t, c, "join_league", map[string]any{"player_id": "p1"}, nil); !strings.Contains(got, "p1 already has a seat on this gateway") {
		t.Errorf("c joins as p1: %q", got)
	}
	ref := newReferee(t, lg)
	ref.invite("p1", "p2")
	answer := ref.requestMove("p1", 10*time.Second)
	var w WaitResult
	waitTurn(t, a, clk, &w)
	// b sees nothing of p1's turn and cannot answer it.
	if got := call(t, b, "make_move", map[string]any{"move": "1,1"}, nil); !strings.Contains(got, "no move is awaited") {
		t.Errorf("b moves: %q", got)
	}
	if got := call(t, b, "make_move", map[string]any{"move": "1,1", "match_id": "R1M1"}, nil); !strings.Contains(got, "no move is awaited in match R1M1") {
		t.Errorf("b moves in R1M1: %q", got)
	}
	waited := make(chan WaitResult, 1)
	go func() {
		var w WaitResult
		mustCall(t, b, "wait_for_turn", map[string]any{"timeout_s": 5}, &w)
		waited <- w
	}()
	clk.waitTimer(t, clk.Now().Add(5*time.Second))
	clk.Advance(5 * time.Second)
	if w := <-waited; w.Status != StatusWaiting {
		t.Errorf("b's wait: %+v, want waiting", w)
	}
	// b leaves; a's turn is untouched and a answers it.
	var l LeaveOutput
	mustCall(t, b, "leave_league", nil, &l)
	if l.PlayerID != "p2" {
		t.Errorf("leave: %+v", l)
	}
	if res, err := httpStatus(g.Base() + "/seats/p2"); err != nil || res != 404 {
		t.Errorf("GET of a seat left: %d, %v; want 404", res, err)
	}
	mustCall(t, a, "make_move", map[string]any{"move": "1,1"}, nil)
	wantMove(t, <-answer, 1, 1)
	var info MatchOutput
	mustCall(t, a, "get_match", map[string]any{"match_id": "R1M1"}, &info)
	if info.Status != "IN_PROGRESS" || info.RefereeID != "ref1" || len(info.Players) != 2 || info.Result != nil {
		t.Errorf("get_match: %+v", info)
	}
	if got := call(t, a, "get_match", map[string]any{"match_id": "R9M9"}, nil); !strings.Contains(got, string(protocol.ReasonUnknownMatch)) {
		t.Errorf("get_match R9M9: %q", got)
	}
}

// wantMove checks that the referee got the tic-tac-toe move (row, col).
func wantMove(t *testing.T, a moveAnswer, row, col int) {
	t.Helper()
	var got struct{ Row, Col int }
	if a.err != nil || json.Unmarshal(a.move, &got) != nil || got.Row != row || got.Col != col {
		t.Fatalf("referee got %s, %v; want row %d col %d", a.move, a.err, row, col)
	}
}
