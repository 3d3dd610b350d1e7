package conform

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// callTimeout bounds every call that is not a move (invitations, game over, probes,
// assignments, calls to a League Manager): seed 004 §7.1's match_join_ack_ms.
const callTimeout = 10 * time.Second

// endpointWait bounds how long an agent's endpoint may take to accept connections
// after it registered (the seed referee registers before it serves).
const endpointWait = 5 * time.Second

// maxDeadlineMS is the largest deadline_ms the schemas allow (ten minutes).
const maxDeadlineMS = 600000

// maxAnswerBytes bounds what a probe reads of an answer, as the protocol client does.
const maxAnswerBytes = protocol.MaxBodyBytes

// session is what a run of the tool is made of: the validator, the HTTP client every
// call goes through, and how it listens and probes endpoints (the network, except in
// tests that run everything in memory on fake time).
type session struct {
	opt  Options
	v    *protocol.Validator
	log  zerolog.Logger
	http *http.Client
	// serve starts an HTTP server of the tool on addr and returns its /mcp URL.
	serve func(addr string, h http.Handler) (string, func(context.Context) error, error)
	// probe connects to an endpoint's host and port, without sending anything.
	probe func(ctx context.Context, endpoint string) error
}

// newSession builds the session of a run on the network.
func newSession(opt Options) (*session, error) {
	v, err := protocol.NewValidator()
	if err != nil {
		return nil, fmt.Errorf("load schemas: %w", err)
	}
	s := &session{opt: opt, v: v, log: opt.Log.With().Str("component", "conform").Logger(), http: &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSClientConfig:     opt.ClientTLS,
		TLSHandshakeTimeout: 5 * time.Second,
		IdleConnTimeout:     10 * time.Second,
	}}}
	s.serve = func(addr string, h http.Handler) (string, func(context.Context) error, error) {
		srv, err := httpserve.Start(addr, h)
		if err != nil {
			return "", nil, err
		}
		return srv.URL(), srv.Shutdown, nil
	}
	s.probe = dialEndpoint
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// check refuses options the run cannot honour, and fills in defaults.
func (s *session) check() error {
	if _, err := game.Default().New(s.opt.Game, nil); err != nil {
		return fmt.Errorf("game %q: %w (have %s)", s.opt.Game, err, strings.Join(game.Default().Types(), ", "))
	}
	if s.opt.Wait <= 0 {
		return errors.New("wait must be positive")
	}
	if s.opt.MoveTimeout < time.Millisecond || s.opt.MoveTimeout > maxDeadlineMS*time.Millisecond {
		return fmt.Errorf("move timeout %s: from 1ms to 10m (the schemas' deadline_ms)", s.opt.MoveTimeout)
	}
	if s.opt.ResultTimeout <= 0 {
		s.opt.ResultTimeout = DefaultResultTimeout
	}
	if s.opt.Grace <= 0 {
		s.opt.Grace = DefaultGrace
	}
	return nil
}

// dialEndpoint opens and closes a TCP connection to the endpoint's host and port.
func dialEndpoint(ctx context.Context, endpoint string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL with a host", endpoint)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return err
	}
	return c.Close()
}

// poll probes endpoint every 50 ms until done says a probe's error settles it, or d
// passes; it reports whether done held, and the last probe's error.
func (s *session) poll(ctx context.Context, endpoint string, d time.Duration, done func(ctx context.Context, err error) bool) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := s.probe(pctx, endpoint)
		pcancel()
		if done(ctx, err) {
			return true, err
		}
		select {
		case <-ctx.Done():
			return false, err
		case <-tick.C:
		}
	}
}

// awaitGone reports whether endpoint refuses connections within d. A connection not
// accepted in time is no proof: a busy server with a full backlog is still there.
func (s *session) awaitGone(ctx context.Context, endpoint string, d time.Duration) bool {
	gone, _ := s.poll(ctx, endpoint, d, func(ctx context.Context, err error) bool {
		var ne net.Error
		timedOut := errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
		return err != nil && !timedOut && ctx.Err() == nil
	})
	return gone
}

// answer is what came back for one request, read leniently so that whatever is wrong
// with it can be told.
type answer struct {
	status  int
	elapsed time.Duration
	// err is set when no answer could be read: refused, reset, the deadline, not sent.
	err     error
	timeout bool
	// id is the answer's JSON-RPC id as sent.
	id json.RawMessage
	// malformed says why the answer is not a JSON-RPC answer to the request ("" if it is).
	malformed string
	result    *protocol.Message
	rpcErr    *protocol.Error
	// violations of the result against the schema of its message type.
	violations []string
}

// gone reports whether no answer came for a reason other than a deadline: the peer is
// no longer there (refused or reset). A run interrupted by its user blames nobody.
func (a *answer) gone() bool {
	return a.err != nil && !a.timeout && !errors.Is(a.err, context.Canceled)
}

// refused reports whether the answer is a JSON-RPC error.
func (a *answer) refused() bool { return a.err == nil && a.rpcErr != nil }

// problem describes an answer that is not a well-framed result, "" otherwise.
func (a *answer) problem() string {
	switch {
	case a.timeout:
		return fmt.Sprintf("no answer within %s", a.elapsed.Round(time.Millisecond))
	case a.err != nil:
		return "no answer: " + shortErr(a.err) + certHint(a.err)
	case a.malformed != "":
		return a.malformed
	case a.rpcErr != nil:
		return "answered with a JSON-RPC error: " + a.rpcErr.Error()
	}
	return ""
}

// describe says what came back, a result included.
func (a *answer) describe() string {
	if p := a.problem(); p != "" {
		return p
	}
	return "answered with a result (" + a.result.Envelope.MessageType + ")"
}

// shortErr keeps the last part of a transport error ("connection refused", "EOF").
func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}

// certHint names the fix when err is a certificate the tool does not trust.
func certHint(err error) string {
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return " (signed by a private CA? trust it with --tls-ca)"
	}
	return ""
}

// truncate cuts s to at most n bytes, on a character boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// snippet is b cut to n bytes for a reason line, on one line.
func snippet(b []byte, n int) string {
	return strings.Join(strings.Fields(truncate(string(b), n)), " ")
}

// recorderFunc adapts a function to protocol.Recorder.
type recorderFunc func(protocol.Exchange) error

// Record implements protocol.Recorder.
func (f recorderFunc) Record(ex protocol.Exchange) error { return f(ex) }

// call sends m to url with the protocol client, up to attempts times while no answer
// comes, and reads the answer. The client judges a strict peer; the bytes it recorded
// let a broken answer be told in detail. It refuses to send a message of the tool that
// breaks its schema when LEAGUE_SELF_CHECK is set: that is a bug of the tool.
func (s *session) call(ctx context.Context, url string, m *protocol.Message, timeout time.Duration, attempts int) *answer {
	var last protocol.Exchange
	// Not judged: the agent's endpoint is its own choice, and the command checked --url.
	c := protocol.NewClientWith(s.v, recorderFunc(func(ex protocol.Exchange) error { last = ex; return nil }), protocol.ClientOptions{HTTP: s.http, Insecure: true})
	start := time.Now()
	res, err := c.Call(ctx, url, m, protocol.CallOptions{Timeout: timeout, Retry: protocol.RetryPolicy{Attempts: attempts, Backoff: 200 * time.Millisecond}})
	a := &answer{elapsed: time.Since(start), status: http.StatusOK, result: res}
	var se *protocol.StatusError
	switch {
	case err == nil:
	case errors.As(err, &a.rpcErr):
	case last.Response != nil:
		var req struct{ ID json.RawMessage }
		_ = json.Unmarshal(last.Request, &req)
		a.result = nil
		s.read(a, last.Response, req.ID)
	case errors.As(err, &se):
		a.status, a.malformed = se.Code, fmt.Sprintf("HTTP status %d, not 200", se.Code)
	case errors.Is(err, protocol.ErrBadResponse):
		a.malformed = "answer larger than 1 MiB"
	default:
		a.err, a.timeout = err, errors.Is(err, context.DeadlineExceeded)
	}
	s.log.Debug().Str("conversation_id", m.Envelope.ConversationID).Str("message_type", m.Envelope.MessageType).
		Str("url", url).Dur("elapsed", a.elapsed).Str("problem", a.problem()).Msg("sent")
	return a
}

// request encodes m as a JSON-RPC request with a fresh id.
func request(m *protocol.Message) (body, id []byte, err error) {
	id, _ = json.Marshal(uuid.NewString())
	body, err = json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: m, ID: id})
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", m.Envelope.MessageType, err)
	}
	return body, id, nil
}

// post sends body as it is, for the probes that send what the protocol client would
// not (unknown types, broken envelopes, bodies over 1 MiB, no JSON at all), and reads
// the answer to the request of JSON-RPC id id (nil: none was sent).
func (s *session) post(ctx context.Context, url string, body, id []byte) *answer {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	start := time.Now()
	a := &answer{}
	var raw []byte
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		var res *http.Response
		if res, err = s.http.Do(req); err == nil {
			a.status = res.StatusCode
			raw, err = io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes+1))
			res.Body.Close()
		}
	}
	a.elapsed = time.Since(start)
	switch {
	case err != nil:
		a.err, a.timeout = err, errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded)
		return a
	case len(raw) > maxAnswerBytes:
		a.malformed = "answer larger than 1 MiB"
		return a
	}
	s.read(a, raw, id)
	if a.status != http.StatusOK && a.malformed == "" {
		a.malformed = fmt.Sprintf("HTTP status %d, not 200", a.status)
	}
	return a
}

// read decodes raw as the JSON-RPC answer to the request of id (nil: no id was sent).
func (s *session) read(a *answer, raw, id []byte) {
	var resp struct {
		JSONRPC *string          `json:"jsonrpc"`
		ID      json.RawMessage  `json:"id"`
		Result  json.RawMessage  `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		a.malformed = "answer is not a JSON-RPC object: " + snippet(raw, 80)
		return
	}
	a.id = resp.ID
	if resp.Error != nil {
		if err := json.Unmarshal(*resp.Error, &a.rpcErr); err != nil || a.rpcErr == nil {
			a.rpcErr, a.malformed = nil, "error member is not a JSON-RPC error object: "+snippet(*resp.Error, 80)
		}
	}
	switch {
	case a.malformed != "":
	case resp.JSONRPC == nil || *resp.JSONRPC != protocol.JSONRPCVersion:
		a.malformed = `answer lacks "jsonrpc": "2.0"`
	case id != nil && !bytes.Equal(bytes.TrimSpace(resp.ID), id):
		a.malformed = fmt.Sprintf("answer id %s is not the request's id %s", snippet(resp.ID, 60), id)
	case len(resp.Result) > 0 && resp.Error != nil:
		a.malformed = "answer has both result and error"
	case len(resp.Result) == 0 && resp.Error == nil:
		a.malformed = "answer has neither result nor error"
	}
	if len(resp.Result) > 0 && a.malformed == "" {
		a.result, a.violations = s.readMessage(resp.Result)
	}
}

// readMessage reads a params or result object: its violations of the schema of its
// message type as "path: message", and what can be read of it member by member, so
// that a member of the wrong type spoils only itself.
func (s *session) readMessage(raw json.RawMessage) (*protocol.Message, []string) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return &protocol.Message{}, []string{"/: not JSON: " + err.Error()}
	}
	var out []string
	for _, vi := range s.v.ValidateParams(v) {
		out = append(out, vi.String())
	}
	obj, _ := v.(map[string]any)
	env, _ := obj["envelope"].(map[string]any)
	str := func(k string) string { s, _ := env[k].(string); return s }
	m := &protocol.Message{Envelope: protocol.Envelope{
		Protocol: str("protocol"), MessageType: str("message_type"), Sender: str("sender"), Timestamp: str("timestamp"),
		ConversationID: str("conversation_id"), AuthToken: str("auth_token"), LeagueID: str("league_id"),
		RoundID: str("round_id"), MatchID: str("match_id"), GameType: str("game_type"),
	}}
	if p, ok := obj["payload"]; ok {
		m.Payload, _ = json.Marshal(p)
	}
	return m, out
}

// received is one request that reached a server of the tool, read leniently.
type received struct {
	msg *protocol.Message
	// violations of params against the schema of its message type.
	violations []string
	// notRequest says why the body is not a JSON-RPC request at all ("" if it is).
	notRequest string
}

// serveRPC is protocol.Server answering as our agents do, refusing what breaks the
// schemas; observe sees every request it answered, refused ones too.
func (s *session) serveRPC(h protocol.Handler, observe func(received), log zerolog.Logger) http.Handler {
	return protocol.NewServer(h, s.v, recorderFunc(func(ex protocol.Exchange) error {
		var req struct {
			JSONRPC any             `json:"jsonrpc"`
			Method  any             `json:"method"`
			Params  json.RawMessage `json:"params"`
		}
		r := received{msg: &protocol.Message{}}
		switch err := json.Unmarshal(ex.Request, &req); {
		case err != nil:
			r.notRequest = "body is not a JSON-RPC request object"
		case len(req.Params) == 0:
			r.notRequest = "request has no params"
		default:
			r.msg, r.violations = s.readMessage(req.Params)
			if req.JSONRPC != protocol.JSONRPCVersion {
				r.notRequest = `request lacks "jsonrpc": "2.0"`
			} else if req.Method != protocol.Method {
				r.notRequest = fmt.Sprintf("method is not %q", protocol.Method)
			}
		}
		env := r.msg.Envelope
		log.Debug().Str("conversation_id", env.ConversationID).Str("message_type", env.MessageType).Str("sender", env.Sender).
			Int("violations", len(r.violations)).Str("not_request", r.notRequest).Msg("received")
		observe(r)
		return nil
	}), log)
}

// message builds a message of the tool with a fresh conversation id.
func message(messageType, sender string, payload any) *protocol.Message {
	m, err := protocol.NewMessage(messageType, sender, payload)
	if err != nil {
		// Every payload of the tool is a map or struct of plain values.
		panic(fmt.Sprintf("conform: encode %s: %v", messageType, err))
	}
	return m
}

// again is m sent anew: the same envelope and payload in a new conversation.
func again(m *protocol.Message) *protocol.Message {
	out := message(m.Envelope.MessageType, m.Envelope.Sender, m.Payload)
	env := m.Envelope
	env.ConversationID, env.Timestamp = out.Envelope.ConversationID, out.Envelope.Timestamp
	out.Envelope = env
	return out
}

// decode reads a payload leniently into v; members of the wrong type stay zero.
func decode(raw json.RawMessage, v any) {
	_ = json.Unmarshal(raw, v)
}

// sameJSON reports whether two JSON values are equal once decoded.
func sameJSON(a, b any) bool {
	ja, errA := normalized(a)
	jb, errB := normalized(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// normalized encodes v as plain decoded JSON would be (maps sorted, numbers as
// written), so that values built in Go compare with values read off the wire.
func normalized(v any) ([]byte, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var out any
	if err := d.Decode(&out); err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
