package strategy

import (
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

func TestMoveBudget(t *testing.T) {
	arrived := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	for _, tt := range []struct {
		name             string
		deadlineMS       int
		most             time.Duration
		stopAt, answerBy time.Duration
	}{
		{"no deadline: the strategy's own limit", 0, 30 * time.Second, ms(29750), ms(30000)},
		{"the strategy's limit is shorter", 60000, 30 * time.Second, ms(29750), ms(30000)},
		{"a profile far below the deadline", 30000, ms(1500), ms(1250), ms(1500)},
		{"the league's default: a tenth, at most 500 ms", 30000, 0, ms(29250), ms(29500)},
		{"a tenth", 2000, 0, ms(1550), ms(1800)},
		{"at least 100 ms", 400, 0, ms(225), ms(300)},
		{"at least 100 ms, a quarter to stop", 300, time.Minute, ms(150), ms(200)},
		{"never more than half", 100, 0, ms(37.5), ms(50)},
		{"never more than half, below 100 ms", 60, 0, ms(22.5), ms(30)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := MoveBudget(arrived, Request{DeadlineMS: tt.deadlineMS}, tt.most)
			if got := b.StopAt.Sub(arrived); got != tt.stopAt {
				t.Errorf("stop after %v, want %v", got, tt.stopAt)
			}
			if got := b.AnswerBy.Sub(arrived); got != tt.answerBy {
				t.Errorf("answer by %v, want %v", got, tt.answerBy)
			}
		})
	}
}

// No deadline and no limit of the strategy's own: nothing bounds the move.
func TestMoveBudgetUnbounded(t *testing.T) {
	arrived := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, deadlineMS := range []int{0, -1} {
		if b := MoveBudget(arrived, Request{DeadlineMS: deadlineMS}, 0); b != (Budget{}) {
			t.Errorf("deadline %d ms: got %+v, want the zero Budget", deadlineMS, b)
		}
	}
}

// Under a clock the move's budget is the clock's (protocol.TimeControl.Budget), not the
// referee's deadline, which is the whole clock.
func TestMoveBudgetUnderAClock(t *testing.T) {
	arrived := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	clocks := func(remaining, bank int64, togo, inc int) *protocol.Clocks {
		return &protocol.Clocks{You: protocol.Clock{RemainingMS: remaining, BankMS: bank, MovesToGo: togo},
			Opponent: protocol.Clock{RemainingMS: 1}, IncrementMS: inc}
	}
	for _, tt := range []struct {
		name             string
		deadlineMS       int
		clocks           *protocol.Clocks
		most             time.Duration
		budget           time.Duration
		stopAt, answerBy time.Duration
	}{
		// 10+0.1 at the start: 10000/30 + 75 ms.
		{"10+0.1: a thirtieth and most of the increment", 10050, clocks(10000, 0, 0, 100), 0, ms(408.333333), ms(306.25), ms(408.333333)},
		{"moves to go", 60000, clocks(60000, 0, 20, 0), 0, ms(3000), ms(2750), ms(3000)},
		{"the bank is time left", 5000, clocks(0, 5000, 0, 0), 0, ms(166.666666), ms(125), ms(166.666666)},
		{"never more than half of what is left", 400, clocks(400, 0, 0, 1000), 0, ms(200), ms(150), ms(200)},
		{"the last move of a period: half", 8000, clocks(8000, 0, 1, 0), 0, ms(4000), ms(3750), ms(4000)},
		{"the strategy's limit is shorter", 600000, clocks(600000, 0, 0, 0), 5 * time.Second, ms(20000), ms(4750), ms(5000)},
		{"the deadline is shorter", 100, clocks(60000, 0, 0, 0), 0, ms(2000), ms(37.5), ms(50)},
		{"nothing left: the deadline's rule", 300, clocks(0, 0, 0, 0), 0, 0, ms(150), ms(200)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClockBudget(*tt.clocks); (got - tt.budget).Abs() > time.Microsecond {
				t.Errorf("clock budget %v, want %v", got, tt.budget)
			}
			b := MoveBudget(arrived, Request{DeadlineMS: tt.deadlineMS, Clocks: tt.clocks}, tt.most)
			if got := b.StopAt.Sub(arrived); (got - tt.stopAt).Abs() > time.Microsecond {
				t.Errorf("stop after %v, want %v", got, tt.stopAt)
			}
			if got := b.AnswerBy.Sub(arrived); (got - tt.answerBy).Abs() > time.Microsecond {
				t.Errorf("answer by %v, want %v", got, tt.answerBy)
			}
		})
	}
}
