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

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// callTimeout bounds every call that is not a move (invitations, game over, probes,
// assignments): seed 004 §7.1's match_join_ack_ms.
const callTimeout = 10 * time.Second

// endpointWait bounds how long an agent's endpoint may take to accept connections
// after it registered (the seed referee registers before it serves).
const endpointWait = 5 * time.Second

// maxDeadlineMS is the largest deadline_ms the schemas allow (ten minutes).
const maxDeadlineMS = 600000

// session is what a run of the tool is made of: the validator, the HTTP client it calls
// the subject with, and how it listens and probes endpoints (the network, except in
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
	s := &session{opt: opt, v: v, log: opt.Log, http: &http.Client{Transport: &http.Transport{
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
	if s.opt.Game == "" {
		return errors.New("no game given")
	}
	if s.opt.Wait <= 0 {
		return errors.New("wait must be positive")
	}
	if s.opt.MoveTimeout < time.Millisecond {
		return fmt.Errorf("move timeout %s: at least 1ms (the schemas' deadline_ms)", s.opt.MoveTimeout)
	}
	if s.opt.MoveTimeout > maxDeadlineMS*time.Millisecond {
		return fmt.Errorf("move timeout %s: at most 10m (the schemas' deadline_ms)", s.opt.MoveTimeout)
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

// awaitEndpoint probes endpoint until it accepts a connection or d passes.
func (s *session) awaitEndpoint(ctx context.Context, endpoint string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := s.probe(pctx, endpoint)
		pcancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-tick.C:
		}
	}
}

// awaitGone probes endpoint until it refuses connections or d passes; it reports
// whether the endpoint went away. A connection that is not accepted in time is no
// proof: a busy server with a full backlog is still there.
func (s *session) awaitGone(ctx context.Context, endpoint string, d time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		err := s.probe(pctx, endpoint)
		pcancel()
		if err != nil && !timedOut(err) && ctx.Err() == nil {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// timedOut reports whether err is a deadline rather than a refusal.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// answer is the subject's answer to one request, read leniently so that whatever is
// wrong with it can be told.
type answer struct {
	status  int
	elapsed time.Duration
	// err is set when no HTTP answer came at all: refused, reset, or the deadline.
	err     error
	timeout bool
	body    []byte
	// malformed says why the body is not a JSON-RPC answer to the request ("" if it is).
	malformed string
	result    *protocol.Message
	rpcErr    *protocol.Error
	// violations of the result against the schema of its message type.
	violations []string
}

// ok reports whether the answer is a well-framed JSON-RPC result.
func (a *answer) ok() bool { return a.err == nil && a.malformed == "" && a.result != nil }

// gone reports whether the subject did not answer at all for a reason other than a
// deadline: it is no longer there (refused or reset connection). A run interrupted by
// its user blames nobody.
func (a *answer) gone() bool {
	return a.err != nil && !a.timeout && !errors.Is(a.err, context.Canceled)
}

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
		return "answered with a JSON-RPC error: " + describeError(a.rpcErr)
	}
	return ""
}

// describeError renders a JSON-RPC error as code, reason and message.
func describeError(e *protocol.Error) string {
	reason := ""
	if e.Data != nil && e.Data.Reason != "" {
		reason = " " + string(e.Data.Reason)
	}
	return fmt.Sprintf("%d%s %q", e.Code, reason, truncate(e.Message, 120))
}

// reasonOf is the error's data.reason, or "".
func reasonOf(e *protocol.Error) protocol.Reason {
	if e == nil || e.Data == nil {
		return ""
	}
	return e.Data.Reason
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

// request encodes m as a JSON-RPC request with a fresh id.
func request(m *protocol.Message) (body, id []byte, err error) {
	id, _ = json.Marshal(uuid.NewString())
	body, err = json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: m, ID: id})
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", m.Envelope.MessageType, err)
	}
	return body, id, nil
}

// call sends m to url and reads the answer. With LEAGUE_SELF_CHECK set, a message of
// the tool that breaks its schema is not sent: it is a bug of the tool.
func (s *session) call(ctx context.Context, url string, m *protocol.Message, timeout time.Duration) *answer {
	if s.v.SelfCheck {
		if err := s.v.ValidateMessage(m); err != nil {
			return &answer{err: fmt.Errorf("conform tool bug, not sent: %w", err)}
		}
	}
	body, id, err := request(m)
	if err != nil {
		return &answer{err: err}
	}
	a := s.post(ctx, url, body, id, timeout)
	s.log.Debug().Str("conversation_id", m.Envelope.ConversationID).Str("message_type", m.Envelope.MessageType).
		Str("url", url).Dur("elapsed", a.elapsed).Str("problem", a.problem()).Msg("sent")
	return a
}

// post sends a raw body and reads the answer to the request of JSON-RPC id id.
func (s *session) post(ctx context.Context, url string, body, id []byte, timeout time.Duration) *answer {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	a := &answer{}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		a.err = fmt.Errorf("build request: %w", err)
		return a
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := s.http.Do(req)
	if err == nil {
		a.status = res.StatusCode
		a.body, err = io.ReadAll(io.LimitReader(res.Body, protocol.MaxBodyBytes+1))
		res.Body.Close()
	}
	a.elapsed = time.Since(start)
	if err != nil {
		a.err, a.timeout = err, errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded)
		return a
	}
	s.read(a, id)
	return a
}

// read decodes a.body as the JSON-RPC answer to request id.
func (s *session) read(a *answer, id []byte) {
	if len(a.body) > protocol.MaxBodyBytes {
		a.malformed = "answer larger than 1 MiB"
		return
	}
	if a.status != http.StatusOK {
		a.malformed = fmt.Sprintf("HTTP status %d, not 200", a.status)
		// A JSON-RPC error under another status is still worth reading for its reason.
	}
	var resp struct {
		JSONRPC *string          `json:"jsonrpc"`
		ID      json.RawMessage  `json:"id"`
		Result  json.RawMessage  `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(a.body, &resp); err != nil {
		if a.malformed == "" {
			a.malformed = "answer is not a JSON object: " + truncate(string(bytes.TrimSpace(a.body)), 80)
		}
		return
	}
	if resp.Error != nil {
		var e protocol.Error
		if json.Unmarshal(*resp.Error, &e) == nil {
			a.rpcErr = &e
		} else if a.malformed == "" {
			a.malformed = "error member is not a JSON-RPC error object"
		}
	}
	switch {
	case a.malformed != "":
	case resp.JSONRPC == nil || *resp.JSONRPC != protocol.JSONRPCVersion:
		a.malformed = `answer lacks "jsonrpc": "2.0"`
	case !bytes.Equal(bytes.TrimSpace(resp.ID), id):
		a.malformed = fmt.Sprintf("answer id %s is not the request's id %s", truncate(string(resp.ID), 60), id)
	case len(resp.Result) > 0 && resp.Error != nil:
		a.malformed = "answer has both result and error"
	case len(resp.Result) == 0 && resp.Error == nil:
		a.malformed = "answer has neither result nor error"
	}
	if len(resp.Result) == 0 || a.malformed != "" {
		return
	}
	a.violations = s.validate(resp.Result)
	var m protocol.Message
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		// Fields of the wrong type: the violations say which; keep what could be read.
		m = lenientMessage(resp.Result)
	}
	a.result = &m
}

// validate checks a params or result object against the schema of its message type
// and returns every violation as "path: message".
func (s *session) validate(raw json.RawMessage) []string {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return []string{"/: not JSON: " + err.Error()}
	}
	var out []string
	for _, vi := range s.v.ValidateParams(v) {
		out = append(out, vi.String())
	}
	return out
}

// lenientMessage reads what it can of a message whose fields have wrong types.
func lenientMessage(raw json.RawMessage) protocol.Message {
	var parts struct {
		Envelope map[string]any  `json:"envelope"`
		Payload  json.RawMessage `json:"payload"`
	}
	_ = json.Unmarshal(raw, &parts)
	str := func(k string) string { s, _ := parts.Envelope[k].(string); return s }
	return protocol.Message{Envelope: protocol.Envelope{
		Protocol: str("protocol"), MessageType: str("message_type"), Sender: str("sender"), Timestamp: str("timestamp"),
		ConversationID: str("conversation_id"), AuthToken: str("auth_token"), LeagueID: str("league_id"),
		RoundID: str("round_id"), MatchID: str("match_id"), GameType: str("game_type"),
	}, Payload: parts.Payload}
}

// received is one request that reached a server of the tool, read leniently.
type received struct {
	msg protocol.Message
	// violations of params against the schema of its message type.
	violations []string
	// notRequest says why the body is not a JSON-RPC request at all ("" if it is).
	notRequest string
}

// parseRequest reads a request body the way our servers do, keeping every violation.
func (s *session) parseRequest(body []byte) received {
	var req struct {
		JSONRPC any             `json:"jsonrpc"`
		Method  any             `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return received{notRequest: "body is not a JSON-RPC request object"}
	}
	if len(req.Params) == 0 {
		return received{notRequest: "request has no params"}
	}
	r := received{violations: s.validate(req.Params)}
	if err := json.Unmarshal(req.Params, &r.msg); err != nil {
		r.msg = lenientMessage(req.Params)
	}
	switch {
	case req.JSONRPC != protocol.JSONRPCVersion:
		r.notRequest = `request lacks "jsonrpc": "2.0"`
	case req.Method != protocol.Method:
		r.notRequest = fmt.Sprintf("method is not %q", protocol.Method)
	}
	return r
}

// endpoint serves POST /mcp for one role the tool plays: observe sees each request as
// it arrived (with its schema violations), then protocol.Server answers it as our
// agents would, refusing what breaks the schemas.
type endpoint struct {
	s       *session
	rpc     *protocol.Server
	observe func(r received)
	log     zerolog.Logger
}

func (s *session) newEndpoint(h protocol.Handler, observe func(received), log zerolog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", &endpoint{s: s, rpc: protocol.NewServer(h, s.v, nil, log), observe: observe, log: log})
	return mux
}

// ServeHTTP implements http.Handler.
func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, protocol.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request body larger than 1 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "cannot read request body", http.StatusBadRequest)
		return
	}
	rc := e.s.parseRequest(body)
	env := rc.msg.Envelope
	e.log.Debug().Str("conversation_id", env.ConversationID).Str("message_type", env.MessageType).Str("sender", env.Sender).
		Int("violations", len(rc.violations)).Str("not_request", rc.notRequest).Msg("received")
	if e.observe != nil {
		e.observe(rc)
	}
	out := e.rpc.Process(r.Context(), body)
	if out == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
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

// reply builds the tool's answer to m.
func reply(m *protocol.Message, messageType, sender string, payload any) (*protocol.Message, error) {
	out, err := m.Reply(messageType, sender, payload)
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", m.Envelope.MessageType, err)
	}
	return out, nil
}

// decode reads a payload leniently into v; fields of the wrong type stay zero.
func decode(raw json.RawMessage, v any) {
	_ = json.Unmarshal(raw, v)
}

// sameJSON reports whether two JSON values are equal once decoded.
func sameJSON(a, b any) bool {
	na, errA := normalize(a)
	nb, errB := normalize(b)
	if errA != nil || errB != nil {
		return false
	}
	ja, _ := json.Marshal(na)
	jb, _ := json.Marshal(nb)
	return bytes.Equal(ja, jb)
}

// normalize turns any JSON-encodable value into plain decoded JSON (maps, slices,
// numbers as json.Number), so that values built in Go compare with values read off
// the wire.
func normalize(v any) (any, error) {
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
	err := d.Decode(&out)
	return out, err
}

// covers reports whether every member of want is in got with the same value: the
// step_context a referee shows may carry more than the rules' own.
func covers(got json.RawMessage, want map[string]any) (string, bool) {
	g, err := normalize(got)
	gm, isMap := g.(map[string]any)
	if err != nil || !isMap {
		return "step_context is not an object", false
	}
	for k, w := range want {
		v, present := gm[k]
		if !present {
			return fmt.Sprintf("step_context lacks %q", k), false
		}
		if !sameJSON(v, w) {
			wj, _ := json.Marshal(w)
			vj, _ := json.Marshal(v)
			return fmt.Sprintf("step_context %q is %s, the rules say %s", k, truncate(string(vj), 100), truncate(string(wj), 100)), false
		}
	}
	return "", true
}
