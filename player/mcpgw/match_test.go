package mcpgw

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/protocol"
	"github.com/agentleague/agentleague/referee"
)

// TestWholeMatch plays a tic-tac-toe match between an MCP session's seat and an ordinary
// player, refereed by the real match runner over HTTP; then the league shuts down.
func TestWholeMatch(t *testing.T) {
	lg := startLeague(t)
	g := startGateway(t, lg, nil)
	cs := connect(t, g, nil)
	mustCall(t, cs, "join_league", map[string]any{"player_id": "p1"}, nil)
	startPlayer(t, lg, "p2")

	// The client plays the first legal move every time, until the match ends.
	over := make(chan GameOver, 1)
	go func() {
		for {
			var w WaitResult
			if msg := call(t, cs, "wait_for_turn", map[string]any{"timeout_s": 20}, &w); msg != "" {
				t.Errorf("wait_for_turn: %s", msg)
				close(over)
				return
			}
			switch w.Status {
			case StatusYourTurn:
				mustCall(t, cs, "make_move", map[string]any{"move": w.Turn.LegalMoves[0]}, nil)
			case StatusGameOver:
				over <- *w.GameOver
				return
			}
		}
	}()
	gm, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		t.Fatal(err)
	}
	caller := protocol.NewClient(lg.v, nil)
	defer caller.Close()
	r := &referee.MatchRunner{
		RefereeID: "ref1", LeagueID: testLeagueID, Game: gm, Caller: caller, Log: testLogger(t).With().Str("component", "referee").Logger(),
		JoinTimeout: 5 * time.Second, MoveTimeout: 5 * time.Second, Penalties: protocol.Penalties{MoveWarnings: 1, ForcedMoves: 1},
		A: protocol.Assignment{
			MatchID: "R1M1", RoundID: "round-1", GameType: game.TypeTicTacToe, Players: []string{"p1", "p2"}, MatchSeed: 7,
			PlayerEndpoints:  map[string]string{"p1": lg.endpoint("p1"), "p2": lg.endpoint("p2")},
			MatchCredentials: map[string]string{"p1": protocol.MatchCredential(lg.token("p1"), "R1M1"), "p2": protocol.MatchCredential(lg.token("p2"), "R1M1")},
		},
	}
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Metadata.Violations) != 0 || rep.Metadata.Termination != protocol.TerminationNormal {
		t.Errorf("match ended by %s with violations %+v, want a normal end", rep.Metadata.Termination, rep.Metadata.Violations)
	}
	o, ok := <-over
	if !ok {
		t.FailNow()
	}
	if o.MatchID != "R1M1" || o.Outcome != rep.Outcome["p1"] || o.FinalState == nil {
		t.Errorf("game_over %+v; the referee reports %v", o, rep.Outcome)
	}
	var info MatchOutput
	mustCall(t, cs, "get_match", map[string]any{"match_id": "R1M1"}, &info)
	if info.Result == nil || info.Result.Outcome != o.Outcome {
		t.Errorf("get_match: %+v, want the result %s", info, o.Outcome)
	}
	var st StandingsOutput
	mustCall(t, cs, "get_standings", nil, &st)
	if st.LeagueState != "RUNNING" {
		t.Errorf("standings: %+v", st)
	}

	lg.shutdown(t, "p1")
	var w WaitResult
	mustCall(t, cs, "wait_for_turn", map[string]any{"timeout_s": 10}, &w)
	if w.Status != StatusLeagueOver {
		t.Errorf("after LEAGUE_SHUTDOWN: %+v, want league_over", w)
	}
	if got := call(t, cs, "make_move", map[string]any{"move": "1,1"}, nil); !strings.Contains(got, "the league is over") {
		t.Errorf("make_move after the league: %q", got)
	}
}

// TestSessionGoneSeatTimesOut: a session that disappears leaves its seat registered,
// answering nothing in time, and no other session can take it.
func TestSessionGoneSeatTimesOut(t *testing.T) {
	lg := startLeague(t)
	clk := newFakeClock()
	g := startGateway(t, lg, clk)
	a := connect(t, g, nil)
	mustCall(t, a, "join_league", map[string]any{"player_id": "p1"}, nil)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	// The seat still accepts invitations, and holds a move request until its deadline.
	ref := newReferee(t, lg)
	ref.invite("p1", "p2")
	start := clk.Now()
	answer := ref.requestMove("p1", 10*time.Second)
	clk.waitTimer(t, start.Add(9500*time.Millisecond))
	clk.Advance(9500 * time.Millisecond)
	clk.waitTimer(t, clk.Now().Add(holdGrace))
	clk.Advance(holdGrace)
	if r := <-answer; r.err == nil {
		t.Errorf("the seat of a session gone answered %s, want no move", r.move)
	}
	b := connect(t, g, nil)
	if got := call(t, b, "join_league", map[string]any{"player_id": "p1"}, nil); !strings.Contains(got, "p1 already has a seat") {
		t.Errorf("another session joins as p1: %q", got)
	}
}

// startPlayer runs an ordinary player against lg until the test ends.
func startPlayer(t *testing.T, lg *fakeLeague, id string) {
	t.Helper()
	p, err := player.New(player.Config{ID: id, Addr: "127.0.0.1:0", LeagueURL: lg.url, Strategy: "perfect", Stdout: io.Discard},
		testLogger(t).With().Str("component", "player").Str("player_id", id).Logger())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("player %s: %v", id, err)
		}
	})
	select {
	case <-p.Registered():
	case err := <-done:
		t.Fatalf("player %s stopped: %v", id, err)
	}
}
