package protocol

import (
	"context"
	"net"
	"net/http"
)

// Backoff exposes backoff to the external tests.
var Backoff = backoff

// SetDial makes c reach every peer through dial: a test dials an in-memory
// peer (net.Pipe) inside a testing/synctest bubble, so that a call's deadlines run on
// the bubble's fake clock.
func SetDial(c *Client, dial func(ctx context.Context, network, addr string) (net.Conn, error)) {
	c.http.Transport.(*http.Transport).DialContext = dial
}
