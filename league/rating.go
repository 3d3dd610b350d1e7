package league

import (
	"slices"
	"sync"

	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/league/schedule"
)

// ratingsInput is what the ratings are computed from: the players and their rated games
// (results only grow, so their count tells a new input from an old one).
type ratingsInput struct {
	players []string
	games   []ratings.Game
	samples int
	seed    int64
}

// withoutForfeits is in without the games decided by a technical termination (an
// illegal move, a timeout): the strength of players apart from their failures to follow
// the format. technical marks those games of in.games.
func (in ratingsInput) withoutForfeits(technical []bool) ratingsInput {
	out := in
	out.games = nil
	for i, g := range in.games {
		if !technical[i] {
			out.games = append(out.games, g)
		}
	}
	return out
}

// ratingsCache keeps the last ratings computed, as a bootstrap of every result is too
// costly to repeat for each dashboard refresh.
type ratingsCache struct {
	mu      sync.Mutex
	players []string
	games   int
	rows    []ratings.Rating
}

// get returns the ratings of in, computing them only when players or results changed.
func (c *ratingsCache) get(in ratingsInput) ([]ratings.Rating, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows != nil && c.games == len(in.games) && slices.Equal(c.players, in.players) {
		return c.rows, nil
	}
	rows, err := ratings.League(in.players, in.games, in.samples, in.seed)
	if err != nil {
		return nil, err
	}
	c.players, c.games, c.rows = in.players, len(in.games), rows
	return rows, nil
}

// arenaCache keeps the last arena state computed, which rates every game with a
// bootstrap: too costly to repeat for each dashboard refresh. Rounds and results only
// grow, so their counts tell a new input from an old one.
type arenaCache struct {
	mu              sync.Mutex
	rounds, results int
	state           schedule.ArenaState
	ok              bool
}

// get returns the arena state after played, computing it only when rounds or results
// were added.
func (c *arenaCache) get(f schedule.Format, players []string, seed int64, played []schedule.Played) (schedule.ArenaState, bool) {
	results := 0
	for _, p := range played {
		results += len(p.Results)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.rounds == len(played) && c.results == results {
		return c.state, true
	}
	st, ok := schedule.ArenaOf(f, players, seed, played)
	if ok {
		c.rounds, c.results, c.state, c.ok = len(played), results, st, true
	}
	return st, ok
}
