//go:build !linux || !cgo

package timerslack

import (
	"os/exec"
	"time"
)

// Setting is always ErrUnsupported in this build.
func Setting() (time.Duration, error) { return 0, ErrUnsupported }

// Start is cmd.Start: this build changes no slack.
func Start(cmd *exec.Cmd) error { return cmd.Start() }
