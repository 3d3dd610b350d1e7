//go:build !unix

package httpserve

import "net"

// watchClose cannot look at a connection without reading it here: a request's context
// ends only when its handler returns.
func watchClose(net.Conn, func(error)) chan struct{} { return nil }
