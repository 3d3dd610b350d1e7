package lbm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/player/strategy"
)

// Environment variables holding the model server's credentials.
const (
	EnvToken    = "LBM_MODEL_TOKEN"
	EnvUser     = "LBM_MODEL_USER"
	EnvPassword = "LBM_MODEL_PASSWORD"
)

// maxAnswerBytes bounds what a model server may send back.
const maxAnswerBytes = 1 << 20

// AuthFromEnv returns the Authorization header value: Bearer from LBM_MODEL_TOKEN, else
// Basic from LBM_MODEL_USER and LBM_MODEL_PASSWORD, else "" (no auth).
func AuthFromEnv() string {
	if t := os.Getenv(EnvToken); t != "" {
		return "Bearer " + t
	}
	if u := os.Getenv(EnvUser); u != "" {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+os.Getenv(EnvPassword)))
	}
	return ""
}

// APIError is a model server's refusal: its HTTP status and, when it sent one, the
// arena error code.
type APIError struct {
	Status int
	Code   string
	Msg    string
}

func (e *APIError) Error() string {
	if e.Code != "" {
		return fmt.Sprintf("model server answered %d %s: %s", e.Status, e.Code, e.Msg)
	}
	return fmt.Sprintf("model server answered %d", e.Status)
}

// Client talks to one model server.
type Client struct {
	base string
	auth string
	http *http.Client
}

// NewClient builds a client for the server at baseURL (without /model) using the
// Authorization value auth ("" for none).
func NewClient(baseURL, auth string) *Client {
	return &Client{base: strings.TrimSuffix(baseURL, "/"), auth: auth, http: &http.Client{}}
}

func (c *Client) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if res.StatusCode != http.StatusOK {
		var e ErrorResponse
		_ = json.Unmarshal(raw, &e)
		return &APIError{Status: res.StatusCode, Code: e.Code, Msg: e.Error}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: answer is not JSON: %w", method, path, err)
	}
	return nil
}

// Health asks GET /model/health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	if err := c.do(ctx, http.MethodGet, "/model/health", nil, &h); err != nil {
		return Health{}, err
	}
	if h.Status != "healthy" {
		return h, fmt.Errorf("model server is %q", h.Status)
	}
	return h, nil
}

// Games lists our game types among a health answer's capabilities.
func (h Health) Games() []string {
	var out []string
	for _, id := range h.Capabilities {
		if g, ok := GameType(id); ok {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// Play asks POST /model/play.
func (c *Client) Play(ctx context.Context, req PlayRequest) (PlayResponse, error) {
	var p PlayResponse
	if err := c.do(ctx, http.MethodPost, "/model/play", req, &p); err != nil {
		return PlayResponse{}, err
	}
	if len(p.Move) == 0 || string(p.Move) == "null" || p.ThinkingTimeMS == nil {
		return PlayResponse{}, errors.New("model answer lacks move or thinking_time_ms")
	}
	return p, nil
}

// Bounds of what a model's explanation may add to a move's record.
const (
	maxReasoningRunes    = 300
	maxAlternativesBytes = 300
)

// Strategy returns a strategy that asks this server for every move of one match of g.
func (c *Client) Strategy(g game.Game, matchID string) strategy.Strategy {
	return &modelStrategy{c: c, g: g, matchID: matchID}
}

type modelStrategy struct {
	c       *Client
	g       game.Game
	matchID string
}

var _ strategy.Explainer = (*modelStrategy)(nil)

func (s *modelStrategy) Move(req strategy.Request) (json.RawMessage, error) {
	mv, _, err := s.MoveWithMetadata(req)
	return mv, err
}

// MoveWithMetadata asks the model and keeps its confidence, reasoning and alternatives.
// Any failure of the model is ErrNoMove: the referee's rules judge it, never a stand-in
// move. An illegal move is passed on as the model chose it.
func (s *modelStrategy) MoveWithMetadata(req strategy.Request) (json.RawMessage, json.RawMessage, error) {
	start := time.Now()
	fail := func(err error) (json.RawMessage, json.RawMessage, error) {
		return nil, nil, fmt.Errorf("%w: %w", strategy.ErrNoMove, err)
	}
	id, ok := SeedGameID(s.g.Type())
	if !ok {
		return fail(fmt.Errorf("the arena has no %s", s.g.Type()))
	}
	legal, err := s.g.LegalMoves(req.Context)
	if err != nil {
		return fail(err)
	}
	state, valid, err := ToArena(s.g.Type(), req.Context, legal)
	if err != nil {
		return fail(err)
	}
	// The model is given until StopAt, so that its answer (a 408 included) comes back
	// before the call is given up at AnswerBy.
	b := strategy.MoveBudget(start, req, maxTimeLimit)
	ctx, cancel := context.WithDeadline(context.Background(), b.AnswerBy)
	defer cancel()
	ans, err := s.c.Play(ctx, PlayRequest{GameID: id, GameState: state, ValidMoves: valid, TimeLimitMS: int(b.StopAt.Sub(start).Milliseconds()), MatchID: req.MatchID, Opponent: req.Opponent})
	if err != nil {
		return fail(err)
	}
	move, err := FromArenaMove(s.g.Type(), ans.Move)
	if err != nil {
		return fail(err)
	}
	// The note rides in the result report: keep it short (referees drop notes over 1 KiB).
	reasoning := []rune(ans.Reasoning)
	if len(reasoning) > maxReasoningRunes {
		reasoning = append(reasoning[:maxReasoningRunes], '…')
	}
	alternatives := ans.Alternatives
	if len(alternatives) > maxAlternativesBytes {
		alternatives = nil
	}
	meta, _ := json.Marshal(map[string]any{"model": map[string]any{
		"confidence": ans.Confidence, "reasoning": string(reasoning), "thinking_time_ms": ans.ThinkingTimeMS, "alternatives": alternatives,
	}})
	return move, meta, nil
}
