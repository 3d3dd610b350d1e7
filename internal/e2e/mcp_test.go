package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/player/mcpgw"
	"github.com/agentleague/agentleague/protocol"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// inspector is the independent MCP client of the end-to-end tests, run through npx.
const inspector = "@modelcontextprotocol/inspector@2.12.0"

// runInspector runs the MCP Inspector's CLI against url and returns its stdout.
func runInspector(t *testing.T, npx, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, append([]string{"-y", inspector, "--cli", url, "--transport", "http"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// playSeat plays one MCP session's seat until the league ends: the first legal move each
// turn, after one illegal try in its first turn. It returns how its matches ended.
func playSeat(ctx context.Context, url, id string) ([]mcpgw.GameOver, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	c := sdk.NewClient(&sdk.Implementation{Name: "script-" + id, Version: "v0"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	tool := func(name string, args map[string]any, out any) (string, error) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			return res.Content[0].(*sdk.TextContent).Text, nil
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return "", err
		}
		return "", json.Unmarshal(b, out)
	}
	var j mcpgw.JoinOutput
	if msg, err := tool("join_league", map[string]any{"player_id": id}, &j); msg != "" || err != nil {
		return nil, fmt.Errorf("join_league: %s %v", msg, err)
	}
	var over []mcpgw.GameOver
	tried := false
	for {
		var w mcpgw.WaitResult
		if msg, err := tool("wait_for_turn", map[string]any{"timeout_s": 30}, &w); msg != "" || err != nil {
			return over, fmt.Errorf("wait_for_turn: %s %v", msg, err)
		}
		switch w.Status {
		case mcpgw.StatusYourTurn:
			if !tried {
				tried = true
				if msg, err := tool("make_move", map[string]any{"move": "9,9"}, &mcpgw.MoveResult{}); err != nil || !strings.Contains(msg, "illegal move") {
					return over, fmt.Errorf("an illegal move was not refused: %q %v", msg, err)
				}
			}
			if msg, err := tool("make_move", map[string]any{"move": w.Turn.LegalMoves[0]}, &mcpgw.MoveResult{}); msg != "" || err != nil {
				return over, fmt.Errorf("make_move: %s %v", msg, err)
			}
		case mcpgw.StatusGameOver:
			over = append(over, *w.GameOver)
		case mcpgw.StatusLeagueOver:
			return over, nil
		}
	}
}

// A league of the real binaries where two of four players are MCP sessions driven by a
// script through the gateway; the MCP Inspector's CLI, an independent client, lists the
// tools and reads the standings, which agree with a recount of the results.
func TestMCPLeague(t *testing.T) {
	npx := interpreter(t, "npx")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	type outcome struct {
		id   string
		over []mcpgw.GameOver
		err  error
	}
	results := make(chan outcome, 2)
	var gw *proc
	run := startLeague(t, leagueOpts{players: 2, referees: 1, seed: 1, maxMatches: 2, hold: true,
		extraPlayers: func(t *testing.T, lmURL string) int {
			gw = startProc(t, "gateway", nil, filepath.Join(binDir, "player"), "mcp", "--addr", "127.0.0.1:0", "--league", lmURL, "--log-dir", t.TempDir())
			for _, id := range []string{"p03", "p04"} {
				go func() {
					over, err := playSeat(ctx, gw.url, id)
					results <- outcome{id, over, err}
				}()
			}
			return 2
		}})

	out := runInspector(t, npx, gw.url, "--method", "tools/list")
	for _, name := range []string{"join_league", "wait_for_turn", "make_move", "get_standings", "get_match", "leave_league"} {
		if !strings.Contains(out, `"name": "`+name+`"`) {
			t.Errorf("the inspector's tools/list lacks %s:\n%s", name, out)
		}
	}
	run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	run.waitCompleted(t, 3*time.Minute)

	// The inspector's session holds no seat: it reads the table through the gateway.
	out = runInspector(t, npx, gw.url, "--method", "tools/call", "--tool-name", "get_standings")
	var viaInspector struct {
		StructuredContent mcpgw.StandingsOutput `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(out), &viaInspector); err != nil {
		t.Fatalf("the inspector's get_standings: %v\n%s", err, out)
	}
	table := viaInspector.StructuredContent
	if !table.Final || len(table.Standings) != 4 {
		t.Errorf("standings through the inspector: %+v, want the final table of 4", table)
	}
	want := run.checkLeague(t, 1)
	if fmt.Sprint(table.Standings) != fmt.Sprint(want) {
		t.Errorf("standings through the inspector do not agree with a recount of the results:\n got %v\nwant %v", table.Standings, want)
	}

	// LEAGUE_SHUTDOWN ends the scripts: each saw its three matches end.
	run.admin(t, protocol.AdminShutdownRequest, map[string]any{"reason": "test over"})
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Errorf("script %s: %v", r.id, r.err)
			continue
		}
		var row protocol.StandingsRow
		for _, s := range want {
			if s.PlayerID == r.id {
				row = s
			}
		}
		counts := map[string]int{}
		for _, o := range r.over {
			counts[o.Outcome]++
		}
		if len(r.over) != 3 || counts["win"] != row.Wins || counts["draw"] != row.Draws || counts["loss"] != row.Losses {
			t.Errorf("script %s saw %d matches end (%v); the standings say %+v", r.id, len(r.over), counts, row)
		}
	}
	if code := gw.stop(t); code != 0 {
		t.Errorf("gateway exit code %d; stderr:\n%s", code, gw.out.String())
	}
}
