package lbm

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentleague/agentleague/game"
)

// stateError is a game_state the server refuses. Its problem is written for the caller: it
// names the arena's fields, never those of our step_context.
type stateError struct {
	// over marks a finished game (422 NO_VALID_MOVES); otherwise the state is malformed or
	// no game could reach it (400 INVALID_GAME_STATE).
	over    bool
	problem string
}

func (e *stateError) Error() string {
	if e.over {
		return "game is over: " + e.problem
	}
	return "invalid game state: " + e.problem
}

func invalidState(format string, args ...any) error {
	return &stateError{problem: fmt.Sprintf(format, args...)}
}

// refused turns the rules' refusal of the step_context FromArena built into a stateError.
// The rules wrap their reason once in "parse <game> context: ", which names our format rather
// than the arena's, so only the reason is kept.
func refused(err error) error {
	problem := "the rules refuse this position"
	if inner := errors.Unwrap(err); inner != nil {
		problem = inner.Error()
	}
	return &stateError{over: errors.Is(err, game.ErrMatchOver), problem: problem}
}

// gridGame is how the arena draws tic-tac-toe and connect four: rows of cells, each "" or a
// player's mark, and the mark of the player to move.
type gridGame struct {
	rows, cols int
	// line is how many marks in a row, in any direction, win.
	line int
	// marks are the players' marks; our rules have marks[0] move first.
	marks [2]string
	// gravity: a disc falls to the lowest empty cell of its column.
	gravity bool
	// markField names the mover's mark in our step_context.
	markField string
}

var grids = map[string]gridGame{
	game.TypeTicTacToe: {rows: 3, cols: 3, line: 3, marks: [2]string{"X", "O"}, markField: "your_mark"},
	game.TypeConnectFour: {rows: game.ConnectFourRows, cols: game.ConnectFourCols, line: 4,
		marks: [2]string{"R", "Y"}, gravity: true, markField: "your_color"},
}

// FromArena turns an arena game_state into the step_context our rules read, so our
// strategies can answer it. current_player says who moves; turn and winner are
// informational (checked for type and range only): the board decides. Either player may
// have started. A state that is malformed or that no game reaches is refused with an
// invalid game state error, a finished game (won, or a full board) with a game over error;
// chess positions are left to the rules, which the caller runs on the result.
func FromArena(gameType string, state json.RawMessage) (json.RawMessage, error) {
	fields, err := stateFields(state)
	if err != nil {
		return nil, err
	}
	if g, ok := grids[gameType]; ok {
		return g.fromArena(fields)
	}
	if gameType == game.TypeChess {
		return chessFromArena(fields)
	}
	return nil, fmt.Errorf("game %s has no arena format", gameType)
}

func (g gridGame) fromArena(f fields) (json.RawMessage, error) {
	board, count, err := g.board(f)
	if err != nil {
		return nil, err
	}
	current, err := f.str("current_player", g.marks[:]...)
	if err != nil {
		return nil, err
	}
	if err := f.optInt("turn", 0, g.rows*g.cols+1); err != nil {
		return nil, err
	}
	if err := f.optStr("winner", g.marks[0], g.marks[1], "draw"); err != nil {
		return nil, err
	}
	a, b := g.marks[0], g.marks[1]
	if count[a] > count[b]+1 || count[b] > count[a]+1 {
		return nil, invalidState("board has %d %s and %d %s: players take turns", count[a], a, count[b], b)
	}
	if err := g.checkWin(board, count); err != nil {
		return nil, err
	}
	if count[a]+count[b] == g.rows*g.cols {
		return nil, &stateError{over: true, problem: "the board is full"}
	}
	other := g.other(current)
	if count[current] > count[other] {
		return nil, invalidState("current_player is %s, but %s has moved more often than %s", current, current, other)
	}
	// Our rules have marks[0] move on even counts. When the arena's first mover was marks[1],
	// the marks swap; the cells, and so the move, stay where they are.
	if (current == a) != (count[a] == count[b]) {
		for _, row := range board {
			for c, m := range row {
				if m != "" {
					row[c] = g.other(m)
				}
			}
		}
		current = other
	}
	ctx, _ := json.Marshal(map[string]any{"board": board, g.markField: current, "move_number": count[a] + count[b] + 1})
	return ctx, nil
}

func (g gridGame) other(mark string) string {
	if mark == g.marks[0] {
		return g.marks[1]
	}
	return g.marks[0]
}

// board reads the board: rows x cols cells, each "" or a mark, no disc over an empty cell.
func (g gridGame) board(f fields) ([][]string, map[string]int, error) {
	shape := invalidState("board must be %d rows of %d cells", g.rows, g.cols)
	var rows [][]json.RawMessage
	if err := json.Unmarshal(f["board"], &rows); err != nil || len(rows) != g.rows {
		return nil, nil, shape
	}
	board := make([][]string, g.rows)
	count := map[string]int{}
	for r, row := range rows {
		if len(row) != g.cols {
			return nil, nil, shape
		}
		board[r] = make([]string, g.cols)
		for c, raw := range row {
			// A pointer, so that null is refused instead of read as "".
			var m *string
			if err := json.Unmarshal(raw, &m); err != nil || m == nil || (*m != "" && !slices.Contains(g.marks[:], *m)) {
				return nil, nil, invalidState(`board[%d][%d] must be "%s", "%s" or "" (got %s)`, r, c, g.marks[0], g.marks[1], clip(raw))
			}
			board[r][c] = *m
			count[*m]++
		}
	}
	if g.gravity {
		// Row 0 is the top, so every disc above the bottom row rests on another.
		for r := range g.rows - 1 {
			for c := range g.cols {
				if board[r][c] != "" && board[r+1][c] == "" {
					return nil, nil, invalidState("board[%d][%d] floats over an empty cell", r, c)
				}
			}
		}
	}
	return board, count, nil
}

// checkWin refuses a board no game reaches through its lines, and reports one with a winner
// as over: only one player may hold a line, the winner must have moved last, and that last
// move must have made the line (the game would have stopped at an earlier one).
func (g gridGame) checkWin(board [][]string, count map[string]int) error {
	a, b := g.marks[0], g.marks[1]
	winA, winB := g.hasLine(board, a), g.hasLine(board, b)
	if winA && winB {
		return invalidState("both %s and %s have %d in a row", a, b, g.line)
	}
	if !winA && !winB {
		return nil
	}
	winner := a
	if winB {
		winner = b
	}
	loser := g.other(winner)
	if count[winner] < count[loser] {
		return invalidState("%s has %d in a row, yet %s moved after it", winner, g.line, loser)
	}
	if !g.wonByLastMove(board, winner) {
		return invalidState("%s has %d in a row that no single last move made", winner, g.line)
	}
	return &stateError{over: true, problem: fmt.Sprintf("%s has %d in a row", winner, g.line)}
}

// wonByLastMove reports whether taking back one of mark's pieces that could have been placed
// last (with gravity, one on top of its column) leaves mark without a line.
func (g gridGame) wonByLastMove(board [][]string, mark string) bool {
	for r := range g.rows {
		for c := range g.cols {
			if board[r][c] != mark || (g.gravity && r > 0 && board[r-1][c] != "") {
				continue
			}
			board[r][c] = ""
			still := g.hasLine(board, mark)
			board[r][c] = mark
			if !still {
				return true
			}
		}
	}
	return false
}

// hasLine reports whether mark holds line cells in a row: across, down or diagonally.
func (g gridGame) hasLine(board [][]string, mark string) bool {
	for r := range g.rows {
		for c := range g.cols {
			for _, d := range [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}} {
				n := 0
				for rr, cc := r, c; n < g.line && rr >= 0 && rr < g.rows && cc >= 0 && cc < g.cols && board[rr][cc] == mark; rr, cc = rr+d[0], cc+d[1] {
					n++
				}
				if n == g.line {
					return true
				}
			}
		}
	}
	return false
}

// chessSides maps the arena's current_player to the FEN's active colour.
var chessSides = map[string]string{"white": "w", "black": "b"}

// chessFromArena reads a chess game_state. The FEN is the position; current_player says who
// moves and overrides the FEN's active colour, as it names the side the model plays (the
// rules then refuse a position that side cannot move in, such as the other king in check).
// turn and the fields the FEN repeats (castling_rights, en_passant, halfmove_clock,
// fullmove_number) are informational. The arena sends no history: the position is taken as
// the start of a match.
func chessFromArena(f fields) (json.RawMessage, error) {
	fen, err := f.str("fen")
	if err != nil {
		return nil, err
	}
	current, err := f.str("current_player", "white", "black")
	if err != nil {
		return nil, err
	}
	for _, err := range []error{
		f.optInt("turn", 0, maxChessNumber),
		f.optStr("castling_rights"),
		f.optStr("en_passant"),
		f.optInt("halfmove_clock", 0, maxChessNumber),
		f.optInt("fullmove_number", 1, maxChessNumber),
	} {
		if err != nil {
			return nil, err
		}
	}
	parts := strings.Fields(fen)
	if len(parts) != 6 {
		return nil, invalidState("fen must have 6 fields, got %d", len(parts))
	}
	full, err := strconv.Atoi(parts[5])
	if err != nil {
		return nil, invalidState("fen's full-move number %q is not a number", parts[5])
	}
	parts[1] = chessSides[current]
	ctx, _ := json.Marshal(map[string]any{"fen": strings.Join(parts, " "), "side_to_move": current, "your_color": current,
		"move_number": full, "ply": 0, "last_move": nil})
	return ctx, nil
}

// maxChessNumber bounds the counters of a chess game_state; no game gets near it.
const maxChessNumber = 1 << 20

// fields are a game_state's members, undecoded.
type fields map[string]json.RawMessage

func stateFields(state json.RawMessage) (fields, error) {
	var f fields
	// Unmarshal leaves the map nil for null, so a null state is refused like an absent one.
	if err := json.Unmarshal(state, &f); err != nil || f == nil {
		return nil, invalidState("game_state must be an object")
	}
	return f, nil
}

// str reads a required string, one of allowed when any are given.
func (f fields) str(name string, allowed ...string) (string, error) {
	var v *string
	if err := json.Unmarshal(f[name], &v); err != nil || v == nil || (len(allowed) > 0 && !slices.Contains(allowed, *v)) {
		return "", invalidState("%s must be %s (got %s)", name, expected("a string", allowed), clip(f[name]))
	}
	return *v, nil
}

// optStr checks an optional string that may be null, one of allowed when any are given.
func (f fields) optStr(name string, allowed ...string) error {
	raw, ok := f[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil || (len(allowed) > 0 && !slices.Contains(allowed, v)) {
		return invalidState("%s must be null or %s (got %s)", name, expected("a string", allowed), clip(raw))
	}
	return nil
}

// optInt checks an optional integer, which may be null, against lo..hi.
func (f fields) optInt(name string, lo, hi int) error {
	raw, ok := f[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	var v int
	if err := json.Unmarshal(raw, &v); err != nil || v < lo || v > hi {
		return invalidState("%s must be an integer from %d to %d (got %s)", name, lo, hi, clip(raw))
	}
	return nil
}

// expected words what a field may hold: its kind, or the values allowed.
func expected(kind string, allowed []string) string {
	if len(allowed) == 0 {
		return kind
	}
	quoted := make([]string, len(allowed))
	for k, a := range allowed {
		quoted[k] = strconv.Quote(a)
	}
	return "one of " + strings.Join(quoted, ", ")
}

// clip shortens a value the caller sent for an error message; "nothing" stands for an
// absent one.
func clip(raw json.RawMessage) string {
	const limit = 32
	switch {
	case len(raw) == 0:
		return "nothing"
	case len(raw) > limit:
		return string(raw[:limit]) + "..."
	}
	return string(raw)
}
