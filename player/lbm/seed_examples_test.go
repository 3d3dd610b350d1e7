package lbm

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"
)

// seedExamples holds every game_state example of seed 002 (the LBM Arena Model API
// Specification) as a POST /model/play request. The two requests of the seed are as written;
// each game state of "Game-Specific Formats" is wrapped like the seed's request example
// (game_id, valid_moves worked out by hand from the board, time_limit_ms, match_id,
// opponent), once for every combination of the alternatives its fields list ("X" | "O",
// null | "X" | "O" | "draw").
var seedExamples = []struct{ name, body string }{
	// Core Endpoints / 2. Make Move: the request example.
	{"make move request", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", ""],
      ["", "O", ""],
      ["", "", "X"]
    ],
    "current_player": "O",
    "turn": 4
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 0, "col": 2},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 0},
    {"row": 2, "col": 1}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Testing Your Implementation / Local Testing Script: the script's move_request.
	{"testing script request", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [["", "", ""], ["X", "", ""], ["", "", "O"]],
    "current_player": "X",
    "turn": 3
  },
  "valid_moves": [
    {"row": 0, "col": 0}, {"row": 0, "col": 1}, {"row": 0, "col": 2},
    {"row": 1, "col": 1}, {"row": 1, "col": 2},
    {"row": 2, "col": 0}, {"row": 2, "col": 1}
  ],
  "time_limit_ms": 5000
}`},
	// Game-Specific Formats / Tic-Tac-Toe / Game State: current_player "X", winner null.
	{"tic-tac-toe state, current_player X, winner null", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", "O"],
      ["", "X", ""],
      ["O", "", ""]
    ],
    "current_player": "X",
    "turn": 5,
    "winner": null
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 1},
    {"row": 2, "col": 2}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Tic-Tac-Toe / Game State: current_player "X", winner "X".
	{"tic-tac-toe state, current_player X, winner X", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", "O"],
      ["", "X", ""],
      ["O", "", ""]
    ],
    "current_player": "X",
    "turn": 5,
    "winner": "X"
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 1},
    {"row": 2, "col": 2}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Tic-Tac-Toe / Game State: current_player "X", winner "O".
	{"tic-tac-toe state, current_player X, winner O", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", "O"],
      ["", "X", ""],
      ["O", "", ""]
    ],
    "current_player": "X",
    "turn": 5,
    "winner": "O"
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 1},
    {"row": 2, "col": 2}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Tic-Tac-Toe / Game State: current_player "X", winner "draw".
	{"tic-tac-toe state, current_player X, winner draw", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", "O"],
      ["", "X", ""],
      ["O", "", ""]
    ],
    "current_player": "X",
    "turn": 5,
    "winner": "draw"
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 1},
    {"row": 2, "col": 2}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Tic-Tac-Toe / Game State: current_player "O", winner null.
	{"tic-tac-toe state, current_player O, winner null", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", "O"],
      ["", "X", ""],
      ["O", "", ""]
    ],
    "current_player": "O",
    "turn": 5,
    "winner": null
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 1},
    {"row": 2, "col": 2}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Tic-Tac-Toe / Game State: current_player "O", winner "X".
	{"tic-tac-toe state, current_player O, winner X", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", "O"],
      ["", "X", ""],
      ["O", "", ""]
    ],
    "current_player": "O",
    "turn": 5,
    "winner": "X"
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 1},
    {"row": 2, "col": 2}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Tic-Tac-Toe / Game State: current_player "O", winner "O".
	{"tic-tac-toe state, current_player O, winner O", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", "O"],
      ["", "X", ""],
      ["O", "", ""]
    ],
    "current_player": "O",
    "turn": 5,
    "winner": "O"
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 1},
    {"row": 2, "col": 2}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Tic-Tac-Toe / Game State: current_player "O", winner "draw".
	{"tic-tac-toe state, current_player O, winner draw", `{
  "game_id": "tic-tac-toe",
  "game_state": {
    "board": [
      ["X", "", "O"],
      ["", "X", ""],
      ["O", "", ""]
    ],
    "current_player": "O",
    "turn": 5,
    "winner": "draw"
  },
  "valid_moves": [
    {"row": 0, "col": 1},
    {"row": 1, "col": 0},
    {"row": 1, "col": 2},
    {"row": 2, "col": 1},
    {"row": 2, "col": 2}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Connect Four / Game State: current_player "R", winner null.
	{"connect-four state, current_player R, winner null", `{
  "game_id": "connect-four",
  "game_state": {
    "board": [
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "R", "", "", ""],
      ["", "", "Y", "R", "", "", ""],
      ["Y", "R", "Y", "R", "Y", "", ""]
    ],
    "current_player": "R",
    "turn": 8,
    "winner": null
  },
  "valid_moves": [
    {"column": 0},
    {"column": 1},
    {"column": 2},
    {"column": 3},
    {"column": 4},
    {"column": 5},
    {"column": 6}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Connect Four / Game State: current_player "R", winner "R".
	{"connect-four state, current_player R, winner R", `{
  "game_id": "connect-four",
  "game_state": {
    "board": [
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "R", "", "", ""],
      ["", "", "Y", "R", "", "", ""],
      ["Y", "R", "Y", "R", "Y", "", ""]
    ],
    "current_player": "R",
    "turn": 8,
    "winner": "R"
  },
  "valid_moves": [
    {"column": 0},
    {"column": 1},
    {"column": 2},
    {"column": 3},
    {"column": 4},
    {"column": 5},
    {"column": 6}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Connect Four / Game State: current_player "R", winner "Y".
	{"connect-four state, current_player R, winner Y", `{
  "game_id": "connect-four",
  "game_state": {
    "board": [
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "R", "", "", ""],
      ["", "", "Y", "R", "", "", ""],
      ["Y", "R", "Y", "R", "Y", "", ""]
    ],
    "current_player": "R",
    "turn": 8,
    "winner": "Y"
  },
  "valid_moves": [
    {"column": 0},
    {"column": 1},
    {"column": 2},
    {"column": 3},
    {"column": 4},
    {"column": 5},
    {"column": 6}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Connect Four / Game State: current_player "R", winner "draw".
	{"connect-four state, current_player R, winner draw", `{
  "game_id": "connect-four",
  "game_state": {
    "board": [
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "R", "", "", ""],
      ["", "", "Y", "R", "", "", ""],
      ["Y", "R", "Y", "R", "Y", "", ""]
    ],
    "current_player": "R",
    "turn": 8,
    "winner": "draw"
  },
  "valid_moves": [
    {"column": 0},
    {"column": 1},
    {"column": 2},
    {"column": 3},
    {"column": 4},
    {"column": 5},
    {"column": 6}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Connect Four / Game State: current_player "Y", winner null.
	{"connect-four state, current_player Y, winner null", `{
  "game_id": "connect-four",
  "game_state": {
    "board": [
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "R", "", "", ""],
      ["", "", "Y", "R", "", "", ""],
      ["Y", "R", "Y", "R", "Y", "", ""]
    ],
    "current_player": "Y",
    "turn": 8,
    "winner": null
  },
  "valid_moves": [
    {"column": 0},
    {"column": 1},
    {"column": 2},
    {"column": 3},
    {"column": 4},
    {"column": 5},
    {"column": 6}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Connect Four / Game State: current_player "Y", winner "R".
	{"connect-four state, current_player Y, winner R", `{
  "game_id": "connect-four",
  "game_state": {
    "board": [
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "R", "", "", ""],
      ["", "", "Y", "R", "", "", ""],
      ["Y", "R", "Y", "R", "Y", "", ""]
    ],
    "current_player": "Y",
    "turn": 8,
    "winner": "R"
  },
  "valid_moves": [
    {"column": 0},
    {"column": 1},
    {"column": 2},
    {"column": 3},
    {"column": 4},
    {"column": 5},
    {"column": 6}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Connect Four / Game State: current_player "Y", winner "Y".
	{"connect-four state, current_player Y, winner Y", `{
  "game_id": "connect-four",
  "game_state": {
    "board": [
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "R", "", "", ""],
      ["", "", "Y", "R", "", "", ""],
      ["Y", "R", "Y", "R", "Y", "", ""]
    ],
    "current_player": "Y",
    "turn": 8,
    "winner": "Y"
  },
  "valid_moves": [
    {"column": 0},
    {"column": 1},
    {"column": 2},
    {"column": 3},
    {"column": 4},
    {"column": 5},
    {"column": 6}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Connect Four / Game State: current_player "Y", winner "draw".
	{"connect-four state, current_player Y, winner draw", `{
  "game_id": "connect-four",
  "game_state": {
    "board": [
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "", "", "", ""],
      ["", "", "", "R", "", "", ""],
      ["", "", "Y", "R", "", "", ""],
      ["Y", "R", "Y", "R", "Y", "", ""]
    ],
    "current_player": "Y",
    "turn": 8,
    "winner": "draw"
  },
  "valid_moves": [
    {"column": 0},
    {"column": 1},
    {"column": 2},
    {"column": 3},
    {"column": 4},
    {"column": 5},
    {"column": 6}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Chess / Game State: current_player "white".
	{"chess state, current_player white", `{
  "game_id": "chess",
  "game_state": {
    "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "current_player": "white",
    "turn": 1,
    "castling_rights": "KQkq",
    "en_passant": null,
    "halfmove_clock": 0,
    "fullmove_number": 1
  },
  "valid_moves": [
    {"from": "a2", "to": "a3", "promotion": null},
    {"from": "a2", "to": "a4", "promotion": null},
    {"from": "b1", "to": "a3", "promotion": null},
    {"from": "b1", "to": "c3", "promotion": null},
    {"from": "b2", "to": "b3", "promotion": null},
    {"from": "b2", "to": "b4", "promotion": null},
    {"from": "c2", "to": "c3", "promotion": null},
    {"from": "c2", "to": "c4", "promotion": null},
    {"from": "d2", "to": "d3", "promotion": null},
    {"from": "d2", "to": "d4", "promotion": null},
    {"from": "e2", "to": "e3", "promotion": null},
    {"from": "e2", "to": "e4", "promotion": null},
    {"from": "f2", "to": "f3", "promotion": null},
    {"from": "f2", "to": "f4", "promotion": null},
    {"from": "g1", "to": "f3", "promotion": null},
    {"from": "g1", "to": "h3", "promotion": null},
    {"from": "g2", "to": "g3", "promotion": null},
    {"from": "g2", "to": "g4", "promotion": null},
    {"from": "h2", "to": "h3", "promotion": null},
    {"from": "h2", "to": "h4", "promotion": null}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
	// Game-Specific Formats / Chess / Game State: current_player "black".
	{"chess state, current_player black", `{
  "game_id": "chess",
  "game_state": {
    "fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "current_player": "black",
    "turn": 1,
    "castling_rights": "KQkq",
    "en_passant": null,
    "halfmove_clock": 0,
    "fullmove_number": 1
  },
  "valid_moves": [
    {"from": "a7", "to": "a5", "promotion": null},
    {"from": "a7", "to": "a6", "promotion": null},
    {"from": "b7", "to": "b5", "promotion": null},
    {"from": "b7", "to": "b6", "promotion": null},
    {"from": "b8", "to": "a6", "promotion": null},
    {"from": "b8", "to": "c6", "promotion": null},
    {"from": "c7", "to": "c5", "promotion": null},
    {"from": "c7", "to": "c6", "promotion": null},
    {"from": "d7", "to": "d5", "promotion": null},
    {"from": "d7", "to": "d6", "promotion": null},
    {"from": "e7", "to": "e5", "promotion": null},
    {"from": "e7", "to": "e6", "promotion": null},
    {"from": "f7", "to": "f5", "promotion": null},
    {"from": "f7", "to": "f6", "promotion": null},
    {"from": "g7", "to": "g5", "promotion": null},
    {"from": "g7", "to": "g6", "promotion": null},
    {"from": "g8", "to": "f6", "promotion": null},
    {"from": "g8", "to": "h6", "promotion": null},
    {"from": "h7", "to": "h5", "promotion": null},
    {"from": "h7", "to": "h6", "promotion": null}
  ],
  "time_limit_ms": 10000,
  "match_id": "uuid-string",
  "opponent": "GPT-4o"
}`},
}

// seedResponseFields are the members of the seed's move response.
var seedResponseFields = []string{"move", "confidence", "reasoning", "thinking_time_ms", "alternatives"}

// TestServeModelSeedExampleRequests sends every seed 002 example request through the real
// handler, served by each strategy that plays its game, and wants a 200 answer in the seed's
// response format whose move is one of the request's valid_moves.
func TestServeModelSeedExampleRequests(t *testing.T) {
	if len(seedExamples) != 20 {
		t.Fatalf("got %d seed examples, want 20: 2 requests, 8 tic-tac-toe and 8 connect four states, 2 chess states", len(seedExamples))
	}
	strategies := map[string][]string{
		"tic-tac-toe":  {"random", "first", "perfect"},
		"connect-four": {"random", "first", "alphabeta"},
		"chess":        {"random", "first", "alphabeta"},
	}
	servers := map[string]string{}
	for _, name := range []string{"random", "first", "perfect", "alphabeta"} {
		servers[name] = serve(t, &Server{Strategy: name, Seed: 3}).URL
	}
	for _, ex := range seedExamples {
		var req struct {
			GameID     string            `json:"game_id"`
			ValidMoves []json.RawMessage `json:"valid_moves"`
		}
		if err := json.Unmarshal([]byte(ex.body), &req); err != nil {
			t.Fatalf("%s: %v", ex.name, err)
		}
		for _, strat := range strategies[req.GameID] {
			t.Run(ex.name+"/"+strat, func(t *testing.T) {
				status, out := post(t, servers[strat], "", ex.body)
				if status != http.StatusOK {
					t.Fatalf("got %d %v, want 200", status, out)
				}
				for k := range out {
					if !slices.Contains(seedResponseFields, k) {
						t.Errorf("answer has %q, not a field of the seed's response", k)
					}
				}
				if ms, ok := out["thinking_time_ms"].(float64); !ok || ms < 0 || ms != float64(int(ms)) {
					t.Errorf("got thinking_time_ms %v, want a whole number of milliseconds", out["thinking_time_ms"])
				}
				if !isOneOf(out["move"], req.ValidMoves) {
					t.Errorf("got move %v, want one of valid_moves", out["move"])
				}
			})
		}
	}
}

// isOneOf reports whether move, as decoded from an answer, equals one of moves.
func isOneOf(move any, moves []json.RawMessage) bool {
	for _, m := range moves {
		var v any
		if json.Unmarshal(m, &v) == nil && reflect.DeepEqual(v, move) {
			return true
		}
	}
	return false
}
