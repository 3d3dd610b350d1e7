package league

import (
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

// slowGuard bounds how long a test waits for the server to cut a slow connection off, or
// to answer another client meanwhile: a guard against a hang, far past the timeouts, not
// a measure. Every trickle lasts longer, so that only a timeout closes the connection
// before it.
const slowGuard = 10 * time.Second

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
	conn, err := net.DialTimeout("tcp", addr, slowGuard)
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
// that has not happened slowGuard after the connection opened.
func (s *slowConn) closedByServer(t *testing.T) {
	t.Helper()
	_ = s.conn.SetReadDeadline(s.opened.Add(slowGuard))
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
// other clients are served beside them.
//
// Neither half measures the wall clock against the timeouts, which a loaded machine
// would make fail: a server whose timeouts outlast the test (patient) answers other
// clients while eight slow connections hang on it, so those answers did not wait for
// the slow ones to go; a server with 200 ms timeouts (strict) closes slow connections
// whose trickle would go on for longer than slowGuard, so only a timeout closes them in
// time.
func TestSlowClientsAreCutOff(t *testing.T) {
	const timeout = 200 * time.Millisecond
	h := newHarness(t, harnessOptions{})
	strict := strings.TrimPrefix(h.serveHTTP(httpserve.Timeouts{ReadHeader: timeout, Read: timeout, Write: timeout, Idle: timeout}), "http://")
	patient := h.serveHTTP(httpserve.Timeouts{ReadHeader: time.Hour, Read: time.Hour, Write: time.Hour, Idle: time.Hour})
	// 20 ms a byte: the headers never end, and the body would take over 20 s.
	body := `{"jsonrpc":"2.0","method":"league.handle","id":1,"params":{"envelope":{"protocol":"league.v2"}}}` + strings.Repeat(" ", 1000)
	if trickled := time.Duration(len(body)) * 20 * time.Millisecond; trickled <= 2*slowGuard {
		t.Fatalf("the body trickles for %v only, want more than twice slowGuard", trickled)
	}
	tests := []struct {
		name, start, trickle string
	}{
		{"headers byte by byte", "", "POST /mcp HTTP/1.1\r\nHost: league\r\nContent-Type: application/json\r\nX-Padding: " + strings.Repeat("x", 100)},
		{"body byte by byte", "POST /mcp HTTP/1.1\r\nHost: league\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n", body},
		{"idle after a request", "GET /health HTTP/1.1\r\nHost: league\r\n\r\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Other clients are served while the slow connections hang on.
			for range 8 {
				s := openSlow(t, strings.TrimPrefix(patient, "http://"), tc.start, tc.trickle)
				defer s.close()
			}
			client := &http.Client{Timeout: slowGuard, Transport: &http.Transport{DisableKeepAlives: true}}
			for _, path := range []string{"/health", "/status", "/health"} {
				res, err := client.Get(patient + path)
				if err != nil {
					t.Fatalf("GET %s beside slow clients: %v", path, err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					t.Errorf("GET %s: %d", path, res.StatusCode)
				}
			}
			// The slow connections are cut off after the timeouts.
			var slow []*slowConn
			for range 8 {
				s := openSlow(t, strict, tc.start, tc.trickle)
				defer s.close()
				slow = append(slow, s)
			}
			for _, s := range slow {
				s.closedByServer(t)
			}
		})
	}
}
