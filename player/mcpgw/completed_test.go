package mcpgw

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitAsync calls wait_for_turn in the background; the channel gets its result.
func waitAsync(t *testing.T, cs *sdk.ClientSession, timeoutS int) <-chan WaitResult {
	out := make(chan WaitResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "wait_for_turn", Arguments: map[string]any{"timeout_s": timeoutS}})
		var w WaitResult
		if err == nil && !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			err = json.Unmarshal(b, &w)
		}
		if err != nil || res.IsError {
			t.Errorf("wait_for_turn: %+v, %v", res, err)
		}
		out <- w
	}()
	return out
}

// A seat whose matches are all over while the league runs is told no_more_matches when
// its wait times out idle (the League Manager said matches_left 0); then LEAGUE_COMPLETED
// ends the wait in progress at once with league_over and the final table. The fake
// clock never reaches that wait's timeout: only the notice can end it, so the answer
// follows the league's completion with no delay of the gateway's own.
func TestLeagueOverWhenTheLeagueCompletes(t *testing.T) {
	lg := startLeague(t)
	clk := newFakeClock()
	g := startGateway(t, lg, clk)
	cs := connect(t, g, nil)
	mustCall(t, cs, "join_league", map[string]any{"player_id": "p1"}, nil)

	// Matches left: waiting, as before.
	lg.mu.Lock()
	lg.matchesLeft = new(1)
	lg.mu.Unlock()
	start := clk.Now()
	w := waitAsync(t, cs, 10)
	clk.waitTimer(t, start.Add(10*time.Second))
	clk.Advance(10 * time.Second)
	if got := <-w; got.Status != StatusWaiting {
		t.Errorf("wait_for_turn with a match left: %+v, want waiting", got)
	}
	// None left: no_more_matches.
	lg.mu.Lock()
	lg.matchesLeft = new(0)
	lg.mu.Unlock()
	start = clk.Now()
	w = waitAsync(t, cs, 10)
	clk.waitTimer(t, start.Add(10*time.Second))
	clk.Advance(10 * time.Second)
	if got := <-w; got.Status != StatusNoMoreMatches || got.MatchesLeft == nil || *got.MatchesLeft != 0 {
		t.Errorf("wait_for_turn with no match left: %+v, want no_more_matches", got)
	}

	w = waitAsync(t, cs, 600)
	clk.waitTimer(t, clk.Now().Add(600*time.Second))
	rows := []protocol.StandingsRow{
		{Rank: 1, PlayerID: "p2", Points: 3, Wins: 1, MatchesPlayed: 1},
		{Rank: 2, PlayerID: "p1", Points: 0, Losses: 1, MatchesPlayed: 1},
	}
	completedAt := clk.Now()
	lg.completed(t, "p1", rows)
	select {
	case got := <-w:
		t.Logf("league_over %v after LEAGUE_COMPLETED (fake clock)", clk.Now().Sub(completedAt))
		if got.Status != StatusLeagueOver || got.Final == nil || got.Final.Rank != 2 || got.Final.LeagueID != testLeagueID || len(got.Final.Standings) != 2 || got.Final.Standings[0] != rows[0] {
			t.Errorf("wait_for_turn after LEAGUE_COMPLETED: %+v (final %+v), want league_over with the final table, rank 2", got, got.Final)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("LEAGUE_COMPLETED did not end the wait in progress")
	}
	// Every later wait answers league_over at once; a move is refused.
	var again WaitResult
	mustCall(t, cs, "wait_for_turn", map[string]any{"timeout_s": 600}, &again)
	if again.Status != StatusLeagueOver || again.Final == nil {
		t.Errorf("wait_for_turn after the end: %+v", again)
	}
	if got := call(t, cs, "make_move", map[string]any{"move": "1,1"}, nil); got == "" {
		t.Errorf("make_move after the end was accepted")
	}
}
