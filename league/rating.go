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

// inlineCost bounds the bootstrap a view computes itself, in games times resamples
// (about a second of CPU at 10,000 players); a larger one runs in the background.
const inlineCost = 2_000_000

// ratingsCache keeps the last ratings computed, as a bootstrap of every result is too
// costly to repeat for each dashboard refresh.
//
// Refresh rule. Ratings whose bootstrap costs at most inline (games times resamples) are
// computed in full when the results change, as the export and replay compute them. A
// larger league gets its point ratings at once, refitted from the last fit's strengths,
// with the intervals and rank ranges of the last full computation; a worker goroutine
// computes the full ratings of the newest results, one computation at a time, and
// starts again while results grew in the meantime. Once it catches up, the rows are the
// export's exactly.
type ratingsCache struct {
	mu sync.Mutex
	// inline is inlineCost, smaller in tests.
	inline  int
	rater   ratings.Rater
	players []string
	games   int
	rows    []ratings.Rating
	// full is the last full computation and the number of games it rates.
	full      []ratings.Rating
	fullGames int
	// pending is the newest input the worker has yet to compute; kick wakes the worker,
	// started on the first input too large to compute inline, and stop ends it.
	pending *ratingsInput
	kick    chan struct{}
	stop    chan struct{}
	closed  bool
}

// ratedRows are ratings and the games their intervals come from: all the rated games
// once the intervals are current, fewer while a larger league's are being recomputed.
type ratedRows struct {
	rows           []ratings.Rating
	intervalsGames int
}

// get returns the ratings of in, computing them only when players or results changed.
func (c *ratingsCache) get(in ratingsInput) (ratedRows, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	same := slices.Equal(c.players, in.players)
	if c.rows != nil && c.games == len(in.games) && same {
		return ratedRows{c.rows, c.fullGames}, nil
	}
	inline := c.inline
	if inline == 0 {
		inline = inlineCost
	}
	samples := in.samples
	if samples == 0 {
		samples = ratings.DefaultSamples
	}
	if len(in.games)*samples <= inline {
		rows, err := ratings.League(in.players, in.games, in.samples, in.seed)
		if err != nil {
			return ratedRows{}, err
		}
		c.players, c.games, c.rows, c.full, c.fullGames = in.players, len(in.games), rows, rows, len(in.games)
		return ratedRows{rows, len(in.games)}, nil
	}
	if same && len(in.games) < c.games {
		// A view that took its results before the last one served: its own point
		// ratings, from a fit of its own, so that the cache never goes back.
		var r ratings.Rater
		rows, err := r.Point(in.players, in.games)
		if err != nil {
			return ratedRows{}, err
		}
		withIntervals(rows, c.full)
		return ratedRows{rows, min(c.fullGames, len(in.games))}, nil
	}
	rows, err := c.rater.Point(in.players, in.games)
	if err != nil {
		return ratedRows{}, err
	}
	withIntervals(rows, c.full)
	c.players, c.games, c.rows = in.players, len(in.games), rows
	if c.closed {
		return ratedRows{rows, c.fullGames}, nil
	}
	c.pending = &in
	if c.kick == nil {
		c.kick, c.stop = make(chan struct{}, 1), make(chan struct{})
		go c.work(c.kick, c.stop)
	}
	select {
	case c.kick <- struct{}{}:
	default: // the worker is already woken
	}
	return ratedRows{rows, c.fullGames}, nil
}

// withIntervals gives point ratings (best first) the intervals and rank ranges of full,
// an earlier computation, each widened to hold its point estimate and its place. A player
// full does not rate has the point for an interval and any rank.
func withIntervals(rows, full []ratings.Rating) {
	byID := make(map[string]ratings.Rating, len(full))
	for _, r := range full {
		byID[r.PlayerID] = r
	}
	for i, r := range rows {
		f, ok := byID[r.PlayerID]
		if !ok {
			rows[i].Low, rows[i].High, rows[i].RankLow, rows[i].RankHigh = r.Rating, r.Rating, 1, len(rows)
			continue
		}
		rows[i].Low, rows[i].High = min(f.Low, r.Rating), max(f.High, r.Rating)
		rows[i].RankLow, rows[i].RankHigh = min(f.RankLow, i+1), max(f.RankHigh, i+1)
	}
}

// work computes the full ratings of the pending input until stop is closed. A
// computation in progress when it is closed runs to its end, and its result is dropped.
func (c *ratingsCache) work(kick, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-kick:
		}
		c.mu.Lock()
		in := c.pending
		c.pending = nil
		c.mu.Unlock()
		if in == nil {
			continue
		}
		// It cannot fail: get's fit took the same input.
		rows, err := ratings.League(in.players, in.games, in.samples, in.seed)
		select {
		case <-stop:
			return
		default:
		}
		c.mu.Lock()
		// A newer input may have been served meanwhile: its point ratings stay, with
		// these intervals, until the worker computes it too.
		if err == nil && slices.Equal(c.players, in.players) && len(in.games) >= c.fullGames {
			c.full, c.fullGames = rows, len(in.games)
			if c.games == len(in.games) {
				c.rows = rows
			} else {
				// Views share c.rows outside the lock: a new slice, not an edit.
				c.rows = slices.Clone(c.rows)
				withIntervals(c.rows, rows)
			}
		}
		c.mu.Unlock()
	}
}

// close ends the worker, if one was started; no worker starts after it.
func (c *ratingsCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.stop != nil {
		close(c.stop)
		c.stop, c.kick = nil, nil
	}
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
