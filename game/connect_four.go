package game

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/agentleague/agentleague/protocol"
)

// TypeConnectFour is the registry key of connect four.
const TypeConnectFour = "connect_four"

// The connect four grid: ConnectFourRows rows, row 0 at the top, of ConnectFourCols columns.
const (
	ConnectFourRows = 6
	ConnectFourCols = 7
)

// discs are the players' colours: players[0] is R and moves first.
var discs = [2]string{"R", "Y"}

// fourDirections are the (row, col) steps of a line: horizontal, vertical and both diagonals.
var fourDirections = [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}}

// ConnectFourBoard is a connect four board indexed [row][col], row 0 at the top, each cell
// "R", "Y" or "", as in the LBM Arena game_state.
type ConnectFourBoard [ConnectFourRows][ConnectFourCols]string

// Winner is the colour that holds four in a row in any direction, or "".
func (b ConnectFourBoard) Winner() string {
	for r := range ConnectFourRows {
		for c := range ConnectFourCols {
			d := b[r][c]
			if d == "" {
				continue
			}
			for _, dir := range fourDirections {
				n := 1
				for rr, cc := r+dir[0], c+dir[1]; n < 4 && rr >= 0 && rr < ConnectFourRows && cc >= 0 && cc < ConnectFourCols && b[rr][cc] == d; rr, cc = rr+dir[0], cc+dir[1] {
					n++
				}
				if n == 4 {
					return d
				}
			}
		}
	}
	return ""
}

// landing is the row a disc dropped into col comes to rest on, or -1 when the column is full.
func (b ConnectFourBoard) landing(col int) int {
	for r := ConnectFourRows - 1; r >= 0; r-- {
		if b[r][col] == "" {
			return r
		}
	}
	return -1
}

// open lists the columns that are not full, ascending; never nil, so it encodes as [].
func (b ConnectFourBoard) open() []int {
	cols := []int{}
	for c := range ConnectFourCols {
		if b[0][c] == "" {
			cols = append(cols, c)
		}
	}
	return cols
}

// ConnectFourContext is the step_context of connect_four, shaped after the LBM Arena game_state.
type ConnectFourContext struct {
	// Board is the position to move in.
	Board ConnectFourBoard
	// YourColor is the colour of the player to move, "R" or "Y".
	YourColor string
	// MoveNumber is the number of the move to make: discs on the board + 1.
	MoveNumber int
	// ValidMoves lists the columns that are not full, ascending.
	ValidMoves []int
}

type connectFour struct{}

// MaxSteps implements Game: one disc per step on a full board.
func (connectFour) MaxSteps() int { return ConnectFourRows * ConnectFourCols }

var _ Game = connectFour{}

func connectFourFactory() Factory {
	return Factory{
		Name: TypeConnectFour,
		New:  func(map[string]any) (Game, error) { return connectFour{}, nil },
	}
}

// Type implements Game.
func (connectFour) Type() string { return TypeConnectFour }

// Simultaneous implements Game: players alternate.
func (connectFour) Simultaneous() bool { return false }

// NewState implements Game; connect four uses no randomness.
func (connectFour) NewState(int64) State { return connectFourState{} }

// LegalMoves implements Game: the columns that are not full, ascending.
func (connectFour) LegalMoves(stepContext json.RawMessage) ([]json.RawMessage, error) {
	ctx, err := ParseConnectFourContext(stepContext)
	if err != nil {
		return nil, err
	}
	moves := make([]json.RawMessage, len(ctx.ValidMoves))
	for k, c := range ctx.ValidMoves {
		moves[k] = columnMove(c)
	}
	return moves, nil
}

// ParseConnectFourContext reads the step_context a connect_four player was shown, erroring
// unless the referee could have sent it: a position of a match not over, discs resting on one
// another, with the colour and move number of the player to move. valid_moves may be left out.
func ParseConnectFourContext(raw json.RawMessage) (ConnectFourContext, error) {
	ctx, err := readConnectFourContext(raw)
	if err != nil {
		return ConnectFourContext{}, fmt.Errorf("parse connect_four context: %w", err)
	}
	return ctx, nil
}

func readConnectFourContext(raw json.RawMessage) (ConnectFourContext, error) {
	fields, err := decodeObject(raw)
	if err != nil {
		return ConnectFourContext{}, err
	}
	var ctx ConnectFourContext
	shapeErr := fmt.Errorf(`field "board" must be %d rows of %d cells`, ConnectFourRows, ConnectFourCols)
	// any, not string, so a null cell is refused instead of read as "".
	var rows [][]any
	if err := json.Unmarshal(fields["board"], &rows); err != nil || len(rows) != ConnectFourRows {
		return ConnectFourContext{}, shapeErr
	}
	for _, row := range rows {
		if len(row) != ConnectFourCols {
			return ConnectFourContext{}, shapeErr
		}
	}
	count := map[string]int{}
	for r, row := range rows {
		for c, cell := range row {
			d, ok := cell.(string)
			if !ok || (d != "" && d != "R" && d != "Y") {
				return ConnectFourContext{}, fmt.Errorf(`board[%d][%d] must be "R", "Y" or ""`, r, c)
			}
			ctx.Board[r][c] = d
			count[d]++
		}
	}
	// Row 0 is the top, so every disc above the bottom row must rest on another.
	for r := range ConnectFourRows - 1 {
		for c := range ConnectFourCols {
			if ctx.Board[r][c] != "" && ctx.Board[r+1][c] == "" {
				return ConnectFourContext{}, fmt.Errorf("board[%d][%d] floats over an empty cell", r, c)
			}
		}
	}
	if ctx.YourColor, err = stringField(fields, "your_color"); err != nil {
		return ConnectFourContext{}, err
	}
	if ctx.MoveNumber, err = intField(fields, "move_number"); err != nil {
		return ConnectFourContext{}, err
	}
	red, yellow := count["R"], count["Y"]
	var toMove string
	switch red - yellow {
	case 0:
		toMove = "R"
	case 1:
		toMove = "Y"
	default:
		return ConnectFourContext{}, fmt.Errorf("board has %d R and %d Y", red, yellow)
	}
	if ctx.YourColor != toMove {
		return ConnectFourContext{}, fmt.Errorf("your_color %q but %s is to move", ctx.YourColor, toMove)
	}
	if ctx.MoveNumber != red+yellow+1 {
		return ConnectFourContext{}, fmt.Errorf("move_number %d with %d discs on the board", ctx.MoveNumber, red+yellow)
	}
	if ctx.Board.Winner() != "" || red+yellow == ConnectFourRows*ConnectFourCols {
		return ConnectFourContext{}, ErrMatchOver
	}
	ctx.ValidMoves = ctx.Board.open()
	if rawValid, ok := fields["valid_moves"]; ok {
		var sent []int
		if err := json.Unmarshal(rawValid, &sent); err != nil || !slices.Equal(sent, ctx.ValidMoves) {
			return ConnectFourContext{}, fmt.Errorf("valid_moves %s, want the open columns %v", clip(rawValid), ctx.ValidMoves)
		}
	}
	return ctx, nil
}

// connectFourState is a position; arrays make copies, so Apply cannot touch the receiver.
type connectFourState struct {
	board ConnectFourBoard
	moves int
	// winner is the board's Winner, kept so that the many calls of Terminal do not rescan it.
	winner string
}

var _ State = connectFourState{}

// ToMove implements State: R on even move counts, Y on odd ones.
func (s connectFourState) ToMove() []int {
	if s.Terminal() {
		return nil
	}
	return []int{s.moves % 2}
}

// Context implements State: board, your_color, move_number and valid_moves, the columns a
// disc can still go in (none once the match is over).
func (s connectFourState) Context(i int) map[string]any {
	valid := []int{}
	if !s.Terminal() {
		valid = s.board.open()
	}
	return map[string]any{
		"board":       s.board,
		"your_color":  discs[i],
		"move_number": s.moves + 1,
		"valid_moves": valid,
	}
}

// ParseMove implements State. A move is {"column": c}, a 0-based integer; unknown fields are
// ignored.
func (s connectFourState) ParseMove(i int, raw json.RawMessage) (json.RawMessage, error) {
	c, err := s.parse(i, raw)
	if err != nil {
		return nil, err
	}
	return columnMove(c), nil
}

func (s connectFourState) parse(i int, raw json.RawMessage) (int, error) {
	if s.Terminal() {
		return 0, fmt.Errorf("%w: match is over", ErrIllegalMove)
	}
	if i != s.moves%2 {
		return 0, fmt.Errorf("%w: player %d is not to move", ErrIllegalMove, i)
	}
	fields, err := decodeMoveObject(raw)
	if err != nil {
		return 0, err
	}
	c, err := intField(fields, "column")
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrMalformedMove, err)
	}
	if c < 0 || c >= ConnectFourCols {
		return 0, fmt.Errorf("%w: column %d is off the board", ErrIllegalMove, c)
	}
	if s.board.landing(c) < 0 {
		return 0, fmt.Errorf("%w: column %d is full", ErrIllegalMove, c)
	}
	return c, nil
}

// ForcedMove implements State: the lowest open column; nil once the match is over.
func (s connectFourState) ForcedMove(int) json.RawMessage {
	if s.Terminal() {
		return nil
	}
	return columnMove(s.board.open()[0]) // a board that is not terminal has an open column
}

// Apply implements State with the one move of the player to move.
func (s connectFourState) Apply(moves []json.RawMessage) (State, error) {
	if len(moves) != 1 {
		return nil, fmt.Errorf("apply: want 1 move, got %d", len(moves))
	}
	c, err := s.parse(s.moves%2, moves[0])
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	next := s
	next.board[s.board.landing(c)][c] = discs[s.moves%2]
	next.moves++
	next.winner = next.board.Winner()
	return next, nil
}

// Terminal implements State: four in a row or a full board.
func (s connectFourState) Terminal() bool {
	return s.winner != "" || s.moves == ConnectFourRows*ConnectFourCols
}

// Outcomes implements State; it is zero before the end.
func (s connectFourState) Outcomes() [2]protocol.Outcome {
	switch {
	case s.winner == "R":
		return [2]protocol.Outcome{protocol.Win, protocol.Loss}
	case s.winner == "Y":
		return [2]protocol.Outcome{protocol.Loss, protocol.Win}
	case s.Terminal():
		return [2]protocol.Outcome{protocol.Draw, protocol.Draw}
	default:
		return [2]protocol.Outcome{}
	}
}

// Final implements State. outcome is "R_WINS", "Y_WINS", "DRAW", or "IN_PROGRESS" when a match
// stops early (a forfeit).
func (s connectFourState) Final() map[string]any {
	outcome := "IN_PROGRESS"
	switch {
	case s.winner != "":
		outcome = s.winner + "_WINS"
	case s.Terminal():
		outcome = "DRAW"
	}
	return map[string]any{
		"board":      s.board,
		"winner":     s.winner,
		"outcome":    outcome,
		"move_count": s.moves,
	}
}

// columnMove is the canonical encoding of a connect four move.
func columnMove(c int) json.RawMessage {
	return json.RawMessage(`{"column":` + strconv.Itoa(c) + `}`)
}
