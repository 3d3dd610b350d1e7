//go:build unix

package httpserve

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"syscall"
	"time"
)

// watchClose calls gone once the client closes conn (an end of stream or an error
// waiting to be read), looking without reading: the bytes stay for the server. It
// returns a channel closed when the watch ends, or nil when conn cannot be watched. A
// byte that arrives (the next request sent early, or over TLS any record, a close_notify
// included, which cannot be told from data unread) ends the watch without a call, as
// net/http's does; so does a read deadline in the past (connContext.end).
func watchClose(conn net.Conn, gone func(error)) chan struct{} {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	// The read deadline fasthttp set for the request would end the watch of a move that
	// thinks longer (a model, 20 s); it sets the next one itself before the next read.
	// Cleared here, before the watch starts, so that end's past deadline always comes
	// after it.
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		return nil
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		var (
			b    [1]byte
			n    int
			perr error
		)
		err := rc.Read(func(fd uintptr) bool {
			n, _, perr = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			// false waits until the connection is readable and looks again.
			return !errors.Is(perr, syscall.EAGAIN)
		})
		if err == nil && (perr != nil || n == 0) {
			gone(context.Canceled)
		}
	}()
	return ended
}
