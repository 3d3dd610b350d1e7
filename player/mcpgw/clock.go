package mcpgw

import "time"

// clock is the time the seats' deadlines and the progress notifications follow; tests
// drive a fake one.
type clock interface {
	Now() time.Time
	// Timer fires once on c after d; stop releases it.
	Timer(d time.Duration) (c <-chan time.Time, stop func())
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}
