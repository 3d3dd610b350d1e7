//go:build linux && cgo

package timerslack

/*
#include "slack.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// Setting is the slack the constructor set when the process started, or why it set none:
// ErrBadValue, or the error of the prctl call.
func Setting() (time.Duration, error) {
	switch r := int64(C.agentleague_timer_slack_result()); {
	case r >= 0:
		return time.Duration(r), nil
	case r == -2:
		return 0, fmt.Errorf("%w, got %q", ErrBadValue, os.Getenv(Env))
	default:
		return 0, fmt.Errorf("timer slack: prctl PR_SET_TIMERSLACK: %w", syscall.Errno(C.agentleague_timer_slack_errno()))
	}
}

// Start starts cmd with the slack this process inherited rather than its own: a child
// inherits the slack of the thread that forks it, and the slack is this program's
// choice, not its children's (an older build under league bench, a chess engine).
func Start(cmd *exec.Cmd) error {
	own, err := Setting()
	inherited := int64(C.agentleague_timer_slack_inherited())
	if err != nil || inherited <= 0 {
		return cmd.Start() // nothing changed, nothing to undo
	}
	// The thread is given its slack back afterwards rather than left to end with a
	// goroutine of its own: a child's Pdeathsig fires when the thread that forked it ends.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if e := C.agentleague_set_thread_timer_slack(C.ulong(inherited)); e != 0 {
		return fmt.Errorf("timer slack of a child: prctl PR_SET_TIMERSLACK: %w", syscall.Errno(e))
	}
	startErr := cmd.Start()
	if e := C.agentleague_set_thread_timer_slack(C.ulong(own)); e != 0 {
		// Only this thread keeps the child's slack, which costs some CPU, no more.
		return errors.Join(startErr, fmt.Errorf("timer slack restored after a child: prctl PR_SET_TIMERSLACK: %w", syscall.Errno(e)))
	}
	return startErr
}
