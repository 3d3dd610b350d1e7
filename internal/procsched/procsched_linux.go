//go:build linux && cgo

package procsched

/*
#include "procsched.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// Kernel scheduling policies (sched(7)).
const (
	schedOther    = 0
	schedFIFO     = 1
	schedRR       = 2
	schedBatch    = 3
	schedIdle     = 5
	schedDeadline = 6

	schedResetOnFork = 0x40000000 // a flag sched_getscheduler may add to the policy
)

// Slack is the slack the constructor set when the process started, or why it set none:
// ErrBadSlack, or the error of the prctl call.
func Slack() (time.Duration, error) {
	switch r := int64(C.agentleague_timer_slack_result()); {
	case r >= 0:
		return time.Duration(r), nil
	case r == -2:
		return 0, fmt.Errorf("%w, got %q", ErrBadSlack, os.Getenv(SlackEnv))
	default:
		return 0, fmt.Errorf("timer slack: prctl PR_SET_TIMERSLACK: %w", syscall.Errno(C.agentleague_timer_slack_errno()))
	}
}

// Policy is the scheduling policy the process runs under ("batch", or the one it
// started with: "other", "fifo", "rr", "idle", "deadline"), or why the constructor
// could not set it: ErrBadPolicy, or the error of the system call.
func Policy() (string, error) {
	switch r := int(C.agentleague_policy()); {
	case r >= 0:
		return policyName(r), nil
	case r == -2:
		return "", fmt.Errorf("%w, got %q", ErrBadPolicy, os.Getenv(PolicyEnv))
	default:
		return "", fmt.Errorf("scheduling policy: sched_setscheduler SCHED_BATCH: %w", syscall.Errno(C.agentleague_policy_err()))
	}
}

func policyName(p int) string {
	switch p {
	case schedOther:
		return "other"
	case schedFIFO:
		return "fifo"
	case schedRR:
		return "rr"
	case schedBatch:
		return "batch"
	case schedIdle:
		return "idle"
	case schedDeadline:
		return "deadline"
	}
	return fmt.Sprintf("policy %d", p)
}

// Start starts cmd with the slack and the policy this process inherited rather than its
// own: a child inherits both from the thread that forks it, and they are this program's
// choice, not its children's (an older build under league bench, a chess engine).
func Start(cmd *exec.Cmd) error {
	own, err := Slack()
	inherited := int64(C.agentleague_timer_slack_inherited())
	slack := err == nil && inherited > 0
	policy := int(C.agentleague_policy()) == schedBatch && int(C.agentleague_inherited_policy()) != schedBatch
	if !slack && !policy {
		return cmd.Start() // nothing changed, nothing to undo
	}
	// The thread is given its settings back afterwards rather than left to end with a
	// goroutine of its own: a child's Pdeathsig fires when the thread that forked it ends.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if slack {
		if e := C.agentleague_set_thread_timer_slack(C.ulong(inherited)); e != 0 {
			return fmt.Errorf("timer slack of a child: prctl PR_SET_TIMERSLACK: %w", syscall.Errno(e))
		}
	}
	if policy {
		if e := C.agentleague_set_thread_policy(C.int(C.agentleague_inherited_policy())); e != 0 {
			// The slack is restored below; the child would inherit batch, so it is not started.
			return errors.Join(fmt.Errorf("scheduling policy of a child: sched_setscheduler: %w", syscall.Errno(e)), restoreSlack(slack, own))
		}
	}
	startErr := cmd.Start()
	// Only this thread keeps the child's settings if restoring them fails, which costs
	// some CPU, no more.
	var restoreErr error
	if policy {
		if e := C.agentleague_set_thread_policy(schedBatch); e != 0 {
			restoreErr = fmt.Errorf("scheduling policy restored after a child: sched_setscheduler: %w", syscall.Errno(e))
		}
	}
	return errors.Join(startErr, restoreErr, restoreSlack(slack, own))
}

// restoreSlack gives the locked thread its own slack back when Start changed it.
func restoreSlack(changed bool, own time.Duration) error {
	if !changed {
		return nil
	}
	if e := C.agentleague_set_thread_timer_slack(C.ulong(own)); e != 0 {
		return fmt.Errorf("timer slack restored after a child: prctl PR_SET_TIMERSLACK: %w", syscall.Errno(e))
	}
	return nil
}

// Unbatch gives every thread of the process the policy it started with when the
// constructor chose SCHED_BATCH, for a command that measures what a program does under
// the default scheduling (league bench's floor). Threads created later inherit it, and
// Start has nothing left to undo.
func Unbatch() error {
	if int(C.agentleague_policy()) != schedBatch || int(C.agentleague_inherited_policy()) != schedOther {
		return nil
	}
	C.agentleague_policy_unbatched()
	// A thread created during a pass by one not yet changed is batch too: passes go on
	// until one changes nothing.
	for {
		changed, err := unbatchPass()
		if err != nil || changed == 0 {
			return err
		}
	}
}

// unbatchPass moves each thread still under SCHED_BATCH to SCHED_OTHER and counts them.
func unbatchPass() (int, error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, fmt.Errorf("scheduling policy: %w", err)
	}
	changed := 0
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		p, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
		if e == syscall.ESRCH || (e == 0 && int(p)&^schedResetOnFork != schedBatch) {
			continue // ended, or not batch
		}
		param := struct{ priority int32 }{}
		if e == 0 {
			_, _, e = syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedOther, uintptr(unsafe.Pointer(&param)))
		}
		switch e {
		case 0:
			changed++
		case syscall.ESRCH:
		default:
			return changed, fmt.Errorf("scheduling policy of thread %d: %w", tid, e)
		}
	}
	return changed, nil
}
