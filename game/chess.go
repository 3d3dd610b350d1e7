package game

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentleague/agentleague/protocol"
	"github.com/corentings/chess/v2"
)

// TypeChess is the registry key of chess.
const TypeChess = "chess"

// chessStartFEN is the standard starting position every match begins from.
const chessStartFEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

// chessSides are the players' colours as the contexts name them: players[0] has White.
var chessSides = [2]string{"white", "black"}

// Reasons a chess match ends, as Final reports them under "termination".
const (
	chessCheckmate    = "checkmate"
	chessStalemate    = "stalemate"
	chessInsufficient = "insufficient_material"
	chessThreefold    = "threefold_repetition"
	chessFiftyMoves   = "fifty_move_rule"
	chessMoveCap      = "move_cap"
	chessInProgress   = "in_progress"
)

// Draw thresholds: a player may claim a draw once a position occurs for the third time or
// after fifty moves of each side without a capture or a pawn move.
const (
	threefoldOccurrences = 3
	fiftyMoveHalfMoves   = 100
)

// ChessContext is the step_context of chess as ParseChessContext reads it.
type ChessContext struct {
	// Position is the position to move in, decoded from the fen field. Treat it as read-only.
	Position *chess.Position
	// YourColor is the side to move, "white" or "black".
	YourColor string
	// LastMove is the previous move in UCI, "" before the first move.
	LastMove string
	// MoveNumber is the full-move number of the move to make, as in the FEN.
	MoveNumber int
	// Ply counts the half-moves played in the match so far.
	Ply int
	// LegalMoves lists the legal moves in UCI, sorted.
	LegalMoves []string
	// IsCheck reports whether the side to move is in check.
	IsCheck bool
	// Moves are the moves of the match from its start, in UCI, when the context sent them
	// (field "moves"; nil otherwise). CheckMoves tells whether they replay to Position.
	Moves []string
	// StartFEN is the position the match started from when it is not the standard one
	// (field "start_fen", sent for a match that starts from an opening's position).
	StartFEN string
}

// chessMaxPlies bounds max_plies: 700 plies of the longest SAN moves still give a PGN
// under the 8192-character bound the protocol puts on every string of final_state, and a
// context's moves stay under its 4096 items per array (referee's
// TestLongestChessContextFitsTheProtocol).
const chessMaxPlies = 700

type chessGame struct{ maxPlies int }

// MaxSteps implements Game: one ply per step, at most max_plies.
func (g chessGame) MaxSteps() int { return g.maxPlies }

var _ Game = chessGame{}

func chessFactory() Factory {
	return Factory{
		Name: TypeChess,
		Params: map[string]Param{
			// Half-moves after which a game still running is adjudicated a draw (move_cap).
			"max_plies": Int(10, chessMaxPlies).Default(200),
		},
		New: func(params map[string]any) (Game, error) {
			return chessGame{maxPlies: params["max_plies"].(int)}, nil
		},
	}
}

// Type implements Game.
func (chessGame) Type() string { return TypeChess }

// Simultaneous implements Game: players alternate.
func (chessGame) Simultaneous() bool { return false }

// NewState implements Game: the standard starting position; chess uses no randomness.
func (g chessGame) NewState(int64) State {
	start, err := decodeFEN(chessStartFEN)
	if err != nil {
		panic(err) // a constant that tests decode
	}
	return newChessState(start, &chessPly{}, start, g.maxPlies)
}

// FromPosition implements positioned: a match that starts from fen, which must be a
// legal position with the game not over in it.
func (g chessGame) FromPosition(fen string) (State, error) {
	pos, err := decodeFEN(fen)
	if err != nil {
		return nil, fmt.Errorf("fen %q: %w", fen, err)
	}
	if err := checkPosition(pos, sortedMoves(pos)); err != nil {
		return nil, fmt.Errorf("fen %q: %w", fen, err)
	}
	return newChessState(pos, &chessPly{}, pos, g.maxPlies), nil
}

// LegalMoves implements Game: the legal moves in UCI order, each as {"uci": move}. It refuses
// a context whose ply count has reached the game's move cap, since that match is over.
func (g chessGame) LegalMoves(stepContext json.RawMessage) ([]json.RawMessage, error) {
	ctx, err := ParseChessContext(stepContext)
	if err != nil {
		return nil, err
	}
	if ctx.Ply >= g.maxPlies {
		return nil, fmt.Errorf("parse chess context: %w: ply %d reached max_plies %d", ErrMatchOver, ctx.Ply, g.maxPlies)
	}
	moves := make([]json.RawMessage, len(ctx.LegalMoves))
	for k, m := range ctx.LegalMoves {
		moves[k] = uciMove(m)
	}
	return moves, nil
}

// ParseChessContext reads the step_context a chess player was shown, erroring unless the
// referee could have sent it: a legal position of a match not over (as far as the FEN tells:
// repetitions need the history), to be played by your_color, whose legal_moves and is_check,
// if sent, are the ones the rules give, and whose moves, if sent, are ply UCI moves ending
// with last_move. Whether the moves lead to the position is for CheckMoves, which costs a
// replay of the match: most players never read them.
func ParseChessContext(raw json.RawMessage) (ChessContext, error) {
	ctx, err := readChessContext(raw)
	if err != nil {
		return ChessContext{}, fmt.Errorf("parse chess context: %w", err)
	}
	return ctx, nil
}

func readChessContext(raw json.RawMessage) (ChessContext, error) {
	fields, err := decodeObject(raw)
	if err != nil {
		return ChessContext{}, err
	}
	fen, err := stringField(fields, "fen")
	if err != nil {
		return ChessContext{}, err
	}
	var ctx ChessContext
	if ctx.Position, err = decodeFEN(fen); err != nil {
		return ChessContext{}, fmt.Errorf(`field "fen": %w`, err)
	}
	legal := sortedMoves(ctx.Position)
	if err := checkPosition(ctx.Position, legal); err != nil {
		return ChessContext{}, fmt.Errorf(`field "fen": %w`, err)
	}
	side, err := stringField(fields, "side_to_move")
	if err != nil {
		return ChessContext{}, err
	}
	if ctx.YourColor, err = stringField(fields, "your_color"); err != nil {
		return ChessContext{}, err
	}
	toMove := chessSides[sideIndex(ctx.Position.Turn())]
	if side != toMove {
		return ChessContext{}, fmt.Errorf("side_to_move %q but the FEN has %s to move", side, toMove)
	}
	if ctx.YourColor != toMove {
		return ChessContext{}, fmt.Errorf("your_color %q but %s is to move", ctx.YourColor, toMove)
	}
	if ctx.MoveNumber, err = intField(fields, "move_number"); err != nil {
		return ChessContext{}, err
	}
	if want := fullMoveNumber(ctx.Position); ctx.MoveNumber != want {
		return ChessContext{}, fmt.Errorf("move_number %d but the FEN has %d", ctx.MoveNumber, want)
	}
	if ctx.Ply, err = intField(fields, "ply"); err != nil {
		return ChessContext{}, err
	}
	if ctx.Ply < 0 {
		return ChessContext{}, fmt.Errorf("negative ply %d", ctx.Ply)
	}
	var last *string
	if err := json.Unmarshal(fields["last_move"], &last); err != nil || (last == nil) != (ctx.Ply == 0) {
		return ChessContext{}, fmt.Errorf(`field "last_move" must be a UCI move, or null at ply 0 (got %s at ply %d)`, clip(fields["last_move"]), ctx.Ply)
	}
	if last != nil {
		if ctx.LastMove, err = parseUCI(*last); err != nil {
			return ChessContext{}, fmt.Errorf(`field "last_move": %w`, err)
		}
	}
	ctx.LegalMoves = make([]string, len(legal))
	for k := range legal {
		ctx.LegalMoves[k] = legal[k].String()
	}
	if rawLegal, ok := fields["legal_moves"]; ok {
		var sent []string
		if err := json.Unmarshal(rawLegal, &sent); err != nil || !slices.Equal(sent, ctx.LegalMoves) {
			return ChessContext{}, fmt.Errorf("legal_moves %s are not the position's %d legal moves", clip(rawLegal), len(legal))
		}
	}
	ctx.IsCheck = inCheck(ctx.Position)
	if rawCheck, ok := fields["is_check"]; ok {
		var sent *bool
		if err := json.Unmarshal(rawCheck, &sent); err != nil || sent == nil || *sent != ctx.IsCheck {
			return ChessContext{}, fmt.Errorf("is_check %s but the side to move is in check: %t", clip(rawCheck), ctx.IsCheck)
		}
	}
	if end, _ := positionEnd(ctx.Position, legal); end != "" {
		return ChessContext{}, fmt.Errorf("%w: %s", ErrMatchOver, end)
	}
	if _, ok := fields["start_fen"]; ok {
		if ctx.StartFEN, err = stringField(fields, "start_fen"); err != nil {
			return ChessContext{}, err
		}
		start, err := decodeFEN(ctx.StartFEN)
		if err == nil {
			err = checkPosition(start, sortedMoves(start))
		}
		if err != nil {
			return ChessContext{}, fmt.Errorf(`field "start_fen": %w`, err)
		}
	}
	if rawMoves, ok := fields["moves"]; ok {
		if ctx.Moves, err = readMoves(rawMoves, ctx); err != nil {
			return ChessContext{}, err
		}
	}
	return ctx, nil
}

// readMoves reads the field "moves": ctx.Ply moves in UCI, the last being ctx.LastMove.
func readMoves(raw json.RawMessage, ctx ChessContext) ([]string, error) {
	var moves []string
	if err := json.Unmarshal(raw, &moves); err != nil || moves == nil {
		return nil, fmt.Errorf(`field "moves" must be a list of UCI moves (got %s)`, clip(raw))
	}
	if len(moves) != ctx.Ply {
		return nil, fmt.Errorf(`field "moves" holds %d moves but ply is %d`, len(moves), ctx.Ply)
	}
	for k, m := range moves {
		var err error
		if moves[k], err = parseUCI(m); err != nil {
			return nil, fmt.Errorf(`field "moves": move %d: %w`, k+1, err)
		}
	}
	if ctx.Ply > 0 && moves[ctx.Ply-1] != ctx.LastMove {
		return nil, fmt.Errorf(`field "moves" ends with %s but last_move is %s`, moves[ctx.Ply-1], ctx.LastMove)
	}
	return moves, nil
}

// CheckMoves plays Moves from the match's start (StartFEN, else the standard position)
// through the rules, erroring unless every
// move is legal where it is played, the match goes on after each, and they end in Position
// (clocks included; en passant squares only where a capture there is legal, as the
// repetition rule has it). A match the moves show to be over, by a threefold repetition,
// wraps ErrMatchOver. Without moves there is nothing to check.
func (c ChessContext) CheckMoves() error {
	if c.Moves == nil {
		return nil
	}
	if err := c.replay(); err != nil {
		return fmt.Errorf("check chess moves: %w", err)
	}
	return nil
}

func (c ChessContext) replay() error {
	start := chessStartFEN
	if c.StartFEN != "" {
		start = c.StartFEN
	}
	pos, err := decodeFEN(start)
	if err != nil {
		return err
	}
	legal := pos.ValidMoves()
	node := &chessPly{key: repetitionKey(pos, legal)}
	for k, m := range c.Moves {
		// Apply's checks without its sorting and SAN, which would cost a long match
		// milliseconds at every move.
		if end, _ := ending(pos, legal, node); end != "" {
			return fmt.Errorf("move %d: the match was over (%s)", k+1, end)
		}
		mv, ok := findMove(legal, m)
		if !ok {
			return fmt.Errorf("move %d: %s is not a legal move in %s", k+1, m, pos)
		}
		pos = pos.Update(&mv)
		legal = pos.ValidMoves()
		node = &chessPly{prev: node, key: repetitionKey(pos, legal), ply: k + 1}
	}
	if node.key != repetitionKey(c.Position, c.Position.ValidMoves()) || pos.HalfMoveClock() != c.Position.HalfMoveClock() ||
		fullMoveNumber(pos) != fullMoveNumber(c.Position) {
		return fmt.Errorf("the moves lead to %s, not to the fen", pos)
	}
	if end, _ := ending(pos, legal, node); end != "" {
		return fmt.Errorf("%w: %s", ErrMatchOver, end)
	}
	return nil
}

// findMove returns the move of legal whose UCI is uci (lower case, well-formed).
func findMove(legal []chess.Move, uci string) (chess.Move, bool) {
	want, err := chess.UCINotation{}.Decode(nil, uci)
	if err != nil {
		return chess.Move{}, false
	}
	for _, m := range legal {
		if m.S1() == want.S1() && m.S2() == want.S2() && m.Promo() == want.Promo() {
			return m, true
		}
	}
	return chess.Move{}, false
}

// inCheck reports whether the side to move is in check: whether a piece of the other side
// attacks its king. The library keeps this to itself.
func inCheck(pos *chess.Position) bool {
	b, us := pos.Board(), pos.Turn()
	them := us.Other()
	king := chess.NoSquare
	for sq := chess.A1; sq <= chess.H8; sq++ {
		if b.Piece(sq) == chess.NewPiece(chess.King, us) {
			king = sq
			break
		}
	}
	if king == chess.NoSquare {
		return false
	}
	f, r := int(king.File()), int(king.Rank())
	// at is the piece df files and dr ranks away from the king; false off the board.
	at := func(df, dr int) (chess.Piece, bool) {
		if f+df < 0 || f+df > 7 || r+dr < 0 || r+dr > 7 {
			return chess.NoPiece, false
		}
		return b.Piece(chess.NewSquare(chess.File(f+df), chess.Rank(r+dr))), true
	}
	is := func(df, dr int, t chess.PieceType) bool {
		p, _ := at(df, dr)
		return p == chess.NewPiece(t, them)
	}
	forward := 1 // the rank direction in which the side to move's pawns advance
	if us == chess.Black {
		forward = -1
	}
	if is(-1, forward, chess.Pawn) || is(1, forward, chess.Pawn) {
		return true
	}
	for _, d := range [8][2]int{{1, 2}, {2, 1}, {2, -1}, {1, -2}, {-1, -2}, {-2, -1}, {-2, 1}, {-1, 2}} {
		if is(d[0], d[1], chess.Knight) {
			return true
		}
	}
	for _, d := range [8][2]int{{0, 1}, {1, 0}, {0, -1}, {-1, 0}, {1, 1}, {1, -1}, {-1, -1}, {-1, 1}} {
		if is(d[0], d[1], chess.King) {
			return true
		}
		slider := chess.Rook
		if d[0] != 0 && d[1] != 0 {
			slider = chess.Bishop
		}
		for n := 1; ; n++ {
			p, ok := at(n*d[0], n*d[1])
			if !ok || (p != chess.NoPiece && p.Color() != them) {
				break
			}
			if p.Type() == slider || p.Type() == chess.Queen {
				return true
			}
			if p != chess.NoPiece {
				break
			}
		}
	}
	return false
}

// fenMu serialises FEN decoding: the library's decoder writes a package-level buffer, so two
// goroutines decoding at once would race.
var fenMu sync.Mutex

// decodeFEN is the library's FEN decoder made safe for concurrent use.
func decodeFEN(fen string) (*chess.Position, error) {
	fenMu.Lock()
	defer fenMu.Unlock()
	pos := new(chess.Position)
	if err := pos.UnmarshalText([]byte(fen)); err != nil {
		return nil, err
	}
	return pos, nil
}

// checkPosition refuses what the FEN decoder lets through but no game reaches and the move
// generator would misplay: missing or extra kings, pawns on the first or last rank, castling
// rights without king and rook at home, an en passant square no double step explains, and a
// side not to move in check.
func checkPosition(pos *chess.Position, legal []chess.Move) error {
	b := pos.Board()
	var kings [3]int // indexed by chess.Color
	for sq := chess.A1; sq <= chess.H8; sq++ {
		p := b.Piece(sq)
		switch {
		case p.Type() == chess.King:
			kings[p.Color()]++
		case p.Type() == chess.Pawn && (sq.Rank() == chess.Rank1 || sq.Rank() == chess.Rank8):
			return fmt.Errorf("pawn on %s", sq)
		}
	}
	if kings[chess.White] != 1 || kings[chess.Black] != 1 {
		return fmt.Errorf("%d white and %d black kings, want one each", kings[chess.White], kings[chess.Black])
	}
	rights := pos.CastleRights()
	for _, c := range []struct {
		color      chess.Color
		side       chess.Side
		right      string
		king, rook chess.Square
	}{
		{chess.White, chess.KingSide, "K", chess.E1, chess.H1},
		{chess.White, chess.QueenSide, "Q", chess.E1, chess.A1},
		{chess.Black, chess.KingSide, "k", chess.E8, chess.H8},
		{chess.Black, chess.QueenSide, "q", chess.E8, chess.A8},
	} {
		if rights.CanCastle(c.color, c.side) && (b.Piece(c.king) != chess.NewPiece(chess.King, c.color) || b.Piece(c.rook) != chess.NewPiece(chess.Rook, c.color)) {
			return fmt.Errorf("castling right %s without king and rook at home", c.right)
		}
	}
	if ep := pos.EnPassantSquare(); ep != chess.NoSquare {
		// The pawn that just stepped two squares stands in front of ep, seen from the side to
		// move, and the squares it crossed are empty.
		front, behind, rank := ep-8, ep+8, chess.Rank6
		if pos.Turn() == chess.Black {
			front, behind, rank = ep+8, ep-8, chess.Rank3
		}
		if ep.Rank() != rank || b.Piece(front) != chess.NewPiece(chess.Pawn, pos.Turn().Other()) || b.Piece(ep) != chess.NoPiece || b.Piece(behind) != chess.NoPiece {
			return fmt.Errorf("en passant square %s without a pawn that just stepped over it", ep)
		}
	}
	for k := range legal {
		if b.Piece(legal[k].S2()).Type() == chess.King {
			return errors.New("the side not to move is in check")
		}
	}
	return nil
}

// chessState is a position with the moves that led to it. States share their history, a list
// linked backwards, and never change: the position's legal-move cache, the library's one
// mutable field, is filled in newChessState before anyone else can see the state.
type chessState struct {
	pos *chess.Position
	// legal holds the legal moves sorted by their UCI, uci.
	legal []chess.Move
	uci   []string
	// last is the move that led here; for the starting position, a node without a move.
	last *chessPly
	// start is the position the match started from, for the PGN.
	start    *chess.Position
	maxPlies int
	// termination says why the match is over; "" while it runs.
	termination string
	// winner is the index of the player who won; -1 unless termination is a checkmate.
	winner int
	// check reports whether the side to move is in check.
	check bool
}

var _ State = chessState{}

// chessPly is one move of a match.
type chessPly struct {
	// prev is the move before; nil for the starting node, which has no move.
	prev     *chessPly
	uci, san string
	// key is the repetitionKey of the position after the move.
	key string
	// ply counts the half-moves up to and including this one.
	ply int
}

// newChessState builds the state of pos, reached by the move of node (whose key it fills in).
func newChessState(pos *chess.Position, node *chessPly, start *chess.Position, maxPlies int) chessState {
	s := chessState{pos: pos, legal: sortedMoves(pos), last: node, start: start, maxPlies: maxPlies, winner: -1, check: inCheck(pos)}
	s.uci = make([]string, len(s.legal))
	for k := range s.legal {
		s.uci[k] = s.legal[k].String()
	}
	node.key = repetitionKey(pos, s.legal)
	s.termination, s.winner = ending(pos, s.legal, node)
	if s.termination == "" && node.ply >= maxPlies {
		s.termination = chessMoveCap
	}
	return s
}

// ending is the termination of pos, reached by node's move, but the move cap (see
// positionEnd), with the winner's index; "" when the game goes on. node's key must be set.
func ending(pos *chess.Position, legal []chess.Move, node *chessPly) (string, int) {
	end, winner := positionEnd(pos, legal)
	if end == "" && repetitions(node, pos.HalfMoveClock()) >= threefoldOccurrences {
		end = chessThreefold
	}
	return end, winner
}

// sortedMoves lists the legal moves of pos in UCI order. It fills pos's cache of legal moves.
func sortedMoves(pos *chess.Position) []chess.Move {
	legal := pos.ValidMoves()
	slices.SortFunc(legal, func(a, b chess.Move) int { return strings.Compare(a.String(), b.String()) })
	return legal
}

// positionEnd is the termination a position decides alone, with the winner's index when it is
// checkmate (-1 otherwise); "" when the game goes on. A checkmate or stalemate comes first, as
// the move that gives it ends the game; then the draws a player could claim or that are forced.
func positionEnd(pos *chess.Position, legal []chess.Move) (string, int) {
	switch {
	case len(legal) == 0 && pos.Status() == chess.Checkmate:
		return chessCheckmate, 1 - sideIndex(pos.Turn())
	case len(legal) == 0:
		return chessStalemate, -1
	case insufficientMaterial(pos.Board()):
		return chessInsufficient, -1
	case pos.HalfMoveClock() >= fiftyMoveHalfMoves:
		return chessFiftyMoves, -1
	default:
		return "", -1
	}
}

// insufficientMaterial reports a dead position by material: kings alone, or with one minor
// piece, or with bishops that all stand on squares of one colour.
func insufficientMaterial(b *chess.Board) bool {
	var knights, bishops, bishopSquares int // bishopSquares: bit 0 dark, bit 1 light
	for sq := chess.A1; sq <= chess.H8; sq++ {
		switch b.Piece(sq).Type() {
		case chess.Pawn, chess.Rook, chess.Queen:
			return false
		case chess.Knight:
			knights++
		case chess.Bishop:
			bishops++
			bishopSquares |= 1 << ((int(sq.File()) + int(sq.Rank())) % 2)
		}
	}
	return knights+bishops <= 1 || (knights == 0 && bishopSquares != 3)
}

// CanWin implements winnable by material, as the draw on time judges it (FIDE 6.9): a
// lone king cannot mate; nor can a king and knight against a lone king, nor a king and
// bishops that all stand on squares of one colour when the opponent has nothing but
// bishops on that colour. Where a mate is possible, however unlikely, i can win.
func (s chessState) CanWin(i int) bool {
	type material struct{ heavy, knights, bishopSquares int } // bishopSquares: bit 0 dark, bit 1 light
	var mine, theirs material
	colour := chess.White
	if i == 1 {
		colour = chess.Black
	}
	b := s.pos.Board()
	for sq := chess.A1; sq <= chess.H8; sq++ {
		p := b.Piece(sq)
		if p == chess.NoPiece || p.Type() == chess.King {
			continue
		}
		m := &theirs
		if p.Color() == colour {
			m = &mine
		}
		switch p.Type() {
		case chess.Knight:
			m.knights++
		case chess.Bishop:
			m.bishopSquares |= 1 << ((int(sq.File()) + int(sq.Rank())) % 2)
		default:
			m.heavy++
		}
	}
	switch {
	case mine.heavy > 0:
		return true
	case mine.knights == 0 && mine.bishopSquares == 0:
		return false
	case mine.knights == 1 && mine.bishopSquares == 0:
		return theirs != material{}
	case mine.knights == 0 && mine.bishopSquares != 3:
		return theirs.heavy > 0 || theirs.knights > 0 || mine.bishopSquares|theirs.bishopSquares == 3
	}
	return true
}

// repetitionKey identifies a position for the repetition rule: placement, side to move,
// castling rights, and the en passant square only when a capture there is legal (FIDE 9.2.3).
func repetitionKey(pos *chess.Position, legal []chess.Move) string {
	ep := "-"
	for k := range legal {
		if legal[k].HasTag(chess.EnPassant) {
			ep = legal[k].S2().String()
			break
		}
	}
	return pos.Board().String() + " " + pos.Turn().String() + " " + pos.CastleRights().String() + " " + ep
}

// repetitions counts the occurrences of node's position among itself and the positions before
// it. Only the last halfMoves plies can hold it again: a capture or pawn move is irreversible.
func repetitions(node *chessPly, halfMoves int) int {
	n := 1
	for p, k := node.prev, 0; p != nil && k < halfMoves; p, k = p.prev, k+1 {
		if p.key == node.key {
			n++
		}
	}
	return n
}

// sideIndex is the player index of a colour: White is players[0].
func sideIndex(c chess.Color) int {
	if c == chess.Black {
		return 1
	}
	return 0
}

// fullMoveNumber is the FEN's full-move number; Ply numbers half-moves from 1 for White's first.
func fullMoveNumber(pos *chess.Position) int { return (pos.Ply() + 1) / 2 }

// ToMove implements State.
func (s chessState) ToMove() []int {
	if s.Terminal() {
		return nil
	}
	return []int{sideIndex(s.pos.Turn())}
}

// Context implements State: fen, side_to_move and your_color ("white" or "black"),
// legal_moves (UCI, sorted; none once the match is over), is_check (whether the side to move
// is in check), last_move (UCI, or null before the first move), moves (every move so far in
// UCI, from the start; at most max_plies, 700), move_number (the FEN's full-move number) and
// ply (half-moves played).
func (s chessState) Context(i int) map[string]any {
	legal := []string{}
	if !s.Terminal() {
		legal = slices.Clone(s.uci)
	}
	var last any
	if s.last.prev != nil {
		last = s.last.uci
	}
	moves, _ := s.history()
	ctx := map[string]any{
		"fen":          s.pos.String(),
		"side_to_move": chessSides[sideIndex(s.pos.Turn())],
		"your_color":   chessSides[i],
		"legal_moves":  legal,
		"is_check":     s.check,
		"last_move":    last,
		"moves":        moves,
		"move_number":  fullMoveNumber(s.pos),
		"ply":          s.last.ply,
	}
	if start := s.start.String(); start != chessStartFEN {
		ctx["start_fen"] = start
	}
	return ctx
}

// history lists the moves from the start, in UCI and in SAN.
func (s chessState) history() (uci, san []string) {
	n := s.last.ply
	uci, san = make([]string, n), make([]string, n)
	for p := s.last; p.prev != nil; p = p.prev {
		uci[p.ply-1], san[p.ply-1] = p.uci, p.san
	}
	return uci, san
}

// ParseMove implements State. A move is {"uci": "e2e4"}, the bare string "e2e4", or
// {"from": "e2", "to": "e4", "promotion": "q"} with promotion optional (null, or a piece
// letter in either case); letters may be upper case, and unknown fields are ignored.
func (s chessState) ParseMove(i int, raw json.RawMessage) (json.RawMessage, error) {
	k, err := s.parse(i, raw)
	if err != nil {
		return nil, err
	}
	return uciMove(s.uci[k]), nil
}

// parse returns the index of the move in s.legal.
func (s chessState) parse(i int, raw json.RawMessage) (int, error) {
	if s.Terminal() {
		return 0, fmt.Errorf("%w: match is over", ErrIllegalMove)
	}
	if i != sideIndex(s.pos.Turn()) {
		return 0, fmt.Errorf("%w: player %d is not to move", ErrIllegalMove, i)
	}
	uci, err := decodeChessMove(raw)
	if err != nil {
		return 0, err
	}
	if k, ok := slices.BinarySearch(s.uci, uci); ok {
		return k, nil
	}
	if _, ok := slices.BinarySearch(s.uci, uci+"q"); ok {
		return 0, fmt.Errorf("%w: %s promotes and needs a piece: q, r, b or n", ErrIllegalMove, uci)
	}
	return 0, fmt.Errorf("%w: %s is not a legal move in %s", ErrIllegalMove, uci, s.pos)
}

// decodeChessMove reads a move in any of ParseMove's forms as lower-case UCI.
func decodeChessMove(raw json.RawMessage) (string, error) {
	if len(raw) > maxMoveSize {
		return "", fmt.Errorf("%w: %d bytes exceeds the %d byte limit", ErrMalformedMove, len(raw), maxMoveSize)
	}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && trimmed[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("%w: decode string: %w", ErrMalformedMove, err)
		}
		return malformed(parseUCI(s))
	}
	fields, err := decodeMoveObject(raw)
	if err != nil {
		return "", err
	}
	_, hasFrom := fields["from"]
	_, hasTo := fields["to"]
	if _, ok := fields["uci"]; ok {
		if hasFrom || hasTo {
			return "", fmt.Errorf(`%w: both "uci" and "from"/"to" given`, ErrMalformedMove)
		}
		s, err := stringField(fields, "uci")
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrMalformedMove, err)
		}
		return malformed(parseUCI(s))
	}
	from, err := stringField(fields, "from")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformedMove, err)
	}
	to, err := stringField(fields, "to")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformedMove, err)
	}
	var promo *string
	if rawPromo, ok := fields["promotion"]; ok {
		if err := json.Unmarshal(rawPromo, &promo); err != nil {
			return "", fmt.Errorf(`%w: field "promotion" must be a piece letter or null (got %s)`, ErrMalformedMove, clip(rawPromo))
		}
	}
	if len(from) != 2 || len(to) != 2 {
		return "", fmt.Errorf(`%w: "from" and "to" must be squares such as "e2" (got %.8q, %.8q)`, ErrMalformedMove, from, to)
	}
	uci := from + to
	if promo != nil {
		if len(*promo) > 1 {
			return "", fmt.Errorf(`%w: field "promotion" must be one of q, r, b, n (got %.8q)`, ErrMalformedMove, *promo)
		}
		uci += *promo
	}
	return malformed(parseUCI(uci))
}

// malformed wraps a parseUCI error as a malformed move.
func malformed(uci string, err error) (string, error) {
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformedMove, err)
	}
	return uci, nil
}

// parseUCI checks the syntax of a UCI move, from and to squares and an optional promotion
// piece, and returns it in lower case.
func parseUCI(s string) (string, error) {
	uci := strings.ToLower(s)
	ok := (len(uci) == 4 || len(uci) == 5) && isSquare(uci[0:2]) && isSquare(uci[2:4])
	if ok && len(uci) == 5 {
		ok = strings.IndexByte("qrbn", uci[4]) >= 0
	}
	if !ok {
		return "", fmt.Errorf("%.8q is not a UCI move such as e2e4 or e7e8q", s)
	}
	return uci, nil
}

func isSquare(s string) bool { return s[0] >= 'a' && s[0] <= 'h' && s[1] >= '1' && s[1] <= '8' }

// ForcedMove implements State: the first legal move in UCI order; nil once the match is over.
func (s chessState) ForcedMove(int) json.RawMessage {
	if s.Terminal() {
		return nil
	}
	return uciMove(s.uci[0])
}

// Apply implements State with the one move of the player to move.
func (s chessState) Apply(moves []json.RawMessage) (State, error) {
	if len(moves) != 1 {
		return nil, fmt.Errorf("apply: want 1 move, got %d", len(moves))
	}
	k, err := s.parse(sideIndex(s.pos.Turn()), moves[0])
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	// A copy, so that nothing the library does with the move can reach s.legal.
	m := s.legal[k]
	node := &chessPly{prev: s.last, uci: s.uci[k], san: chess.AlgebraicNotation{}.Encode(s.pos, &m), ply: s.last.ply + 1}
	return newChessState(s.pos.Update(&m), node, s.start, s.maxPlies), nil
}

// Terminal implements State.
func (s chessState) Terminal() bool { return s.termination != "" }

// Outcomes implements State; it is zero before the end.
func (s chessState) Outcomes() [2]protocol.Outcome {
	switch {
	case s.winner >= 0:
		o := [2]protocol.Outcome{protocol.Loss, protocol.Loss}
		o[s.winner] = protocol.Win
		return o
	case s.Terminal():
		return [2]protocol.Outcome{protocol.Draw, protocol.Draw}
	default:
		return [2]protocol.Outcome{}
	}
}

// Final implements State: fen (the final position), termination (checkmate, stalemate,
// insufficient_material, threefold_repetition, fifty_move_rule, move_cap, or in_progress when a
// match stops early, a forfeit), winner ("white", "black" or ""), result ("1-0", "0-1",
// "1/2-1/2" or "*"), moves_uci and moves_san (every move), and pgn.
func (s chessState) Final() map[string]any {
	uci, san := s.history()
	termination, winner, result := s.termination, "", "*"
	switch {
	case s.winner >= 0:
		winner = chessSides[s.winner]
		result = [2]string{"1-0", "0-1"}[s.winner]
	case s.Terminal():
		result = "1/2-1/2"
	default:
		termination = chessInProgress
	}
	final := map[string]any{
		"fen":         s.pos.String(),
		"termination": termination,
		"winner":      winner,
		"result":      result,
		"moves_uci":   uci,
		"moves_san":   san,
		"pgn":         chessPGN(s.start, san, result, termination),
	}
	if start := s.start.String(); start != chessStartFEN {
		final["start_fen"] = start
	}
	return final
}

// uciMove is the canonical encoding of a chess move.
func uciMove(uci string) json.RawMessage {
	return json.RawMessage(`{"uci":"` + uci + `"}`)
}
