package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/localleague"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
)

// adminCall sends an admin message to a League Manager on this machine (demo, bench).
func adminCall(ctx context.Context, url, token, messageType string, payload any) (*protocol.Message, error) {
	return adminCallWith(ctx, protocol.ClientOptions{}, url, token, messageType, payload)
}

// adminCallWith is adminCall with the client's TLS and --insecure.
func adminCallWith(ctx context.Context, opt protocol.ClientOptions, url, token, messageType string, payload any) (*protocol.Message, error) {
	c, err := localleague.NewAdmin(opt)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Call(ctx, url, token, messageType, payload)
}

// adminNet are the flags of the commands that call a League Manager, or an agent, on
// another host: the admin commands and league conform.
type adminNet struct {
	tlsCA    string
	insecure bool
}

func (a *adminNet) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.tlsCA, "tls-ca", "", "CA certificates (PEM) to trust for an https --league, besides the system's")
	fs.BoolVar(&a.insecure, "insecure", false, "allow a plain http --league that is not loopback: the admin token then crosses the network in clear")
}

// options checks the calls' URLs against the loopback rule and loads --tls-ca.
func (a *adminNet) options(calls ...cli.Call) (protocol.ClientOptions, error) {
	n := cli.Net{TLSCA: a.tlsCA, Insecure: a.insecure}
	if err := n.Check("127.0.0.1:0", calls...); err != nil {
		return protocol.ClientOptions{}, usageError{err}
	}
	_, tlsCfg, err := n.Load()
	if err != nil {
		return protocol.ClientOptions{}, err
	}
	return protocol.ClientOptions{TLS: tlsCfg, Insecure: a.insecure}, nil
}

func start(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("league start", flag.ContinueOnError)
	url := fset.String("league", "http://127.0.0.1:8000/mcp", "League Manager endpoint")
	dbPath := fset.String("db", "data/league.db", "database of the League Manager (admin.token is read beside it)")
	var an adminNet
	an.addFlags(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	opt, err := an.options(cli.Call{Flag: "league", URL: *url})
	if err != nil {
		return err
	}
	token, err := adminTokenFor(*dbPath)
	if err != nil {
		return err
	}
	ans, err := adminCallWith(ctx, opt, *url, token, protocol.AdminStartLeagueRequest, map[string]any{})
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
	withStats := fset.Bool("stats", false, "add each player's statistics (illegal moves, timeouts, thinking time) from GET /status of the same server")
	withRatings := fset.Bool("ratings", false, "add tie-break columns and each player's rating with its 95% interval and rank range, from GET /api/league of the same server")
	withCross := fset.Bool("crosstable", false, "print the crosstable after the standings, from GET /api/league of the same server")
	var an adminNet
	an.addFlags(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	opt, err := an.options(cli.Call{Flag: "league", URL: *url})
	if err != nil {
		return err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = opt.TLS
	hc := &http.Client{Transport: tr}
	defer hc.CloseIdleConnections()
	base, onMCP := strings.CutSuffix(*url, "/mcp")
	for _, f := range []struct {
		set  bool
		name string
	}{{*withStats, "--stats"}, {*withRatings, "--ratings"}, {*withCross, "--crosstable"}} {
		if f.set && !onMCP {
			return usageError{fmt.Errorf("%s reads the live view beside the JSON-RPC endpoint, so --league must end with /mcp, got %s", f.name, *url)}
		}
	}
	if (*withRatings || *withCross) && (*round != "" || *withStats) {
		return usageError{errors.New("--ratings and --crosstable show the live league: not with --round or --stats")}
	}
	statusURL := base + "/status"
	token, err := adminTokenFor(*dbPath)
	if err != nil {
		return err
	}
	payload := map[string]any{}
	if *round != "" {
		payload["round_id"] = *round
	}
	ans, err := adminCallWith(ctx, opt, *url, token, protocol.QueryStandings, payload)
	if err != nil {
		return err
	}
	var view *web.LeagueView
	if *withRatings || *withCross {
		if view, err = leagueView(ctx, hc, base+"/api/league"); err != nil {
			return err
		}
	}
	var stats map[string]*league.PlayerStats
	if *withStats {
		if stats, err = playerStats(ctx, hc, statusURL); err != nil {
			return err
		}
	}
	if *asJSON {
		var v map[string]any
		if err := json.Unmarshal(ans.Payload, &v); err != nil {
			return err
		}
		if *withStats {
			v["player_stats"] = stats
		}
		if *withRatings {
			v["standings"], v["ratings"] = view.Standings, view.Ratings
		}
		if *withCross {
			v["crosstable"] = view.Crosstable
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	var p struct {
		RoundID     *string                 `json:"round_id"`
		LeagueState string                  `json:"league_state"`
		Standings   []protocol.StandingsRow `json:"standings"`
	}
	if err := ans.Decode(&p); err != nil {
		return err
	}
	round0 := "-"
	if p.RoundID != nil {
		round0 = *p.RoundID
	}
	fmt.Printf("league %s, state %s, round %s\n", ans.Envelope.LeagueID, p.LeagueState, round0)
	switch {
	case *withStats:
		writeStatsTable(os.Stdout, p.Standings, stats)
	case *withRatings:
		standings.WriteRated(os.Stdout, view.Standings, view.Ratings)
	default:
		PrintTable(os.Stdout, p.Standings)
	}
	if *withCross {
		fmt.Println()
		standings.WriteCrosstable(os.Stdout, view.Crosstable)
	}
	return nil
}

// leagueView reads GET /api/league, the live view's snapshot of the league.
func leagueView(ctx context.Context, c *http.Client, url string) (*web.LeagueView, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("read the league view: %w", err)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read the league view: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read the league view: GET %s: %s", url, res.Status)
	}
	var v web.LeagueView
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		return nil, fmt.Errorf("read the league view: %w", err)
	}
	return &v, nil
}

// playerStats reads every player's statistics from GET /status.
func playerStats(ctx context.Context, c *http.Client, statusURL string) (map[string]*league.PlayerStats, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, statusURL, nil)
	if err != nil {
		return nil, fmt.Errorf("read statistics: %w", err)
	}
	res, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read statistics: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read statistics: GET %s: %s", statusURL, res.Status)
	}
	var st league.Status
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("read statistics: %w", err)
	}
	out := map[string]*league.PlayerStats{}
	for _, a := range st.Agents {
		if a.Kind == "player" && a.Stats != nil {
			out[a.ID] = a.Stats
		}
	}
	return out, nil
}

// writeStatsTable writes the standings with each player's statistics.
func writeStatsTable(w io.Writer, rows []protocol.StandingsRow, stats map[string]*league.PlayerStats) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\tplayer\tpoints\twins\tdraws\tlosses\tplayed\tillegal\ttimeouts\tmoves\tavg_ms\tmax_ms\t")
	for _, r := range rows {
		s := stats[r.PlayerID]
		if s == nil {
			s = &league.PlayerStats{}
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%d\t\n", r.Rank, r.PlayerID, r.Points, r.Wins, r.Draws, r.Losses, r.MatchesPlayed,
			s.IllegalMoves, s.Timeouts, s.Moves, s.AvgThinkingMS, s.MaxThinkingMS)
	}
	tw.Flush()
}

// PrintTable writes standings as an aligned table.
func PrintTable(w io.Writer, rows []protocol.StandingsRow) { standings.WriteTable(w, rows) }
