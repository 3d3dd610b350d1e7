package strategy

import "time"

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

// MoveBudget is the budget of a move whose REQUEST_MOVE arrived at arrived with the
// referee's deadline_ms deadlineMS (0 or less: none given). most, when above 0, is the
// longest the strategy lets a move take whatever the deadline, and its whole time when
// there is none; with neither, the Budget is zero.
//
// The answer is due by the deadline less a tenth of it for the way back (at least
// 100 ms, at most 500 ms, never more than half the deadline); thinking stops a quarter
// of the move's time before that, at most 250 ms.
func MoveBudget(arrived time.Time, deadlineMS int, most time.Duration) Budget {
	span := most
	if deadlineMS > 0 {
		d := time.Duration(deadlineMS) * time.Millisecond
		span = d - min(max(d/10, minTravelMargin), maxTravelMargin, d/2)
		if most > 0 {
			span = min(span, most)
		}
	}
	if span <= 0 {
		return Budget{}
	}
	return Budget{StopAt: arrived.Add(span - min(span/4, maxStopGrace)), AnswerBy: arrived.Add(span)}
}
