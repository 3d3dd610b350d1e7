package strategy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/agentleague/agentleague/game"
)

// chessNodeBudget caps the positions "alphabeta" visits per chess move, quiescence included.
// A count, not a clock, keeps its moves the same on any machine; this one answers in a few
// milliseconds.
const chessNodeBudget = 20000

// chessMate scores a checkmate; a mate sooner scores higher.
const chessMate = 1_000_000

// chessMateHorizon bounds the plies to a mate that the search reports: scores within it of
// chessMate are mates.
const chessMateHorizon = 1000

// chessMaxDepth bounds iterative deepening when the budget would allow more, as in a position
// with a handful of moves.
const chessMaxDepth = 32

// pieceValues are the material values of the kinds, in centipawns.
var pieceValues = [7]int{pawn: 100, knight: 320, bishop: 330, rook: 500, queen: 900}

// pawnAdvance rewards a pawn by its rank counted from its own side, pulling it to promotion.
var pawnAdvance = [8]int{0, 0, 5, 10, 20, 35, 60, 0}

// mobilityWeight is what each square a knight, bishop, rook or queen reaches is worth.
const mobilityWeight = 4

// mopUpMargin is the material lead from which the leader drives the other king to the edge
// and brings its own king near, which checkmate needs.
const mopUpMargin = 300

// chessAlphaBeta plays chess by iterative deepening alpha-beta search with quiescence, material
// and mobility, limited to budget nodes a move. It remembers the positions of its match so
// that it can avoid repeating one while it is ahead: contexts carry no history.
type chessAlphaBeta struct {
	rng    *rand.Rand
	budget int
	seen   map[uint64]bool
}

func newChessAlphaBeta(rng *rand.Rand, budget int) *chessAlphaBeta {
	return &chessAlphaBeta{rng: rng, budget: budget, seen: map[uint64]bool{}}
}

// Move implements Strategy.
func (s *chessAlphaBeta) Move(req Request) (json.RawMessage, error) {
	ctx, err := game.ParseChessContext(req.Context)
	if err != nil {
		return nil, err
	}
	b := boardFromPosition(ctx.Position)
	s.seen[b.hash] = true
	root, err := rootMoves(&b, ctx.LegalMoves)
	if err != nil {
		return nil, err
	}
	// Shuffled so that, of equally good moves, the first in this order is a seeded pick.
	s.rng.Shuffle(len(root), func(i, j int) { root[i], root[j] = root[j], root[i] })
	search := chessSearch{b: b, budget: s.budget, seen: s.seen}
	best := search.best(root)
	b.make(best)
	s.seen[b.hash] = true
	return json.RawMessage(`{"uci":"` + best.uci() + `"}`), nil
}

// rootMoves matches the legal moves the rules list, in UCI, to the board's own.
func rootMoves(b *board, legal []string) ([]move, error) {
	own := map[string]move{}
	for _, m := range b.legalMoves() {
		own[m.uci()] = m
	}
	if len(own) != len(legal) {
		return nil, fmt.Errorf("chess search: %d legal moves, the rules list %d", len(own), len(legal))
	}
	root := make([]move, len(legal))
	for k, u := range legal {
		m, ok := own[u]
		if !ok {
			return nil, fmt.Errorf("chess search: no legal move %s", u)
		}
		root[k] = m
	}
	return root, nil
}

// chessSearch is one search from the position b.
type chessSearch struct {
	b      board
	budget int
	nodes  int
	// aborted is set once the budget is spent; the search then unwinds without results.
	aborted bool
	// seen holds the positions of the match so far; path those from the root to the node.
	seen map[uint64]bool
	path []uint64
	// moves holds a move list per ply, reused to spare allocations.
	moves [][]move
}

// scoredMove is a root move with its score at the last depth searched.
type scoredMove struct {
	move  move
	score int
}

// best searches deeper and deeper until the budget runs out, and returns the best root move of
// the deepest search: a search cut short still counts when its first move, the best of the
// previous depth, was searched, since the other moves searched had to beat it.
func (s *chessSearch) best(moves []move) move {
	root := make([]scoredMove, len(moves))
	for k, m := range moves {
		root[k].move = m
	}
	best := moves[0]
	for depth := 1; depth <= chessMaxDepth; depth++ {
		alpha := -2 * chessMate
		for k := range root {
			u, _ := s.enter(root[k].move) // rootMoves gave legal moves only
			v := -s.negamax(depth-1, -2*chessMate, -alpha, 1)
			s.leave(root[k].move, u)
			if s.aborted {
				return best
			}
			root[k].score = v
			if v > alpha {
				alpha, best = v, root[k].move
			}
		}
		if alpha > chessMate-chessMateHorizon {
			break // a mate found is not improved on by searching deeper
		}
		// Best first at the next depth; stable, so that equal scores keep the seeded order.
		slices.SortStableFunc(root, func(a, b scoredMove) int { return b.score - a.score })
	}
	return best
}

// enter plays m and reports whether it was legal; if it left the mover in check it is taken
// back at once, otherwise leave takes it back.
func (s *chessSearch) enter(m move) (undo, bool) {
	u := s.b.make(m)
	if s.b.attacked(s.b.kings[1-s.b.side], s.b.side) {
		s.b.unmake(m, u)
		return u, false
	}
	s.path = append(s.path, u.hash)
	return u, true
}

func (s *chessSearch) leave(m move, u undo) {
	s.path = s.path[:len(s.path)-1]
	s.b.unmake(m, u)
}

// spend counts a node and reports whether the budget is spent.
func (s *chessSearch) spend() bool {
	s.nodes++
	if s.nodes > s.budget {
		s.aborted = true
	}
	return s.aborted
}

// repeated reports whether the position is a repetition, of the match or of the line searched,
// which the search scores as the draw that repeating it can lead to.
func (s *chessSearch) repeated() bool {
	if s.seen[s.b.hash] {
		return true
	}
	// path ends with the parent; positions with the same side to move are two plies apart,
	// and none before the last capture or pawn move can come back.
	for k, back := len(s.path)-2, 2; k >= 0 && back <= s.b.half; k, back = k-2, back+2 {
		if s.path[k] == s.b.hash {
			return true
		}
	}
	return false
}

// negamax is the value of the position for the side to move, searched depth plies deep and
// then to quiet positions; ply counts the plies from the root.
func (s *chessSearch) negamax(depth, alpha, beta, ply int) int {
	if s.spend() {
		return 0
	}
	if s.repeated() || s.b.half >= 100 {
		return 0
	}
	inCheck := s.b.inCheck()
	if depth <= 0 {
		if !inCheck {
			return s.quiesce(alpha, beta, ply)
		}
		depth = 1 // look at every answer to a check, so that a mate on the horizon is seen
	}
	best, legal := -2*chessMate, 0
	for _, m := range s.ordered(ply, false) {
		u, ok := s.enter(m)
		if !ok {
			continue
		}
		v := -s.negamax(depth-1, -beta, -alpha, ply+1)
		s.leave(m, u)
		if s.aborted {
			return 0
		}
		legal++
		best = max(best, v)
		alpha = max(alpha, v)
		if alpha >= beta {
			break
		}
	}
	if legal == 0 {
		if inCheck {
			return -chessMate + ply
		}
		return 0 // stalemate
	}
	return best
}

// quiesce searches captures and queen promotions only, until the position is quiet, so that
// no evaluation is taken in the middle of an exchange.
func (s *chessSearch) quiesce(alpha, beta, ply int) int {
	if s.spend() {
		return 0
	}
	stand := s.b.evaluate()
	if stand >= beta {
		return stand
	}
	alpha = max(alpha, stand)
	for _, m := range s.ordered(ply, true) {
		u, ok := s.enter(m)
		if !ok {
			continue
		}
		v := -s.quiesce(-beta, -alpha, ply+1)
		s.leave(m, u)
		if s.aborted {
			return 0
		}
		if v >= beta {
			return v
		}
		alpha = max(alpha, v)
	}
	return alpha
}

// ordered lists the moves at ply, captures of the most valuable pieces by the least valuable
// first, then promotions, then the quiet moves.
func (s *chessSearch) ordered(ply int, capturesOnly bool) []move {
	for len(s.moves) <= ply {
		s.moves = append(s.moves, make([]move, 0, 64))
	}
	moves := s.b.generate(s.moves[ply][:0], capturesOnly)
	s.moves[ply] = moves
	slices.SortStableFunc(moves, func(a, b move) int { return s.orderKey(b) - s.orderKey(a) })
	return moves
}

func (s *chessSearch) orderKey(m move) int {
	key := pieceValues[m.promo]
	if victim := s.b.sq[m.to]; victim != 0 {
		key += 10*pieceValues[victim&^black] - pieceValues[s.b.sq[m.from]&^black]
	} else if m.flag&flagEnPassant != 0 {
		key += 9 * pieceValues[pawn]
	}
	return key
}

// evaluate scores the position for the side to move: material, pawns' advance, the mobility
// of the pieces, and, for a side well ahead, its king's closeness to the other, which is cornered.
// Kings with at most one minor piece are a dead draw, which the rules end at once.
func (b *board) evaluate() int {
	var material, score [2]int
	heavy, minors := 0, 0 // pawns, rooks and queens; knights and bishops
	for r := range 8 {
		for f := range 8 {
			sq := r*16 + f
			p := b.sq[sq]
			if p == 0 {
				continue
			}
			side, kind := colourOf(p), p&^black
			material[side] += pieceValues[kind]
			score[side] += pieceValues[kind]
			switch kind {
			case pawn:
				heavy++
				score[side] += pawnAdvance[r^(7*side)]
			case knight:
				minors++
				score[side] += mobilityWeight * b.reach(sq, knightSteps, false)
			case bishop:
				minors++
				score[side] += mobilityWeight * b.reach(sq, bishopSteps, true)
			case rook:
				heavy++
				score[side] += mobilityWeight * b.reach(sq, rookSteps, true)
			case queen:
				heavy++
				score[side] += mobilityWeight * b.reach(sq, queenSteps, true)
			}
		}
	}
	if heavy == 0 && minors <= 1 {
		return 0
	}
	for side := range 2 {
		if material[side]-material[1-side] >= mopUpMargin {
			score[side] += 10*centreDistance(b.kings[1-side]) + 4*(14-kingDistance(b.kings[0], b.kings[1]))
		}
	}
	return score[b.side] - score[1-b.side]
}

// reach counts the squares a piece on sq steps or slides to that hold no piece of its own side.
func (b *board) reach(sq int, dirs []int, slide bool) int {
	own := colourOf(b.sq[sq])
	n := 0
	for _, d := range dirs {
		for to := sq + d; to&0x88 == 0; to += d {
			if p := b.sq[to]; p != 0 {
				if colourOf(p) != own {
					n++
				}
				break
			}
			n++
			if !slide {
				break
			}
		}
	}
	return n
}

// centreDistance is how many files plus ranks sq is from the four centre squares, 0 to 6.
func centreDistance(sq int) int {
	f, r := sq&7, sq>>4
	return max(3-f, f-4) + max(3-r, r-4)
}

// kingDistance is the files plus ranks between two squares.
func kingDistance(a, b int) int {
	df, dr := a&7-b&7, a>>4-b>>4
	return max(df, -df) + max(dr, -dr)
}
