package game

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/agentleague/agentleague/protocol"
)

// positioned is a Game that can start from a position given as text (chess: a FEN).
type positioned interface {
	FromPosition(pos string) (State, error)
}

// Open is the state in which the players of a match of g with seed make their first
// move: the game's initial state, or with an opening, its position (when it names one)
// and its moves played through the rules. An opening the game cannot start from is an
// error that says why: a position for a game without positions, a move the rules refuse,
// an opening that ends the game.
func Open(g Game, seed int64, o *protocol.Opening) (State, error) {
	state := g.NewState(seed)
	if o == nil {
		return state, nil
	}
	if o.FEN != "" {
		p, ok := g.(positioned)
		if !ok {
			return nil, fmt.Errorf("opening %s: %s starts from no position", o.Name, g.Type())
		}
		var err error
		if state, err = p.FromPosition(o.FEN); err != nil {
			return nil, fmt.Errorf("opening %s: %w", o.Name, err)
		}
	}
	for k, mv := range o.Moves {
		next, err := openingMove(state, mv)
		if err != nil {
			return nil, fmt.Errorf("opening %s: move %d (%s): %w", o.Name, k+1, mv, err)
		}
		state = next
	}
	if state.Terminal() {
		return nil, fmt.Errorf("opening %s: the game is over at its end", o.Name)
	}
	return state, nil
}

// openingMove plays one move of an opening: the move of the one player to move.
func openingMove(state State, mv json.RawMessage) (State, error) {
	movers := state.ToMove()
	switch {
	case state.Terminal():
		return nil, errors.New("the game is over")
	case len(movers) != 1:
		return nil, errors.New("openings need a game whose players take turns")
	}
	parsed, err := state.ParseMove(movers[0], mv)
	if err != nil {
		return nil, err
	}
	return state.Apply([]json.RawMessage{parsed})
}

// RandomOpening draws up to plies moves from the initial state of g, each uniformly among
// the legal moves that do not end the game, from seed. It stops early where every move
// would end the game. The same seed draws the same moves.
func RandomOpening(g Game, seed int64, plies int) ([]json.RawMessage, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6f70656e696e67)) // "opening"
	state := g.NewState(seed)
	moves := []json.RawMessage{}
	for range plies {
		movers := state.ToMove()
		if len(movers) != 1 {
			return nil, fmt.Errorf("random opening of %s: openings need a game whose players take turns", g.Type())
		}
		view, err := json.Marshal(state.Context(movers[0]))
		if err != nil {
			return nil, fmt.Errorf("random opening of %s: %w", g.Type(), err)
		}
		legal, err := g.LegalMoves(view)
		if err != nil {
			return nil, fmt.Errorf("random opening of %s: %w", g.Type(), err)
		}
		var next State
		for _, k := range rng.Perm(len(legal)) {
			if s, err := openingMove(state, legal[k]); err == nil && !s.Terminal() {
				next = s
				moves = append(moves, legal[k])
				break
			}
		}
		if next == nil {
			break
		}
		state = next
	}
	return moves, nil
}
