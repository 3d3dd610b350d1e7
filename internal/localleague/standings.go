package localleague

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
)

// ErrNoLiveView refuses a StandingsQuery that needs the live view of a League Manager
// whose endpoint does not end with /mcp, beside which the live view is served.
var ErrNoLiveView = errors.New("no live view: it is served beside a JSON-RPC endpoint ending with /mcp")

// StandingsQuery is what league standings shows besides the standings.
type StandingsQuery struct {
	Round      string // the snapshot of this completed round instead of the live standings
	Stats      bool   // each player's statistics, from GET /status
	Ratings    bool   // the tie-break columns and the ratings, from GET /api/league
	Crosstable bool   // the crosstable, from GET /api/league
}

// Standings are a league's standings and what the StandingsQuery added.
type Standings struct {
	q        StandingsQuery
	leagueID string
	payload  json.RawMessage // of the STANDINGS_RESPONSE
	view     *web.LeagueView
	stats    map[string]*league.PlayerStats
}

// Standings asks the League Manager at url for its standings (QUERY_STANDINGS) and reads
// what q adds from the live view beside url.
func (a *Admin) Standings(ctx context.Context, url, token string, q StandingsQuery) (*Standings, error) {
	base, onMCP := strings.CutSuffix(url, "/mcp")
	if (q.Stats || q.Ratings || q.Crosstable) && !onMCP {
		return nil, ErrNoLiveView
	}
	payload := map[string]any{}
	if q.Round != "" {
		payload["round_id"] = q.Round
	}
	ans, err := a.Call(ctx, url, token, protocol.QueryStandings, payload)
	if err != nil {
		return nil, err
	}
	s := &Standings{q: q, leagueID: ans.Envelope.LeagueID, payload: ans.Payload}
	if q.Ratings || q.Crosstable {
		s.view = &web.LeagueView{}
		if err := a.getJSON(ctx, base+"/api/league", 30*time.Second, s.view); err != nil {
			return nil, fmt.Errorf("read the league view: %w", err)
		}
	}
	if q.Stats {
		var st league.Status
		if err := a.getJSON(ctx, base+"/status", 10*time.Second, &st); err != nil {
			return nil, fmt.Errorf("read statistics: %w", err)
		}
		s.stats = map[string]*league.PlayerStats{}
		for _, ag := range st.Agents {
			if ag.Kind == "player" && ag.Stats != nil {
				s.stats[ag.ID] = ag.Stats
			}
		}
	}
	return s, nil
}

// getJSON decodes the answer of GET url into v.
func (a *Admin) getJSON(ctx context.Context, url string, timeout time.Duration, v any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	res, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(v)
}

// WriteJSON writes the STANDINGS_RESPONSE payload with what the query added.
func (s *Standings) WriteJSON(w io.Writer) error {
	var v map[string]any
	if err := json.Unmarshal(s.payload, &v); err != nil {
		return err
	}
	if s.q.Stats {
		v["player_stats"] = s.stats
	}
	if s.q.Ratings {
		v["standings"], v["ratings"] = s.view.Standings, s.view.Ratings
		if s.view.SPRT != nil {
			v["sprt"] = s.view.SPRT
		}
		if s.view.Arena != nil {
			v["arena"] = s.view.Arena
		}
	}
	if s.q.Crosstable {
		v["crosstable"] = s.view.Crosstable
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteText writes the standings as a table, with the statistics or the ratings when
// the query asked for them, and the crosstable after it.
func (s *Standings) WriteText(w io.Writer) error {
	var p struct {
		RoundID     *string                 `json:"round_id"`
		LeagueState string                  `json:"league_state"`
		Standings   []protocol.StandingsRow `json:"standings"`
	}
	if err := json.Unmarshal(s.payload, &p); err != nil {
		return err
	}
	round := "-"
	if p.RoundID != nil {
		round = *p.RoundID
	}
	fmt.Fprintf(w, "league %s, state %s, round %s\n", s.leagueID, p.LeagueState, round)
	switch {
	case s.q.Stats:
		writeStatsTable(w, p.Standings, s.stats)
	case s.q.Ratings:
		standings.WriteRated(w, s.view.Standings, s.view.Ratings)
		if st := s.view.SPRT; st != nil {
			fmt.Fprintln(w)
			writeSPRT(w, s.view.Format, *st)
		}
		if st := s.view.Arena; st != nil {
			fmt.Fprintln(w)
			writeArena(w, *st)
		}
	default:
		standings.WriteTable(w, p.Standings)
	}
	if s.q.Crosstable {
		fmt.Fprintln(w)
		standings.WriteCrosstable(w, s.view.Crosstable)
	}
	return nil
}

// writeStatsTable writes the standings with each player's statistics and, when a player
// played under a clock, its clock figures: think and network time per move (p50, p99),
// time left at the end of a game (p50) and flags.
func writeStatsTable(w io.Writer, rows []protocol.StandingsRow, stats map[string]*league.PlayerStats) {
	clocked := false
	for _, st := range stats {
		clocked = clocked || st.Clock != nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "rank\tplayer\tpoints\twins\tdraws\tlosses\tplayed\tillegal\ttimeouts\tmoves\tavg_ms\tmax_ms\t"
	if clocked {
		head += "think_p50\tthink_p99\tnet_p50\tnet_p99\tleft_p50\tflags\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		st := stats[r.PlayerID]
		if st == nil {
			st = &league.PlayerStats{}
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%d\t", r.Rank, r.PlayerID, r.Points, r.Wins, r.Draws, r.Losses, r.MatchesPlayed,
			st.IllegalMoves, st.Timeouts, st.Moves, st.AvgThinkingMS, st.MaxThinkingMS)
		switch c := st.Clock; {
		case c != nil:
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t", c.ThinkMS.P50, c.ThinkMS.P99, c.NetworkMS.P50, c.NetworkMS.P99, c.LeftMS.P50, c.Flags)
		case clocked:
			fmt.Fprint(tw, "-\t-\t-\t-\t-\t-\t")
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// writeSPRT writes a gauntlet's SPRT: its hypotheses, the LLR between its bounds, the
// pairs and the decision.
func writeSPRT(w io.Writer, f schedule.Format, st schedule.SPRTState) {
	t := f.SPRT
	decision := "no decision yet"
	switch st.Decision {
	case schedule.AcceptH1:
		decision = fmt.Sprintf("H1 accepted: %s is %g Elo stronger or more", f.Candidates[0], t.Elo1)
	case schedule.AcceptH0:
		decision = fmt.Sprintf("H0 accepted: %s is not %g Elo stronger", f.Candidates[0], t.Elo1)
	}
	fmt.Fprintf(w, "SPRT elo0 %g, elo1 %g, alpha %g, beta %g (logistic Elo, pentanomial)\n", t.Elo0, t.Elo1, t.Alpha, t.Beta)
	fmt.Fprintf(w, "LLR %.2f (%.2f, %.2f), %d pairs %v, games W %d D %d L %d, Elo %+.1f: %s\n",
		st.LLR, st.Lower, st.Upper, st.Pairs, st.Penta, st.WDL[0], st.WDL[1], st.WDL[2], st.Elo, decision)
}

// writeArena writes an arena's games against its budget and where it stands.
func writeArena(w io.Writer, st schedule.ArenaState) {
	fmt.Fprintf(w, "arena %d of %d games: %s\n", st.Games, st.Budget, st.Reason)
}
