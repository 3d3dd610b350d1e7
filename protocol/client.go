package protocol

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/agentleague/agentleague/internal/netsec"
	"github.com/google/uuid"
)

// RetryPolicy bounds the attempts of one call.
type RetryPolicy struct {
	// Attempts is the total number of tries (1 means no retry).
	Attempts int
	// Backoff is the base delay, doubled per retry up to MaxBackoff, with jitter.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Reasons are the remote error reasons worth retrying besides transport failures.
	Reasons []Reason
	// Unexplained also retries a remote error that names no reason: a peer of another
	// implementation, whose error codes are its own (the Python League Manager refuses
	// a player that comes before any referee with code 4019 and no data).
	Unexplained bool
}

// CallOptions are the per-call settings.
type CallOptions struct {
	// Timeout is the deadline of each attempt.
	Timeout time.Duration
	Retry   RetryPolicy
	// Peer names the destination for the recorder, e.g. "referee:ref1".
	Peer string
}

// ErrBadResponse marks an answer that is not a valid league.v2 response.
var ErrBadResponse = errors.New("bad response")

// Client sends league.v2 requests. Every attempt of a call carries the same JSON-RPC id
// and conversation id, so a receiver can recognise a retry and never apply it twice.
type Client struct {
	http      *http.Client
	validator *Validator
	recorder  Recorder
	insecure  bool
}

// ClientOptions configure how a Client reaches its peers.
type ClientOptions struct {
	// TLS configures https calls (RootCAs: whom to trust, see netsec.ClientConfig); nil
	// trusts the system's roots.
	TLS *tls.Config
	// Insecure allows plain http to hosts that are not loopback, where tokens cross the
	// network in clear; without it such a call is refused before anything is sent.
	Insecure bool
	// HTTP, when set, carries every call instead of the client's own Transport (TLS is
	// then its Transport's business): a tool that reaches peers it serves in memory, as
	// `league conform`'s tests on fake time do.
	HTTP *http.Client
}

// NewClient builds a client with default ClientOptions. validator checks every message
// sent and received; recorder (may be nil) sees every attempt, and a failure to record
// one changes nothing about the call.
func NewClient(v *Validator, rec Recorder) *Client { return NewClientWith(v, rec, ClientOptions{}) }

// NewClientWith is NewClient with options. Every call, http:// or https://, goes
// through one net/http Transport, which keeps connections alive between calls.
func NewClientWith(v *Validator, rec Recorder, o ClientOptions) *Client {
	if o.HTTP != nil {
		return &Client{http: o.HTTP, validator: v, recorder: rec, insecure: o.Insecure}
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		TLSClientConfig:     o.TLS,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConns:        512,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
		// An answer's head is bounded as its body is (MaxBodyBytes).
		MaxResponseHeaderBytes: MaxBodyBytes,
	}
	return &Client{http: &http.Client{Transport: tr}, validator: v, recorder: rec, insecure: o.Insecure}
}

// Close releases idle connections.
func (c *Client) Close() {
	c.http.CloseIdleConnections()
}

// Call sends m to url and returns the answer. A remote error comes back as *Error.
func (c *Client) Call(ctx context.Context, url string, m *Message, opt CallOptions) (*Message, error) {
	if m == nil {
		return nil, errors.New("refuse to send: no message")
	}
	if !c.insecure {
		if err := netsec.CheckURL(url); err != nil {
			return nil, fmt.Errorf("refuse to send %s to %s: %w (plain http off loopback needs --insecure)", m.Envelope.MessageType, url, err)
		}
	}
	if c.validator.SelfCheck {
		if err := c.validator.ValidateMessage(m); err != nil {
			return nil, fmt.Errorf("refuse to send: %w", err)
		}
	}
	id, _ := json.Marshal(uuid.NewString())
	body, err := json.Marshal(Request{JSONRPC: JSONRPCVersion, Method: Method, Params: m, ID: id})
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	attempts := max(opt.Retry.Attempts, 1)
	var lastErr, lastRefusal error
	for i := range attempts {
		if i > 0 {
			if err := sleep(ctx, backoff(opt.Retry, i)); err != nil {
				return nil, fmt.Errorf("%s to %s: %w (last error: %w%s)", m.Envelope.MessageType, url, err, lastErr, refusedBefore(lastErr, lastRefusal))
			}
		}
		ans, err := c.attempt(ctx, url, body, id, m, opt)
		if err == nil {
			return ans, nil
		}
		lastErr = err
		if pe := (*Error)(nil); errors.As(err, &pe) {
			lastRefusal = err
		}
		if !opt.Retry.Retries(err) {
			break
		}
		if ctx.Err() != nil {
			// Said as when the deadline falls between attempts: a dial it cut short reads
			// "i/o timeout", not "deadline exceeded".
			return nil, fmt.Errorf("%s to %s: %w (last error: %w%s)", m.Envelope.MessageType, url, ctx.Err(), err, refusedBefore(err, lastRefusal))
		}
	}
	return nil, lastErr
}

// refusedBefore names the peer's last refusal when a later attempt failed otherwise: the
// caller's deadline cutting a dial short says less than the NO_REFEREE_REGISTERED before it.
// It is text, not a wrapped error, so the reason of a call the deadline ended stays "".
func refusedBefore(lastErr, lastRefusal error) string {
	if lastRefusal == nil || lastRefusal == lastErr {
		return ""
	}
	return fmt.Sprintf("; the peer last refused: %v", lastRefusal)
}

func (c *Client) attempt(ctx context.Context, url string, body, id []byte, m *Message, opt CallOptions) (*Message, error) {
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	ex := Exchange{Peer: opt.Peer, ConversationID: m.Envelope.ConversationID, Request: body}
	raw, err := c.post(ctx, url, body)
	if err == nil {
		ex.Response = raw
	}
	if c.recorder != nil {
		// The exchange took place whether or not it could be recorded: the recorder
		// counts and owns its failures, and the call goes on as it went.
		_ = c.recorder.Record(ex)
	}
	if err != nil {
		return nil, fmt.Errorf("%s to %s: %w", m.Envelope.MessageType, url, err)
	}
	// Decoded twice, generically for the schema and typed for the caller, but never
	// encoded again: the schema judges the bytes the peer sent.
	value, err := decodeValue(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s from %s: %v", ErrBadResponse, m.Envelope.MessageType, url, err)
	}
	var resp Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("%w: %s from %s: %v", ErrBadResponse, m.Envelope.MessageType, url, err)
	}
	if resp.JSONRPC != JSONRPCVersion || !bytes.Equal(bytes.TrimSpace(resp.ID), id) {
		return nil, fmt.Errorf("%w: %s from %s: wrong jsonrpc version or id", ErrBadResponse, m.Envelope.MessageType, url)
	}
	if resp.Error != nil {
		if resp.Error.Data == nil {
			resp.Error.Data = &ErrorData{}
		}
		return nil, resp.Error
	}
	if resp.Result == nil {
		return nil, fmt.Errorf("%w: %s from %s: no result", ErrBadResponse, m.Envelope.MessageType, url)
	}
	if resp.Result.Envelope.ConversationID != m.Envelope.ConversationID {
		return nil, fmt.Errorf("%w: %s from %s: answer belongs to another conversation", ErrBadResponse, m.Envelope.MessageType, url)
	}
	obj, _ := value.(map[string]any)
	if vs := c.validator.ValidateParams(obj["result"]); len(vs) > 0 {
		return resp.Result, fmt.Errorf("%w: %s violates its schema: %s", ErrBadResponse, resp.Result.Envelope.MessageType, joinViolations(vs))
	}
	return resp.Result, nil
}

func (c *Client) post(ctx context.Context, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agentleague")
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, MaxBodyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read response: %w", err)
	}
	if len(raw) > MaxBodyBytes {
		return nil, fmt.Errorf("%w: response larger than 1 MiB", ErrBadResponse)
	}
	if res.StatusCode != http.StatusOK {
		return nil, &StatusError{Code: res.StatusCode}
	}
	return raw, nil
}

// StatusError is a non-200 HTTP answer.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("http status %d", e.Code) }

// Retries reports whether a call under p tries again after err: a refusal whose reason p
// lists (or that names none, if p.Unexplained), an HTTP 5xx or 429, or a transport failure;
// never a malformed answer, which will be malformed again.
func (p RetryPolicy) Retries(err error) bool {
	var pe *Error
	if errors.As(err, &pe) {
		if pe.Data == nil || pe.Data.Reason == "" {
			return p.Unexplained
		}
		return slices.Contains(p.Reasons, pe.Data.Reason)
	}
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code >= 500 || se.Code == http.StatusTooManyRequests
	}
	return !errors.Is(err, ErrBadResponse)
}

// MaxDelay is the longest wait before retry n (1-based): Backoff*2^(n-1) capped at
// MaxBackoff. The doubling saturates instead of overflowing, so a long retry loop
// without MaxBackoff never falls back to 0.
func (p RetryPolicy) MaxDelay(n int) time.Duration {
	d := p.Backoff
	if d <= 0 {
		return 0
	}
	for i := 1; i < n; i++ {
		if p.MaxBackoff > 0 && d >= p.MaxBackoff {
			break
		}
		if d > math.MaxInt64/2 {
			d = math.MaxInt64
			break
		}
		d *= 2
	}
	if p.MaxBackoff > 0 && d > p.MaxBackoff {
		d = p.MaxBackoff
	}
	return d
}

// backoff is MaxDelay with jitter in [d/2, d].
func backoff(p RetryPolicy, n int) time.Duration {
	d := p.MaxDelay(n)
	return d/2 + rand.N(d/2+1)
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
