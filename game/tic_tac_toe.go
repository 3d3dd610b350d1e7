package game

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/agentleague/agentleague/protocol"
)

// TypeTicTacToe is the registry key of tic-tac-toe.
const TypeTicTacToe = "tic_tac_toe"

// marks are the players' marks: players[0] is X and moves first.
var marks = [2]string{"X", "O"}

// lines are the eight winning lines as (row, col) cells.
var lines = [8][3][2]int{
	{{0, 0}, {0, 1}, {0, 2}}, {{1, 0}, {1, 1}, {1, 2}}, {{2, 0}, {2, 1}, {2, 2}},
	{{0, 0}, {1, 0}, {2, 0}}, {{0, 1}, {1, 1}, {2, 1}}, {{0, 2}, {1, 2}, {2, 2}},
	{{0, 0}, {1, 1}, {2, 2}}, {{0, 2}, {1, 1}, {2, 0}},
}

// Board is a tic-tac-toe board indexed [row][col], each cell "X", "O" or "".
type Board [3][3]string

// Winner is the mark that holds a full line, or "".
func (b Board) Winner() string {
	for _, l := range lines {
		m := b[l[0][0]][l[0][1]]
		if m != "" && m == b[l[1][0]][l[1][1]] && m == b[l[2][0]][l[2][1]] {
			return m
		}
	}
	return ""
}

// empty lists the empty cells as (row, col), row-major.
func (b Board) empty() [][2]int {
	var cells [][2]int
	for r := range 3 {
		for c := range 3 {
			if b[r][c] == "" {
				cells = append(cells, [2]int{r, c})
			}
		}
	}
	return cells
}

// TicTacToeContext is the step_context of tic_tac_toe, as in the Python peer's captures.
type TicTacToeContext struct {
	// Board is the position to move in.
	Board Board
	// YourMark is the mark of the player to move, "X" or "O".
	YourMark string
	// MoveNumber is the number of the move to make: marks on the board + 1.
	MoveNumber int
}

type ticTacToe struct{}

// MaxSteps implements Game: one mark per step on a full board.
func (ticTacToe) MaxSteps() int { return 9 }

var _ Game = ticTacToe{}

func ticTacToeFactory() Factory {
	return Factory{
		Name: TypeTicTacToe,
		New:  func(map[string]any) (Game, error) { return ticTacToe{}, nil },
	}
}

// Type implements Game.
func (ticTacToe) Type() string { return TypeTicTacToe }

// Simultaneous implements Game: players alternate.
func (ticTacToe) Simultaneous() bool { return false }

// NewState implements Game; tic-tac-toe uses no randomness.
func (ticTacToe) NewState(int64) State { return ticTacToeState{} }

// LegalMoves implements Game: the empty cells, row-major.
func (ticTacToe) LegalMoves(stepContext json.RawMessage) ([]json.RawMessage, error) {
	ctx, err := ParseTicTacToeContext(stepContext)
	if err != nil {
		return nil, err
	}
	var moves []json.RawMessage
	for _, cell := range ctx.Board.empty() {
		moves = append(moves, cellMove(cell[0], cell[1]))
	}
	return moves, nil
}

// ParseTicTacToeContext reads the step_context a tic_tac_toe player was shown, erroring unless
// the referee could have sent it: a reachable position of a match not over, with the mark and
// move number of the player to move.
func ParseTicTacToeContext(raw json.RawMessage) (TicTacToeContext, error) {
	ctx, err := readTicTacToeContext(raw)
	if err != nil {
		return TicTacToeContext{}, fmt.Errorf("parse tic_tac_toe context: %w", err)
	}
	return ctx, nil
}

func readTicTacToeContext(raw json.RawMessage) (TicTacToeContext, error) {
	fields, err := decodeObject(raw)
	if err != nil {
		return TicTacToeContext{}, err
	}
	var ctx TicTacToeContext
	// any, not string, so a null cell is refused instead of read as "".
	var rows [][]any
	if err := json.Unmarshal(fields["board"], &rows); err != nil || len(rows) != 3 {
		return TicTacToeContext{}, errors.New(`field "board" must be 3 rows of 3 cells`)
	}
	for r, row := range rows {
		if len(row) != 3 {
			return TicTacToeContext{}, errors.New(`field "board" must be 3 rows of 3 cells`)
		}
		for c, cell := range row {
			m, ok := cell.(string)
			if !ok || (m != "" && m != "X" && m != "O") {
				return TicTacToeContext{}, fmt.Errorf(`board[%d][%d] must be "X", "O" or ""`, r, c)
			}
			ctx.Board[r][c] = m
		}
	}
	if ctx.YourMark, err = stringField(fields, "your_mark"); err != nil {
		return TicTacToeContext{}, err
	}
	if ctx.MoveNumber, err = intField(fields, "move_number"); err != nil {
		return TicTacToeContext{}, err
	}
	if err := checkTicTacToeContext(ctx); err != nil {
		return TicTacToeContext{}, err
	}
	return ctx, nil
}

// checkTicTacToeContext errors unless the referee could have sent ctx: a reachable
// position of a match not over, with the mark and move number of the player to move.
func checkTicTacToeContext(ctx TicTacToeContext) error {
	var x, o int
	for _, row := range ctx.Board {
		for _, m := range row {
			switch m {
			case "X":
				x++
			case "O":
				o++
			}
		}
	}
	var toMove string
	switch x - o {
	case 0:
		toMove = "X"
	case 1:
		toMove = "O"
	default:
		return fmt.Errorf("board has %d X and %d O", x, o)
	}
	if ctx.YourMark != toMove {
		return fmt.Errorf("your_mark %q but %s is to move", ctx.YourMark, toMove)
	}
	if ctx.MoveNumber != x+o+1 {
		return fmt.Errorf("move_number %d with %d marks on the board", ctx.MoveNumber, x+o)
	}
	if ctx.Board.Winner() != "" || x+o == 9 {
		return ErrMatchOver
	}
	return nil
}

// ticTacToeState is a position; arrays make copies, so Apply cannot touch the receiver.
type ticTacToeState struct {
	board Board
	moves int
}

var _ State = ticTacToeState{}

// ToMove implements State: X on even move counts, O on odd ones.
func (s ticTacToeState) ToMove() []int {
	if s.Terminal() {
		return nil
	}
	return []int{s.moves % 2}
}

// CanWin implements winnable: player i can still win while some line holds none of the
// opponent's marks and i has moves enough left to fill its empty cells.
func (s ticTacToeState) CanWin(i int) bool {
	left := 9 - s.moves // empty cells; i gets every other one, the first if it is to move
	mine := left / 2
	if s.moves%2 == i {
		mine = (left + 1) / 2
	}
	for _, l := range lines {
		need, blocked := 0, false
		for _, cell := range l {
			switch s.board[cell[0]][cell[1]] {
			case marks[1-i]:
				blocked = true
			case "":
				need++
			}
		}
		if !blocked && need <= mine {
			return true
		}
	}
	return false
}

// Context implements State in the Python peer's format.
func (s ticTacToeState) Context(i int) map[string]any {
	return map[string]any{
		"board":       s.board,
		"your_mark":   marks[i],
		"move_number": s.moves + 1,
	}
}

// ParseMove implements State. A move is {"row": r, "col": c}, 0-based integers; unknown fields
// are ignored.
func (s ticTacToeState) ParseMove(i int, raw json.RawMessage) (json.RawMessage, error) {
	r, c, err := s.parse(i, raw)
	if err != nil {
		return nil, err
	}
	return cellMove(r, c), nil
}

func (s ticTacToeState) parse(i int, raw json.RawMessage) (row, col int, err error) {
	if s.Terminal() {
		return 0, 0, fmt.Errorf("%w: match is over", ErrIllegalMove)
	}
	if i != s.moves%2 {
		return 0, 0, fmt.Errorf("%w: player %d is not to move", ErrIllegalMove, i)
	}
	fields, err := decodeMoveObject(raw)
	if err != nil {
		return 0, 0, err
	}
	if row, err = intField(fields, "row"); err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrMalformedMove, err)
	}
	if col, err = intField(fields, "col"); err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrMalformedMove, err)
	}
	if row < 0 || row > 2 || col < 0 || col > 2 {
		return 0, 0, fmt.Errorf("%w: cell (%d, %d) is off the board", ErrIllegalMove, row, col)
	}
	if m := s.board[row][col]; m != "" {
		return 0, 0, fmt.Errorf("%w: cell (%d, %d) holds %s", ErrIllegalMove, row, col, m)
	}
	return row, col, nil
}

// ForcedMove implements State: the first empty cell, row-major; nil once the match is over.
func (s ticTacToeState) ForcedMove(int) json.RawMessage {
	if s.Terminal() {
		return nil
	}
	first := s.board.empty()[0] // a board that is not terminal has an empty cell
	return cellMove(first[0], first[1])
}

// Apply implements State with the one move of the player to move.
func (s ticTacToeState) Apply(moves []json.RawMessage) (State, error) {
	if len(moves) != 1 {
		return nil, fmt.Errorf("apply: want 1 move, got %d", len(moves))
	}
	r, c, err := s.parse(s.moves%2, moves[0])
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	next := s
	next.board[r][c] = marks[s.moves%2]
	next.moves++
	return next, nil
}

// Terminal implements State: a full line or a full board.
func (s ticTacToeState) Terminal() bool { return s.board.Winner() != "" || s.moves == 9 }

// Outcomes implements State; it is zero before the end.
func (s ticTacToeState) Outcomes() [2]protocol.Outcome {
	switch {
	case s.board.Winner() == "X":
		return [2]protocol.Outcome{protocol.Win, protocol.Loss}
	case s.board.Winner() == "O":
		return [2]protocol.Outcome{protocol.Loss, protocol.Win}
	case s.moves == 9:
		return [2]protocol.Outcome{protocol.Draw, protocol.Draw}
	default:
		return [2]protocol.Outcome{}
	}
}

// Final implements State. outcome is "X_WINS", "O_WINS", "DRAW", or "IN_PROGRESS" when a match
// stops early (a forfeit).
func (s ticTacToeState) Final() map[string]any {
	w := s.board.Winner()
	outcome := "IN_PROGRESS"
	switch {
	case w != "":
		outcome = w + "_WINS"
	case s.moves == 9:
		outcome = "DRAW"
	}
	return map[string]any{
		"board":      s.board,
		"winner":     w,
		"outcome":    outcome,
		"move_count": s.moves,
	}
}

// cellMove is the canonical encoding of a cell move.
func cellMove(r, c int) json.RawMessage {
	return json.RawMessage(`{"row":` + strconv.Itoa(r) + `,"col":` + strconv.Itoa(c) + `}`)
}
