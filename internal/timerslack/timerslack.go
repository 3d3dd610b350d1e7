// Package timerslack gives every thread of a process a timer slack of 1 ms on Linux
// (prctl PR_SET_TIMERSLACK), set by a C constructor before the Go runtime starts; a
// command imports it to get it.
//
// Why: the Go runtime's sysmon thread polls every 20 µs while a process is busy, and a
// league's processes are busy in bursts of a few hundred microseconds, one per message.
// With the kernel's default slack (50 µs) each burst costs several sleeps and wake-ups
// of that thread, about a seventh of a league's CPU on a 2-core machine (league bench,
// 10 players and 5 referees). The runtime creates sysmon before any Go code runs and a
// thread inherits the slack of the thread that creates it, so only code that runs
// before the runtime can set sysmon's: hence the constructor. The cost is that a timer
// of the process may fire up to the slack late, which no deadline of a league (tens of
// milliseconds at least) notices.
package timerslack

import (
	"errors"
	"fmt"
	"time"
)

// Env sets the slack in nanoseconds, up to 100000000 (100 ms); 0 keeps the slack the
// process inherited (50 µs, the kernel's default, from a shell); unset or empty, the
// slack is Default.
const Env = "LEAGUE_TIMER_SLACK_NS"

// Default is the slack when Env is not set.
const Default = time.Millisecond

// ErrBadValue is Setting's error when Env holds something else than a whole number of
// nanoseconds from 0 to 100 ms; the slack is then left at the kernel's default.
var ErrBadValue = fmt.Errorf("%s must be a whole number of nanoseconds from 0 to 100000000", Env)

// ErrUnsupported is Setting's error in a build that cannot set the slack (another
// system than Linux, or cgo off).
var ErrUnsupported = errors.New("timer slack: not set by this build (Linux with cgo only)")
