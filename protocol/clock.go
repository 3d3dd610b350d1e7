package protocol

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeControl gives each player of a match a clock instead of a fixed deadline per move
// (MATCH_ASSIGNMENT time_control): BaseMS to start with, IncrementMS added after each
// move, BaseMS again every MovesPerPeriod moves (0: one period), and BankMS, a reserve
// drawn on once the clock runs out and never refilled. The zero value is no clock.
type TimeControl struct {
	BaseMS         int `json:"base_ms" yaml:"base_ms"`
	IncrementMS    int `json:"increment_ms" yaml:"increment_ms"`
	MovesPerPeriod int `json:"moves_per_period,omitempty" yaml:"moves_per_period"`
	BankMS         int `json:"bank_ms,omitempty" yaml:"bank_ms"`
}

// On reports whether tc is a clock.
func (tc TimeControl) On() bool { return tc.BaseMS > 0 }

// String is tc in the form of PGN's TimeControl tag, in seconds: "300+2", "40/5400+30";
// "-" without a clock.
func (tc TimeControl) String() string {
	if !tc.On() {
		return "-"
	}
	s := seconds(tc.BaseMS)
	if tc.MovesPerPeriod > 0 {
		s = strconv.Itoa(tc.MovesPerPeriod) + "/" + s
	}
	if tc.IncrementMS > 0 {
		s += "+" + seconds(tc.IncrementMS)
	}
	return s
}

func seconds(ms int) string { return strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64) }

// Clock is one player's clock at a moment: what REQUEST_MOVE shows of both players'
// (clocks), and what a move record keeps of the mover's after the move.
type Clock struct {
	// RemainingMS is the time left on the clock, BankMS what is left of the bank.
	RemainingMS int64 `json:"remaining_ms"`
	BankMS      int64 `json:"bank_ms,omitempty"`
	// MovesToGo is how many moves remain until BaseMS is added again (0: no periods).
	MovesToGo int `json:"moves_to_go,omitempty"`
}

// Clocks is REQUEST_MOVE's clocks: the mover's and the opponent's, and the increment.
type Clocks struct {
	You         Clock `json:"you"`
	Opponent    Clock `json:"opponent"`
	IncrementMS int   `json:"increment_ms"`
}

// Network credit: the network time measured for a player is given back to its clock, up
// to NetworkCreditPerMove for one move and, over a game, at most the base time (a player
// never gets back more than its clock held). What a player claims of its own thinking is
// recorded, never credited.
const NetworkCreditPerMove = time.Second

// Budget is how long a player with clock c may think about its next move under tc: the
// one budget rule of a clocked move, which every strategy of ours follows (through
// strategy.MoveBudget) and the Python and Node kits port. The referee's deadline is the
// whole clock and bank, but a player that spends it on one move loses the game on the
// next. With left the clock and the bank (c.RemainingMS + c.BankMS) and togo the moves to
// go (30 when the control has no periods):
//
//	budget = min(left/togo + 3/4 of the increment, left/2), and never below 0.
//
// Of tc it takes only the increment, so a player that knows only REQUEST_MOVE's clocks
// computes it as TimeControl{IncrementMS: clocks.IncrementMS}.Budget(clocks.You).
func (tc TimeControl) Budget(c Clock) time.Duration {
	left := time.Duration(c.RemainingMS+c.BankMS) * time.Millisecond
	togo := c.MovesToGo
	if togo <= 0 {
		togo = 30
	}
	b := left/time.Duration(togo) + time.Duration(tc.IncrementMS)*time.Millisecond*3/4
	return max(min(b, left/2), 0)
}

// ParseTimeControl reads the seconds form of String ("10+0.1", "40/60+0.5", "300").
func ParseTimeControl(s string) (TimeControl, error) {
	var tc TimeControl
	rest := s
	if moves, after, ok := strings.Cut(rest, "/"); ok {
		n, err := strconv.Atoi(moves)
		if err != nil || n <= 0 {
			return TimeControl{}, fmt.Errorf("time control %q: moves per period must be a positive integer", s)
		}
		tc.MovesPerPeriod, rest = n, after
	}
	rest, inc, hasInc := strings.Cut(rest, "+")
	base, err := strconv.ParseFloat(rest, 64)
	if err != nil || base <= 0 {
		return TimeControl{}, fmt.Errorf("time control %q: the base time must be a positive number of seconds", s)
	}
	tc.BaseMS = int(base * 1000)
	if hasInc {
		f, err := strconv.ParseFloat(inc, 64)
		if err != nil || f < 0 {
			return TimeControl{}, fmt.Errorf("time control %q: the increment must be a number of seconds, 0 or more", s)
		}
		tc.IncrementMS = int(f * 1000)
	}
	return tc, nil
}
