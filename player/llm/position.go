package llm

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/corentings/chess/v2"
)

// position is what a prompt says about one request: the game's rules, the position as
// text with whose turn it is, and the legal moves as the model is asked to write them.
type position struct {
	rules   string
	board   string
	choices []choice
}

// choice is one legal move: label is how the model is asked to write it, san its SAN in
// chess (also accepted), move the move_payload the rules give.
type choice struct {
	label string
	san   string
	move  json.RawMessage
}

// maxHistoryRounds bounds the rounds a rounds game's prompt lists.
const maxHistoryRounds = 30

// Games lists the game types the llm strategy can describe to a model.
func Games() []string {
	return []string{game.TypeChess, game.TypeConnectFour, game.TypeEvenOdd, game.TypeRockPaperScissors, game.TypeTicTacToe}
}

// describe turns a step_context into a position. The legal moves come from the game's
// rules, which also check that the context is one a referee could send.
func describe(g game.Game, stepContext json.RawMessage) (position, error) {
	legal, err := g.LegalMoves(stepContext)
	if err != nil {
		return position{}, fmt.Errorf("legal moves: %w", err)
	}
	if len(legal) == 0 {
		return position{}, fmt.Errorf("no legal move in this %s position", g.Type())
	}
	var p position
	switch g.Type() {
	case game.TypeTicTacToe:
		p, err = describeTicTacToe(stepContext, legal)
	case game.TypeConnectFour:
		p, err = describeConnectFour(stepContext, legal)
	case game.TypeChess:
		p, err = describeChess(g, stepContext, legal)
	case game.TypeRockPaperScissors, game.TypeEvenOdd:
		p, err = describeRounds(g, stepContext, legal)
	default:
		return position{}, fmt.Errorf("the llm strategy does not play %s", g.Type())
	}
	if err != nil {
		return position{}, fmt.Errorf("describe %s: %w", g.Type(), err)
	}
	p.rules, err = Rules(g)
	return p, err
}

// Rules are the rules of g in a few sentences, as a model is told them.
func Rules(g game.Game) (string, error) {
	switch g.Type() {
	case game.TypeTicTacToe:
		return "Tic-tac-toe on a 3x3 board. Players take turns putting their mark (X or O) in an empty cell; X moves first. " +
			"Three of your marks in a row, a column or a diagonal win; a full board without such a line is a draw. " +
			"Rows and columns are numbered 0 to 2 from the top left.", nil
	case game.TypeConnectFour:
		return fmt.Sprintf("Connect Four on a board of %d rows and %d columns. Players take turns dropping a disc (R or Y) into a column "+
			"that is not full; it falls to the lowest empty cell. R moves first. Four of your discs in a line (across, down or diagonal) win; "+
			"a full board is a draw. Columns are numbered 0 to %d from the left.", game.ConnectFourRows, game.ConnectFourCols, game.ConnectFourCols-1), nil
	case game.TypeChess:
		return fmt.Sprintf("Chess by the FIDE Laws: checkmate wins; stalemate, threefold repetition, the fifty-move rule and "+
			"insufficient material draw, and a game still running after %d half-moves is adjudicated a draw.", g.MaxSteps()), nil
	case game.TypeRockPaperScissors:
		return fmt.Sprintf("Rock-paper-scissors, best of %d rounds. Each round both players choose rock, paper or scissors at the same time: "+
			"rock beats scissors, scissors beats paper, paper beats rock, and equal choices draw the round.", g.MaxSteps()) + roundsEnd, nil
	case game.TypeEvenOdd:
		return fmt.Sprintf("Even or odd, best of %d rounds. Each round the referee draws a secret number from 1 to 10 and both players "+
			"call \"even\" or \"odd\" at the same time; being right while the opponent is wrong wins the round, anything else draws it.", g.MaxSteps()) + roundsEnd, nil
	}
	return "", fmt.Errorf("the llm strategy does not play %s", g.Type())
}

// roundsEnd is how a rounds game ends.
const roundsEnd = " The match ends when the rounds are played or the leader can no longer be caught; more rounds won wins the match."

func describeTicTacToe(raw json.RawMessage, legal []json.RawMessage) (position, error) {
	c, err := game.ParseTicTacToeContext(raw)
	if err != nil {
		return position{}, err
	}
	var b strings.Builder
	b.WriteString("Board (row, column; . is empty):\n      col 0 1 2\n")
	for r, row := range c.Board {
		fmt.Fprintf(&b, "row %d    ", r)
		for _, cell := range row {
			b.WriteString(" " + cellText(cell))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "You play %s and it is your turn (move %d of the game). Write a move as \"row,column\", e.g. \"1,2\".", c.YourMark, c.MoveNumber)
	choices := make([]choice, len(legal))
	for k, m := range legal {
		var cell struct{ Row, Col int }
		if err := json.Unmarshal(m, &cell); err != nil {
			return position{}, fmt.Errorf("legal move %s: %w", m, err)
		}
		choices[k] = choice{label: fmt.Sprintf("%d,%d", cell.Row, cell.Col), move: m}
	}
	return position{board: b.String(), choices: choices}, nil
}

func describeConnectFour(raw json.RawMessage, legal []json.RawMessage) (position, error) {
	c, err := game.ParseConnectFourContext(raw)
	if err != nil {
		return position{}, err
	}
	var b strings.Builder
	b.WriteString("Board (top row first; . is empty):\ncolumn")
	for col := range game.ConnectFourCols {
		fmt.Fprintf(&b, " %d", col)
	}
	b.WriteByte('\n')
	for _, row := range c.Board {
		b.WriteString("      ")
		for _, cell := range row {
			b.WriteString(" " + cellText(cell))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "You play %s and it is your turn (move %d of the game). Write a move as the column number, e.g. \"3\".", c.YourColor, c.MoveNumber)
	choices := make([]choice, len(legal))
	for k, m := range legal {
		var col struct{ Column int }
		if err := json.Unmarshal(m, &col); err != nil {
			return position{}, fmt.Errorf("legal move %s: %w", m, err)
		}
		choices[k] = choice{label: strconv.Itoa(col.Column), move: m}
	}
	return position{board: b.String(), choices: choices}, nil
}

// chessExtras are the fields of a chess context that referees may add: the check flag and
// every move from the start in UCI.
type chessExtras struct {
	IsCheck *bool    `json:"is_check"`
	Moves   []string `json:"moves"`
}

func describeChess(g game.Game, raw json.RawMessage, legal []json.RawMessage) (position, error) {
	c, err := game.ParseChessContext(raw)
	if err != nil {
		return position{}, err
	}
	if len(legal) != len(c.LegalMoves) {
		return position{}, fmt.Errorf("%d legal moves for %d UCI moves", len(legal), len(c.LegalMoves))
	}
	var extras chessExtras
	_ = json.Unmarshal(raw, &extras) // optional fields: a context without them still plays
	fen := c.Position.String()
	var b strings.Builder
	b.WriteString("Position (FEN): " + fen + "\n")
	b.WriteString("Board (White's pieces upper case, Black's lower case, . empty):\n" + drawFEN(fen))
	history, check := chessHistory(c, extras)
	b.WriteString(history)
	fmt.Fprintf(&b, "You play %s and it is your move (move %d, half-move %d of at most %d).", c.YourColor, c.MoveNumber, c.Ply+1, g.MaxSteps())
	if check {
		b.WriteString(" Your king is in check.")
	}
	b.WriteString(" Write a move in UCI notation (from-square, to-square, and the promotion piece if any), e.g. \"e2e4\" or \"e7e8q\".")
	san := map[string]string{}
	for _, m := range c.Position.ValidMoves() {
		san[m.String()] = chess.AlgebraicNotation{}.Encode(c.Position, &m)
	}
	choices := make([]choice, len(legal))
	for k, u := range c.LegalMoves {
		choices[k] = choice{label: u, san: san[u], move: legal[k]}
	}
	return position{board: b.String(), choices: choices}, nil
}

// chessHistory is the game's moves so far in SAN when the context lists them, else the
// last move in UCI; check reports whether the side to move is in check, when known.
func chessHistory(c game.ChessContext, extras chessExtras) (text string, check bool) {
	if extras.IsCheck != nil {
		check = *extras.IsCheck
	}
	if len(extras.Moves) == c.Ply && c.Ply > 0 {
		// Moves that do not lead to the position are not the game's: the FEN is.
		if san, fen, err := game.ChessSAN(extras.Moves); err == nil && fen == c.Position.String() {
			var b strings.Builder
			b.WriteString("Moves so far (SAN):")
			for k, m := range san {
				if k%2 == 0 {
					fmt.Fprintf(&b, " %d.", k/2+1)
				}
				b.WriteString(" " + m)
			}
			b.WriteByte('\n')
			if extras.IsCheck == nil {
				last := san[len(san)-1]
				check = strings.HasSuffix(last, "+")
			}
			return b.String(), check
		}
	}
	if c.LastMove == "" {
		return "No move has been played yet.\n", check
	}
	return "The last move (UCI) was " + c.LastMove + ".\n", check
}

// drawFEN draws the board of a FEN, rank 8 first, with file letters and rank numbers.
func drawFEN(fen string) string {
	placement, _, _ := strings.Cut(fen, " ")
	var b strings.Builder
	for k, rank := range strings.Split(placement, "/") {
		fmt.Fprintf(&b, "%d ", 8-k)
		for _, r := range rank {
			if r >= '1' && r <= '8' {
				b.WriteString(strings.Repeat(" .", int(r-'0')))
			} else {
				b.WriteString(" " + string(r))
			}
		}
		b.WriteByte('\n')
	}
	b.WriteString("   a b c d e f g h\n")
	return b.String()
}

// roundsContext is the step_context of rock_paper_scissors and even_odd, which the rules
// have already checked.
type roundsContext struct {
	Round         int                `json:"round"`
	Rounds        int                `json:"rounds"`
	YourScore     int                `json:"your_score"`
	OpponentScore int                `json:"opponent_score"`
	History       []game.RoundRecord `json:"history"`
}

func describeRounds(g game.Game, raw json.RawMessage, legal []json.RawMessage) (position, error) {
	var c roundsContext
	if err := json.Unmarshal(raw, &c); err != nil {
		return position{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Round %d of at most %d. Rounds won: you %d, your opponent %d.\n", c.Round, c.Rounds, c.YourScore, c.OpponentScore)
	if len(c.History) > 0 {
		first := max(0, len(c.History)-maxHistoryRounds)
		fmt.Fprintf(&b, "Earlier rounds (%d to %d):\n", first+1, len(c.History))
		for k, h := range c.History[first:] {
			fmt.Fprintf(&b, "  round %d: you %s, opponent %s", first+k+1, h.You, h.Opponent)
			if h.Number > 0 {
				fmt.Fprintf(&b, ", number %d", h.Number)
			}
			fmt.Fprintf(&b, ": you %s\n", roundResult(h.Result))
		}
	}
	b.WriteString("Both players choose at the same time. Write your choice as one word.")
	choices := make([]choice, len(legal))
	for k, m := range legal {
		var ch struct{ Choice string }
		if err := json.Unmarshal(m, &ch); err != nil {
			return position{}, fmt.Errorf("legal move %s: %w", m, err)
		}
		choices[k] = choice{label: ch.Choice, move: m}
	}
	return position{board: b.String(), choices: choices}, nil
}

func roundResult(o protocol.Outcome) string {
	switch o {
	case protocol.Win:
		return "won"
	case protocol.Loss:
		return "lost"
	}
	return "drew"
}

// cellText shows an empty board cell as a dot.
func cellText(cell string) string {
	if cell == "" {
		return "."
	}
	return cell
}

// Position is a step_context as a model reads it, for agents outside this package that
// show positions to a model (the MCP gateway).
type Position struct {
	// Rules are the game's rules in a few sentences.
	Rules string
	// Board shows the position as text, whose turn it is and how to write a move.
	Board string
	// Moves are the legal moves as a model is asked to write them, in the rules' order.
	Moves []string
	pos   position
}

// Describe reads a step_context of g; the legal moves come from the game's rules.
func Describe(g game.Game, stepContext json.RawMessage) (Position, error) {
	pos, err := describe(g, stepContext)
	if err != nil {
		return Position{}, err
	}
	moves := make([]string, len(pos.choices))
	for k, c := range pos.choices {
		moves[k] = c.label
	}
	return Position{Rules: pos.rules, Board: pos.board, Moves: moves, pos: pos}, nil
}

// Find returns the legal move that move names, as Moves writes it and as its
// move_payload: move may be a label of Moves (case, spaces, brackets and dashes aside), a
// SAN in chess, or the move_payload itself. The error says why no legal move matches, in
// words meant for the model.
func (p Position) Find(move json.RawMessage) (label string, payload json.RawMessage, err error) {
	k, err := p.pos.find(move)
	if err != nil {
		return "", nil, err
	}
	return p.pos.choices[k].label, p.pos.choices[k].move, nil
}
