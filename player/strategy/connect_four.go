package strategy

import (
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strconv"

	"github.com/agentleague/agentleague/game"
)

// c4Depth is how many plies "alphabeta" looks ahead in connect_four, its own move included.
const c4Depth = 8

// c4Win scores a won position; a win sooner scores higher, so the search takes the quickest
// win and puts off a loss.
const c4Win = 1 << 20

// c4Height is the bits per column of the bitboards: six rows and an always-empty row on top,
// so that lines cannot wrap from one column into the next.
const c4Height = game.ConnectFourRows + 1

// c4Order tries the centre columns first: they take part in the most lines, so good moves come
// early and alpha-beta prunes more.
var c4Order = [game.ConnectFourCols]int{3, 2, 4, 1, 5, 0, 6}

// c4Windows are the 69 sets of four cells in a row on the board, as bitboards.
var c4Windows = func() []uint64 {
	var windows []uint64
	for c := range game.ConnectFourCols {
		for r := range game.ConnectFourRows {
			for _, d := range [4][2]int{{0, 1}, {1, 0}, {1, 1}, {1, -1}} { // (column, row) steps
				var w uint64
				for k := range 4 {
					cc, rr := c+k*d[0], r+k*d[1]
					if cc >= game.ConnectFourCols || rr < 0 || rr >= game.ConnectFourRows {
						w = 0
						break
					}
					w |= 1 << (cc*c4Height + rr)
				}
				if w != 0 {
					windows = append(windows, w)
				}
			}
		}
	}
	return windows
}()

// c4WindowScore values a window holding n discs of one player and none of the other.
var c4WindowScore = [4]int{0, 1, 8, 64}

// c4Position is a connect four position as two bitboards, bit column*c4Height + row with row 0
// at the bottom; a value type, so that a child is a copy.
type c4Position struct {
	// discs are the discs of the player to move and of the other player.
	discs [2]uint64
	// next is the bit a disc dropped into each column would take.
	next [game.ConnectFourCols]int
	// count is the number of discs on the board.
	count int
}

// c4FromBoard reads a board whose player to move is color.
func c4FromBoard(b game.ConnectFourBoard, color string) c4Position {
	var p c4Position
	for c := range game.ConnectFourCols {
		p.next[c] = c * c4Height
		for r := game.ConnectFourRows - 1; r >= 0 && b[r][c] != ""; r-- {
			who := 1
			if b[r][c] == color {
				who = 0
			}
			p.discs[who] |= 1 << p.next[c]
			p.next[c]++
			p.count++
		}
	}
	return p
}

func (p *c4Position) open(c int) bool { return p.next[c] < c*c4Height+game.ConnectFourRows }

// wins reports whether the player to move completes four in a row by playing c.
func (p *c4Position) wins(c int) bool { return c4Line(p.discs[0] | 1<<p.next[c]) }

// play drops a disc of the player to move into c and hands the move over.
func (p *c4Position) play(c int) {
	p.discs[0] |= 1 << p.next[c]
	p.next[c]++
	p.count++
	p.discs[0], p.discs[1] = p.discs[1], p.discs[0]
}

// c4Line reports four in a row among discs: shifts of 1, c4Height, c4Height-1 and c4Height+1
// are the vertical, horizontal and two diagonal neighbours.
func c4Line(discs uint64) bool {
	for _, s := range [4]int{1, c4Height, c4Height - 1, c4Height + 1} {
		m := discs & (discs >> s)
		if m&(m>>(2*s)) != 0 {
			return true
		}
	}
	return false
}

// evaluate scores a position for the player to move by the windows each player could still
// complete, weighted by how full they are.
func (p c4Position) evaluate() int {
	score := 0
	for _, w := range c4Windows {
		mine, theirs := bits.OnesCount64(w&p.discs[0]), bits.OnesCount64(w&p.discs[1])
		switch {
		case theirs == 0:
			score += c4WindowScore[mine]
		case mine == 0:
			score -= c4WindowScore[theirs]
		}
	}
	return score
}

// negamax is the value of p for the player to move, searched depth plies deep; ply counts the
// plies from the root, to prefer quicker wins. A value receiver keeps the children on the stack.
func (p c4Position) negamax(depth, alpha, beta, ply int) int {
	for _, c := range c4Order {
		if p.open(c) && p.wins(c) {
			return c4Win - ply - 1
		}
	}
	if p.count+1 >= game.ConnectFourRows*game.ConnectFourCols {
		return 0 // the last cell, and it does not win
	}
	if depth == 0 {
		return p.evaluate()
	}
	best := -c4Win
	for _, c := range c4Order {
		if !p.open(c) {
			continue
		}
		child := p
		child.play(c)
		v := -child.negamax(depth-1, -beta, -alpha, ply+1)
		best = max(best, v)
		alpha = max(alpha, v)
		if alpha >= beta {
			break
		}
	}
	return best
}

// c4AlphaBeta plays connect_four by alpha-beta search to c4Depth plies.
type c4AlphaBeta struct{ rng *rand.Rand }

// Move implements Strategy.
func (s c4AlphaBeta) Move(req Request) (json.RawMessage, error) {
	ctx, err := game.ParseConnectFourContext(req.Context)
	if err != nil {
		return nil, err
	}
	p := c4FromBoard(ctx.Board, ctx.YourColor)
	// Shuffled so that, of equally good columns, the first in this order is a seeded pick.
	root := ctx.ValidMoves // never empty: the parser refuses a match that is over
	s.rng.Shuffle(len(root), func(a, b int) { root[a], root[b] = root[b], root[a] })
	for _, c := range root {
		if p.wins(c) {
			return c4Move(c), nil
		}
	}
	best, alpha := root[0], -c4Win-1
	for _, c := range root {
		child := p
		child.play(c)
		if v := -child.negamax(c4Depth-1, -c4Win, -alpha, 1); v > alpha {
			best, alpha = c, v
		}
	}
	return c4Move(best), nil
}

func c4Move(c int) json.RawMessage { return json.RawMessage(`{"column":` + strconv.Itoa(c) + `}`) }
