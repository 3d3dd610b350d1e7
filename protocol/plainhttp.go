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
	"strconv"
	"sync"
	"syscall"
	"time"
)

// plainConns runs plain-http calls in the caller's goroutine on kept-alive connections.
// net/http's Transport hands every request to a writer and a reader goroutine of its
// connection and back; in a league of many small exchanges those hand-offs cost half
// of a client's CPU per round trip (BenchmarkClientCall). The wire format stays
// net/http's: http.ReadResponse reads every answer (chunked, close-delimited, ...).
type plainConns struct {
	dialer      net.Dialer
	maxIdle     int           // idle connections kept per host
	idleTimeout time.Duration // an idle connection older than this is closed, not reused

	mu   sync.Mutex
	idle map[string][]*plainConn // by host:port, the most recently used last
}

// plainConn is one kept-alive connection with its buffers.
type plainConn struct {
	conn      net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	idleSince time.Time
}

// errStaleConn marks a reused connection that the server had closed: nothing of an
// answer came back, so the call is sent again on a new connection.
var errStaleConn = errors.New("kept-alive connection closed by the server")

// postRequest is what http.ReadResponse is told the answer is to: a POST.
var postRequest = &http.Request{Method: http.MethodPost}

// post sends body to u (an http URL) and returns the answer's body.
func (p *plainConns) post(ctx context.Context, u *url.URL, body []byte) ([]byte, error) {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "80")
	}
	for {
		pc, reused := p.get(addr)
		if pc == nil {
			c, err := p.dialer.DialContext(ctx, "tcp", addr)
			if err != nil {
				return nil, err
			}
			pc = &plainConn{conn: c, br: bufio.NewReader(c), bw: bufio.NewWriter(c)}
		}
		raw, status, keep, err := pc.roundTrip(ctx, u, body)
		if err != nil {
			pc.conn.Close()
			// Every attempt of a call carries the same JSON-RPC id, so a receiver that
			// did see this one recognises the second: once, on a fresh connection.
			if reused && errors.Is(err, errStaleConn) && ctx.Err() == nil {
				continue
			}
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
		// Callers tell a timeout by context.DeadlineExceeded, as net/http reports it.
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				err = cerr
			} else if !deadline.IsZero() && errors.Is(err, os.ErrDeadlineExceeded) {
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
		return nil, 0, false, fmt.Errorf("%w: %w", errStaleConn, err)
	}
	if _, err := pc.br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			err = fmt.Errorf("%w: %w", errStaleConn, err)
		}
		return nil, 0, false, err
	}
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
	raw, err = io.ReadAll(io.LimitReader(res.Body, MaxBodyBytes+1))
	res.Body.Close()
	if err != nil {
		return nil, 0, false, fmt.Errorf("read response: %w", err)
	}
	if len(raw) > MaxBodyBytes {
		return nil, 0, false, fmt.Errorf("%w: response larger than 1 MiB", ErrBadResponse)
	}
	return raw, res.StatusCode, !res.Close && pc.br.Buffered() == 0, nil
}

// get takes the most recently used idle connection to addr, closing those idle too long.
func (p *plainConns) get(addr string) (pc *plainConn, reused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for conns := p.idle[addr]; len(conns) > 0; conns = p.idle[addr] {
		pc = conns[len(conns)-1]
		conns[len(conns)-1] = nil
		p.idle[addr] = conns[:len(conns)-1]
		if time.Since(pc.idleSince) < p.idleTimeout {
			return pc, true
		}
		pc.conn.Close()
	}
	return nil, false
}

// put keeps pc for the next call to addr, or closes it when addr has enough waiting.
func (p *plainConns) put(addr string, pc *plainConn) {
	pc.idleSince = time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle[addr]) >= p.maxIdle {
		pc.conn.Close()
		return
	}
	if p.idle == nil {
		p.idle = map[string][]*plainConn{}
	}
	p.idle[addr] = append(p.idle[addr], pc)
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
}
