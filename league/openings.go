package league

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// openingBook is the openings of a league (league.yaml openings), as fastchess takes
// them: the k-th game of the schedule (with game pairs, its k-th pair of games, the
// pair's two games in a row for their pairing, first move swapped) plays opening k:
// the book's, in order or shuffled by the league seed, and over again when it runs out;
// without a book, plies moves drawn at random from the league seed and k. Opening k is
// a pure function of the league seed and k, and fixtures count k in schedule order, so
// a restart gives every match the opening it had.
type openingBook struct {
	entries []protocol.Opening // in the order they are taken
	plies   int
	g       game.Game
	seed    int64
	pairs   bool
	drawn   map[int]*protocol.Opening // random openings drawn so far, by k
}

// newOpeningBook is the book of cfg's openings for the game g, nil when the league has
// none. A league whose game cannot open (random openings of a game whose players move
// together) is an error.
func newOpeningBook(cfg *config.Config, g game.Game) (*openingBook, error) {
	o := cfg.Openings
	if o == nil {
		return nil, nil
	}
	if g == nil {
		return nil, fmt.Errorf("openings: %s has no rules here to open with", cfg.League.GameType)
	}
	b := &openingBook{entries: slices.Clone(o.Entries()), plies: o.Plies, g: g, seed: cfg.League.Seed, pairs: o.GamePairs, drawn: map[int]*protocol.Opening{}}
	if o.Order == config.OrderRandom && len(b.entries) > 1 {
		rng := rand.New(rand.NewPCG(uint64(b.seed), 0x626f6f6b)) // "book"
		rng.Shuffle(len(b.entries), func(i, j int) { b.entries[i], b.entries[j] = b.entries[j], b.entries[i] })
	}
	if _, err := b.opening(0); err != nil {
		return nil, err
	}
	return b, nil
}

func (b *openingBook) opening(k int) (*protocol.Opening, error) {
	if len(b.entries) > 0 {
		return &b.entries[k%len(b.entries)], nil
	}
	if o := b.drawn[k]; o != nil {
		return o, nil
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "agentleague/openings/v1 league_seed=%d k=%d", b.seed, k))
	moves, err := game.RandomOpening(b.g, int64(binary.BigEndian.Uint64(sum[:8])>>1), b.plies)
	if err != nil {
		return nil, fmt.Errorf("openings: %w", err)
	}
	o := &protocol.Opening{Name: fmt.Sprintf("random#%d", k+1), Moves: moves}
	b.drawn[k] = o
	return o, nil
}
