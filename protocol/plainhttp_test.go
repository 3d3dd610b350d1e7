package protocol

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawPeer is an HTTP peer written on bare TCP, so a test says byte for byte what each
// connection gets: serve is called with every request read on connection c (counting
// connections from 1) as its nth request, and returns false to close the connection.
type rawPeer struct {
	ln       net.Listener
	mu       sync.Mutex
	conns    int
	requests int
	lastHead *http.Request
	lastBody string
	wg       sync.WaitGroup
}

func newRawPeer(t *testing.T, serve func(c, n int, w io.Writer) bool) (*rawPeer, *url.URL) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	p := &rawPeer{ln: ln}
	p.wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns++
			c := p.conns
			p.mu.Unlock()
			p.wg.Go(func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for n := 1; ; n++ {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					body, err := io.ReadAll(req.Body)
					if err != nil {
						return
					}
					p.mu.Lock()
					p.lastHead, p.lastBody = req, string(body)
					p.requests++
					p.mu.Unlock()
					if !serve(c, n, conn) {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p, &url.URL{Scheme: "http", Host: ln.Addr().String(), Path: "/mcp"}
}

func (p *rawPeer) counts() (conns, requests int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns, p.requests
}

// okAnswer is a keep-alive 200 answer with body b.
func okAnswer(w io.Writer, b string) {
	io.WriteString(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(b))+"\r\n\r\n"+b)
}

func newPlainConns() *plainConns {
	return &plainConns{dialer: net.Dialer{Timeout: 5 * time.Second}, maxIdle: 4, idleTimeout: time.Minute}
}

func TestPlainConnsKeepAlive(t *testing.T) {
	peer, u := newRawPeer(t, func(_, _ int, w io.Writer) bool {
		okAnswer(w, `{"n":1}`)
		return true
	})
	p := newPlainConns()
	defer p.closeIdle()
	for range 5 {
		raw, err := p.post(context.Background(), u, []byte(`{"a":1}`))
		if err != nil || string(raw) != `{"n":1}` {
			t.Fatalf("post: got %q, %v", raw, err)
		}
	}
	if conns, requests := peer.counts(); conns != 1 || requests != 5 {
		t.Errorf("got %d connections for %d requests, want 1 for 5", conns, requests)
	}
	if peer.lastHead.Host != u.Host || peer.lastHead.Header.Get("Content-Type") != "application/json" || peer.lastHead.ContentLength != 7 || peer.lastBody != `{"a":1}` {
		t.Errorf("got request %+v with body %q", peer.lastHead, peer.lastBody)
	}
}

func TestPlainConnsStaleConnection(t *testing.T) {
	// The peer answers one request per connection and closes it without saying so, as
	// a server does whose idle timeout ran out: the next call finds its kept connection
	// dead and goes again, once, on a new one.
	peer, u := newRawPeer(t, func(_, _ int, w io.Writer) bool {
		okAnswer(w, `{}`)
		return false
	})
	p := newPlainConns()
	defer p.closeIdle()
	for i := range 3 {
		if _, err := p.post(context.Background(), u, []byte(`{}`)); err != nil {
			t.Fatalf("post %d: %v", i+1, err)
		}
	}
	if conns, requests := peer.counts(); conns != 3 || requests != 3 {
		t.Errorf("got %d connections and %d requests, want 3 and 3", conns, requests)
	}
}

func TestPlainConnsRetryOnce(t *testing.T) {
	// The first connection answers its first request; after that every request is
	// read and the connection dropped without an answer.
	peer, u := newRawPeer(t, func(c, n int, w io.Writer) bool {
		if c == 1 && n == 1 {
			okAnswer(w, `{}`)
			return true
		}
		return false
	})
	p := newPlainConns()
	defer p.closeIdle()
	if _, err := p.post(context.Background(), u, []byte(`{}`)); err != nil {
		t.Fatalf("first post: %v", err)
	}
	// Dropped on the kept connection, then on a new one: the error comes back.
	_, err := p.post(context.Background(), u, []byte(`{}`))
	if err == nil {
		t.Fatal("second post: got an answer, want an error")
	}
	if conns, requests := peer.counts(); conns != 2 || requests != 3 {
		t.Errorf("got %d connections and %d requests, want 2 and 3 (one retry on a new connection)", conns, requests)
	}
	// A new connection that drops the call is not retried.
	p.closeIdle()
	if _, err := p.post(context.Background(), u, []byte(`{}`)); err == nil {
		t.Fatal("third post: got an answer, want an error")
	}
	if conns, requests := peer.counts(); conns != 3 || requests != 4 {
		t.Errorf("got %d connections and %d requests, want 3 and 4", conns, requests)
	}
}

func TestPlainConnsAnswersNotKept(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		body   string
		status int
		err    error
	}{
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", "{}", 200, nil},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", "{}", 200, nil},
		{"chunked then extra bytes", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n1\r\n}\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n", "{}", 200, nil},
		{"informational first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", "{}", 200, nil},
		{"switching protocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", "", 0, nil},
		{"error status", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n\r\n", "", 503, nil},
		{"too large", "HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(MaxBodyBytes+1) + "\r\n\r\n" + strings.Repeat(" ", MaxBodyBytes+1), "", 0, ErrBadResponse},
		{"broken head", "HTTP/1.1 two hundred\r\n\r\n", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peer, u := newRawPeer(t, func(_, _ int, w io.Writer) bool {
				io.WriteString(w, tt.answer)
				return true
			})
			p := newPlainConns()
			defer p.closeIdle()
			for i := range 2 {
				raw, err := p.post(context.Background(), u, []byte(`{}`))
				var se *StatusError
				switch {
				case tt.status == 200:
					if err != nil || string(raw) != tt.body {
						t.Fatalf("post %d: got %q, %v, want %q", i+1, raw, err, tt.body)
					}
				case tt.status != 0:
					if !errors.As(err, &se) || se.Code != tt.status {
						t.Fatalf("post %d: got %v, want status %d", i+1, err, tt.status)
					}
				case tt.err != nil:
					if !errors.Is(err, tt.err) {
						t.Fatalf("post %d: got %v, want %v", i+1, err, tt.err)
					}
				default:
					if err == nil {
						t.Fatalf("post %d: got no error", i+1)
					}
				}
			}
			if tt.name == "error status" || tt.name == "informational first" {
				// A complete answer keeps its connection, whatever its status.
				if conns, _ := peer.counts(); conns != 1 {
					t.Errorf("got %d connections, want 1", conns)
				}
				return
			}
			if conns, requests := peer.counts(); conns != 2 || requests != 2 {
				t.Errorf("got %d connections and %d requests, want 2 and 2: the answer ends its connection", conns, requests)
			}
		})
	}
}

func TestPlainConnsIdleLimits(t *testing.T) {
	peer, u := newRawPeer(t, func(_, _ int, w io.Writer) bool {
		okAnswer(w, `{}`)
		return true
	})
	p := newPlainConns()
	p.idleTimeout = 0 // every kept connection is too old to reuse
	for range 3 {
		if _, err := p.post(context.Background(), u, []byte(`{}`)); err != nil {
			t.Fatalf("post: %v", err)
		}
	}
	if conns, _ := peer.counts(); conns != 3 {
		t.Errorf("got %d connections, want 3: none reused past the idle timeout", conns)
	}
	// At most maxIdle wait per host.
	p.idleTimeout = time.Minute
	var got []*plainConn
	for range p.maxIdle + 2 {
		pc, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		c := &plainConn{conn: pc}
		got = append(got, c)
		p.put(u.Host, c)
	}
	if n := len(p.idle[u.Host]); n != p.maxIdle {
		t.Errorf("got %d idle connections, want %d", n, p.maxIdle)
	}
	p.closeIdle()
	if len(p.idle) != 0 {
		t.Errorf("closeIdle left %d hosts", len(p.idle))
	}
	for i, c := range got {
		if _, err := c.conn.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("connection %d: write got %v, want it closed", i, err)
		}
	}
}
