package httpserve

import (
	"context"
	"net"
	"sync"
	"time"
)

// connContext is the context of a request StartRPC serves. Like net/http's request
// context it ends when the handler returns, or before, when the client closes the
// connection: a referee that stopped waiting for a move, whose model call should stop
// too. net/http watches for that with a goroutine for every request; connContext starts
// watching only when something first waits on Done, which a quick answer never does.
type connContext struct {
	conn net.Conn

	mu      sync.Mutex
	done    chan struct{} // made by the first Done
	err     error
	watched chan struct{} // closed when the watch has ended; nil when none runs
}

var _ context.Context = (*connContext)(nil)

func newConnContext(conn net.Conn) *connContext { return &connContext{conn: conn} }

// Deadline implements context.Context: a request has none of its own.
func (c *connContext) Deadline() (time.Time, bool) { return time.Time{}, false }

// Value implements context.Context: a request carries no values of its own.
func (c *connContext) Value(any) any { return nil }

// Err implements context.Context.
func (c *connContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done implements context.Context; the first call starts watching the connection.
func (c *connContext) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		if c.err != nil {
			close(c.done)
		} else {
			c.watched = watchClose(c.conn, c.cancel)
		}
	}
	return c.done
}

// cancel ends the context with err, once.
func (c *connContext) cancel(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancelLocked(err)
}

func (c *connContext) cancelLocked(err error) {
	if c.err != nil {
		return
	}
	c.err = err
	if c.done != nil {
		close(c.done)
	}
}

// end ends the context as its handler returns, and the watch with it, before the
// connection serves its next request.
func (c *connContext) end() {
	c.mu.Lock()
	c.cancelLocked(context.Canceled)
	watched := c.watched
	c.mu.Unlock()
	if watched == nil {
		return
	}
	// A deadline in the past wakes the watch; fasthttp sets the connection's next read
	// deadline itself before reading the next request.
	_ = c.conn.SetReadDeadline(time.Unix(1, 0))
	<-watched
}
