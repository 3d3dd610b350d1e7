// Package export writes a league's results and standings from its database for
// spreadsheets (CSV) and scripts (JSON).
package export

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agentleague/agentleague/league/standings"
)

// Data is everything an export holds.
type Data struct {
	League    League          `json:"league"`
	Standings []standings.Row `json:"standings"`
	Results   []Result        `json:"results"`
}

// League describes the exported league.
type League struct {
	LeagueID string `json:"league_id"`
	GameType string `json:"game_type"`
	Status   string `json:"status"`
	Seed     int64  `json:"seed"`
}

// Result is one match and its result (empty outcome for a match without one).
type Result struct {
	MatchID     string            `json:"match_id"`
	RoundID     string            `json:"round_id"`
	RoundNumber int               `json:"round_number"`
	Status      string            `json:"status"`
	Players     [2]string         `json:"players"`
	Outcome     map[string]string `json:"outcome,omitempty"`
	Points      map[string]int    `json:"points,omitempty"`
	Termination string            `json:"termination,omitempty"`
	Referee     string            `json:"referee_id,omitempty"`
	ReportedAt  string            `json:"reported_at,omitempty"`
	Metadata    json.RawMessage   `json:"game_metadata,omitempty"`
}

// Load reads the league from a League Manager database.
func Load(db *sql.DB) (*Data, error) {
	d := &Data{Standings: []standings.Row{}, Results: []Result{}}
	if err := db.QueryRow(`SELECT league_id, game_type, status, seed FROM leagues`).Scan(&d.League.LeagueID, &d.League.GameType, &d.League.Status, &d.League.Seed); err != nil {
		return nil, fmt.Errorf("read league: %w", err)
	}
	rows, err := db.Query(`SELECT m.match_id, m.round_id, r.round_number, m.status, m.players,
		coalesce(x.outcome, ''), coalesce(x.points, ''), coalesce(x.game_metadata, ''), coalesce(x.referee_id, ''), coalesce(x.reported_at, '')
		FROM matches m JOIN rounds r ON r.round_id = m.round_id LEFT JOIN match_results x ON x.match_id = m.match_id
		ORDER BY r.round_number, m.match_index`)
	if err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Result
		var players, outcome, points, meta string
		if err := rows.Scan(&r.MatchID, &r.RoundID, &r.RoundNumber, &r.Status, &players, &outcome, &points, &meta, &r.Referee, &r.ReportedAt); err != nil {
			return nil, fmt.Errorf("read results: %w", err)
		}
		var ps []string
		if err := json.Unmarshal([]byte(players), &ps); err != nil || len(ps) != 2 {
			return nil, fmt.Errorf("match %s: bad players %q", r.MatchID, players)
		}
		r.Players = [2]string{ps[0], ps[1]}
		if outcome != "" {
			if err := json.Unmarshal([]byte(outcome), &r.Outcome); err != nil {
				return nil, fmt.Errorf("match %s outcome: %w", r.MatchID, err)
			}
			if err := json.Unmarshal([]byte(points), &r.Points); err != nil {
				return nil, fmt.Errorf("match %s points: %w", r.MatchID, err)
			}
		}
		if meta != "" {
			r.Metadata = json.RawMessage(meta)
			var m struct {
				Termination string `json:"termination"`
				Forfeit     string `json:"forfeit"`
			}
			_ = json.Unmarshal(r.Metadata, &m)
			r.Termination = m.Termination
			if m.Forfeit != "" {
				r.Termination = "forfeit_" + m.Forfeit
			}
		}
		d.Results = append(d.Results, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	srows, err := db.Query(`SELECT player_id, points, wins, draws, losses, matches_played FROM standings`)
	if err != nil {
		return nil, fmt.Errorf("read standings: %w", err)
	}
	defer srows.Close()
	for srows.Next() {
		var r standings.Row
		if err := srows.Scan(&r.PlayerID, &r.Points, &r.Wins, &r.Draws, &r.Losses, &r.MatchesPlayed); err != nil {
			return nil, fmt.Errorf("read standings: %w", err)
		}
		d.Standings = append(d.Standings, r)
	}
	if err := srows.Err(); err != nil {
		return nil, fmt.Errorf("read standings: %w", err)
	}
	standings.Sort(d.Standings)
	return d, nil
}

// WriteJSON writes the whole export as one JSON document.
func WriteJSON(w io.Writer, d *Data) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// WriteCSV writes two tables separated by an empty line: the standings, then one row
// per match with its result.
func WriteCSV(w io.Writer, d *Data) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"rank", "player_id", "points", "wins", "draws", "losses", "matches_played"})
	for _, r := range d.Standings {
		_ = cw.Write([]string{strconv.Itoa(r.Rank), r.PlayerID, strconv.Itoa(r.Points), strconv.Itoa(r.Wins), strconv.Itoa(r.Draws), strconv.Itoa(r.Losses), strconv.Itoa(r.MatchesPlayed)})
	}
	cw.Flush()
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	_ = cw.Write([]string{"round_number", "round_id", "match_id", "status", "first", "second", "first_outcome", "second_outcome", "first_points", "second_points", "termination", "referee_id", "reported_at"})
	for _, r := range d.Results {
		a, b := r.Players[0], r.Players[1]
		row := []string{strconv.Itoa(r.RoundNumber), r.RoundID, r.MatchID, r.Status, a, b, r.Outcome[a], r.Outcome[b], "", "", r.Termination, r.Referee, r.ReportedAt}
		if r.Points != nil {
			row[8], row[9] = strconv.Itoa(r.Points[a]), strconv.Itoa(r.Points[b])
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// WritePGN writes every finished chess game of the league as one PGN file, in round order.
func WritePGN(w io.Writer, d *Data) error {
	if d.League.GameType != "chess" {
		return fmt.Errorf("pgn export needs a chess league, this one plays %s", d.League.GameType)
	}
	n := 0
	for _, r := range d.Results {
		var md struct {
			FinalState struct {
				PGN string `json:"pgn"`
			} `json:"final_state"`
		}
		if len(r.Metadata) == 0 || json.Unmarshal(r.Metadata, &md) != nil || md.FinalState.PGN == "" {
			continue
		}
		if n > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		pgn := strings.TrimRight(md.FinalState.PGN, "\n") + "\n"
		if _, err := io.WriteString(w, pgn); err != nil {
			return err
		}
		n++
	}
	return nil
}
