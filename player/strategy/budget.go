package strategy

import (
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// Margins of a move's budget.
const (
	// The part of the referee's deadline kept back for the answer's way back: a tenth
	// of it, within these bounds, and never more than half of it.
	minTravelMargin = 100 * time.Millisecond
	maxTravelMargin = 500 * time.Millisecond
	// maxStopGrace bounds the time between StopAt and AnswerBy (a quarter of the move's
	// time at most), in which a search told to stop gives its answer.
	maxStopGrace = 250 * time.Millisecond
)

// Budget is when a move's work must end. The zero Budget sets no limit.
type Budget struct {
	// StopAt is when thinking must stop: when an engine is told to stop, or the time
	// limit a model server is given.
	StopAt time.Time
	// AnswerBy is when the answer must be sent: a call still waiting then is given up.
	AnswerBy time.Time
}

// MoveBudget is the budget of a move whose REQUEST_MOVE req arrived at arrived. most, when
// above 0, is the longest the strategy lets a move take whatever the referee says, and
// its whole time when the referee gives no deadline; with neither, the Budget is zero.
//
// Without clocks, the answer is due by the referee's deadline (req.DeadlineMS) less a
// tenth of it for the way back (at least 100 ms, at most 500 ms, never more than half the
// deadline). Under a clock the deadline is the whole clock, so the answer is due by the
// clock's budget instead, protocol.TimeControl.Budget (ClockBudget), the one rule of a
// clocked move, still within the deadline's and most. Thinking stops a quarter of the
// move's time before the answer is due, at most 250 ms before.
func MoveBudget(arrived time.Time, req Request, most time.Duration) Budget {
	span := most
	if req.DeadlineMS > 0 {
		d := time.Duration(req.DeadlineMS) * time.Millisecond
		span = d - min(max(d/10, minTravelMargin), maxTravelMargin, d/2)
		if most > 0 {
			span = min(span, most)
		}
	}
	if req.Clocks != nil {
		if c := ClockBudget(*req.Clocks); c > 0 && (span <= 0 || c < span) {
			span = c
		}
	}
	if span <= 0 {
		return Budget{}
	}
	return Budget{StopAt: arrived.Add(span - min(span/4, maxStopGrace)), AnswerBy: arrived.Add(span)}
}

// ClockBudget is how long the mover may take under clocks, REQUEST_MOVE's: the one rule
// of a clocked move, protocol.TimeControl.Budget, for the mover's clock (clocks.You).
func ClockBudget(clocks protocol.Clocks) time.Duration {
	return protocol.TimeControl{IncrementMS: clocks.IncrementMS}.Budget(clocks.You)
}
