package player

import (
	"context"
	"io"
	"sync"

	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// matchBook is the player's record of its matches: the state of those in progress, with
// their strategies, and the outcome of every one that ended. It owns that state under its
// mu, match fields opponent and referee included, and closes the strategies it drops.
type matchBook struct {
	log zerolog.Logger
	// open builds the state of a new match: Player.newMatch.
	open func(ctx context.Context, matchID, gameType string, params map[string]any) (*match, error)
	// closing tracks the strategies being closed (ending an engine takes up to a second),
	// so that Run returns only when they are; see release.
	closing sync.WaitGroup

	mu sync.Mutex
	// released: Run has closed the strategies of the matches left; a strategy released
	// later is closed at once.
	released bool
	matches  map[string]*match
	// finished keeps the outcome of every match that ended, so a repeated GAME_OVER is
	// not counted twice and a late message cannot revive the match.
	finished map[string]protocol.Outcome
	wins     int
	draws    int
	losses   int
}

func newMatchBook(log zerolog.Logger) *matchBook {
	return &matchBook{log: log, matches: map[string]*match{}, finished: map[string]protocol.Outcome{}}
}

// record is what Status shows of the matches.
type record struct {
	played, wins, draws, losses, current int
}

func (b *matchBook) record() record {
	b.mu.Lock()
	defer b.mu.Unlock()
	return record{played: len(b.finished), wins: b.wins, draws: b.draws, losses: b.losses, current: len(b.matches)}
}

// reopen forgets that a match ended, for a match the League Manager gives to a referee
// again (it only does so for matches without a result): the earlier outcome never
// counted. Callers hold mu.
func (b *matchBook) reopen(matchID string) {
	outcome, over := b.finished[matchID]
	if !over {
		return
	}
	delete(b.finished, matchID)
	switch outcome {
	case protocol.Win:
		b.wins--
	case protocol.Draw:
		b.draws--
	case protocol.Loss:
		b.losses--
	}
}

// invite readies matchID for an invitation from referee: a match another referee holds
// was reassigned and starts afresh, and a match that ended is played again.
func (b *matchBook) invite(matchID, referee string) {
	b.mu.Lock()
	live := b.matches[matchID]
	if live != nil && live.referee != referee {
		delete(b.matches, matchID)
	} else if live == nil {
		b.reopen(matchID)
	}
	b.mu.Unlock()
	if live != nil && live.referee != referee {
		b.release(live)
	}
}

// join records the referee and the opponent of an invitation that was accepted.
func (b *matchBook) join(m *match, referee string, opponents []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	m.referee = referee
	if len(opponents) > 0 {
		m.opponent = opponents[0]
	}
}

// opponent is the opponent the invitation of m named.
func (b *matchBook) opponent(m *match) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return m.opponent
}

// match returns the state of matchID, creating it for gameType when the match is new.
func (b *matchBook) match(ctx context.Context, matchID, gameType string, params map[string]any) (*match, error) {
	lookup := func() (*match, error) {
		if _, over := b.finished[matchID]; over {
			return nil, errMatchOver
		}
		return b.matches[matchID], nil
	}
	b.mu.Lock()
	m, err := lookup()
	b.mu.Unlock()
	if m != nil || err != nil {
		return m, err
	}
	// Built outside the lock: a strategy may precompute; a concurrent twin is dropped below.
	m, err = b.open(ctx, matchID, gameType, params)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	existing, err := lookup()
	if existing == nil && err == nil {
		b.matches[matchID] = m
	}
	b.mu.Unlock()
	if existing != nil || err != nil {
		b.release(m)
		return existing, err
	}
	return m, nil
}

// end records the outcome of matchID once, drops its state, tells a Finisher strategy how
// the match ended and releases it. ended is the match dropped (nil when none was in
// progress); a GAME_OVER from a referee the match was taken from ends nothing (ok false).
func (b *matchBook) end(matchID, referee string, over protocol.GameResult) (ended *match, repeated, ok bool) {
	b.mu.Lock()
	if live := b.matches[matchID]; live != nil && live.referee != "" && live.referee != referee {
		b.mu.Unlock()
		return nil, false, false
	}
	ended = b.matches[matchID]
	delete(b.matches, matchID)
	_, repeated = b.finished[matchID]
	if !repeated {
		b.finished[matchID] = over.Outcome
		switch over.Outcome {
		case protocol.Win:
			b.wins++
		case protocol.Draw:
			b.draws++
		case protocol.Loss:
			b.losses++
		}
	}
	b.mu.Unlock()
	if ended != nil {
		if f, ok := ended.strategy.(Finisher); ok && !repeated {
			f.Finish(over)
		}
		b.release(ended)
	}
	return ended, repeated, true
}

// cancel drops the state of matchID, which will be played again under its id: a new
// invitation must find it open. known: it was in progress; over: it had ended.
func (b *matchBook) cancel(matchID string) (known, over bool) {
	b.mu.Lock()
	dropped, known := b.matches[matchID]
	delete(b.matches, matchID)
	_, over = b.finished[matchID]
	b.reopen(matchID)
	b.mu.Unlock()
	if known {
		b.release(dropped)
	}
	return known, over
}

// release closes the strategy of a match the player dropped, if it holds something to
// close (an engine process), without holding up the caller: releaseAll waits for it.
func (b *matchBook) release(m *match) {
	c, ok := m.strategy.(io.Closer)
	if !ok {
		return
	}
	b.mu.Lock()
	late := b.released
	if !late {
		// Added under mu before releaseAll sets released, so never after its Wait began.
		b.closing.Add(1)
	}
	b.mu.Unlock()
	if late {
		b.closeStrategy(c)
		return
	}
	go func() {
		defer b.closing.Done()
		b.closeStrategy(c)
	}()
}

// releaseAll closes the strategies of the matches still held, and waits for every close.
func (b *matchBook) releaseAll() {
	b.mu.Lock()
	left := b.matches
	b.matches = map[string]*match{}
	b.mu.Unlock()
	for _, m := range left {
		b.release(m)
	}
	b.mu.Lock()
	b.released = true
	b.mu.Unlock()
	b.closing.Wait()
}

func (b *matchBook) closeStrategy(c io.Closer) {
	if err := c.Close(); err != nil {
		b.log.Warn().Err(err).Msg("close strategy")
	}
}
