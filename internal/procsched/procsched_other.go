//go:build !linux || !cgo

package procsched

import (
	"os/exec"
	"time"
)

// Slack is always ErrUnsupported in this build.
func Slack() (time.Duration, error) { return 0, ErrUnsupported }

// Policy is always ErrUnsupported in this build.
func Policy() (string, error) { return "", ErrUnsupported }

// Start is cmd.Start: this build changes no setting.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// Unbatch does nothing in this build.
func Unbatch() error { return nil }
