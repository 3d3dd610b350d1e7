package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/player/mcpgw"
	"github.com/agentleague/agentleague/protocol"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// seatEnd is how a scripted MCP seat's play ended: the last wait_for_turn answer, when
// it came, and the statuses it saw.
type seatEnd struct {
	id       string
	last     mcpgw.WaitResult
	at       time.Time
	statuses []string
	err      error
}

// playStdioSeat plays one seat through cs until league_over: the first legal move of
// every turn.
func playStdioSeat(ctx context.Context, cs *sdk.ClientSession, id string) seatEnd {
	end := seatEnd{id: id}
	for {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "wait_for_turn", Arguments: map[string]any{"timeout_s": 5}})
		if err == nil && res.IsError {
			err = fmt.Errorf("%s", res.Content[0].(*sdk.TextContent).Text)
		}
		if err != nil {
			end.err = fmt.Errorf("wait_for_turn: %w", err)
			return end
		}
		var w mcpgw.WaitResult
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &w); err != nil {
			end.err = err
			return end
		}
		end.statuses = append(end.statuses, w.Status)
		switch w.Status {
		case mcpgw.StatusYourTurn:
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "make_move", Arguments: map[string]any{"move": w.Turn.LegalMoves[0]}})
			if err != nil || res.IsError {
				end.err = fmt.Errorf("make_move: %+v %v", res, err)
				return end
			}
		case mcpgw.StatusLeagueOver, mcpgw.StatusLeft:
			end.last, end.at = w, time.Now()
			return end
		}
	}
}

// Two MCP clients (the Go SDK, scripted) are seated through gateways on stdio, which
// listen on no port: their seats are outbound, through the League Manager's relay. They
// play a whole round robin with two ordinary players, and each gets league_over with the
// final standings when the league completes, from LEAGUE_COMPLETED: no LEAGUE_SHUTDOWN is
// sent before. The delay from the League Manager's completion to the client's answer is
// logged (the mechanism is a notice that wakes the waiting call, not a poll).
func TestMCPOutboundSeatsLearnLeagueCompleted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ends := make(chan seatEnd, 2)
	logDirs := map[string]string{}
	run := startLeague(t, leagueOpts{players: 2, referees: 1, seed: 3, maxMatches: 2, hold: true,
		extraPlayers: func(t *testing.T, lmURL string) int {
			for _, id := range []string{"p03", "p04"} {
				logDirs[id] = t.TempDir()
				cmd := exec.Command(filepath.Join(binDir, "player"), "mcp", "--stdio", "--league", lmURL, "--log-dir", logDirs[id])
				stderr := &syncBuffer{}
				cmd.Stderr = stderr
				c := sdk.NewClient(&sdk.Implementation{Name: "script-" + id, Version: "v0"}, nil)
				cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
				if err != nil {
					t.Fatalf("connect %s: %v; stderr:\n%s", id, err, stderr)
				}
				t.Cleanup(func() { _ = cs.Close() })
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "join_league", Arguments: map[string]any{"player_id": id}})
				if err != nil || res.IsError {
					t.Fatalf("join_league %s: %+v %v; stderr:\n%s", id, res, err, stderr)
				}
				go func() { ends <- playStdioSeat(ctx, cs, id) }()
			}
			return 2
		}})
	run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	run.waitCompleted(t, 2*time.Minute)
	want := run.checkLeague(t, 1)

	for range 2 {
		var end seatEnd
		select {
		case end = <-ends:
		case <-ctx.Done():
			t.Fatal("a seat did not end") // a guard against a hang, not a measure
		}
		if end.err != nil {
			t.Errorf("seat %s: %v (statuses %v)", end.id, end.err, end.statuses)
			continue
		}
		f := end.last.Final
		if end.last.Status != mcpgw.StatusLeagueOver || f == nil {
			t.Errorf("seat %s ended with %+v, want league_over with the final table", end.id, end.last)
			continue
		}
		if fmt.Sprint(f.Standings) != fmt.Sprint(want) {
			t.Errorf("seat %s: final table %v, want the recount %v", end.id, f.Standings, want)
		}
		completed, err := protocol.ParseTime(f.CompletedAt)
		if err != nil {
			t.Fatalf("completed_at %q: %v", f.CompletedAt, err)
		}
		t.Logf("seat %s: league_over %v after the league completed (rank %d, %d points)", end.id, end.at.Sub(completed).Round(time.Millisecond), f.Rank, f.Points)
		if strings.Count(strings.Join(end.statuses, " "), mcpgw.StatusGameOver) != 3 {
			t.Errorf("seat %s saw %v, want three game_over", end.id, end.statuses)
		}
	}
	// Nothing listened: the gateways said so in their logs.
	for id, dir := range logDirs {
		b, err := os.ReadFile(filepath.Join(dir, "mcp_gateway.log"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "no listening port") || strings.Contains(string(b), "mcp gateway listening") {
			t.Errorf("gateway of %s: its log does not say it listened on nothing:\n%s", id, b)
		}
	}
	run.admin(t, protocol.AdminShutdownRequest, map[string]any{"reason": "test over"})
}
