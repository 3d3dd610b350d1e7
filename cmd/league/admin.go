package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
)

func adminCall(ctx context.Context, url, token, messageType string, payload any) (*protocol.Message, error) {
	v, err := protocol.NewValidator()
	if err != nil {
		return nil, err
	}
	c := protocol.NewClient(v, nil)
	defer c.Close()
	msg, err := protocol.NewMessage(messageType, protocol.SenderAdmin, payload)
	if err != nil {
		return nil, err
	}
	msg.Envelope.AuthToken = token
	return c.Call(ctx, url, msg, protocol.CallOptions{
		Timeout: 10 * time.Second,
		Retry:   protocol.RetryPolicy{Attempts: 3, Backoff: 200 * time.Millisecond},
	})
}

func start(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("league start", flag.ContinueOnError)
	url := fset.String("league", "http://127.0.0.1:8000/mcp", "League Manager endpoint")
	dbPath := fset.String("db", "data/league.db", "database of the League Manager (admin.token is read beside it)")
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	token, err := adminTokenFor(*dbPath, false)
	if err != nil {
		return err
	}
	ans, err := adminCall(ctx, *url, token, protocol.AdminStartLeagueRequest, map[string]any{})
	if err != nil {
		return err
	}
	var p struct {
		Status       string `json:"status"`
		LeagueStatus string `json:"league_status"`
	}
	if err := ans.Decode(&p); err != nil {
		return err
	}
	fmt.Printf("league %s: %s (state %s)\n", ans.Envelope.LeagueID, p.Status, p.LeagueStatus)
	return nil
}

func standingsCmd(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("league standings", flag.ContinueOnError)
	url := fset.String("league", "http://127.0.0.1:8000/mcp", "League Manager endpoint")
	dbPath := fset.String("db", "data/league.db", "database of the League Manager (admin.token is read beside it)")
	asJSON := fset.Bool("json", false, "print the STANDINGS_RESPONSE payload as JSON")
	round := fset.String("round", "", "standings snapshot of a completed round")
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	token, err := adminTokenFor(*dbPath, false)
	if err != nil {
		return err
	}
	payload := map[string]any{}
	if *round != "" {
		payload["round_id"] = *round
	}
	ans, err := adminCall(ctx, *url, token, protocol.QueryStandings, payload)
	if err != nil {
		return err
	}
	if *asJSON {
		var v any
		if err := json.Unmarshal(ans.Payload, &v); err != nil {
			return err
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	var p struct {
		RoundID     *string         `json:"round_id"`
		LeagueState string          `json:"league_state"`
		Standings   []standings.Row `json:"standings"`
	}
	if err := ans.Decode(&p); err != nil {
		return err
	}
	round0 := "-"
	if p.RoundID != nil {
		round0 = *p.RoundID
	}
	fmt.Printf("league %s, state %s, round %s\n", ans.Envelope.LeagueID, p.LeagueState, round0)
	PrintTable(os.Stdout, p.Standings)
	return nil
}

// PrintTable writes standings as an aligned table.
func PrintTable(w io.Writer, rows []standings.Row) { standings.WriteTable(w, rows) }
