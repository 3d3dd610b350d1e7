// Package web serves the League Manager's read-only live view: a dashboard of the
// league and a match page that draws the board move by move, fed by a JSON API and the
// event stream. Nothing here can change the league, and no view carries a secret.
package web

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
)

//go:embed static
var static embed.FS

// ErrNotFound is returned by a Source for an unknown match or player.
var ErrNotFound = errors.New("not found")

// LeagueView is the dashboard's snapshot of the league.
type LeagueView struct {
	LeagueID     string         `json:"league_id"`
	GameType     string         `json:"game_type"`
	State        string         `json:"state"`
	CurrentRound int            `json:"current_round"`
	TotalRounds  int            `json:"total_rounds"`
	Referees     int            `json:"referees"`
	Players      int            `json:"players"`
	ByStatus     map[string]int `json:"matches_by_status"`
	MatchesTotal int            `json:"matches_total"`
	// Format is how the league is played and ranked.
	Format schedule.Format `json:"format"`
	// Standings are in the official order, with the tie-break columns: the page asked
	// for, which Page names (absent: all of them).
	Standings []standings.Row `json:"standings"`
	Page      *PageView       `json:"page,omitempty"`
	// Crosstable is among the players of the standings' page.
	Crosstable standings.Crosstable `json:"crosstable"`
	// Ratings are Bradley-Terry ratings with bootstrap intervals, best first, each marked
	// provisional below ranking.provisional_games.
	Ratings []ratings.Rating `json:"ratings"`
	// RatingsPage names the page of the ratings (and of the ratings without forfeits),
	// in their own order; absent when they are all there.
	RatingsPage *PageView `json:"ratings_page,omitempty"`
	// RatedGames are the games the ratings count; IntervalsGames those their intervals
	// and rank ranges come from: fewer while a large league's bootstrap is recomputed in
	// the background (the point ratings are always current).
	RatedGames     int `json:"rated_games"`
	IntervalsGames int `json:"intervals_games"`
	// RatingsWithoutForfeits are the ratings without the games decided by a technical
	// termination (an illegal move, a timeout): strength apart from the failures to follow
	// the format. Absent while no rated game was decided so.
	RatingsWithoutForfeits []ratings.Rating `json:"ratings_without_forfeits,omitempty"`
	// Cards are the agent cards players registered with, by player id.
	Cards map[string]Card `json:"cards,omitempty"`
	// LLM is the leaderboard of the language-model players (those whose moves carry llm
	// notes), best rated first: strength apart from legality, and cost.
	LLM []LLMRow `json:"llm,omitempty"`
	// SPRT is the state of a gauntlet's SPRT (scheduling.sprt) after the results so far.
	SPRT *schedule.SPRTState `json:"sprt,omitempty"`
	// Arena is an arena's games against its budget and why it stopped (scheduling.arena).
	Arena *schedule.ArenaState `json:"arena,omitempty"`
	// Bracket is the knockout bracket so far (knockout only).
	Bracket []schedule.Stage `json:"bracket,omitempty"`
	Round   *RoundView       `json:"round,omitempty"`
	// Abandoned lists every abandoned match of the league, for an operator.
	Abandoned []MatchSummary `json:"abandoned"`
	// StorageFailure names what fails while the database or the audit log takes no
	// writes (the league is paused), since when; empty otherwise.
	StorageFailure string `json:"storage_failure,omitempty"`
	StorageSince   string `json:"storage_since,omitempty"`
	LastEventID    uint64 `json:"last_event_id"`
}

// RoundView is a round and its matches.
type RoundView struct {
	ID      string         `json:"round_id"`
	Number  int            `json:"number"`
	Bye     string         `json:"bye,omitempty"`
	Matches []MatchSummary `json:"matches"`
}

// MatchSummary is one match in a round list.
type MatchSummary struct {
	MatchID string            `json:"match_id"`
	Players [2]string         `json:"players"`
	Status  string            `json:"status"`
	Referee string            `json:"referee_id,omitempty"`
	Outcome map[string]string `json:"outcome,omitempty"`
}

// MatchView is everything the match page draws: the steps with the state after each.
type MatchView struct {
	MatchID  string `json:"match_id"`
	RoundID  string `json:"round_id"`
	GameType string `json:"game_type"`
	// RulesKnown is false for a game the League Manager has no rules for: no board, and
	// the steps list the moves as the referee recorded them.
	RulesKnown  bool              `json:"rules_known"`
	Players     [2]string         `json:"players"`
	Status      string            `json:"status"`
	Referee     string            `json:"referee_id,omitempty"`
	Outcome     map[string]string `json:"outcome,omitempty"`
	Points      map[string]int    `json:"points,omitempty"`
	Termination string            `json:"termination,omitempty"`
	// Clock is the time control the match is played under; nil under the fixed deadline
	// per move.
	Clock *ClockView `json:"clock,omitempty"`
	// Opening names where the match starts when it is not the game's initial state
	// (Initial is the state after it).
	Opening string `json:"opening,omitempty"`
	Initial any    `json:"initial"`
	Steps   []Step `json:"steps"`
	// Unreadable says what of a stored result the page could not read or re-play: a
	// result stored before the League Manager refused malformed game_metadata.
	Unreadable  []string `json:"unreadable,omitempty"`
	LastEventID uint64   `json:"last_event_id"`
}

// ClockView is the time control of a match: TimeControl in the form of PGN's tag
// ("10+0.1"), and BaseMS, each player's clock before its first move.
type ClockView struct {
	TimeControl string `json:"time_control"`
	BaseMS      int    `json:"base_ms"`
}

// ClockOf is the view of tc, nil for no clock.
func ClockOf(tc *protocol.TimeControl) *ClockView {
	if tc == nil || !tc.On() {
		return nil
	}
	return &ClockView{TimeControl: tc.String(), BaseMS: tc.BaseMS}
}

// Step is one step of a match: the moves made and the state after them.
type Step struct {
	Step  int    `json:"step"`
	Moves []Move `json:"moves"`
	View  any    `json:"view"`
}

// Move is one player's move in a step. ClockMS is the mover's clock after it, when the
// match has a clock.
type Move struct {
	Player  string          `json:"player"`
	Move    json.RawMessage `json:"move"`
	Outcome string          `json:"outcome"`
	ClockMS *int64          `json:"clock_ms,omitempty"`
}

// MoveOf is the view of a move the referee recorded.
func MoveOf(mv protocol.MoveRecord) Move {
	return Move{Player: mv.Player, Move: mv.Move, Outcome: string(mv.Outcome), ClockMS: mv.ClockMS}
}

// Source provides the views; the League Manager implements it.
type Source interface {
	LeagueView(Page) (LeagueView, error)
	MatchView(id string) (MatchView, error)
}

// Register adds the live view's routes to mux: GET /, the static files, /api/league,
// /api/matches/{id}, /events and /matches/{id}/events.
func Register(mux *http.ServeMux, src Source, hub *events.Hub) {
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, sub, "index.html")
	})
	mux.HandleFunc("GET /match", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, sub, "match.html")
	})
	mux.HandleFunc("GET /api/league", func(w http.ResponseWriter, r *http.Request) {
		p, err := ParsePage(r.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		v, err := src.LeagueView(p)
		switch {
		case errors.Is(err, ErrNotFound):
			http.Error(w, "no such player", http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, "league view unavailable", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		httpserve.WriteJSON(w, http.StatusOK, v)
	})
	mux.HandleFunc("GET /api/matches/{id}", func(w http.ResponseWriter, r *http.Request) {
		v, err := src.MatchView(r.PathValue("id"))
		switch {
		case errors.Is(err, ErrNotFound):
			http.Error(w, "no such match", http.StatusNotFound)
		case err != nil:
			http.Error(w, "match view unavailable", http.StatusInternalServerError)
		default:
			w.Header().Set("Cache-Control", "no-store")
			httpserve.WriteJSON(w, http.StatusOK, v)
		}
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		hub.ServeSSE(w, r, nil)
	})
	mux.HandleFunc("GET /matches/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		hub.ServeSSE(w, r, func(e events.Event) bool { return e.MatchID == id })
	})
}

// Card is an agent card as the views show it, with its hash.
type Card struct {
	protocol.AgentCard
	Hash string `json:"hash"`
}

// LLMRow is a language-model player on the leaderboard. Strength: its rating, with and
// without the games it lost by forfeit. Legality: the share of its moves whose first
// answer was read and legal, its unreadable and illegal answers per 100 moves, the moves
// it gave up and the matches it forfeited. Cost: tokens per move, the median latency,
// dollars per game and per rating point above the league's lowest rating (at the prices
// of its profile; 0 without).
type LLMRow struct {
	PlayerID              string  `json:"player_id"`
	Model                 string  `json:"model,omitempty"`
	Rating                float64 `json:"rating"`
	RatingWithoutForfeits float64 `json:"rating_without_forfeits"`
	Provisional           bool    `json:"provisional,omitempty"`
	Moves                 int64   `json:"moves"`
	FirstTry              float64 `json:"first_try"`
	UnreadablePer100      float64 `json:"unreadable_per_100"`
	IllegalPer100         float64 `json:"illegal_per_100"`
	GivenUp               int     `json:"given_up"`
	Forfeits              int     `json:"forfeits"`
	TokensPerMove         float64 `json:"tokens_per_move"`
	LatencyP50MS          int64   `json:"latency_p50_ms"`
	CostPerGameUSD        float64 `json:"cost_per_game_usd"`
	CostPerRatingPointUSD float64 `json:"cost_per_rating_point_usd,omitempty"`
}
