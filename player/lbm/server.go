package lbm

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"time"

	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/referee/game"
)

// Server answers the arena's model API with one of our strategies.
type Server struct {
	// Strategy names a strategy of player/strategy.
	Strategy string
	Seed     int64
	// Auth, when set, is the Authorization header value every request must carry.
	Auth     string
	Registry *game.Registry
	// Version is reported by /model/health.
	Version string
}

// Games lists the arena games the strategy plays.
func (s *Server) Games() []string {
	var ids []string
	for _, g := range []string{game.TypeTicTacToe, game.TypeConnectFour, game.TypeChess} {
		gm, err := s.Registry.New(g, nil)
		if err != nil {
			continue
		}
		if _, err := strategy.New(s.Strategy, gm, s.Seed, "health"); err == nil {
			id, _ := SeedGameID(g)
			ids = append(ids, id)
		}
	}
	return ids
}

// Handler serves GET /model/health and POST /model/play.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /model/health", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(w, r) {
			return
		}
		writeJSON(w, http.StatusOK, Health{Status: "healthy", Capabilities: s.Games(), Version: s.Version, MaxResponseTimeMS: 5000})
	})
	mux.HandleFunc("POST /model/play", func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(w, r) {
			return
		}
		s.play(w, r)
	})
	return mux
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.Auth == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte(s.Auth)) == 1 {
		return true
	}
	writeError(w, http.StatusUnauthorized, CodeUnauthorized, "missing or wrong Authorization", nil)
	return false
}

func (s *Server) play(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAnswerBytes))
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidGameState, "request body unreadable or larger than 1 MiB", nil)
		return
	}
	var req PlayRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidGameState, "request is not a play request", requestProblem(err))
		return
	}
	if req.TimeLimitMS < 0 {
		writeError(w, http.StatusBadRequest, CodeInvalidGameState, "time_limit_ms must not be negative", map[string]any{"received": req.TimeLimitMS})
		return
	}
	gameType, ok := GameType(req.GameID)
	if !ok || !slices.Contains(s.Games(), req.GameID) {
		writeError(w, http.StatusBadRequest, CodeUnsupportedGame, fmt.Sprintf("game %q is not supported", req.GameID), map[string]any{"supported": s.Games()})
		return
	}
	g, err := s.Registry.New(gameType, nil)
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeModelUnavailable, "game unavailable", nil)
		return
	}
	ctx, err := FromArena(gameType, req.GameState)
	if err == nil {
		if _, lerr := g.LegalMoves(ctx); lerr != nil {
			err = refused(lerr)
		}
	}
	var se *stateError
	switch {
	case errors.As(err, &se) && se.over:
		writeError(w, http.StatusUnprocessableEntity, CodeNoValidMoves, "no valid moves: the game is over", map[string]any{"problem": se.problem})
		return
	case errors.As(err, &se):
		writeError(w, http.StatusBadRequest, CodeInvalidGameState, "game_state is not a position of "+req.GameID, map[string]any{"problem": se.problem})
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, CodeModelUnavailable, "game unavailable", nil)
		return
	}
	matchID := req.MatchID
	if matchID == "" {
		matchID = "arena"
	}
	st, err := strategy.New(s.Strategy, g, s.Seed, matchID)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeUnsupportedGame, fmt.Sprintf("game %q is not supported", req.GameID), map[string]any{"supported": s.Games()})
		return
	}
	move, err := st.Move(strategy.Request{MatchID: matchID, GameType: gameType, Context: ctx, DeadlineMS: req.TimeLimitMS, Opponent: req.Opponent})
	if err == nil {
		move, err = ToArenaMove(gameType, move)
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, CodeModelUnavailable, "the model found no move", nil)
		return
	}
	elapsed := int(time.Since(start).Milliseconds())
	writeJSON(w, http.StatusOK, PlayResponse{Move: move, ThinkingTimeMS: &elapsed, Reasoning: "strategy " + s.Strategy})
}

// requestProblem describes why a body is not a play request, in the arena's terms: the
// field, the JSON type expected and the one received, never our Go types.
func requestProblem(err error) map[string]any {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" {
		return map[string]any{"problem": "body is not a JSON object"}
	}
	want := "object"
	switch te.Type.Kind() {
	case reflect.Int:
		want = "integer"
	case reflect.String:
		want = "string"
	case reflect.Slice:
		want = "array"
	}
	return map[string]any{"field": te.Field, "expected": want, "received": te.Value}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError writes the arena's standard error body; details is always an object, as in
// the seed's example.
func writeError(w http.ResponseWriter, status int, code, msg string, details map[string]any) {
	if details == nil {
		details = map[string]any{}
	}
	writeJSON(w, status, ErrorResponse{Error: msg, Code: code, Details: details, Timestamp: time.Now().UTC().Format(time.RFC3339)})
}
