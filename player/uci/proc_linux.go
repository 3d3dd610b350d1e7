package uci

import (
	"os/exec"
	"syscall"
)

// procAttr puts the engine in a process group of its own, so that killGroup also ends
// whatever it started, and has the kernel kill it when the player dies without closing it
// (SIGKILL, a crash). The signal follows the thread that started the engine, and Go only
// ends threads that a goroutine locked and left locked; ours never are.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the engine's process group; errors (a group already gone) are moot.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
