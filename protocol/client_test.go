package protocol_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentleague/agentleague/protocol"
)

// fakePeer is an HTTP peer that keeps every request body and answers with answer(n, req),
// n counting requests from 1.
type fakePeer struct {
	t      testing.TB
	mu     sync.Mutex
	bodies [][]byte
	answer func(n int, req protocol.Request, w http.ResponseWriter, r *http.Request)
}

func newFakePeer(t testing.TB, answer func(n int, req protocol.Request, w http.ResponseWriter, r *http.Request)) (*fakePeer, *httptest.Server) {
	p := &fakePeer{t: t, answer: answer}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv
}

// pipePeerURL is where a client of newPipePeer calls: a loopback URL, as plain http must
// be, whose connections are in memory whatever its port.
const pipePeerURL = "http://127.0.0.1:1/mcp"

// newPipePeer is newFakePeer served over net.Pipe to the client it returns, for a test
// inside a testing/synctest bubble: the pipes block durably, so the bubble's fake clock
// runs only while both sides wait, and a call's deadline falls at its time exactly,
// however slow the machine. The server and the client end with t.
func newPipePeer(t *testing.T, answer func(n int, req protocol.Request, w http.ResponseWriter, r *http.Request)) (*fakePeer, *protocol.Client) {
	p := &fakePeer{t: t, answer: answer}
	ln := &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
	srv := &http.Server{Handler: p}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	c := newClient(t, nil)
	protocol.SetDial(c, ln.dial)
	return p, c
}

// pipeListener accepts the server ends of the pipes its dial makes.
type pipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

func (p *fakePeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body []byte
	var req protocol.Request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		p.t.Errorf("peer: decode request: %v", err)
		return
	}
	body, _ = json.Marshal(req)
	p.mu.Lock()
	p.bodies = append(p.bodies, body)
	n := len(p.bodies)
	p.mu.Unlock()
	p.answer(n, req, w, r)
}

func (p *fakePeer) requests() []protocol.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]protocol.Request, len(p.bodies))
	for i, b := range p.bodies {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			p.t.Fatalf("decode kept request: %v", err)
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// answerResult answers with a valid HEARTBEAT_RESPONSE.
func answerResult(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
	return func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, protocol.Response{JSONRPC: "2.0", Result: heartbeatAnswer(t, req.Params), ID: req.ID})
	}
}

// answerError answers with reason.
func answerError(reason protocol.Reason) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
	return func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, protocol.Response{JSONRPC: "2.0", Error: protocol.Errorf(reason, "no"), ID: req.ID})
	}
}

func newClient(t testing.TB, rec protocol.Recorder) *protocol.Client {
	c := protocol.NewClient(validator(t), rec)
	t.Cleanup(c.Close)
	return c
}

var quickRetry = protocol.RetryPolicy{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Reasons: []protocol.Reason{protocol.ReasonRateLimited}}

var unexplainedRetry = protocol.RetryPolicy{Attempts: 3, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Unexplained: true}

// answerForeign refuses as the Python League Manager does: its own code, no reason.
func answerForeign(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, protocol.Response{JSONRPC: "2.0", Error: &protocol.Error{Code: 4019, Message: "At least one referee must be registered before players can register"}, ID: req.ID})
}

func TestClientCall(t *testing.T) {
	rec := &recorder{}
	srv := serve(t, echoHandler(t), nil)
	c := newClient(t, rec)
	m := heartbeat(t)
	ans, err := c.Call(context.Background(), srv.URL, m, protocol.CallOptions{Timeout: 5 * time.Second, Retry: quickRetry, Peer: protocol.SenderLeagueManager})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if ans.Envelope.MessageType != protocol.HeartbeatResponse || ans.Envelope.ConversationID != m.Envelope.ConversationID {
		t.Errorf("got %s %s, want %s %s", ans.Envelope.MessageType, ans.Envelope.ConversationID, protocol.HeartbeatResponse, m.Envelope.ConversationID)
	}
	exs := rec.exchanges()
	if len(exs) != 1 {
		t.Fatalf("got %d recorded exchanges, want 1", len(exs))
	}
	ex := exs[0]
	if ex.Inbound || ex.Peer != protocol.SenderLeagueManager || ex.ConversationID != m.Envelope.ConversationID || ex.Request == nil || ex.Response == nil {
		t.Errorf("got exchange %+v, want an outbound one to league_manager with request and response", ex)
	}
}

func TestClientRetries(t *testing.T) {
	tests := []struct {
		name         string
		answer       func(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request)
		retry        *protocol.RetryPolicy // quickRetry when nil
		wantRequests int
		wantReason   protocol.Reason
		wantStatus   int
		wantOK       bool
	}{
		{name: "error without a reason", answer: func(testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return answerForeign
		}, wantRequests: 1},
		{name: "error without a reason, unexplained errors retried", answer: func(testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return answerForeign
		}, retry: &unexplainedRetry, wantRequests: 3},
		{name: "listed reason until attempts run out", answer: func(testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return answerError(protocol.ReasonRateLimited)
		}, wantRequests: 3, wantReason: protocol.ReasonRateLimited},
		{name: "listed reason then success", answer: func(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(n int, req protocol.Request, w http.ResponseWriter, r *http.Request) {
				if n < 3 {
					answerError(protocol.ReasonRateLimited)(n, req, w, r)
					return
				}
				answerResult(t)(n, req, w, r)
			}
		}, wantRequests: 3, wantOK: true},
		{name: "unlisted reason", answer: func(testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return answerError(protocol.ReasonUnauthorized)
		}, wantRequests: 1, wantReason: protocol.ReasonUnauthorized},
		{name: "http 503", answer: func(testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, _ protocol.Request, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		}, wantRequests: 3, wantStatus: http.StatusServiceUnavailable},
		{name: "http 413", answer: func(testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, _ protocol.Request, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(http.StatusRequestEntityTooLarge)
			}
		}, wantRequests: 1, wantStatus: http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peer, srv := newFakePeer(t, tt.answer(t))
			c := newClient(t, nil)
			m := heartbeat(t)
			retry := quickRetry
			if tt.retry != nil {
				retry = *tt.retry
			}
			ans, err := c.Call(context.Background(), srv.URL, m, protocol.CallOptions{Timeout: 5 * time.Second, Retry: retry})
			if tt.wantOK {
				if err != nil || ans == nil {
					t.Fatalf("got %v, %v, want an answer", ans, err)
				}
			} else if err == nil {
				t.Fatalf("got answer %+v, want an error", ans)
			}
			if got := protocol.ReasonOf(err); got != tt.wantReason {
				t.Errorf("got reason %q, want %q (%v)", got, tt.wantReason, err)
			}
			var se *protocol.StatusError
			if tt.wantStatus != 0 && (!errors.As(err, &se) || se.Code != tt.wantStatus) {
				t.Errorf("got %v, want http status %d", err, tt.wantStatus)
			}
			reqs := peer.requests()
			if len(reqs) != tt.wantRequests {
				t.Fatalf("got %d requests, want %d", len(reqs), tt.wantRequests)
			}
			// Every attempt is the same call: same JSON-RPC id, same conversation.
			for i, r := range reqs {
				if string(r.ID) != string(reqs[0].ID) {
					t.Errorf("attempt %d: got id %s, want %s", i+1, r.ID, reqs[0].ID)
				}
				if r.Params == nil || r.Params.Envelope.ConversationID != m.Envelope.ConversationID {
					t.Errorf("attempt %d: got params %+v, want conversation %s", i+1, r.Params, m.Envelope.ConversationID)
				}
			}
		})
	}
}

func TestClientRetriesTransportFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	if err := ln.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	rec := &recorder{}
	c := newClient(t, rec)
	m := heartbeat(t)
	_, err = c.Call(context.Background(), url, m, protocol.CallOptions{Timeout: 5 * time.Second, Retry: quickRetry})
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("got %v, want a connection error", err)
	}
	exs := rec.exchanges()
	if len(exs) != quickRetry.Attempts {
		t.Fatalf("got %d attempts, want %d", len(exs), quickRetry.Attempts)
	}
	for i, ex := range exs {
		if ex.Response != nil || string(ex.Request) != string(exs[0].Request) || ex.ConversationID != m.Envelope.ConversationID {
			t.Errorf("attempt %d: got %+v, want the same request and no response", i+1, ex)
		}
	}
}

// Each attempt has Timeout to itself. On fake time (synctest, over pipes): on the wall
// clock a loaded machine made the second attempt miss its 50 ms too, and a third one
// came ("got 3 requests, want 2").
func TestClientTimeoutPerAttempt(t *testing.T) {
	const timeout = 50 * time.Millisecond
	// The first request is never answered: its attempt ends at its deadline, which
	// closes the connection and ends the request's context.
	block := func(t *testing.T) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
		return func(n int, req protocol.Request, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				<-r.Context().Done()
				return
			}
			answerResult(t)(n, req, w, r)
		}
	}
	t.Run("single attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			_, c := newPipePeer(t, block(t))
			start := time.Now()
			_, err := c.Call(context.Background(), pipePeerURL, heartbeat(t), protocol.CallOptions{Timeout: timeout, Retry: protocol.RetryPolicy{Attempts: 1}})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("got %v, want context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d != timeout {
				t.Errorf("the call ended after %v, want its timeout %v", d, timeout)
			}
		})
	})
	t.Run("second attempt has its own deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			peer, c := newPipePeer(t, block(t))
			start := time.Now()
			ans, err := c.Call(context.Background(), pipePeerURL, heartbeat(t), protocol.CallOptions{Timeout: timeout, Retry: quickRetry})
			if err != nil || ans == nil {
				t.Fatalf("got %v, %v, want the second attempt's answer", ans, err)
			}
			if got := len(peer.requests()); got != 2 {
				t.Errorf("got %d requests, want 2", got)
			}
			// The first attempt's timeout and one backoff of quickRetry (at most 2 ms).
			if d := time.Since(start); d < timeout || d > timeout+quickRetry.MaxBackoff {
				t.Errorf("the answer came after %v, want %v and a backoff", d, timeout)
			}
		})
	})
}

// A deadline that cuts short the attempt after a refusal still names the refusal, which
// says more than the cut dial or read, and leaves the call's reason empty: the deadline
// ended it. CI once saw "dial tcp: i/o timeout" instead of NO_REFEREE_REGISTERED.
//
// On fake time (synctest, over pipes): on the wall clock a loaded machine could spend
// the whole 100 ms before the first refusal came back.
func TestClientDeadlineAfterRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		peer, c := newPipePeer(t, func(n int, req protocol.Request, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				answerError(protocol.ReasonRateLimited)(n, req, w, r)
				return
			}
			<-r.Context().Done()
		})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := c.Call(ctx, pipePeerURL, heartbeat(t), protocol.CallOptions{Timeout: time.Minute, Retry: protocol.RetryPolicy{
			Attempts: 10, Backoff: time.Millisecond, Reasons: []protocol.Reason{protocol.ReasonRateLimited},
		}})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want context.DeadlineExceeded", err)
		}
		if !strings.Contains(err.Error(), "the peer last refused") || !strings.Contains(err.Error(), string(protocol.ReasonRateLimited)) {
			t.Errorf("got %q, want it to name the refusal %s", err, protocol.ReasonRateLimited)
		}
		if r := protocol.ReasonOf(err); r != "" {
			t.Errorf("got reason %q, want none: the deadline ended the call", r)
		}
		if got := len(peer.requests()); got != 2 {
			t.Errorf("got %d requests, want the refused one and the one the deadline cut", got)
		}
	})
}

func TestClientCallerContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 1)
	peer, srv := newFakePeer(t, func(_ int, _ protocol.Request, _ http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	c := newClient(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := c.Call(ctx, srv.URL, heartbeat(t), protocol.CallOptions{Retry: protocol.RetryPolicy{Attempts: 5, Backoff: time.Millisecond}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if got := len(peer.requests()); got != 1 {
		t.Errorf("got %d requests, want 1: a cancelled call is not retried", got)
	}
}

func TestClientBadResponse(t *testing.T) {
	tests := []struct {
		name   string
		answer func(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request)
	}{
		{name: "wrong id", answer: func(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, protocol.Response{JSONRPC: "2.0", Result: heartbeatAnswer(t, req.Params), ID: json.RawMessage(`"other"`)})
			}
		}},
		{name: "wrong jsonrpc", answer: func(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, protocol.Response{JSONRPC: "1.0", Result: heartbeatAnswer(t, req.Params), ID: req.ID})
			}
		}},
		{name: "invalid result", answer: func(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
				a := heartbeatAnswer(t, req.Params)
				a.Payload = json.RawMessage(`{"status":"maybe"}`)
				writeJSON(w, protocol.Response{JSONRPC: "2.0", Result: a, ID: req.ID})
			}
		}},
		// Judged as sent: a typed decode would drop the member and hide it.
		{name: "unknown envelope member", answer: func(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
				raw, err := json.Marshal(protocol.Response{JSONRPC: "2.0", Result: heartbeatAnswer(t, req.Params), ID: req.ID})
				if err != nil {
					t.Error(err)
				}
				_, _ = w.Write(bytes.Replace(raw, []byte(`"envelope":{`), []byte(`"envelope":{"colour":"red",`), 1))
			}
		}},
		{name: "no result", answer: func(testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, map[string]any{"jsonrpc": "2.0", "id": req.ID})
			}
		}},
		{name: "not json", answer: func(testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, _ protocol.Request, w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte("<html>"))
			}
		}},
		{name: "other conversation", answer: func(t testing.TB) func(int, protocol.Request, http.ResponseWriter, *http.Request) {
			return func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
				a := heartbeatAnswer(t, req.Params)
				a.Envelope.ConversationID = "3b30ff6a-1474-4b42-acdc-4d7668dd0bed"
				writeJSON(w, protocol.Response{JSONRPC: "2.0", Result: a, ID: req.ID})
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			peer, srv := newFakePeer(t, tt.answer(t))
			c := newClient(t, nil)
			// A malformed answer would be malformed again: it is never retried.
			_, err := c.Call(context.Background(), srv.URL, heartbeat(t), protocol.CallOptions{Timeout: 5 * time.Second, Retry: quickRetry})
			if !errors.Is(err, protocol.ErrBadResponse) {
				t.Errorf("got %v, want ErrBadResponse", err)
			}
			if got := len(peer.requests()); got != 1 {
				t.Errorf("got %d requests, want 1", got)
			}
		})
	}
}

// TestClientAnswerPayload: the answer carries what the peer wrote, Decode reads it, and
// a payload replaced afterwards is what Decode reads and checks.
func TestClientAnswerPayload(t *testing.T) {
	tests := []struct {
		name   string
		answer func(req protocol.Request) any
	}{
		{name: "plain", answer: func(req protocol.Request) any {
			return protocol.Response{JSONRPC: "2.0", Result: heartbeatAnswer(t, req.Params), ID: req.ID}
		}},
		// A member JSON-RPC does not define is ignored, as before.
		{name: "unknown member", answer: func(req protocol.Request) any {
			return map[string]any{"jsonrpc": "2.0", "result": heartbeatAnswer(t, req.Params), "id": req.ID, "x-trace": 7}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFakePeer(t, func(_ int, req protocol.Request, w http.ResponseWriter, _ *http.Request) {
				writeJSON(w, tt.answer(req))
			})
			ans, err := newClient(t, nil).Call(context.Background(), srv.URL, heartbeat(t), protocol.CallOptions{Timeout: 5 * time.Second})
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			var got protocol.HeartbeatAnswer
			if err := ans.Decode(&got); err != nil || got.Status != "acknowledged" || got.LeaseMS != 15000 {
				t.Fatalf("Decode: got %+v, %v; want acknowledged, 15000", got, err)
			}
			ans.Payload = json.RawMessage(`{"status":"acknowledged","lease_ms":900}`)
			if err := ans.Decode(&got); err != nil || got.LeaseMS != 900 {
				t.Errorf("Decode of a replaced payload: got %+v, %v; want lease_ms 900", got, err)
			}
			// Checked against its own members: the first payload had none in the wrong case.
			ans.Payload = json.RawMessage(`{"status":"acknowledged","LEASE_MS":900}`)
			if err := ans.Decode(&got); err == nil {
				t.Errorf("Decode of a payload with LEASE_MS: got %+v, want an error", got)
			}
		})
	}
}

func TestClientRefusesInvalidMessage(t *testing.T) {
	bad := heartbeat(t)
	bad.Envelope.AuthToken = ""
	badPayload := heartbeat(t)
	badPayload.Payload = json.RawMessage(`{"active_matches":"m1"}`)
	for _, tt := range []struct {
		name string
		m    *protocol.Message
	}{{"missing auth_token", bad}, {"bad payload", badPayload}, {"nil", nil}} {
		t.Run(tt.name, func(t *testing.T) {
			peer, srv := newFakePeer(t, answerResult(t))
			rec := &recorder{}
			c := newClient(t, rec)
			_, err := c.Call(context.Background(), srv.URL, tt.m, protocol.CallOptions{Retry: quickRetry})
			if err == nil {
				t.Fatal("got nil error, want a refusal")
			}
			if n := len(peer.requests()); n != 0 {
				t.Errorf("got %d requests at the peer, want 0", n)
			}
			if n := len(rec.exchanges()); n != 0 {
				t.Errorf("got %d recorded exchanges, want 0", n)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		name string
		p    protocol.RetryPolicy
		// want returns the upper bound d of retry n; every delay is in [d/2, d].
		want func(n int) time.Duration
		maxN int
	}{
		{name: "doubling capped", p: protocol.RetryPolicy{Backoff: 10 * time.Millisecond, MaxBackoff: time.Second}, maxN: 12,
			want: func(n int) time.Duration { return min(10*time.Millisecond<<(n-1), time.Second) }},
		{name: "uncapped", p: protocol.RetryPolicy{Backoff: time.Millisecond}, maxN: 10,
			want: func(n int) time.Duration { return time.Millisecond << (n - 1) }},
		{name: "cap below base", p: protocol.RetryPolicy{Backoff: time.Second, MaxBackoff: 100 * time.Millisecond}, maxN: 4,
			want: func(int) time.Duration { return 100 * time.Millisecond }},
		{name: "no base", p: protocol.RetryPolicy{MaxBackoff: time.Second}, maxN: 4,
			want: func(int) time.Duration { return 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for n := 1; n <= tt.maxN; n++ {
				d := tt.want(n)
				for range 200 {
					got := protocol.Backoff(tt.p, n)
					if got < d/2 || got > d {
						t.Fatalf("retry %d: got %v, want within [%v, %v]", n, got, d/2, d)
					}
				}
			}
		})
	}
	t.Run("saturates without overflow", func(t *testing.T) {
		p := protocol.RetryPolicy{Backoff: 100 * time.Millisecond}
		for _, n := range []int{40, 64, 65, 200, 1000} {
			if got := protocol.Backoff(p, n); got < math.MaxInt64/2 {
				t.Errorf("retry %d: got %v, want at least %v", n, got, time.Duration(math.MaxInt64/2))
			}
		}
		capped := protocol.RetryPolicy{Backoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second}
		for _, n := range []int{40, 64, 65, 1000} {
			if got := protocol.Backoff(capped, n); got < time.Second || got > 2*time.Second {
				t.Errorf("capped retry %d: got %v, want within [1s, 2s]", n, got)
			}
		}
	})
}

// Calls to one peer, http or https, share kept-alive connections.
func TestClientReusesConnections(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	srv := httptest.NewUnstartedServer(protocol.NewServer(echoHandler(t), validator(t), nil, zerolog.Nop()))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	c := newClient(t, nil)
	for i := range 5 {
		if _, err := c.Call(context.Background(), srv.URL, heartbeat(t), protocol.CallOptions{Timeout: 5 * time.Second}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if conns != 1 {
		t.Errorf("got %d connections for 5 calls, want 1", conns)
	}
}

// An answer larger than MaxBodyBytes is a bad response, never retried, whether its
// length is announced or not.
func TestClientRefusesOversizedAnswer(t *testing.T) {
	for _, announced := range []bool{true, false} {
		t.Run(fmt.Sprintf("announced=%v", announced), func(t *testing.T) {
			peer, srv := newFakePeer(t, func(_ int, _ protocol.Request, w http.ResponseWriter, _ *http.Request) {
				if announced {
					w.Header().Set("Content-Length", strconv.Itoa(protocol.MaxBodyBytes+1))
				}
				_, _ = io.WriteString(w, strings.Repeat(" ", protocol.MaxBodyBytes+1))
			})
			_, err := newClient(t, nil).Call(context.Background(), srv.URL, heartbeat(t), protocol.CallOptions{Timeout: 5 * time.Second, Retry: quickRetry})
			if !errors.Is(err, protocol.ErrBadResponse) || !strings.Contains(err.Error(), "larger than 1 MiB") {
				t.Errorf("got %v, want ErrBadResponse: larger than 1 MiB", err)
			}
			if got := len(peer.requests()); got != 1 {
				t.Errorf("got %d requests, want 1", got)
			}
		})
	}
}

// A peer that reads the request, sends part of an answer and stops: the call ends at
// its deadline, or when cancelled, with the context's error. On fake time (synctest,
// over pipes).
func TestClientPeerHangs(t *testing.T) {
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
					c := newClient(t, nil)
					protocol.SetDial(c, func(context.Context, string, string) (net.Conn, error) {
						client, server := net.Pipe()
						go func() {
							defer server.Close()
							br := bufio.NewReader(server)
							req, err := http.ReadRequest(br)
							if err != nil {
								return
							}
							_, _ = io.Copy(io.Discard, req.Body)
							_, _ = io.WriteString(server, partial)
							_, _ = br.ReadByte() // until the client closes its end
						}()
						return client, nil
					})
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					want, after := error(context.DeadlineExceeded), 5*time.Second
					if cancelled {
						time.AfterFunc(2*time.Second, cancel)
						want, after = context.Canceled, 2*time.Second
					}
					start := time.Now()
					_, err := c.Call(ctx, pipePeerURL, heartbeat(t), protocol.CallOptions{Retry: protocol.RetryPolicy{Attempts: 1}})
					if !errors.Is(err, want) {
						t.Errorf("got %v, want %v", err, want)
					}
					if d := time.Since(start); d != after {
						t.Errorf("returned after %v, want %v", d, after)
					}
				})
			})
		}
	}
}
