//go:build !linux

package uci

import (
	"os/exec"
	"syscall"
)

// procAttr adds nothing where the kernel cannot kill an orphaned engine: the player kills
// its engines itself when matches end and when it stops.
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the engine process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
