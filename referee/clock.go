package referee

import (
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// clock is one player's clock under a time control, kept by the referee. The referee
// stamps the time where it is spent: from sending REQUEST_MOVE to receiving the answer.
// The network time measured for the player (its round trip on a request it answers at
// once) is credited back, up to protocol.NetworkCreditPerMove a move and the base time a
// game; what is left is charged: first to the clock, then to the bank. A player whose
// clock and bank are both spent has flagged.
type clock struct {
	tc protocol.TimeControl
	// remaining and bank are what is left; moves counts the moves of the current period.
	remaining, bank time.Duration
	moves           int
	// network is the player's shortest measured round trip (measured once there is one);
	// credited the credit given this game.
	network, credited time.Duration
	measured          bool
}

func newClock(tc protocol.TimeControl) *clock {
	return &clock{tc: tc, remaining: ms(tc.BaseMS), bank: ms(tc.BankMS)}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// observeNetwork keeps the shortest round trip seen (the invitation's, which a player
// answers at once, and every move's): the network's share of every move's time is at most
// that.
func (c *clock) observeNetwork(rtt time.Duration) {
	if rtt >= 0 && (!c.measured || rtt < c.network) {
		c.network, c.measured = rtt, true
	}
}

// deadline is how long the referee waits for the next move: the clock and the bank, and
// the network time it would credit.
func (c *clock) deadline() time.Duration {
	return c.remaining + c.bank + c.creditFor()
}

// creditFor is the network credit the next move may get.
func (c *clock) creditFor() time.Duration {
	return max(min(c.network, protocol.NetworkCreditPerMove, ms(c.tc.BaseMS)-c.credited), 0)
}

// charge stamps a move that took elapsed from request to answer: it returns the network
// time credited and whether the player flagged. A move made in time earns the
// increment, and every MovesPerPeriod moves the base time again.
func (c *clock) charge(elapsed time.Duration) (credit time.Duration, flagged bool) {
	credit = min(c.creditFor(), elapsed)
	c.credited += credit
	c.remaining -= elapsed - credit
	if c.remaining < 0 {
		c.bank += c.remaining
		c.remaining = 0
	}
	if c.bank < 0 {
		c.bank = 0
		return credit, true
	}
	c.remaining += ms(c.tc.IncrementMS)
	c.moves++
	if p := c.tc.MovesPerPeriod; p > 0 && c.moves == p {
		c.moves = 0
		c.remaining += ms(c.tc.BaseMS)
	}
	return credit, false
}

// show is the clock as REQUEST_MOVE and the move records carry it.
func (c *clock) show() protocol.Clock {
	cl := protocol.Clock{RemainingMS: c.remaining.Milliseconds(), BankMS: c.bank.Milliseconds()}
	if p := c.tc.MovesPerPeriod; p > 0 {
		cl.MovesToGo = p - c.moves
	}
	return cl
}

// clockStamp is what a move record keeps of the clock: the round trip measured before
// the move, the network credit and the time left after the move.
type clockStamp struct {
	rtt, credit time.Duration
	measured    bool
	left        int64
}

// on adds the stamp to rec when the match has clocks.
func (st clockStamp) on(rec protocol.MoveRecord, clocked bool) protocol.MoveRecord {
	if clocked {
		credit, left := st.credit.Milliseconds(), st.left
		rec.NetworkMS, rec.ClockMS = &credit, &left
		if st.measured {
			rtt := st.rtt.Milliseconds()
			rec.RTTMS = &rtt
		}
	}
	return rec
}
