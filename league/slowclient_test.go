package league

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
)

// slowConn is a connection that sends start at once, then trickle one byte every 20 ms
// until the server stops reading or the test ends.
type slowConn struct {
	conn   net.Conn
	opened time.Time
	stop   chan struct{}
	done   chan struct{}
}

func openSlow(t *testing.T, addr, start, trickle string) *slowConn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	s := &slowConn{conn: conn, opened: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if _, err := io.WriteString(conn, start); err != nil {
		t.Fatal(err)
	}
	// Ends when the trickle is sent, a write fails, or close is called.
	go func() {
		defer close(s.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := range len(trickle) {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			if _, err := conn.Write([]byte{trickle[i]}); err != nil {
				return
			}
		}
	}()
	return s
}

// closedByServer reads until the server closes the connection and fails the test if
// that takes more than 500 ms from the connection's start.
func (s *slowConn) closedByServer(t *testing.T) {
	t.Helper()
	_ = s.conn.SetReadDeadline(s.opened.Add(500 * time.Millisecond))
	_, err := io.Copy(io.Discard, s.conn)
	var ne net.Error
	switch {
	case err == nil, errors.Is(err, syscall.ECONNRESET):
		// io.Copy reports the server's close (EOF) as nil.
	case errors.As(err, &ne) && ne.Timeout():
		t.Errorf("the server still held the slow connection %v after it opened", time.Since(s.opened).Round(time.Millisecond))
	default:
		t.Errorf("reading the slow connection: %v", err)
	}
}

func (s *slowConn) close() {
	close(s.stop)
	s.conn.Close()
	<-s.done
}

// Slow clients cannot hold the League Manager's HTTP server: connections that trickle
// their headers or body, or idle after a request, are closed after the timeouts, while
// other clients are served at once.
func TestSlowClientsAreCutOff(t *testing.T) {
	const timeout = 200 * time.Millisecond
	h := newHarness(t, harnessOptions{})
	srv, err := httpserve.StartWith("127.0.0.1:0", Routes(h.m, h.srv), httpserve.Timeouts{ReadHeader: timeout, Read: timeout, Write: timeout, Idle: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()
	base := "http://" + srv.Addr()
	body := `{"jsonrpc":"2.0","method":"league.handle","id":1,"params":{"envelope":{"protocol":"league.v2"}}}` + strings.Repeat(" ", 100)
	tests := []struct {
		name, start, trickle string
	}{
		{"headers byte by byte", "", "POST /mcp HTTP/1.1\r\nHost: league\r\nContent-Type: application/json\r\nX-Padding: " + strings.Repeat("x", 100)},
		{"body byte by byte", "POST /mcp HTTP/1.1\r\nHost: league\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n", body},
		{"idle after a request", "GET /health HTTP/1.1\r\nHost: league\r\n\r\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var slow []*slowConn
			for range 8 {
				s := openSlow(t, srv.Addr(), tc.start, tc.trickle)
				defer s.close()
				slow = append(slow, s)
			}
			// Other clients are served while the slow connections hang on.
			client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
			for _, path := range []string{"/health", "/status", "/health"} {
				start := time.Now()
				res, err := client.Get(base + path)
				if err != nil {
					t.Fatalf("GET %s beside slow clients: %v", path, err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Errorf("GET %s: %d", path, res.StatusCode)
				}
				if d := time.Since(start); d >= timeout {
					t.Errorf("GET %s took %v beside slow clients, want less than the %v timeout", path, d, timeout)
				}
			}
			for _, s := range slow {
				s.closedByServer(t)
			}
		})
	}
}
