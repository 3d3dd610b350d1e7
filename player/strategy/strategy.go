// Package strategy holds the move-choosing plugins of player processes. A player creates one
// Strategy per match with New and asks it for a move at every REQUEST_MOVE.
package strategy

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// Request is one REQUEST_MOVE as a strategy sees it.
type Request struct {
	// MatchID and GameType come from the envelope.
	MatchID, GameType string
	// StepNumber is the payload's step_number.
	StepNumber int
	// Context is the payload's step_context.
	Context json.RawMessage
	// DeadlineMS is the referee's deadline for this move (0 when it gave none); under a
	// clock, the whole clock (MoveBudget budgets the move).
	DeadlineMS int
	// Clocks are both players' clocks when the match is played under a time control.
	Clocks *protocol.Clocks
	// Opponent is the other player's id, when the invitation named it.
	Opponent string
	// ConversationID is the envelope's, for strategies that log.
	ConversationID string
	// LastResult is what the referee made of the player's previous move, when it says.
	LastResult *protocol.LastResult
	// Warning says why the request is sent again, when it is.
	Warning string
}

// Strategy chooses the move_payload for a request.
type Strategy interface {
	// Move returns the move_payload to send for req.
	Move(req Request) (json.RawMessage, error)
}

// Explainer is a Strategy that can also say why it chose a move (confidence, reasoning,
// alternatives); the player sends that beside the move and the referee records it.
type Explainer interface {
	MoveWithMetadata(req Request) (move, metadata json.RawMessage, err error)
}

// ContextExplainer is an Explainer whose work follows the request's context: it stops when
// the referee's request ends and logs with the request's logger (zerolog.Ctx, which carries
// the conversation_id). The player prefers it to Explainer.
type ContextExplainer interface {
	MoveContext(ctx context.Context, req Request) (move, metadata json.RawMessage, err error)
}

// ErrNoMove marks a strategy failure the player must not paper over with a move of its
// own (e.g. a remote model that failed): the referee's deadline and forfeit rules judge it.
var ErrNoMove = errors.New("strategy produced no move")

// plugin describes one named strategy.
type plugin struct {
	// games lists the game types the strategy plays; nil means every game.
	games []string
	// build makes the strategy for one match; rng is seeded from the seed and the match id.
	build func(g game.Game, rng *rand.Rand) Strategy
}

var plugins = map[string]plugin{
	"random":    {build: newRandom},
	"first":     {build: func(g game.Game, _ *rand.Rand) Strategy { return first{g: g} }},
	"seeded":    {games: []string{game.TypeEvenOdd}, build: newRandom},
	"perfect":   {games: []string{game.TypeTicTacToe}, build: func(game.Game, *rand.Rand) Strategy { return perfect{} }},
	"adaptive":  {games: []string{game.TypeRockPaperScissors}, build: newAdaptive},
	"alphabeta": {games: []string{game.TypeConnectFour, game.TypeChess}, build: newAlphaBeta},
}

// Names lists the strategy names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(plugins))
}

// New creates strategy name for one match of g. Randomised strategies draw from a generator
// seeded from seed and matchID, so a rerun of the same match repeats its moves while different
// matches of one player differ. The result is safe for concurrent use and refuses requests of
// another match or game type.
func New(name string, g game.Game, seed int64, matchID string) (Strategy, error) {
	p, ok := plugins[name]
	if !ok {
		return nil, fmt.Errorf("unknown strategy %q", name)
	}
	if g == nil {
		return nil, fmt.Errorf("strategy %q: nil game", name)
	}
	if p.games != nil && !slices.Contains(p.games, g.Type()) {
		return nil, fmt.Errorf("strategy %q does not play %s", name, g.Type())
	}
	return &matchStrategy{
		inner:    p.build(g, matchRand(seed, matchID)),
		matchID:  matchID,
		gameType: g.Type(),
	}, nil
}

// matchRand derives a match's generator: SHA-256 of the match id gives the PCG stream, so ids
// that share a prefix or differ in one character still get unrelated sequences.
func matchRand(seed int64, matchID string) *rand.Rand {
	sum := sha256.Sum256([]byte(matchID))
	return rand.New(rand.NewPCG(uint64(seed), binary.LittleEndian.Uint64(sum[:8])))
}

// matchStrategy binds a strategy to its match. The lock serialises moves because strategies
// keep a generator, which is not safe for concurrent use.
type matchStrategy struct {
	mu       sync.Mutex
	inner    Strategy
	matchID  string
	gameType string
}

// Move implements Strategy.
func (m *matchStrategy) Move(req Request) (json.RawMessage, error) {
	if req.MatchID != m.matchID {
		return nil, fmt.Errorf("move: request for match %q sent to the strategy of match %q", req.MatchID, m.matchID)
	}
	if req.GameType != m.gameType {
		return nil, fmt.Errorf("move: request for game type %q sent to a %s strategy", req.GameType, m.gameType)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	move, err := m.inner.Move(req)
	if err != nil {
		return nil, fmt.Errorf("move: %w", err)
	}
	return move, nil
}

// errNoMove reports a context in which the game offers no move.
var errNoMove = errors.New("no legal move")

// randomStrategy plays uniformly over the legal moves. Registered as "random" for every game
// and as "seeded", the even_odd strategy: a seeded, per-match choice of even or odd each round.
type randomStrategy struct {
	g   game.Game
	rng *rand.Rand
}

func newRandom(g game.Game, rng *rand.Rand) Strategy { return randomStrategy{g: g, rng: rng} }

// Move implements Strategy.
func (s randomStrategy) Move(req Request) (json.RawMessage, error) {
	legal, err := s.g.LegalMoves(req.Context)
	if err != nil {
		return nil, err
	}
	if len(legal) == 0 {
		return nil, errNoMove
	}
	return legal[s.rng.IntN(len(legal))], nil
}

// first always plays the first legal move in the game's canonical order.
type first struct{ g game.Game }

// Move implements Strategy.
func (s first) Move(req Request) (json.RawMessage, error) {
	legal, err := s.g.LegalMoves(req.Context)
	if err != nil {
		return nil, err
	}
	if len(legal) == 0 {
		return nil, errNoMove
	}
	return legal[0], nil
}
