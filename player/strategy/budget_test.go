package strategy

import (
	"testing"
	"time"
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
			b := MoveBudget(arrived, tt.deadlineMS, tt.most)
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
		if b := MoveBudget(arrived, deadlineMS, 0); b != (Budget{}) {
			t.Errorf("deadline %d ms: got %+v, want the zero Budget", deadlineMS, b)
		}
	}
}
