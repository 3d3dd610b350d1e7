// Package lbm bridges Agent League players and model servers that speak the LBM Arena
// model API (GET /model/health, POST /model/play): a strategy that asks such a server
// for every move, and a server that lets any of our strategies answer an arena.
package lbm

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentleague/agentleague/game"
)

// Seed game ids and ours.
var seedIDs = map[string]string{
	game.TypeTicTacToe:   "tic-tac-toe",
	game.TypeConnectFour: "connect-four",
	game.TypeChess:       "chess",
}

// SeedGameID maps our game type to the arena's game id.
func SeedGameID(gameType string) (string, bool) {
	id, ok := seedIDs[gameType]
	return id, ok
}

// GameType maps an arena game id to our game type.
func GameType(seedID string) (string, bool) {
	for ours, id := range seedIDs {
		if id == seedID {
			return ours, true
		}
	}
	return "", false
}

// Health is the GET /model/health answer.
type Health struct {
	Status            string   `json:"status"`
	Capabilities      []string `json:"capabilities"`
	Version           string   `json:"version,omitempty"`
	MaxResponseTimeMS int      `json:"max_response_time_ms,omitempty"`
}

// PlayRequest is the POST /model/play request.
type PlayRequest struct {
	GameID      string            `json:"game_id"`
	GameState   json.RawMessage   `json:"game_state"`
	ValidMoves  []json.RawMessage `json:"valid_moves"`
	TimeLimitMS int               `json:"time_limit_ms"`
	MatchID     string            `json:"match_id,omitempty"`
	Opponent    string            `json:"opponent,omitempty"`
}

// PlayResponse is the POST /model/play answer.
type PlayResponse struct {
	Move           json.RawMessage `json:"move"`
	Confidence     *float64        `json:"confidence,omitempty"`
	Reasoning      string          `json:"reasoning,omitempty"`
	ThinkingTimeMS *int            `json:"thinking_time_ms"`
	Alternatives   json.RawMessage `json:"alternatives,omitempty"`
}

// ErrorResponse is the arena's standard error body.
type ErrorResponse struct {
	Error     string         `json:"error"`
	Code      string         `json:"code"`
	Details   map[string]any `json:"details"`
	Timestamp string         `json:"timestamp"`
}

// Arena error codes.
const (
	CodeInvalidGameState  = "INVALID_GAME_STATE"
	CodeInvalidMoveFormat = "INVALID_MOVE_FORMAT"
	CodeNoValidMoves      = "NO_VALID_MOVES"
	CodeTimeout           = "TIMEOUT"
	CodeModelUnavailable  = "MODEL_UNAVAILABLE"
	CodeUnsupportedGame   = "UNSUPPORTED_GAME"
	CodeUnauthorized      = "UNAUTHORIZED"
)

// ToArena turns our step_context and legal moves into the arena's game_state and
// valid_moves.
func ToArena(gameType string, stepContext json.RawMessage, legal []json.RawMessage) (json.RawMessage, []json.RawMessage, error) {
	switch gameType {
	case game.TypeTicTacToe, game.TypeConnectFour:
		var c struct {
			Board      [][]string `json:"board"`
			YourMark   string     `json:"your_mark"`
			YourColor  string     `json:"your_color"`
			MoveNumber int        `json:"move_number"`
		}
		if err := json.Unmarshal(stepContext, &c); err != nil {
			return nil, nil, fmt.Errorf("read %s context: %w", gameType, err)
		}
		player := c.YourMark
		if gameType == game.TypeConnectFour {
			player = c.YourColor
		}
		state, _ := json.Marshal(map[string]any{"board": c.Board, "current_player": player, "turn": c.MoveNumber, "winner": nil})
		return state, legal, nil
	case game.TypeChess:
		var c struct {
			FEN        string   `json:"fen"`
			Side       string   `json:"side_to_move"`
			MoveNumber int      `json:"move_number"`
			Legal      []string `json:"legal_moves"`
		}
		if err := json.Unmarshal(stepContext, &c); err != nil {
			return nil, nil, fmt.Errorf("read chess context: %w", err)
		}
		f := strings.Fields(c.FEN)
		if len(f) != 6 {
			return nil, nil, fmt.Errorf("read chess context: fen %q has %d fields", c.FEN, len(f))
		}
		var ep any
		if f[3] != "-" {
			ep = f[3]
		}
		var half int
		fmt.Sscan(f[4], &half)
		state, _ := json.Marshal(map[string]any{"fen": c.FEN, "current_player": c.Side, "turn": c.MoveNumber,
			"castling_rights": f[2], "en_passant": ep, "halfmove_clock": half, "fullmove_number": c.MoveNumber})
		valid := make([]json.RawMessage, 0, len(c.Legal))
		for _, u := range c.Legal {
			valid = append(valid, uciToArena(u))
		}
		return state, valid, nil
	}
	return nil, nil, fmt.Errorf("game %s has no arena format", gameType)
}

// uciToArena writes a UCI move as {from, to, promotion}.
func uciToArena(u string) json.RawMessage {
	var promo any
	if len(u) == 5 {
		promo = strings.ToUpper(u[4:])
	}
	b, _ := json.Marshal(map[string]any{"from": u[:2], "to": u[2:4], "promotion": promo})
	return b
}

// FromArenaMove turns an arena move into our move_payload. Tic-tac-toe and connect four
// moves are the same on both sides; chess moves {from, to, promotion} are accepted by
// our chess rules as they are, with the promotion letter lowercased.
func FromArenaMove(gameType string, move json.RawMessage) (json.RawMessage, error) {
	if gameType != game.TypeChess {
		return move, nil
	}
	var m struct {
		From      string  `json:"from"`
		To        string  `json:"to"`
		Promotion *string `json:"promotion"`
	}
	if err := json.Unmarshal(move, &m); err != nil {
		return nil, fmt.Errorf("read chess move: %w", err)
	}
	out := map[string]any{"from": m.From, "to": m.To}
	if m.Promotion != nil && *m.Promotion != "" {
		out["promotion"] = strings.ToLower(*m.Promotion)
	}
	b, _ := json.Marshal(out)
	return b, nil
}

// ToArenaMove turns our move_payload into the arena's move format.
func ToArenaMove(gameType string, move json.RawMessage) (json.RawMessage, error) {
	if gameType != game.TypeChess {
		return move, nil
	}
	var m struct {
		UCI string `json:"uci"`
	}
	if err := json.Unmarshal(move, &m); err != nil || len(m.UCI) < 4 {
		return nil, fmt.Errorf("chess move %s is not {\"uci\": ...}", move)
	}
	return uciToArena(m.UCI), nil
}
