// Package export writes a league's results and standings from its database for
// spreadsheets (CSV) and scripts (JSON), and a chess league's games for chess tools (PGN).
package export

import (
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
)

// Data is everything an export holds.
type Data struct {
	League    League                  `json:"league"`
	Standings []protocol.StandingsRow `json:"standings"`
	Results   []Result                `json:"results"`
}

// League describes the exported league.
type League struct {
	LeagueID string `json:"league_id"`
	// Name is league.name of the configuration the league was created with.
	Name     string `json:"name"`
	GameType string `json:"game_type"`
	Status   string `json:"status"`
	Seed     int64  `json:"seed"`
	// MoveResponseMS is the deadline of each move, from the same configuration.
	MoveResponseMS int `json:"move_response_ms"`
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
	d := &Data{Standings: []protocol.StandingsRow{}, Results: []Result{}}
	var cfgJSON string
	if err := db.QueryRow(`SELECT league_id, game_type, status, seed, config FROM leagues`).Scan(&d.League.LeagueID, &d.League.GameType, &d.League.Status, &d.League.Seed, &cfgJSON); err != nil {
		return nil, fmt.Errorf("read league: %w", err)
	}
	// The League Manager stores its whole config.Config as JSON when it creates the league;
	// decoding it into the same type keeps the two in step.
	var cfg config.Config
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		return nil, fmt.Errorf("read league config: %w", err)
	}
	d.League.Name, d.League.MoveResponseMS = cfg.League.Name, cfg.Timeouts.MatchLevel.MoveResponse
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
			// The referee's own record: what cannot be read is left out.
			md := protocol.ReadGameMetadata(r.Metadata)
			r.Termination = string(md.Termination)
			if md.Forfeit != "" {
				r.Termination = string(protocol.TerminationForfeit) + "_" + md.Forfeit
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
		var r protocol.StandingsRow
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

// WritePGN writes every chess game of the league that a referee played (a match whose
// result holds the game's final state; forfeits the League Manager decided have none), in
// round order, each in the PGN export format. The Seven Tag Roster comes first: Event is the
// league's name, Site "Agent League <league_id>", Date the UTC day the game started (else
// the day its result was recorded), Round the round number, White and Black the player ids
// (the first mover has White), Result the match's result. Then Termination, when the match
// ended in a way PGN names, TimeControl, when the move deadline is whole seconds, PlyCount,
// and MatchId, the league's match id.
func WritePGN(w io.Writer, d *Data) error {
	if d.League.GameType != game.TypeChess {
		return fmt.Errorf("pgn export needs a chess league, this one plays %s", d.League.GameType)
	}
	event := d.League.Name
	if event == "" {
		event = "?"
	}
	n := 0
	for _, r := range d.Results {
		if r.Outcome == nil || len(r.Metadata) == 0 {
			continue
		}
		md, err := protocol.ParseGameMetadata(r.Metadata)
		if err != nil {
			continue
		}
		// The chess rules' final state: the game in SAN and how the board ended it.
		var board struct {
			MovesSAN    []string `json:"moves_san"`
			Termination string   `json:"termination"`
		}
		if json.Unmarshal(md.FinalState, &board) != nil || board.MovesSAN == nil {
			continue
		}
		result := pgnResult(r)
		tags := []game.PGNTag{
			{Name: "Event", Value: event},
			{Name: "Site", Value: "Agent League " + d.League.LeagueID},
			{Name: "Date", Value: pgnDate(md.StartedAt, r.ReportedAt)},
			{Name: "Round", Value: strconv.Itoa(r.RoundNumber)},
			{Name: "White", Value: r.Players[0]},
			{Name: "Black", Value: r.Players[1]},
			{Name: "Result", Value: result},
		}
		if t := pgnTermination(md.Termination, board.Termination); t != "" {
			tags = append(tags, game.PGNTag{Name: "Termination", Value: t})
		}
		if tc := pgnTimeControl(d.League.MoveResponseMS); tc != "" {
			tags = append(tags, game.PGNTag{Name: "TimeControl", Value: tc})
		}
		tags = append(tags,
			game.PGNTag{Name: "PlyCount", Value: strconv.Itoa(len(board.MovesSAN))},
			game.PGNTag{Name: "MatchId", Value: r.MatchID})
		if n > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, game.ChessPGN(tags, board.MovesSAN, result)); err != nil {
			return err
		}
		n++
	}
	return nil
}

// pgnResult is the match's result from White's side. It is the league's outcome, not the
// game's: a player who times out or moves illegally loses a game the board left open.
// Two losses (neither player showed up) have no PGN result but "*".
func pgnResult(r Result) string {
	white, black := protocol.Outcome(r.Outcome[r.Players[0]]), protocol.Outcome(r.Outcome[r.Players[1]])
	switch {
	case white == protocol.Win && black == protocol.Loss:
		return "1-0"
	case white == protocol.Loss && black == protocol.Win:
		return "0-1"
	case white == protocol.Draw && black == protocol.Draw:
		return "1/2-1/2"
	default:
		return "*"
	}
}

// pgnDate is the PGN Date (YYYY.MM.DD, UTC) of the first of the times that parses, or the
// standard's unknown date.
func pgnDate(times ...string) string {
	for _, s := range times {
		if t, err := protocol.ParseTime(s); err == nil {
			return t.Format("2006.01.02")
		}
	}
	return "????.??.??"
}

// pgnTermination maps how a match ended (the referee's termination) and, for a game the
// rules ended, how the game ended, to the PGN standard's Termination values (section
// 9.8.1); "" for a termination PGN has no value for.
func pgnTermination(match protocol.Termination, chessEnd string) string {
	switch match {
	case protocol.TerminationNormal:
		return game.ChessPGNTermination(chessEnd)
	case protocol.TerminationTimeout:
		return "time forfeit"
	case protocol.TerminationIllegalMove, protocol.TerminationNoShow, protocol.TerminationDoubleNoShow:
		// An administrative forfeit for not observing the laws of chess or the league's rules.
		return "rules infraction"
	default:
		return ""
	}
}

// pgnTimeControl is the PGN TimeControl of a move deadline: "1/<seconds>", one move per
// period of that many seconds, the period repeating for every move (standard section
// 9.6.1). The standard counts whole seconds, so another deadline gives "" rather than a
// rounded one.
func pgnTimeControl(moveMS int) string {
	if moveMS <= 0 || moveMS%1000 != 0 {
		return ""
	}
	return "1/" + strconv.Itoa(moveMS/1000)
}
