// Package procsched sets two scheduling settings for every thread of a process on
// Linux, from a C constructor that runs before the Go runtime starts; a command imports
// the package to get them.
//
// The timer slack is 1 ms (prctl PR_SET_TIMERSLACK). The Go runtime's sysmon thread
// polls every 20 µs while a process is busy, and a league's processes are busy in bursts
// of a few hundred microseconds, one per message. With the kernel's default slack
// (50 µs) each burst costs several sleeps and wake-ups of that thread, about a seventh
// of a league's CPU on a 2-core machine (league bench, 10 players and 5 referees). The
// cost is that a timer of the process may fire up to the slack late, which no deadline
// of a league (tens of milliseconds at least) notices.
//
// The scheduling policy is SCHED_BATCH when the process starts under the default
// SCHED_OTHER. A league is many small processes on few cores that hand each message to
// one another: under SCHED_OTHER the process a message wakes preempts its sender at
// once, so each exchange costs extra context switches before the sender gets to wait
// for the answer. SCHED_BATCH keeps the fair shares and nice values and drops only that
// wake-up preemption (league bench, 10 players and 5 referees: about a tenth of the
// league time). The cost is that a woken process may wait for the one running to block
// or use up its slice, a few milliseconds at most, which no deadline notices either. A
// process started under another policy (real-time, SCHED_IDLE) keeps it.
//
// Why a constructor: the runtime creates sysmon and its first threads before any Go code
// runs, and a thread inherits both settings from the thread that creates it.
package procsched

import (
	"errors"
	"fmt"
	"time"
)

// SlackEnv sets the slack in nanoseconds, up to 100000000 (100 ms); 0 keeps the slack
// the process inherited (50 µs, the kernel's default, from a shell); unset or empty,
// the slack is DefaultSlack.
const SlackEnv = "LEAGUE_TIMER_SLACK_NS"

// DefaultSlack is the slack when SlackEnv is not set.
const DefaultSlack = time.Millisecond

// PolicyEnv chooses the scheduling policy: "batch" (the default when unset or empty)
// or "inherit", which keeps the policy the process started with.
const PolicyEnv = "LEAGUE_SCHED_POLICY"

// ErrBadSlack is Slack's error when SlackEnv holds something else than a whole number of
// nanoseconds from 0 to 100 ms; the slack is then left at the kernel's default.
var ErrBadSlack = fmt.Errorf("%s must be a whole number of nanoseconds from 0 to 100000000", SlackEnv)

// ErrBadPolicy is Policy's error when PolicyEnv holds something else than "batch" or
// "inherit"; the policy is then left as inherited.
var ErrBadPolicy = fmt.Errorf(`%s must be "batch" or "inherit"`, PolicyEnv)

// ErrUnsupported is the error of Slack and Policy in a build that sets neither (another
// system than Linux, or cgo off).
var ErrUnsupported = errors.New("scheduling settings: not set by this build (Linux with cgo only)")
