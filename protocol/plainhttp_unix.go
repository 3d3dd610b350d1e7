//go:build unix

package protocol

import (
	"errors"
	"net"
	"syscall"
)

// quiet says whether an idle connection has neither bytes nor an end waiting: a
// kept connection that holds an unasked-for answer, or that the server closed, is
// not reused (net/http's Transport notices both with its reader goroutine).
func quiet(c net.Conn) bool {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return true
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	var p peeker
	if err := rc.Read(p.peek); err != nil {
		return false
	}
	return errors.Is(p.err, syscall.EAGAIN)
}

type peeker struct {
	b   [1]byte
	err error
}

func (p *peeker) peek(fd uintptr) bool {
	_, _, p.err = syscall.Recvfrom(int(fd), p.b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	return true
}
