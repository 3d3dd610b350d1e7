// Package httpserve runs the HTTP server of every role (League Manager, referee, player,
// MCP gateway) with net/http and the same timeouts, header limit and TLS. A request's
// context ends when its handler returns or its client closes the connection, which net/http
// watches for: a model thinking about a move the referee stopped waiting for stops too.
package httpserve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a started HTTP server bound to a real address.
type Server struct {
	ln     net.Listener
	scheme string
	srv    *http.Server
	done   chan error // Serve's end
	// stragglers is set by Shutdown when it closed connections at its deadline.
	stragglers bool
}

// maxHeaderBytes bounds a request's headers.
const maxHeaderBytes = 16 << 10

// Timeouts bound how long a client may hold a connection, so that slow or stalled
// clients cannot exhaust a server.
type Timeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// DefaultTimeouts are the timeouts of every role's server.
var DefaultTimeouts = Timeouts{ReadHeader: 5 * time.Second, Read: 10 * time.Second, Write: 30 * time.Second, Idle: 60 * time.Second}

// Start listens on addr (port 0 picks a free one) and serves h with DefaultTimeouts
// until Shutdown.
func Start(addr string, h http.Handler) (*Server, error) { return StartWith(addr, h, DefaultTimeouts) }

// StartTLS is Start serving HTTPS with cfg (see internal/netsec.ServerConfig); nil
// cfg serves plain HTTP.
func StartTLS(addr string, h http.Handler, cfg *tls.Config) (*Server, error) {
	return start(addr, h, DefaultTimeouts, cfg)
}

// StartWith is Start with other timeouts (tests of slow clients use short ones).
func StartWith(addr string, h http.Handler, t Timeouts) (*Server, error) {
	return start(addr, h, t, nil)
}

func start(addr string, h http.Handler, t Timeouts, cfg *tls.Config) (*Server, error) {
	ln, scheme, err := listen(addr, cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, scheme: scheme, done: make(chan error, 1), srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.ReadHeader,
		ReadTimeout:       t.Read,
		WriteTimeout:      t.Write,
		IdleTimeout:       t.Idle,
		MaxHeaderBytes:    maxHeaderBytes,
	}}
	// Ends when Shutdown closes the listener.
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// listen binds addr, with TLS when cfg is set, and names the scheme it serves.
func listen(addr string, cfg *tls.Config) (net.Listener, string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("listen on %s: %w", addr, err)
	}
	if cfg != nil {
		return tls.NewListener(ln, cfg), "https", nil
	}
	return ln, "http", nil
}

// Addr is the bound address, e.g. 127.0.0.1:8000.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Base is the server's root, e.g. https://10.0.0.2:8000: https when it serves TLS.
func (s *Server) Base() string { return s.scheme + "://" + s.Addr() }

// URL is the JSON-RPC endpoint of the server, Base + /mcp.
func (s *Server) URL() string { return s.Base() + "/mcp" }

// Shutdown stops accepting requests and waits for those in flight until ctx ends, then
// closes whatever is still open.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// What is still open when ctx ends is closed: a client that stalls, or a
		// connection that never sent a request (net/http waits 5 s on such a one). The
		// process is ending; the caller learns it from Stragglers, not as a failure.
		s.stragglers = true
		err = s.srv.Close()
	}
	if serr := <-s.done; err == nil {
		err = serr
	}
	return err
}

// Stragglers reports whether Shutdown had to close connections still open at its
// deadline.
func (s *Server) Stragglers() bool { return s.stragglers }

// WriteJSON answers with status and v as JSON: Content-Type application/json, one line
// ending in a newline. Headers of the caller's own (e.g. Cache-Control) are set before.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The status is sent: a value that cannot be encoded ends the body short.
	_ = json.NewEncoder(w).Encode(v)
}
