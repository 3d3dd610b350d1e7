package strategy

import (
	"math/rand/v2"

	"github.com/agentleague/agentleague/game"
)

// newAlphaBeta builds "alphabeta", the strong strategy of the board games: a fixed-depth
// alpha-beta search for connect_four and a node-limited one for chess. Both are deterministic
// given the match's generator, which only orders the root moves, so that equally good moves
// are chosen among at random.
func newAlphaBeta(g game.Game, rng *rand.Rand) Strategy {
	if g.Type() == game.TypeChess {
		return newChessAlphaBeta(rng, chessNodeBudget)
	}
	return c4AlphaBeta{rng: rng}
}
