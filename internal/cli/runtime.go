package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/agentleague/agentleague/internal/procsched"
)

// gcPercent is the collector's goal for our processes: their live heaps are a few
// megabytes and their garbage is per message, so at Go's default (100) a busy agent
// collects every few dozen exchanges; at 400 the processes of a league spend about a
// sixth less CPU (league bench, 20 players and 10 referees) for a few megabytes more each.
const gcPercent = 400

// TuneGC sets the collector's goal unless the GOGC variable sets it; call it first
// thing in main.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
}

// OneProcessor runs the Go code of a process on one processor unless the GOMAXPROCS
// variable says otherwise: for a player, which answers one referee at a time, or a
// referee that runs one match at a time, sharing the machine with many others, a second
// processor only adds idle threads spinning for work (about a tenth of a league's CPU,
// league bench 20 players and 10 referees). A strategy that thinks in parallel sets
// GOMAXPROCS.
func OneProcessor() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}

// Scheduling checks the timer slack and the scheduling policy the process started with
// (package procsched): a bad LEAGUE_TIMER_SLACK_NS or LEAGUE_SCHED_POLICY is an error,
// the command's to report as a bad command line; a setting the system refused is a note
// on w, as the process works without it, only spending more CPU.
func Scheduling(w io.Writer) error {
	_, slackErr := procsched.Slack()
	_, policyErr := procsched.Policy()
	var bad []error
	for _, err := range []error{slackErr, policyErr} {
		switch {
		case err == nil, errors.Is(err, procsched.ErrUnsupported):
		case errors.Is(err, procsched.ErrBadSlack), errors.Is(err, procsched.ErrBadPolicy):
			bad = append(bad, err)
		default:
			fmt.Fprintf(w, "note: %v (the kernel's default is kept)\n", err)
		}
	}
	return errors.Join(bad...)
}
