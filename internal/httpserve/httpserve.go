// Package httpserve runs the HTTP server of every role with the same timeouts.
package httpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Server is a started HTTP server bound to a real address.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Start listens on addr (port 0 picks a free one) and serves h until Shutdown. Read,
// write and idle timeouts keep a slow client from holding a connection.
func Start(addr string, h http.Handler) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := &Server{
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       10 * time.Second,
			WriteTimeout:      30 * time.Second,
			IdleTimeout:       60 * time.Second,
			MaxHeaderBytes:    16 << 10,
		},
		ln:   ln,
		done: make(chan error, 1),
	}
	// The serving goroutine ends when Shutdown closes the listener.
	go func() {
		err := s.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	}()
	return s, nil
}

// Addr is the bound address, e.g. 127.0.0.1:8000.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the JSON-RPC endpoint of the server.
func (s *Server) URL() string { return "http://" + s.Addr() + "/mcp" }

// Shutdown stops accepting requests and waits for those in flight until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.done; err == nil {
		err = serr
	}
	return err
}
