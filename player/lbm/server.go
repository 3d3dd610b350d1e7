package lbm

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/player/strategy"
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
	// NewStrategy, when set, builds the strategy that answers one request in place of
	// strategy.New(Strategy, g, Seed, matchID); it also decides the games /model/health lists.
	NewStrategy func(g game.Game, matchID string) (strategy.Strategy, error)
}

// ContextStrategy is a strategy that can be stopped. The server calls MoveContext with a
// context cancelled at the request's deadline (or when the caller hangs up) and drops any
// later answer. Strategies without it run to their end; those of player/strategy are bounded
// (a fixed depth or node budget) and end within milliseconds.
type ContextStrategy interface {
	MoveContext(ctx context.Context, req strategy.Request) (json.RawMessage, error)
}

func (s *Server) newStrategy(g game.Game, matchID string) (strategy.Strategy, error) {
	if s.NewStrategy != nil {
		return s.NewStrategy(g, matchID)
	}
	return strategy.New(s.Strategy, g, s.Seed, matchID)
}

// Games lists the arena games the strategy plays.
func (s *Server) Games() []string {
	var ids []string
	for _, g := range []string{game.TypeTicTacToe, game.TypeConnectFour, game.TypeChess} {
		gm, err := s.Registry.New(g, nil)
		if err != nil {
			continue
		}
		if _, err := s.newStrategy(gm, "health"); err == nil {
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
		httpserve.WriteJSON(w, http.StatusOK, Health{Status: "healthy", Capabilities: s.Games(), Version: s.Version, MaxResponseTimeMS: 5000})
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

// maxTimeLimit is what the arena waits for any answer (seed 002: requests time out after
// 30 seconds), so also the longest a move may take, whatever time_limit_ms says.
const maxTimeLimit = 30 * time.Second

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
	st, err := s.newStrategy(g, matchID)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeUnsupportedGame, fmt.Sprintf("game %q is not supported", req.GameID), map[string]any{"supported": s.Games()})
		return
	}
	limit := maxTimeLimit
	if req.TimeLimitMS > 0 && req.TimeLimitMS < int(maxTimeLimit.Milliseconds()) {
		limit = time.Duration(req.TimeLimitMS) * time.Millisecond
	}
	move, err := think(r.Context(), start.Add(limit), st, strategy.Request{MatchID: matchID, GameType: gameType, Context: ctx, DeadlineMS: int(limit.Milliseconds()), Opponent: req.Opponent})
	if err == nil {
		move, err = ToArenaMove(gameType, move)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		writeError(w, http.StatusRequestTimeout, CodeTimeout, "no move within the time limit", map[string]any{"time_limit_ms": limit.Milliseconds()})
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, CodeModelUnavailable, "the model found no move", nil)
		return
	}
	elapsed := int(time.Since(start).Milliseconds())
	httpserve.WriteJSON(w, http.StatusOK, PlayResponse{Move: move, ThinkingTimeMS: &elapsed, Reasoning: "strategy " + s.Strategy})
}

// think asks st for its move and waits until deadline at most; then it returns the
// context's error. The strategy runs in a goroutine of its own that ends when the strategy
// returns (or panics, which is an error): a ContextStrategy is handed a context cancelled at
// the deadline (or when the caller hangs up), any other runs to its end, and a late answer
// is dropped.
func think(ctx context.Context, deadline time.Time, st strategy.Strategy, req strategy.Request) (json.RawMessage, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	type answer struct {
		move json.RawMessage
		err  error
	}
	// Buffered, so that a late answer is left here and its goroutine still ends.
	done := make(chan answer, 1)
	go func() {
		var a answer
		// Recovered here, as net/http only recovers the handler's own goroutine.
		defer func() {
			if p := recover(); p != nil {
				a.err = fmt.Errorf("strategy panicked: %v", p)
			}
			done <- a
		}()
		if cs, ok := st.(ContextStrategy); ok {
			a.move, a.err = cs.MoveContext(ctx, req)
		} else {
			a.move, a.err = st.Move(req)
		}
	}()
	select {
	case a := <-done:
		return a.move, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
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

// writeError writes the arena's standard error body; details is always an object, as in
// the seed's example.
func writeError(w http.ResponseWriter, status int, code, msg string, details map[string]any) {
	if details == nil {
		details = map[string]any{}
	}
	httpserve.WriteJSON(w, status, ErrorResponse{Error: msg, Code: code, Details: details, Timestamp: time.Now().UTC().Format(time.RFC3339)})
}
