package protocol

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
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
	closed   chan int // each connection's number when the peer has closed it
	wg       sync.WaitGroup
}

func newRawPeer(t *testing.T, serve func(c, n int, w io.Writer) bool) (*rawPeer, *url.URL) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	p := &rawPeer{ln: ln, closed: make(chan int, 100)}
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
				defer func() {
					conn.Close()
					p.closed <- c
				}()
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

func testConns() *plainConns {
	return newPlainConns(&net.Dialer{Timeout: 5 * time.Second}, 4, 6, time.Minute)
}

func TestPlainConnsKeepAlive(t *testing.T) {
	peer, u := newRawPeer(t, func(_, _ int, w io.Writer) bool {
		okAnswer(w, `{"n":1}`)
		return true
	})
	p := testConns()
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

func TestPlainConnsServerClosedKept(t *testing.T) {
	// The peer answers one request per connection and closes it without saying so, as
	// a server does whose idle timeout ran out: the kept connection is seen closed
	// before anything is written on it.
	peer, u := newRawPeer(t, func(_, _ int, w io.Writer) bool {
		okAnswer(w, `{}`)
		return false
	})
	p := testConns()
	defer p.closeIdle()
	for i := range 3 {
		if _, err := p.post(context.Background(), u, []byte(`{}`)); err != nil {
			t.Fatalf("post %d: %v", i+1, err)
		}
		<-peer.closed
	}
	if conns, requests := peer.counts(); conns != 3 || requests != 3 {
		t.Errorf("got %d connections and %d requests, want 3 and 3", conns, requests)
	}
}

func TestPlainConnsNeverSentTwice(t *testing.T) {
	// The peer answers the first request; the second it reads and drops the
	// connection without an answer. As with net/http, the error comes back: the
	// request was written out, and the peer may have acted on it.
	peer, u := newRawPeer(t, func(c, n int, w io.Writer) bool {
		if c == 1 && n == 1 {
			okAnswer(w, `{}`)
			return true
		}
		return false
	})
	p := testConns()
	defer p.closeIdle()
	if _, err := p.post(context.Background(), u, []byte(`{}`)); err != nil {
		t.Fatalf("first post: %v", err)
	}
	if _, err := p.post(context.Background(), u, []byte(`{}`)); err == nil {
		t.Fatal("second post: got an answer, want an error")
	}
	if conns, requests := peer.counts(); conns != 1 || requests != 2 {
		t.Errorf("got %d connections and %d requests, want 1 and 2", conns, requests)
	}
}

func TestPlainConnsUnaskedAnswer(t *testing.T) {
	// After its answer, the peer sends a second one nobody asked for: the connection
	// holding it is not reused, so no call reads another's answer.
	read, sent := make(chan struct{}), make(chan struct{})
	peer, u := newRawPeer(t, func(c, n int, w io.Writer) bool {
		if c == 1 && n == 1 {
			okAnswer(w, `{"call":1}`)
			<-read
			okAnswer(w, `{"call":"not yours"}`)
			close(sent)
			return true
		}
		okAnswer(w, `{"call":2}`)
		return true
	})
	p := testConns()
	defer p.closeIdle()
	if raw, err := p.post(context.Background(), u, []byte(`{}`)); err != nil || string(raw) != `{"call":1}` {
		t.Fatalf("first post: got %q, %v", raw, err)
	}
	close(read)
	<-sent
	if raw, err := p.post(context.Background(), u, []byte(`{}`)); err != nil || string(raw) != `{"call":2}` {
		t.Fatalf("second post: got %q, %v, want its own answer", raw, err)
	}
	if conns, _ := peer.counts(); conns != 2 {
		t.Errorf("got %d connections, want 2", conns)
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
		{"endless head", "HTTP/1.1 200 OK\r\nX-A: " + strings.Repeat("a", 2*maxHeadBytes), "", 0, errHeadTooLarge},
		{"broken head", "HTTP/1.1 two hundred\r\n\r\n", "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peer, u := newRawPeer(t, func(_, _ int, w io.Writer) bool {
				io.WriteString(w, tt.answer)
				return true
			})
			p := testConns()
			defer p.closeIdle()
			// Not endless: without its bound, the endless head would wait here.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for i := range 2 {
				raw, err := p.post(ctx, u, []byte(`{}`))
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

// pipeDial dials in memory (net.Pipe, whose deadlines run on a synctest bubble's clock):
// serve gets the server's end of each connection; dials counts them.
func pipeDial(serve func(server net.Conn)) (dial func(context.Context, string, string) (net.Conn, error), dials *int) {
	n := 0
	return func(context.Context, string, string) (net.Conn, error) {
		n++
		client, server := net.Pipe()
		go serve(server)
		return client, nil
	}, &n
}

func TestPlainConnsIdleLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		answer := func(server net.Conn) {
			defer server.Close()
			br := bufio.NewReader(server)
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				okAnswer(server, `{}`)
			}
		}
		p := testConns()
		var dials *int
		p.dial, dials = pipeDial(answer)
		post := func(host string) {
			t.Helper()
			if _, err := p.post(context.Background(), &url.URL{Scheme: "http", Host: host, Path: "/mcp"}, []byte(`{}`)); err != nil {
				t.Fatalf("post to %s: %v", host, err)
			}
		}
		post("a:1")
		post("a:1")
		if *dials != 1 {
			t.Fatalf("got %d dials, want 1", *dials)
		}
		// Past the idle timeout, a kept connection is closed, not reused.
		time.Sleep(p.idleTimeout)
		post("a:1")
		if *dials != 2 {
			t.Fatalf("got %d dials after the idle timeout, want 2", *dials)
		}
		// Calls to other hosts sweep out the connections idle too long.
		time.Sleep(p.idleTimeout)
		post("b:1")
		if _, ok := p.idle["a:1"]; ok || p.idleAll != 1 {
			t.Errorf("after the sweep: idle %v (%d in all), want only b:1's", p.idle, p.idleAll)
		}
		// At most maxIdle wait per host, maxIdleAll in all.
		var got []*plainConn
		for _, host := range []string{"c:1", "c:1", "c:1", "c:1", "c:1", "d:1", "d:1", "d:1"} {
			client, server := net.Pipe()
			go answer(server)
			c := &plainConn{conn: client}
			got = append(got, c)
			p.put(host, c)
		}
		if len(p.idle["c:1"]) != p.maxIdle || p.idleAll != p.maxIdleAll {
			t.Errorf("got %d idle for c:1 and %d in all, want %d and %d", len(p.idle["c:1"]), p.idleAll, p.maxIdle, p.maxIdleAll)
		}
		p.closeIdle()
		if len(p.idle) != 0 || p.idleAll != 0 {
			t.Errorf("closeIdle left %v", p.idle)
		}
		for i, c := range got {
			if _, err := c.conn.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("connection %d: write got %v, want it closed", i, err)
			}
		}
	})
}

func TestPlainConnsHangs(t *testing.T) {
	// The peer reads the request, sends part of an answer and stops: the call ends at
	// its deadline, or when cancelled, with the context's error.
	for name, partial := range map[string]string{
		"before any byte": "",
		"mid head":        "HTTP/1.1 200 OK\r\nContent-Le",
		"mid body":        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"a",
		"mid chunk":       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a",
		"close-delimited": "HTTP/1.0 200 OK\r\n\r\n{\"a\":",
	} {
		for _, cancelled := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cancelled=%v", name, cancelled), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					p := testConns()
					p.dial, _ = pipeDial(func(server net.Conn) {
						defer server.Close()
						br := bufio.NewReader(server)
						req, err := http.ReadRequest(br)
						if err != nil {
							return
						}
						io.Copy(io.Discard, req.Body)
						io.WriteString(server, partial)
						br.ReadByte() // until the client closes its end
					})
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					want, after := error(context.DeadlineExceeded), 5*time.Second
					if cancelled {
						time.AfterFunc(2*time.Second, cancel)
						want, after = context.Canceled, 2*time.Second
					}
					start := time.Now()
					_, err := p.post(ctx, &url.URL{Scheme: "http", Host: "a:1", Path: "/mcp"}, []byte(`{}`))
					if !errors.Is(err, want) {
						t.Errorf("got %v, want %v", err, want)
					}
					if d := time.Since(start); d != after {
						t.Errorf("returned after %v, want %v", d, after)
					}
					if len(p.idle) != 0 {
						t.Errorf("the connection was kept: %v", p.idle)
					}
				})
			})
		}
	}
}
