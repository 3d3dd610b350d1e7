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
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

// plainConns runs plain-http calls in the caller's goroutine on kept-alive connections.
// net/http's Transport hands every request to a writer and a reader goroutine of its
// connection and back; in a league of many small exchanges those hand-offs cost half
// of a client's CPU per round trip (BenchmarkClientCall). The wire format stays
// net/http's: http.ReadResponse reads every answer (chunked, close-delimited, ...).
type plainConns struct {
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)
	maxIdle     int           // idle connections kept per host
	maxIdleAll  int           // idle connections kept in all
	idleTimeout time.Duration // an idle connection older than this is closed, not reused

	mu      sync.Mutex
	idle    map[string][]*plainConn // by host:port, the most recently used last
	idleAll int
	swept   time.Time // when idle connections past idleTimeout were last closed
}

// newPlainConns keeps at most maxIdle idle connections per host, maxIdleAll in all, none
// for longer than idleTimeout.
func newPlainConns(dialer *net.Dialer, maxIdle, maxIdleAll int, idleTimeout time.Duration) *plainConns {
	return &plainConns{dial: dialer.DialContext, maxIdle: maxIdle, maxIdleAll: maxIdleAll, idleTimeout: idleTimeout}
}

// plainConn is one kept-alive connection with its buffers.
type plainConn struct {
	conn      net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
	headLeft  int64 // bytes the answer's head may still take (headLimit)
}

// maxHeadBytes bounds the heads of one answer, informational ones included, as
// net/http's Transport bounds them (MaxResponseHeaderBytes): a hostile server cannot
// make a client read an endless header.
const maxHeadBytes = 1 << 20

var errHeadTooLarge = errors.New("answer head larger than 1 MiB")

// headLimit is what the connection's reader reads through: while an answer's head is
// read, at most headLeft bytes.
type headLimit struct{ pc *plainConn }

func (l headLimit) Read(b []byte) (int, error) {
	if l.pc.headLeft <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(b)) > l.pc.headLeft {
		b = b[:l.pc.headLeft]
	}
	n, err := l.pc.conn.Read(b)
	l.pc.headLeft -= int64(n)
	return n, err
}

// noHeadLimit lifts headLimit while a body is read: MaxBodyBytes bounds it.
const noHeadLimit = 1 << 62

// postRequest is what http.ReadResponse is told the answer is to: a POST.
var postRequest = &http.Request{Method: http.MethodPost}

// post sends body to u (an http URL) and returns the answer's body. As net/http does,
// a request written out is never sent again: a kept connection the server closed is
// noticed before it is used (quiet).
func (p *plainConns) post(ctx context.Context, u *url.URL, body []byte) ([]byte, error) {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	pc := p.get(addr)
	if pc == nil {
		c, err := p.dial(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		pc = &plainConn{conn: c, bw: bufio.NewWriter(c)}
		pc.br = bufio.NewReader(headLimit{pc})
	}
	raw, status, keep, err := pc.roundTrip(ctx, u, body)
	if err != nil {
		pc.conn.Close()
		return nil, err
	}
	if keep {
		p.put(addr, pc)
	} else {
		pc.conn.Close()
	}
	if status != http.StatusOK {
		return nil, &StatusError{Code: status}
	}
	return raw, nil
}

// roundTrip writes one request and reads its answer. keep says whether the connection
// may carry another.
func (pc *plainConn) roundTrip(ctx context.Context, u *url.URL, body []byte) (raw []byte, status int, keep bool, err error) {
	deadline, _ := ctx.Deadline()
	if err := pc.conn.SetDeadline(deadline); err != nil {
		return nil, 0, false, err
	}
	// A cancelled call unblocks at once; the connection is then not reused.
	stop := context.AfterFunc(ctx, func() { pc.conn.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if !stop() {
			keep = false
		}
		// Callers tell a timeout by context.DeadlineExceeded, as net/http reports it. The
		// connection's deadline may pass before the context's timer fires, and the error
		// of a read cut short is not always the deadline's (a header cut in the middle).
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				err = cerr
			} else if !deadline.IsZero() && (errors.Is(err, os.ErrDeadlineExceeded) || !time.Now().Before(deadline)) {
				err = context.DeadlineExceeded
			}
		}
	}()
	head := make([]byte, 0, 160)
	head = append(head, "POST "...)
	head = append(head, u.RequestURI()...)
	head = append(head, " HTTP/1.1\r\nHost: "...)
	head = append(head, u.Host...)
	head = append(head, "\r\nUser-Agent: agentleague\r\nContent-Type: application/json\r\nContent-Length: "...)
	head = strconv.AppendInt(head, int64(len(body)), 10)
	head = append(head, "\r\n\r\n"...)
	pc.bw.Write(head)
	pc.bw.Write(body)
	if err := pc.bw.Flush(); err != nil {
		return nil, 0, false, err
	}
	pc.headLeft = maxHeadBytes
	res, err := http.ReadResponse(pc.br, postRequest)
	// Informational answers (100 Continue, 103 Early Hints) come before the real one,
	// as net/http's Transport skips them; a few at most.
	for skipped := 0; err == nil && res.StatusCode < 200 && res.StatusCode != http.StatusSwitchingProtocols && skipped < 5; skipped++ {
		res, err = http.ReadResponse(pc.br, postRequest)
	}
	if err != nil {
		return nil, 0, false, fmt.Errorf("read response: %w", err)
	}
	if res.StatusCode < 200 {
		return nil, 0, false, fmt.Errorf("read response: unexpected status %d", res.StatusCode)
	}
	pc.headLeft = noHeadLimit
	raw, err = readBody(io.LimitReader(res.Body, MaxBodyBytes+1), res.ContentLength)
	res.Body.Close()
	if err != nil {
		return nil, 0, false, fmt.Errorf("read response: %w", err)
	}
	if len(raw) > MaxBodyBytes {
		return nil, 0, false, fmt.Errorf("%w: response larger than 1 MiB", ErrBadResponse)
	}
	return raw, res.StatusCode, !res.Close && pc.br.Buffered() == 0, nil
}

// get takes the most recently used idle connection to addr that is still fit: not idle
// too long, and neither closed by the server nor holding bytes no call asked for.
func (p *plainConns) get(addr string) *plainConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for conns := p.idle[addr]; len(conns) > 0; conns = p.idle[addr] {
		pc := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		p.idle[addr] = conns[:len(conns)-1]
		p.idleAll--
		if time.Since(pc.idleSince) < p.idleTimeout && quiet(pc.conn) {
			return pc
		}
		pc.conn.Close()
	}
	return nil
}

// put keeps pc for the next call to addr, or closes it when enough wait already.
func (p *plainConns) put(addr string, pc *plainConn) {
	now := time.Now()
	pc.idleSince = now
	p.mu.Lock()
	defer p.mu.Unlock()
	if now.Sub(p.swept) >= time.Second {
		p.sweep(now)
	}
	if len(p.idle[addr]) >= p.maxIdle || p.idleAll >= p.maxIdleAll {
		pc.conn.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*plainConn{}
	}
	p.idle[addr] = append(p.idle[addr], pc)
	p.idleAll++
}

// sweep closes the connections idle for idleTimeout or longer, so that peers no longer
// called do not keep theirs (the oldest come first in each list).
func (p *plainConns) sweep(now time.Time) {
	p.swept = now
	for addr, conns := range p.idle {
		n := 0
		for n < len(conns) && now.Sub(conns[n].idleSince) >= p.idleTimeout {
			conns[n].conn.Close()
			n++
		}
		p.idleAll -= n
		if n == len(conns) {
			delete(p.idle, addr)
		} else if n > 0 {
			p.idle[addr] = slices.Delete(conns, 0, n)
		}
	}
}

// closeIdle closes every idle connection.
func (p *plainConns) closeIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, conns := range p.idle {
		for _, pc := range conns {
			pc.conn.Close()
		}
		delete(p.idle, addr)
	}
	p.idleAll = 0
}
