package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/agentleague/agentleague/protocol"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testToken is a valid auth_token that no answer may ever echo.
const testToken = "tok_Secret-4f1c9e2a.b7d3"

// testValidator compiles the schemas once for the whole package, with self-checks on
// so the tests see both sides refuse what violates the schemas.
var testValidator = sync.OnceValues(func() (*protocol.Validator, error) {
	v, err := protocol.NewValidator()
	if v != nil {
		v.SelfCheck = true
	}
	return v, err
})

func validator(t testing.TB) *protocol.Validator {
	t.Helper()
	v, err := testValidator()
	if err != nil {
		t.Fatalf("NewValidator: %v", err)
	}
	return v
}

// heartbeat is a valid HEARTBEAT_REQUEST carrying testToken.
func heartbeat(t testing.TB) *protocol.Message {
	t.Helper()
	m, err := protocol.NewMessage(protocol.HeartbeatRequest, protocol.RefereeSender("ref1"), map[string]any{"active_matches": []string{"match-1"}})
	if err != nil {
		t.Fatalf("NewMessage: %v", err)
	}
	m.Envelope.AuthToken = testToken
	return m
}

// heartbeatAnswer is the valid answer to m.
func heartbeatAnswer(t testing.TB, m *protocol.Message) *protocol.Message {
	t.Helper()
	a, err := m.Reply(protocol.HeartbeatResponse, protocol.SenderLeagueManager, map[string]any{"status": "acknowledged", "lease_ms": 15000})
	if err != nil {
		t.Fatalf("Reply: %v", err)
	}
	return a
}

// echoHandler answers every HEARTBEAT_REQUEST validly.
func echoHandler(t testing.TB) protocol.HandlerFunc {
	return func(_ context.Context, m *protocol.Message) (*protocol.Message, error) {
		return heartbeatAnswer(t, m), nil
	}
}

// params turns a message into the generic value the server validates.
func params(t testing.TB, m *protocol.Message) map[string]any {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal message: %v", err)
	}
	return decodeObject(t, raw)
}

func decodeObject(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// call encodes a JSON-RPC request; id nil means a notification.
func call(t testing.TB, id any, p any) []byte {
	t.Helper()
	req := map[string]any{"jsonrpc": "2.0", "method": protocol.Method, "params": p}
	if id != nil {
		req["id"] = id
	}
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatalf("marshal request: %v", err)
	}
	return b
}

// recorder keeps every exchange; err makes Record fail.
type recorder struct {
	mu  sync.Mutex
	exs []protocol.Exchange
	err error
}

func (r *recorder) Record(ex protocol.Exchange) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.exs = append(r.exs, ex)
	return r.err
}

func (r *recorder) exchanges() []protocol.Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.Exchange(nil), r.exs...)
}

// wireResponse is a JSON-RPC answer as received, members kept raw.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  json.RawMessage `json:"result"`
	Error   *protocol.Error `json:"error"`
	ID      json.RawMessage `json:"id"`
}

func decodeResponse(t testing.TB, raw []byte) wireResponse {
	t.Helper()
	var r wireResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("answer %s is not a JSON-RPC response: %v", raw, err)
	}
	if r.JSONRPC != "2.0" {
		t.Fatalf("answer %s: got jsonrpc %q, want 2.0", raw, r.JSONRPC)
	}
	if (r.Result == nil) == (r.Error == nil) {
		t.Fatalf("answer %s: want exactly one of result and error", raw)
	}
	return r
}

// serve starts the handler behind a real HTTP server.
func serve(t testing.TB, h protocol.Handler, rec protocol.Recorder) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(protocol.NewServer(h, validator(t), rec, zerolog.Nop()))
	t.Cleanup(srv.Close)
	return srv
}

// post sends body to url and returns the status and the body of the answer.
func post(t testing.TB, url string, body []byte) (int, []byte) {
	t.Helper()
	res, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	return res.StatusCode, out
}

var errRecord = errors.New("disk full")
