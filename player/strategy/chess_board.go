package strategy

import (
	"math/rand/v2"

	"github.com/corentings/chess/v2"
)

// The chess search runs on its own board with make and unmake, because the chess library
// allocates a position per move and would give the search a small fraction of the nodes.
// The library stays the authority on the rules: the search only starts from the legal moves
// of the context, and tests compare both move generators.

// Pieces on the board: a kind, plus black for Black's; 0 is an empty square.
const (
	pawn int8 = iota + 1
	knight
	bishop
	rook
	queen
	king
	black int8 = 8
)

// Castling rights, bits of board.castle.
const (
	castleWK uint8 = 1 << iota
	castleWQ
	castleBK
	castleBQ
)

// Move flags.
const (
	flagEnPassant uint8 = 1 << iota
	flagCastle
	flagDouble
)

// The squares of the 0x88 board that matter to castling.
const (
	sqA1, sqE1, sqH1 = 0, 4, 7
	sqA8, sqE8, sqH8 = 112, 116, 119
)

var (
	knightSteps  = []int{33, 31, 18, 14, -14, -18, -31, -33}
	kingSteps    = []int{17, 16, 15, 1, -1, -15, -16, -17}
	bishopSteps  = []int{17, 15, -15, -17}
	rookSteps    = []int{16, 1, -1, -16}
	queenSteps   = []int{17, 16, 15, 1, -1, -15, -16, -17}
	promotions   = []int8{queen, rook, bishop, knight}
	promoLetters = [7]string{knight: "n", bishop: "b", rook: "r", queen: "q"}
)

// castleKeep masks the castling rights a move from or to each square keeps: moving the king or
// a rook, or taking a rook at home, loses the matching rights.
var castleKeep = func() [128]uint8 {
	var keep [128]uint8
	for sq := range keep {
		keep[sq] = castleWK | castleWQ | castleBK | castleBQ
	}
	keep[sqE1] &^= castleWK | castleWQ
	keep[sqH1] &^= castleWK
	keep[sqA1] &^= castleWQ
	keep[sqE8] &^= castleBK | castleBQ
	keep[sqH8] &^= castleBK
	keep[sqA8] &^= castleBQ
	return keep
}()

// zobrist holds the random keys whose XOR identifies a position, for repetitions. A fixed
// seed keeps them the same in every process.
var zobrist = func() (z struct {
	piece  [16][128]uint64
	castle [16]uint64
	ep     [8]uint64
	black  uint64
}) {
	rng := rand.New(rand.NewPCG(0x7a6f62726973, 0x74))
	for p := range z.piece {
		for sq := range z.piece[p] {
			z.piece[p][sq] = rng.Uint64()
		}
	}
	for k := range z.castle {
		z.castle[k] = rng.Uint64()
	}
	for f := range z.ep {
		z.ep[f] = rng.Uint64()
	}
	z.black = rng.Uint64()
	return z
}()

// move is a move of the board; promo is the kind promoted to, or 0.
type move struct {
	from, to    int8
	promo, flag uint8
}

// uci spells m in UCI.
func (m move) uci() string {
	return squareName(m.from) + squareName(m.to) + promoLetters[m.promo]
}

func squareName(sq int8) string { return string([]byte{'a' + byte(sq&7), '1' + byte(sq>>4)}) }

// board is a position on a 0x88 board: square rank*16 + file, so that sq&0x88 != 0 exactly
// when a step left the board.
type board struct {
	sq [128]int8
	// side is the colour to move, 0 for White and 1 for Black.
	side   int
	castle uint8
	// ep is the square a pawn just stepped over, or -1.
	ep int
	// half is the half-move clock of the fifty-move rule.
	half  int
	kings [2]int
	hash  uint64
}

// undo holds what make cannot recompute when a move is taken back.
type undo struct {
	captured int8
	castle   uint8
	ep       int
	half     int
	hash     uint64
}

// boardFromPosition copies a library position.
func boardFromPosition(pos *chess.Position) board {
	b := board{ep: -1, half: pos.HalfMoveClock()}
	kinds := map[chess.PieceType]int8{chess.Pawn: pawn, chess.Knight: knight, chess.Bishop: bishop, chess.Rook: rook, chess.Queen: queen, chess.King: king}
	for sq := chess.A1; sq <= chess.H8; sq++ {
		p := pos.Board().Piece(sq)
		if p == chess.NoPiece {
			continue
		}
		piece := kinds[p.Type()]
		if p.Color() == chess.Black {
			piece |= black
		}
		at := int(sq.Rank())*16 + int(sq.File())
		b.sq[at] = piece
		b.hash ^= zobrist.piece[piece][at]
		if piece&^black == king {
			b.kings[piece>>3] = at
		}
	}
	if pos.Turn() == chess.Black {
		b.side = 1
		b.hash ^= zobrist.black
	}
	rights := pos.CastleRights()
	for _, r := range []struct {
		c    chess.Color
		side chess.Side
		bit  uint8
	}{{chess.White, chess.KingSide, castleWK}, {chess.White, chess.QueenSide, castleWQ}, {chess.Black, chess.KingSide, castleBK}, {chess.Black, chess.QueenSide, castleBQ}} {
		if rights.CanCastle(r.c, r.side) {
			b.castle |= r.bit
		}
	}
	b.hash ^= zobrist.castle[b.castle]
	if ep := pos.EnPassantSquare(); ep != chess.NoSquare {
		b.ep = int(ep.Rank())*16 + int(ep.File())
		b.hash ^= zobrist.ep[b.ep&7]
	}
	return b
}

// forward is the direction a pawn of side moves.
func forward(side int) int { return 16 - 32*side }

// colourOf is the side of a piece that is not empty.
func colourOf(p int8) int { return int(p >> 3) }

// generate appends the pseudo-legal moves of the side to move to buf: those that may leave its
// own king in check. With capturesOnly it lists captures and queen promotions only.
func (b *board) generate(buf []move, capturesOnly bool) []move {
	for r := range 8 {
		for f := range 8 {
			from := r*16 + f
			p := b.sq[from]
			if p == 0 || colourOf(p) != b.side {
				continue
			}
			switch p &^ black {
			case pawn:
				buf = b.pawnMoves(buf, from, capturesOnly)
			case knight:
				buf = b.steps(buf, from, knightSteps, false, capturesOnly)
			case bishop:
				buf = b.steps(buf, from, bishopSteps, true, capturesOnly)
			case rook:
				buf = b.steps(buf, from, rookSteps, true, capturesOnly)
			case queen:
				buf = b.steps(buf, from, queenSteps, true, capturesOnly)
			case king:
				buf = b.steps(buf, from, kingSteps, false, capturesOnly)
				if !capturesOnly {
					buf = b.castles(buf)
				}
			}
		}
	}
	return buf
}

// steps appends the moves of a piece that steps, or with slide keeps going, along dirs.
func (b *board) steps(buf []move, from int, dirs []int, slide, capturesOnly bool) []move {
	for _, d := range dirs {
		for to := from + d; to&0x88 == 0; to += d {
			target := b.sq[to]
			if target != 0 {
				if colourOf(target) != b.side {
					buf = append(buf, move{from: int8(from), to: int8(to)})
				}
				break
			}
			if !capturesOnly {
				buf = append(buf, move{from: int8(from), to: int8(to)})
			}
			if !slide {
				break
			}
		}
	}
	return buf
}

func (b *board) pawnMoves(buf []move, from int, capturesOnly bool) []move {
	dir := forward(b.side)
	lastRank, startRank := 7, 1
	if b.side == 1 {
		lastRank, startRank = 0, 6
	}
	add := func(to int, flag uint8) {
		if to>>4 != lastRank {
			buf = append(buf, move{from: int8(from), to: int8(to), flag: flag})
			return
		}
		for _, p := range promotions {
			if capturesOnly && p != queen {
				break
			}
			buf = append(buf, move{from: int8(from), to: int8(to), promo: uint8(p)})
		}
	}
	if one := from + dir; b.sq[one] == 0 {
		if !capturesOnly || one>>4 == lastRank {
			add(one, 0)
		}
		if two := one + dir; !capturesOnly && from>>4 == startRank && b.sq[two] == 0 {
			add(two, flagDouble)
		}
	}
	for _, side := range [2]int{-1, 1} {
		to := from + dir + side
		switch {
		case to&0x88 != 0:
		case b.sq[to] != 0 && colourOf(b.sq[to]) != b.side:
			add(to, 0)
		case to == b.ep:
			add(to, flagEnPassant)
		}
	}
	return buf
}

// castles appends the castling moves whose king is not in check and does not pass an attacked
// square; make's legality check covers the square it lands on.
func (b *board) castles(buf []move) []move {
	home, kingSide, queenSide := sqE1, castleWK, castleWQ
	if b.side == 1 {
		home, kingSide, queenSide = sqE8, castleBK, castleBQ
	}
	them := 1 - b.side
	if b.castle&(kingSide|queenSide) == 0 || b.attacked(home, them) {
		return buf
	}
	if b.castle&kingSide != 0 && b.sq[home+1] == 0 && b.sq[home+2] == 0 && !b.attacked(home+1, them) {
		buf = append(buf, move{from: int8(home), to: int8(home + 2), flag: flagCastle})
	}
	if b.castle&queenSide != 0 && b.sq[home-1] == 0 && b.sq[home-2] == 0 && b.sq[home-3] == 0 && !b.attacked(home-1, them) {
		buf = append(buf, move{from: int8(home), to: int8(home - 2), flag: flagCastle})
	}
	return buf
}

// attacked reports whether side by attacks sq.
func (b *board) attacked(sq int, by int) bool {
	colour := int8(by) * black
	// A pawn of by attacks sq from one rank behind it, seen from by's side.
	for _, side := range [2]int{-1, 1} {
		if from := sq - forward(by) + side; from&0x88 == 0 && b.sq[from] == pawn|colour {
			return true
		}
	}
	for _, d := range knightSteps {
		if from := sq + d; from&0x88 == 0 && b.sq[from] == knight|colour {
			return true
		}
	}
	for _, d := range kingSteps {
		if from := sq + d; from&0x88 == 0 && b.sq[from] == king|colour {
			return true
		}
	}
	for k, dirs := range [2][]int{bishopSteps, rookSteps} {
		slider := []int8{bishop, rook}[k] | colour
		for _, d := range dirs {
			for from := sq + d; from&0x88 == 0; from += d {
				if p := b.sq[from]; p != 0 {
					if p == slider || p == queen|colour {
						return true
					}
					break
				}
			}
		}
	}
	return false
}

// inCheck reports whether the side to move is in check.
func (b *board) inCheck() bool { return b.attacked(b.kings[b.side], 1-b.side) }

// make plays m, which leaves the mover in check if it was not legal, and returns what unmake
// needs to take it back.
func (b *board) make(m move) undo {
	u := undo{castle: b.castle, ep: b.ep, half: b.half, hash: b.hash}
	from, to := int(m.from), int(m.to)
	p := b.sq[from]
	taken := to
	if m.flag&flagEnPassant != 0 {
		taken = to - forward(b.side)
	}
	u.captured = b.sq[taken]
	if u.captured != 0 {
		b.hash ^= zobrist.piece[u.captured][taken]
		b.sq[taken] = 0
	}
	placed := p
	if m.promo != 0 {
		placed = int8(m.promo) | p&black
	}
	b.sq[from], b.sq[to] = 0, placed
	b.hash ^= zobrist.piece[p][from] ^ zobrist.piece[placed][to]
	if m.flag&flagCastle != 0 {
		rookFrom, rookTo := castlingRook(from, to)
		r := b.sq[rookFrom]
		b.sq[rookFrom], b.sq[rookTo] = 0, r
		b.hash ^= zobrist.piece[r][rookFrom] ^ zobrist.piece[r][rookTo]
	}
	if p&^black == king {
		b.kings[b.side] = to
	}
	b.hash ^= zobrist.castle[b.castle]
	b.castle &= castleKeep[from] & castleKeep[to]
	b.hash ^= zobrist.castle[b.castle]
	if b.ep >= 0 {
		b.hash ^= zobrist.ep[b.ep&7]
	}
	b.ep = -1
	if m.flag&flagDouble != 0 {
		b.ep = from + forward(b.side)
		b.hash ^= zobrist.ep[b.ep&7]
	}
	b.half++
	if p&^black == pawn || u.captured != 0 {
		b.half = 0
	}
	b.side = 1 - b.side
	b.hash ^= zobrist.black
	return u
}

// castlingRook gives the squares the rook moves between when the king castles from to.
func castlingRook(from, to int) (rookFrom, rookTo int) {
	if to > from {
		return from + 3, from + 1
	}
	return from - 4, from - 1
}

// unmake takes back m, played by make that returned u.
func (b *board) unmake(m move, u undo) {
	b.side = 1 - b.side
	from, to := int(m.from), int(m.to)
	p := b.sq[to]
	if m.promo != 0 {
		p = pawn | p&black
	}
	b.sq[to], b.sq[from] = 0, p
	taken := to
	if m.flag&flagEnPassant != 0 {
		taken = to - forward(b.side)
	}
	b.sq[taken] = u.captured
	if m.flag&flagCastle != 0 {
		rookFrom, rookTo := castlingRook(from, to)
		b.sq[rookFrom], b.sq[rookTo] = b.sq[rookTo], 0
	}
	if p&^black == king {
		b.kings[b.side] = from
	}
	b.castle, b.ep, b.half, b.hash = u.castle, u.ep, u.half, u.hash
}

// legalMoves lists the legal moves of the side to move.
func (b *board) legalMoves() []move {
	var legal []move
	for _, m := range b.generate(nil, false) {
		u := b.make(m)
		if !b.attacked(b.kings[1-b.side], b.side) {
			legal = append(legal, m)
		}
		b.unmake(m, u)
	}
	return legal
}
