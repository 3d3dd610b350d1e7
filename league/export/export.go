// Package export writes a league's results and standings from its database for
// spreadsheets (CSV) and scripts (JSON), and a chess league's games for chess tools (PGN).
package export

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// Data is everything an export holds.
type Data struct {
	League League `json:"league"`
	// Players are the registered players, each with the agent card it registered with.
	Players []Player `json:"players"`
	// Standings are in the official order, with the tie-break columns.
	Standings  []standings.Row      `json:"standings"`
	Crosstable standings.Crosstable `json:"crosstable"`
	// Ratings are computed from the stored results as the League Manager does, and
	// RatingsWithoutForfeits without the games decided by a technical termination (absent
	// while there is none).
	Ratings                []ratings.Rating `json:"ratings"`
	RatingsWithoutForfeits []ratings.Rating `json:"ratings_without_forfeits,omitempty"`
	Results                []Result         `json:"results"`
}

// Player is a registered player and its agent card (none when it registered none).
type Player struct {
	PlayerID  string              `json:"player_id"`
	AgentCard *protocol.AgentCard `json:"agent_card,omitempty"`
	CardHash  string              `json:"card_hash,omitempty"`
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
	// TimeControl is the league's clock in the form of PGN's TimeControl tag ("10+0.1"),
	// absent when matches play under the deadline per move.
	TimeControl string `json:"time_control,omitempty"`
	// clock is the league's time control (nil: none).
	clock *protocol.TimeControl
	// Format is how the league is played and ranked (absent before its schedule).
	Format *schedule.Format `json:"format,omitempty"`
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
func Load(db *store.Store) (*Data, error) {
	d := &Data{Results: []Result{}}
	l, err := db.TheLeague()
	if err != nil {
		return nil, err
	}
	d.League.LeagueID, d.League.GameType, d.League.Status, d.League.Seed = l.ID, l.GameType, l.Status, l.Seed
	// The League Manager stores its whole config.Config as JSON when it creates the league;
	// decoding it into the same type keeps the two in step.
	var cfg config.Config
	if err := json.Unmarshal(l.Config, &cfg); err != nil {
		return nil, fmt.Errorf("read league config: %w", err)
	}
	d.League.Name, d.League.MoveResponseMS = cfg.League.Name, cfg.Timeouts.MatchLevel.MoveResponse
	if tc := cfg.Clock(); tc != nil && tc.On() {
		d.League.TimeControl, d.League.clock = tc.String(), tc
	}
	samples := cfg.Ranking.RatingSamples
	if f, found, err := db.Format(); err != nil {
		return nil, err
	} else if found {
		d.League.Format, samples = &f, f.RatingSamples
	}
	agents, err := db.Agents()
	if err != nil {
		return nil, err
	}
	d.Players = []Player{}
	for _, a := range agents {
		if a.Kind == store.KindPlayer {
			p := Player{PlayerID: a.ID, AgentCard: a.AgentCard}
			if a.AgentCard != nil {
				p.CardHash = a.AgentCard.Hash()
			}
			d.Players = append(d.Players, p)
		}
	}
	rounds, err := db.Schedule()
	if err != nil {
		return nil, err
	}
	var games, strength []ratings.Game // strength: without the games decided technically
	for _, rd := range rounds {
		for _, m := range rd.Matches {
			r := Result{MatchID: m.ID, RoundID: rd.ID, RoundNumber: rd.Number, Status: m.Status, Players: m.Players}
			if res := m.Result; res != nil {
				r.Outcome, r.Points, r.Referee, r.ReportedAt, r.Metadata = res.Outcome, res.Points, res.Referee, res.ReportedAt, res.Metadata
				md, _ := protocol.ReadGameMetadata(r.Metadata) // what cannot be read is left out
				r.Termination = string(md.Termination)
				if md.Forfeit != "" {
					r.Termination = "forfeit_" + md.Forfeit
				}
				if g, ok := ratings.FromOutcome(res.Outcome, md.Ending()); ok {
					games = append(games, g)
					if !md.Ending().Technical() {
						strength = append(strength, g)
					}
				}
			}
			d.Results = append(d.Results, r)
		}
	}
	table, err := db.Table()
	if err != nil {
		return nil, err
	}
	d.Standings, d.Crosstable = table.Detailed(), table.Crosstable(nil)
	players := make([]string, len(d.Standings))
	for i, r := range d.Standings {
		players[i] = r.PlayerID
	}
	provisional := 0
	if d.League.Format != nil {
		provisional = d.League.Format.ProvisionalGames
	}
	if d.Ratings, err = ratings.League(players, games, samples, l.Seed); err != nil {
		return nil, fmt.Errorf("rate players: %w", err)
	}
	d.Ratings = ratings.MarkProvisional(d.Ratings, provisional)
	if len(strength) < len(games) {
		if d.RatingsWithoutForfeits, err = ratings.League(players, strength, samples, l.Seed); err != nil {
			return nil, fmt.Errorf("rate players: %w", err)
		}
		d.RatingsWithoutForfeits = ratings.MarkProvisional(d.RatingsWithoutForfeits, provisional)
	}
	return d, nil
}

// num writes a rating or a tie-break with one decimal at most.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

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
	_ = cw.Write([]string{"rank", "player_id", "points", "wins", "draws", "losses", "matches_played", "sonneborn_berger", "head_to_head",
		"rating", "rating_low", "rating_high", "rank_low", "rank_high"})
	rated := map[string]ratings.Rating{}
	for _, r := range d.Ratings {
		rated[r.PlayerID] = r
	}
	for _, r := range d.Standings {
		rt := rated[r.PlayerID]
		_ = cw.Write([]string{strconv.Itoa(r.Rank), r.PlayerID, strconv.Itoa(r.Points), strconv.Itoa(r.Wins), strconv.Itoa(r.Draws), strconv.Itoa(r.Losses), strconv.Itoa(r.MatchesPlayed),
			num(r.SonnebornBerger), strconv.Itoa(r.HeadToHead), num(rt.Rating), num(rt.Low), num(rt.High), strconv.Itoa(rt.RankLow), strconv.Itoa(rt.RankHigh)})
	}
	cw.Flush()
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	_ = cw.Write([]string{"round_number", "round_id", "match_id", "status", "first", "second", "first_outcome", "second_outcome", "first_points", "second_points", "termination", "referee_id", "reported_at",
		"time_control", "first_clock_ms", "second_clock_ms"})
	for _, r := range d.Results {
		a, b := r.Players[0], r.Players[1]
		row := []string{strconv.Itoa(r.RoundNumber), r.RoundID, r.MatchID, r.Status, a, b, r.Outcome[a], r.Outcome[b], "", "", r.Termination, r.Referee, r.ReportedAt, "", "", ""}
		if r.Points != nil {
			row[8], row[9] = strconv.Itoa(r.Points[a]), strconv.Itoa(r.Points[b])
		}
		if r.Metadata != nil {
			md, _ := protocol.ReadGameMetadata(r.Metadata)
			if tc := timeControl(md, d.League.clock); tc != nil {
				row[13] = tc.String()
			}
			left := lastClocks(md.Moves)
			for i, p := range r.Players {
				if ms, ok := left[p]; ok {
					row[14+i] = strconv.FormatInt(ms, 10)
				}
			}
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
// ended in a way PGN names, TimeControl (the clock of a match played under one, else the
// move deadline when it is whole seconds), PlyCount, and MatchId, the league's match id.
// Under a clock each move is followed by the mover's clock after it, {[%clk 0:00:09.9]}.
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
		md, _ := protocol.ReadGameMetadata(r.Metadata)
		var final struct { // the chess rules' final state
			MovesSAN    []string `json:"moves_san"`
			Termination string   `json:"termination"`
			StartFEN    string   `json:"start_fen"`
		}
		if r.Outcome == nil || json.Unmarshal(md.FinalState, &final) != nil || final.MovesSAN == nil {
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
		if t := pgnTermination(string(md.Termination), final.Termination); t != "" {
			tags = append(tags, game.PGNTag{Name: "Termination", Value: t})
		}
		if tc := timeControl(md, d.League.clock); tc != nil {
			tags = append(tags, game.PGNTag{Name: "TimeControl", Value: tc.String()})
		} else if tc := pgnTimeControl(d.League.MoveResponseMS); tc != "" {
			tags = append(tags, game.PGNTag{Name: "TimeControl", Value: tc})
		}
		tags = append(tags,
			game.PGNTag{Name: "PlyCount", Value: strconv.Itoa(len(final.MovesSAN))},
			game.PGNTag{Name: "MatchId", Value: r.MatchID})
		if n > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		text, err := game.ChessPGNFrom(tags, final.StartFEN, final.MovesSAN, pgnClocks(md.Moves, len(final.MovesSAN)), result)
		if err != nil {
			return fmt.Errorf("match %s: %w", r.MatchID, err)
		}
		if _, err := io.WriteString(w, text); err != nil {
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
	switch r.Outcome[r.Players[0]] + "/" + r.Outcome[r.Players[1]] {
	case "win/loss":
		return "1-0"
	case "loss/win":
		return "0-1"
	case "draw/draw":
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
func pgnTermination(match, chessEnd string) string {
	switch match {
	case "normal":
		return game.ChessPGNTermination(chessEnd)
	case string(protocol.TerminationTimeout), string(protocol.TerminationTimeoutDraw):
		return "time forfeit" // the Result tag tells a loss from a draw
	case "illegal_move", "no_show", "double_no_show":
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

// timeControl is the clock a match was played under: the one its referee recorded, else
// the league's (every match of a league with a clock is played under it; a result
// recorded before referees wrote it says nothing); nil for none.
func timeControl(md protocol.GameMetadata, league *protocol.TimeControl) *protocol.TimeControl {
	if tc := md.TimeControl; tc != nil && tc.On() {
		return tc
	}
	return league
}

// hasClocks reports whether a move record carries the mover's clock.
func hasClocks(moves []protocol.MoveRecord) bool {
	for _, mv := range moves {
		if mv.ClockMS != nil {
			return true
		}
	}
	return false
}

// lastClocks is each player's clock after its last move that carries one.
func lastClocks(moves []protocol.MoveRecord) map[string]int64 {
	left := map[string]int64{}
	for _, mv := range moves {
		if mv.ClockMS != nil {
			left[mv.Player] = *mv.ClockMS
		}
	}
	return left
}

// pgnClocks is the [%clk] comment of each of a chess game's plies, from the clock its
// move record carries: the records are the game's last plies, after an opening's; nil
// when there are more records than plies.
func pgnClocks(moves []protocol.MoveRecord, plies int) []string {
	if len(moves) > plies || !hasClocks(moves) {
		return nil
	}
	// The plies of an opening come first and have no clock.
	comments := make([]string, plies)
	opening := plies - len(moves)
	for i, mv := range moves {
		if mv.ClockMS != nil {
			comments[opening+i] = game.PGNClock(*mv.ClockMS)
		}
	}
	return comments
}
