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
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// lmCallTimeout bounds each call to the League Manager under test.
const lmCallTimeout = 10 * time.Second

// lmWire sends raw JSON-RPC requests to the League Manager under test and keeps every
// call, so that answers can be judged as they came (exact schema violation paths, an id
// or conversation_id not echoed), which protocol.Client would only report as a bad
// response.
type lmWire struct {
	url string
	hc  *http.Client
	v   *protocol.Validator
	log zerolog.Logger

	mu    sync.Mutex
	calls []*lmCall
}

func newLMWire(url string, tlsCfg *tls.Config, v *protocol.Validator, log zerolog.Logger) *lmWire {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	}
	return &lmWire{url: url, hc: &http.Client{Transport: tr}, v: v, log: log}
}

func (w *lmWire) close() { w.hc.CloseIdleConnections() }

// lmCall is one request sent to the League Manager and what came back.
type lmCall struct {
	label string
	// requestID is the JSON text of the id sent; "" when the body was no request at all.
	requestID      string
	conversationID string
	// bodyProbe marks a request whose body was meant to be refused before it is read
	// (oversized, malformed): its answer may be a plain HTTP error.
	bodyProbe bool

	status int
	body   []byte
	// err is set when no HTTP answer came (refused connection, closed connection, timeout).
	err error
	// rpc is the answer as a JSON-RPC response object; nil when the body is not one, and
	// rpcErr then says why.
	rpc    *rpcAnswer
	rpcErr error
}

// rpcAnswer is a JSON-RPC 2.0 response object, members kept raw.
type rpcAnswer struct {
	jsonrpc   json.RawMessage
	id        json.RawMessage
	hasID     bool
	result    json.RawMessage
	hasResult bool
	errObj    *rpcError
	hasError  bool
}

// rpcError is the error member of a JSON-RPC response.
type rpcError struct {
	Code    json.Number     `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// send posts msg as a JSON-RPC request with a fresh id.
func (w *lmWire) send(ctx context.Context, label string, msg *protocol.Message) *lmCall {
	return w.sendAttempts(ctx, label, msg, 1)
}

// sendBad posts msg, which is meant to be refused, without checking it first.
func (w *lmWire) sendBad(ctx context.Context, label string, msg *protocol.Message) *lmCall {
	return w.sendChecked(ctx, label, msg, 1, false)
}

// sendAttempts is send that tries again, with the same id and conversation (a retry the
// receiver can recognise), while no HTTP answer comes, up to attempts times.
func (w *lmWire) sendAttempts(ctx context.Context, label string, msg *protocol.Message, attempts int) *lmCall {
	return w.sendChecked(ctx, label, msg, attempts, true)
}

func (w *lmWire) sendChecked(ctx context.Context, label string, msg *protocol.Message, attempts int, check bool) *lmCall {
	if check {
		// A good request the tool gets wrong must not be blamed on the League Manager.
		if err := w.v.ValidateMessage(msg); err != nil {
			c := &lmCall{label: label, err: fmt.Errorf("the conform tool built an invalid request (a bug of the tool): %w", err)}
			w.log.Error().Err(c.err).Str("call", label).Msg("invalid request")
			w.keep(c)
			return c
		}
	}
	id, _ := json.Marshal(uuid.NewString())
	body, err := json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: msg, ID: id})
	if err != nil {
		c := &lmCall{label: label, err: fmt.Errorf("encode request: %w", err)}
		w.keep(c)
		return c
	}
	var c *lmCall
	for i := range max(attempts, 1) {
		if i > 0 {
			select {
			case <-ctx.Done():
				return c
			case <-time.After(time.Duration(i) * 200 * time.Millisecond):
			}
		}
		c = w.post(ctx, label, body, string(id), msg.Envelope.ConversationID, false)
		if c.err == nil {
			break
		}
	}
	return c
}

// post sends body as it is and reads the answer.
func (w *lmWire) post(ctx context.Context, label string, body []byte, requestID, conversationID string, bodyProbe bool) *lmCall {
	c := &lmCall{label: label, requestID: requestID, conversationID: conversationID, bodyProbe: bodyProbe}
	defer w.keep(c)
	cctx, cancel := context.WithTimeout(ctx, lmCallTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		c.err = fmt.Errorf("build request: %w", err)
		return c
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := w.hc.Do(req)
	if err != nil {
		c.err = err
		w.log.Debug().Str("conversation_id", conversationID).Str("call", label).Err(err).Msg("no answer")
		return c
	}
	defer res.Body.Close()
	c.status = res.StatusCode
	c.body, err = io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		c.err = fmt.Errorf("read answer: %w", err)
		return c
	}
	c.rpc, c.rpcErr = parseRPC(c.body)
	w.log.Debug().Str("conversation_id", conversationID).Str("call", label).Int("status", c.status).
		Str("answer", truncate(string(c.body), 300)).Msg("answer")
	return c
}

func (w *lmWire) keep(c *lmCall) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, c)
}

// snapshot returns the calls made so far.
func (w *lmWire) snapshot() []*lmCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*lmCall(nil), w.calls...)
}

// parseRPC reads body as a JSON-RPC response object.
func parseRPC(body []byte) (*rpcAnswer, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(body, &members); err != nil || members == nil {
		return nil, errors.New("the body is not a JSON object")
	}
	a := &rpcAnswer{jsonrpc: members["jsonrpc"]}
	a.id, a.hasID = members["id"]
	a.result, a.hasResult = members["result"]
	errRaw, hasError := members["error"]
	a.hasError = hasError
	if hasError {
		var e rpcError
		d := json.NewDecoder(bytes.NewReader(errRaw))
		d.UseNumber()
		if err := d.Decode(&e); err != nil {
			return nil, fmt.Errorf("its error member is not a JSON-RPC error object: %s", snippet(errRaw, 120))
		}
		if _, err := e.Code.Int64(); err != nil {
			return nil, fmt.Errorf("its error code %q is not an integer", e.Code)
		}
		a.errObj = &e
	}
	if !a.hasResult && !hasError {
		return nil, errors.New("the body has neither result nor error")
	}
	return a, nil
}

// describe says briefly what came back, for a check's reason.
func (c *lmCall) describe() string {
	switch {
	case c.err != nil:
		return "no answer: " + c.err.Error() + certHint(c.err)
	case c.rpc == nil:
		return fmt.Sprintf("HTTP %d with a body that is not a JSON-RPC response (%v): %s", c.status, c.rpcErr, snippet(c.body, 120))
	case c.rpc.hasError && c.rpc.errObj != nil:
		return "refused with " + c.rpc.errObj.describe()
	}
	var m protocol.Message
	if json.Unmarshal(c.rpc.result, &m) != nil {
		return "answered with a result that is not a league.v2 message: " + snippet(c.rpc.result, 120)
	}
	return "answered with a result (" + m.Envelope.MessageType + ")"
}

func (e *rpcError) describe() string {
	s := "error " + e.Code.String()
	var d struct {
		Reason  string `json:"reason"`
		Details any    `json:"details"`
	}
	_ = json.Unmarshal(e.Data, &d)
	if d.Reason != "" {
		s += " " + d.Reason
	}
	if e.Message != "" {
		s += ": " + snippet([]byte(e.Message), 100)
	}
	// Seed 004 §4.1 puts the specific cause in data.details, as text or an object.
	if details, ok := d.Details.(string); ok && details != "" && details != e.Message {
		s += " (" + snippet([]byte(details), 160) + ")"
	}
	return s
}

// refusal returns the JSON-RPC error the request was refused with; an error when the
// request was taken (a result) or no JSON-RPC answer came.
func (c *lmCall) refusal() (*rpcError, error) {
	if c.rpc != nil && c.rpc.hasError && c.rpc.hasResult {
		return nil, errors.New("answered with both result and error")
	}
	if c.rpc != nil && c.rpc.hasError && c.rpc.errObj != nil {
		return c.rpc.errObj, nil
	}
	if c.rpc != nil && c.rpc.hasResult {
		return nil, fmt.Errorf("accepted: %s", c.describe())
	}
	return nil, errors.New(c.describe())
}

// answer returns the result of the call when it is a league.v2 message of type want that
// validates against its schema; otherwise an error saying what came instead, with every
// violation's path.
func (c *lmCall) answer(v *protocol.Validator, want string) (*protocol.Message, error) {
	if c.rpc == nil || !c.rpc.hasResult || c.rpc.hasError {
		return nil, errors.New(c.describe())
	}
	generic, err := normalize(c.rpc.result)
	if err != nil {
		return nil, fmt.Errorf("the result is not JSON: %w", err)
	}
	var m protocol.Message
	if err := json.Unmarshal(c.rpc.result, &m); err != nil {
		return nil, fmt.Errorf("the result is not a league.v2 message {envelope, payload}: %s", snippet(c.rpc.result, 120))
	}
	if m.Envelope.MessageType != want {
		return nil, fmt.Errorf("answered %q, want %s", m.Envelope.MessageType, want)
	}
	if vs := v.ValidateParams(generic); len(vs) > 0 {
		return nil, fmt.Errorf("%s violates its schema: %s", want, joinViolations(vs, 4))
	}
	return &m, nil
}

// joinViolations lists at most n violations as "path: message".
func joinViolations(vs []protocol.Violation, n int) string {
	out := make([]string, 0, min(len(vs), n)+1)
	for i, v := range vs {
		if i == n {
			out = append(out, fmt.Sprintf("and %d more", len(vs)-n))
			break
		}
		out = append(out, v.String())
	}
	return strings.Join(out, "; ")
}

// normalize turns raw JSON into plain decoded JSON, numbers as json.Number.
func normalize(raw json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var out any
	err := d.Decode(&out)
	return out, err
}
