package protocol_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/agentleague/agentleague/protocol"
)

// withPayload returns a copy of the params of m with payload replaced.
func withPayload(t testing.TB, m *protocol.Message, payload any) map[string]any {
	t.Helper()
	p := params(t, m)
	p["payload"] = payload
	return p
}

// nested builds depth arrays nested in each other around 0.
func nested(depth int) any {
	var v any = json.Number("0")
	for range depth {
		v = []any{v}
	}
	return v
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	for _, x := range []struct {
		raw []byte
		v   *any
	}{{a, &va}, {b, &vb}} {
		d := json.NewDecoder(bytes.NewReader(x.raw))
		d.UseNumber()
		if err := d.Decode(x.v); err != nil {
			t.Fatalf("decode %s: %v", x.raw, err)
		}
	}
	return reflect.DeepEqual(va, vb)
}

func TestServerValidCall(t *testing.T) {
	m := heartbeat(t)
	var got *protocol.Message
	h := protocol.HandlerFunc(func(_ context.Context, in *protocol.Message) (*protocol.Message, error) {
		got = in
		return heartbeatAnswer(t, in), nil
	})
	rec := &recorder{}
	srv := serve(t, h, rec)

	body := call(t, 7, m)
	status, out := post(t, srv.URL, body)
	if status != http.StatusOK {
		t.Fatalf("got status %d, want 200", status)
	}
	if got == nil {
		t.Fatal("handler not called")
	}
	if got.Envelope != m.Envelope {
		t.Errorf("handler got envelope %+v, want %+v", got.Envelope, m.Envelope)
	}
	if !sameJSON(t, got.Payload, m.Payload) {
		t.Errorf("handler got payload %s, want %s", got.Payload, m.Payload)
	}
	resp := decodeResponse(t, out)
	if string(resp.ID) != "7" {
		t.Errorf("got id %s, want 7", resp.ID)
	}
	var result protocol.Message
	if err := json.Unmarshal(resp.Result, &result); err != nil {
		t.Fatalf("decode result: %v", err)
	}
	if err := validator(t).ValidateMessage(&result); err != nil {
		t.Errorf("result does not validate: %v", err)
	}
	if result.Envelope.MessageType != protocol.HeartbeatResponse || result.Envelope.ConversationID != m.Envelope.ConversationID {
		t.Errorf("got result %s %s, want %s %s", result.Envelope.MessageType, result.Envelope.ConversationID, protocol.HeartbeatResponse, m.Envelope.ConversationID)
	}

	exs := rec.exchanges()
	if len(exs) != 1 {
		t.Fatalf("got %d recorded exchanges, want 1", len(exs))
	}
	want := protocol.Exchange{Inbound: true, Peer: "referee:ref1", ConversationID: m.Envelope.ConversationID, Request: body, Response: out}
	if !reflect.DeepEqual(exs[0], want) {
		t.Errorf("got exchange %+v, want %+v", exs[0], want)
	}
}

func TestServerIDs(t *testing.T) {
	m := heartbeat(t)
	for _, id := range []string{`"abc"`, `12`, `-3.5`, `null`, `"<&>"`} {
		t.Run(id, func(t *testing.T) {
			srv := serve(t, echoHandler(t), nil)
			body := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"league.handle","id":%s,"params":%s}`, id, mustJSON(t, m))
			status, out := post(t, srv.URL, body)
			if status != http.StatusOK {
				t.Fatalf("got status %d, want 200", status)
			}
			resp := decodeResponse(t, out)
			if resp.Error != nil {
				t.Fatalf("got error %v, want a result", resp.Error)
			}
			if !sameJSON(t, resp.ID, []byte(id)) {
				t.Errorf("got id %s, want %s", resp.ID, id)
			}
		})
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// TestServerRefusals checks every request the server refuses before the handler runs.
func TestServerRefusals(t *testing.T) {
	m := heartbeat(t)
	good := params(t, m)
	conv := m.Envelope.ConversationID

	reg := mustRegisterPlayer(t)
	badTime := params(t, reg)
	badTime["envelope"].(map[string]any)["timestamp"] = "2026-11-22T01:21:50+02:00"
	delete(badTime["payload"].(map[string]any), "endpoint_url")

	unknownEnvelope := params(t, m)
	unknownEnvelope["envelope"].(map[string]any)["priority"] = "high"

	tests := []struct {
		name       string
		body       []byte
		wantCode   int
		wantReason protocol.Reason
		wantID     string
		// wantViolations are the exact data.violations, when set.
		wantViolations []string
		// wantPrefix is the prefix every violation must have, when set.
		wantPrefix string
		wantConv   string
	}{
		{name: "parse error", body: []byte(`{"jsonrpc":"2.0","method":`), wantCode: -32700, wantReason: protocol.ReasonParseError, wantID: "null"},
		{name: "trailing data", body: append(call(t, 1, good), " {}"...), wantCode: -32700, wantReason: protocol.ReasonParseError, wantID: "null"},
		{name: "empty body", body: nil, wantCode: -32700, wantReason: protocol.ReasonParseError, wantID: "null"},
		{name: "number", body: []byte(`42`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "null"},
		{name: "string", body: []byte(`"league.handle"`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "null"},
		{name: "null", body: []byte(`null`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "null"},
		{name: "wrong jsonrpc", body: []byte(`{"jsonrpc":"1.0","method":"league.handle","params":{},"id":"a"}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: `"a"`},
		{name: "missing jsonrpc", body: []byte(`{"method":"league.handle","params":{},"id":"a"}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: `"a"`},
		{name: "numeric jsonrpc", body: []byte(`{"jsonrpc":2.0,"method":"league.handle","params":{},"id":"a"}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: `"a"`},
		{name: "missing method", body: []byte(`{"jsonrpc":"2.0","params":{},"id":1}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "1"},
		{name: "non-string method", body: []byte(`{"jsonrpc":"2.0","method":1,"params":"bar","id":1}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "1"},
		{name: "object id", body: []byte(`{"jsonrpc":"2.0","method":"league.handle","params":{},"id":{"a":1}}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "null"},
		{name: "bool id", body: []byte(`{"jsonrpc":"2.0","method":"league.handle","params":{},"id":true}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "null"},
		{name: "array id", body: []byte(`{"jsonrpc":"2.0","method":"league.handle","params":{},"id":[1]}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "null"},
		{name: "unknown member", body: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"league.handle","params":%s,"id":2,"extra":1}`, mustJSON(t, good)), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "2", wantConv: conv},
		// An invalid request object is answered even without an id (JSON-RPC 2.0 section 5).
		{name: "invalid request without id", body: []byte(`{"jsonrpc":"1.0","method":"league.handle","params":{}}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "null"},
		{name: "non-string method without id", body: []byte(`{"jsonrpc":"2.0","method":1,"params":"bar"}`), wantCode: -32600, wantReason: protocol.ReasonInvalidRequest, wantID: "null"},
		{name: "unknown method", body: []byte(`{"jsonrpc":"2.0","method":"league.other","params":{},"id":3}`), wantCode: -32601, wantReason: protocol.ReasonMethodNotFound, wantID: "3"},
		{name: "missing params", body: []byte(`{"jsonrpc":"2.0","method":"league.handle","id":4}`), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "4"},
		{name: "number params", body: []byte(`{"jsonrpc":"2.0","method":"league.handle","params":1,"id":4}`), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "4", wantViolations: []string{"/: params must be an object with envelope and payload"}},
		{name: "null params", body: []byte(`{"jsonrpc":"2.0","method":"league.handle","params":null,"id":4}`), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "4"},
		{name: "array params", body: []byte(`{"jsonrpc":"2.0","method":"league.handle","params":[{"envelope":{}}],"id":4}`), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "4"},
		{name: "missing envelope", body: []byte(`{"jsonrpc":"2.0","method":"league.handle","params":{"payload":{}},"id":4}`), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "4", wantViolations: []string{"/: missing property 'envelope'"}},
		{
			name: "bad timestamp and missing payload field", body: call(t, 5, badTime),
			wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "5", wantConv: reg.Envelope.ConversationID,
			wantViolations: []string{
				`/envelope/timestamp: does not match pattern '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|\\+00:00)$'`,
				"/payload: missing properties: 'endpoint_url'",
			},
		},
		{name: "unknown envelope field", body: call(t, 5, unknownEnvelope), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "5", wantConv: conv, wantViolations: []string{"/envelope: additionalProperties 'priority' not allowed"}},
		{
			name: "too deep", body: call(t, 6, withPayload(t, m, map[string]any{"x": nested(protocol.MaxDepth + 5)})),
			wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv,
			wantViolations: []string{"/payload/x" + strings.Repeat("/0", protocol.MaxDepth-1) + ": nesting deeper than 32 levels"},
		},
		{
			name: "string too long", body: call(t, 6, withPayload(t, m, map[string]any{"blob": strings.Repeat("a", protocol.MaxStringBytes+1)})),
			wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv,
			wantViolations: []string{"/payload/blob: string longer than 65536 bytes"},
		},
		{
			name: "member name too long", body: call(t, 6, withPayload(t, m, map[string]any{strings.Repeat("k", protocol.MaxStringBytes+1): 1})),
			wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv,
			wantViolations: []string{"/payload: member name too long"},
		},
		{
			name: "array too long", body: call(t, 6, withPayload(t, m, map[string]any{"list": make([]int, protocol.MaxArrayItems+1)})),
			wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv,
			wantViolations: []string{"/payload/list: array longer than 10000 items"},
		},
		{
			// Without the bound the schema library panics on it (uniqueItems hashes a big.Rat it cannot build).
			name: "huge exponent", body: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"league.handle","id":6,"params":%s}`, bytes.Replace(mustJSON(t, good), []byte(`["match-1"]`), []byte(`[1e10000000,1e10000000]`), 1)),
			wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv,
			wantViolations: []string{"/payload/active_matches/0: number longer than 64 bytes or with an exponent beyond 999"},
		},
		{
			name: "long number", body: fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"league.handle","id":6,"params":%s}`, bytes.Replace(mustJSON(t, good), []byte(`["match-1"]`), []byte(`[1`+strings.Repeat("0", 70)+`]`), 1)),
			wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv,
			wantViolations: []string{"/payload/active_matches/0: number longer than 64 bytes or with an exponent beyond 999"},
		},
		{name: "too many members", body: call(t, 6, withPayload(t, m, manyMembers(protocol.MaxObjectFields+1))), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv, wantPrefix: "/payload: object with more than 1000 members"},
		{name: "bad auth_token", body: call(t, 6, withEnvelope(t, m, "auth_token", testToken+"$")), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv, wantPrefix: "/envelope/auth_token: "},
		{name: "auth_token too long", body: call(t, 6, withEnvelope(t, m, "auth_token", strings.Repeat(testToken, 20))), wantCode: -32602, wantReason: protocol.ReasonSchemaViolation, wantID: "6", wantConv: conv, wantPrefix: "/envelope/auth_token: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var called atomic.Bool
			h := protocol.HandlerFunc(func(_ context.Context, in *protocol.Message) (*protocol.Message, error) {
				called.Store(true)
				return heartbeatAnswer(t, in), nil
			})
			rec := &recorder{}
			srv := serve(t, h, rec)
			status, out := post(t, srv.URL, tt.body)
			if status != http.StatusOK {
				t.Fatalf("got status %d, want 200", status)
			}
			if called.Load() {
				t.Error("handler called for a refused request")
			}
			resp := decodeResponse(t, out)
			if resp.Error == nil {
				t.Fatalf("got result %s, want error %d", resp.Result, tt.wantCode)
			}
			if resp.Error.Code != tt.wantCode {
				t.Errorf("got code %d, want %d (%s)", resp.Error.Code, tt.wantCode, out)
			}
			if resp.Error.Data == nil || resp.Error.Data.Reason != tt.wantReason {
				t.Fatalf("got data %+v, want reason %s", resp.Error.Data, tt.wantReason)
			}
			if string(resp.ID) != tt.wantID {
				t.Errorf("got id %s, want %s", resp.ID, tt.wantID)
			}
			// data.details (seed 004 section 4.1) is the specific cause: every violation, else the message.
			wantDetails := resp.Error.Message
			if len(resp.Error.Data.Violations) > 0 {
				wantDetails = strings.Join(resp.Error.Data.Violations, "; ")
			}
			if resp.Error.Data.Details != wantDetails {
				t.Errorf("got data.details %q, want %q", resp.Error.Data.Details, wantDetails)
			}
			if tt.wantViolations != nil && !reflect.DeepEqual(resp.Error.Data.Violations, tt.wantViolations) {
				t.Errorf("got violations %q, want %q", resp.Error.Data.Violations, tt.wantViolations)
			}
			if tt.wantPrefix != "" {
				if len(resp.Error.Data.Violations) == 0 {
					t.Errorf("got no violations, want some starting with %q", tt.wantPrefix)
				}
				for _, v := range resp.Error.Data.Violations {
					if !strings.HasPrefix(v, tt.wantPrefix) {
						t.Errorf("got violation %q, want prefix %q", v, tt.wantPrefix)
					}
				}
			}
			if tt.wantReason == protocol.ReasonSchemaViolation && tt.wantConv != "" && resp.Error.Data.ConversationID != tt.wantConv {
				t.Errorf("got data.conversation_id %q, want %q", resp.Error.Data.ConversationID, tt.wantConv)
			}
			if bytes.Contains(out, []byte(testToken)) {
				t.Errorf("answer %s echoes the auth_token", out)
			}
			exs := rec.exchanges()
			if len(exs) != 1 {
				t.Fatalf("got %d recorded exchanges, want 1", len(exs))
			}
			ex := exs[0]
			if !ex.Inbound || !bytes.Equal(ex.Request, tt.body) || !bytes.Equal(ex.Response, out) || ex.ConversationID != tt.wantConv {
				t.Errorf("got exchange inbound=%v conversation %q request %.80q response %.80q, want inbound, conversation %q, the request and the answer",
					ex.Inbound, ex.ConversationID, ex.Request, ex.Response, tt.wantConv)
			}
		})
	}
}

func mustRegisterPlayer(t testing.TB) *protocol.Message {
	t.Helper()
	m, err := protocol.NewMessage(protocol.RegisterPlayerRequest, protocol.PlayerSender("p01"), map[string]any{
		"player_id": "p01", "endpoint_url": "http://127.0.0.1:9001/mcp", "game_types": []string{"tic_tac_toe"},
	})
	if err != nil {
		t.Fatalf("NewMessage: %v", err)
	}
	m.Envelope.AuthToken = testToken
	return m
}

func withEnvelope(t testing.TB, m *protocol.Message, field, value string) map[string]any {
	t.Helper()
	p := params(t, m)
	p["envelope"].(map[string]any)[field] = value
	return p
}

func manyMembers(n int) map[string]any {
	out := make(map[string]any, n)
	for i := range n {
		out[fmt.Sprintf("k%d", i)] = 1
	}
	return out
}

func TestServerHTTPStatus(t *testing.T) {
	srv := serve(t, echoHandler(t), nil)
	t.Run("GET", func(t *testing.T) {
		res, err := http.Get(srv.URL)
		if err != nil {
			t.Fatalf("GET: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("got status %d, want 405", res.StatusCode)
		}
		if got := res.Header.Get("Allow"); got != http.MethodPost {
			t.Errorf("got Allow %q, want POST", got)
		}
	})
	t.Run("body over 1 MiB", func(t *testing.T) {
		body := call(t, 1, withPayload(t, heartbeat(t), map[string]any{"blob": strings.Repeat("a", protocol.MaxBodyBytes)}))
		status, _ := post(t, srv.URL, body)
		if status != http.StatusRequestEntityTooLarge {
			t.Errorf("got status %d, want 413", status)
		}
	})
	t.Run("body shorter than its Content-Length", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := call(t, 1, heartbeat(t))
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body)+10, body)
		if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("read response: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("got status %d, want 400", res.StatusCode)
		}
	})
	t.Run("body of exactly 1 MiB", func(t *testing.T) {
		body := call(t, 1, heartbeat(t))
		body = append(body, bytes.Repeat([]byte(" "), protocol.MaxBodyBytes-len(body))...)
		status, out := post(t, srv.URL, body)
		if status != http.StatusOK {
			t.Fatalf("got status %d, want 200", status)
		}
		if resp := decodeResponse(t, out); resp.Error != nil {
			t.Errorf("got error %v, want a result", resp.Error)
		}
	})
}

func TestServerNotification(t *testing.T) {
	tests := []struct {
		name       string
		body       func(t *testing.T) []byte
		wantCalled bool
	}{
		{name: "valid", body: func(t *testing.T) []byte { return call(t, nil, heartbeat(t)) }, wantCalled: true},
		{name: "unknown method", body: func(t *testing.T) []byte {
			return fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"other","params":%s}`, mustJSON(t, heartbeat(t)))
		}},
		{name: "schema violation", body: func(t *testing.T) []byte { return call(t, nil, withPayload(t, heartbeat(t), "x")) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			h := protocol.HandlerFunc(func(context.Context, *protocol.Message) (*protocol.Message, error) {
				calls.Add(1)
				// A notification's answer, even an error, is dropped.
				return nil, errors.New("ignored")
			})
			rec := &recorder{}
			srv := serve(t, h, rec)
			body := tt.body(t)
			status, out := post(t, srv.URL, body)
			if status != http.StatusNoContent {
				t.Errorf("got status %d, want 204", status)
			}
			if len(out) != 0 {
				t.Errorf("got body %q, want none", out)
			}
			if got := calls.Load() == 1; got != tt.wantCalled {
				t.Errorf("got handler called %v, want %v", got, tt.wantCalled)
			}
			exs := rec.exchanges()
			if len(exs) != 1 || !bytes.Equal(exs[0].Request, body) || exs[0].Response != nil {
				t.Errorf("got exchanges %+v, want one with the request and no response", exs)
			}
		})
	}
}

func TestServerBatch(t *testing.T) {
	m1, m2, m3 := heartbeat(t), heartbeat(t), heartbeat(t)
	good := func(id any, m *protocol.Message) json.RawMessage { return call(t, id, m) }
	tests := []struct {
		name      string
		body      []byte
		wantCalls int32
		// wantIDs are the ids of the answers in order, nil for a single error answer.
		wantIDs []string
		// wantCodes are the error codes of the answers (0 for a result).
		wantCodes []int
		// wantStatus 204 means no answer at all.
		wantStatus int
	}{
		{
			name:      "two calls and a notification",
			body:      mustJSON(t, []json.RawMessage{good("a", m1), good(nil, m2), good("b", m3)}),
			wantCalls: 3, wantIDs: []string{`"a"`, `"b"`}, wantCodes: []int{0, 0}, wantStatus: http.StatusOK,
		},
		{
			name:      "invalid elements",
			body:      []byte(`[1, {"jsonrpc":"2.0"}, []]`),
			wantIDs:   []string{"null", "null", "null"},
			wantCodes: []int{-32600, -32600, -32600}, wantStatus: http.StatusOK,
		},
		{
			name:      "mixed",
			body:      mustJSON(t, []json.RawMessage{good(1, m1), json.RawMessage(`{"jsonrpc":"2.0","method":"x","id":2}`), good(3, m2)}),
			wantCalls: 2, wantIDs: []string{"1", "2", "3"}, wantCodes: []int{0, -32601, 0}, wantStatus: http.StatusOK,
		},
		{
			name:      "only notifications",
			body:      mustJSON(t, []json.RawMessage{good(nil, m1), good(nil, m2)}),
			wantCalls: 2, wantStatus: http.StatusNoContent,
		},
		{name: "empty", body: []byte(`[]`), wantCodes: []int{-32600}, wantStatus: http.StatusOK},
		{name: "over MaxBatch", body: mustJSON(t, batchOf(t, protocol.MaxBatch+1)), wantCodes: []int{-32600}, wantStatus: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			h := protocol.HandlerFunc(func(_ context.Context, in *protocol.Message) (*protocol.Message, error) {
				calls.Add(1)
				return heartbeatAnswer(t, in), nil
			})
			srv := serve(t, h, nil)
			status, out := post(t, srv.URL, tt.body)
			if status != tt.wantStatus {
				t.Fatalf("got status %d, want %d", status, tt.wantStatus)
			}
			if got := calls.Load(); got != tt.wantCalls {
				t.Errorf("got %d handler calls, want %d", got, tt.wantCalls)
			}
			if tt.wantStatus == http.StatusNoContent {
				if len(out) != 0 {
					t.Errorf("got body %q, want none", out)
				}
				return
			}
			if tt.wantIDs == nil {
				// A single error object, not an array.
				resp := decodeResponse(t, out)
				if resp.Error == nil || resp.Error.Code != tt.wantCodes[0] || string(resp.ID) != "null" {
					t.Errorf("got %s, want one error %d with id null", out, tt.wantCodes[0])
				}
				return
			}
			var answers []json.RawMessage
			if err := json.Unmarshal(out, &answers); err != nil {
				t.Fatalf("got %s, want an array: %v", out, err)
			}
			if len(answers) != len(tt.wantIDs) {
				t.Fatalf("got %d answers, want %d", len(answers), len(tt.wantIDs))
			}
			for i, a := range answers {
				resp := decodeResponse(t, a)
				if string(resp.ID) != tt.wantIDs[i] {
					t.Errorf("answer %d: got id %s, want %s", i, resp.ID, tt.wantIDs[i])
				}
				code := 0
				if resp.Error != nil {
					code = resp.Error.Code
				}
				if code != tt.wantCodes[i] {
					t.Errorf("answer %d: got code %d, want %d", i, code, tt.wantCodes[i])
				}
			}
		})
	}
}

func batchOf(t testing.TB, n int) []json.RawMessage {
	out := make([]json.RawMessage, n)
	for i := range out {
		out[i] = call(t, i, heartbeat(t))
	}
	return out
}

// TestServerHandlerErrors checks what the caller sees of each error a handler returns.
func TestServerHandlerErrors(t *testing.T) {
	const secret = "db password hunter2 at /var/lib/league.db"
	shared := protocol.Errorf(protocol.ReasonBusy, "busy, retry later")
	tests := []struct {
		name       string
		answer     func(in *protocol.Message) (*protocol.Message, error)
		wantCode   int
		wantReason protocol.Reason
		wantMsg    string
	}{
		{name: "plain error", answer: func(*protocol.Message) (*protocol.Message, error) { return nil, errors.New(secret) },
			wantCode: -32603, wantReason: protocol.ReasonInternal, wantMsg: "internal error"},
		{name: "wrapped plain error", answer: func(*protocol.Message) (*protocol.Message, error) {
			return nil, fmt.Errorf("store: %w", errors.New(secret))
		}, wantCode: -32603, wantReason: protocol.ReasonInternal, wantMsg: "internal error"},
		{name: "wrapped protocol error", answer: func(*protocol.Message) (*protocol.Message, error) {
			return nil, fmt.Errorf("check: %w", protocol.Errorf(protocol.ReasonSuspended, "player:p1 is suspended"))
		}, wantCode: -32011, wantReason: protocol.ReasonSuspended, wantMsg: "player:p1 is suspended"},
		{name: "shared error value", answer: func(*protocol.Message) (*protocol.Message, error) { return nil, shared },
			wantCode: -32017, wantReason: protocol.ReasonBusy, wantMsg: "busy, retry later"},
		{name: "code disagrees with reason", answer: func(*protocol.Message) (*protocol.Message, error) {
			return nil, &protocol.Error{Code: 12, Message: "m", Data: &protocol.ErrorData{Reason: protocol.ReasonRateLimited}}
		}, wantCode: -32010, wantReason: protocol.ReasonRateLimited, wantMsg: "m"},
		{name: "error without data", answer: func(*protocol.Message) (*protocol.Message, error) {
			return nil, &protocol.Error{Code: -32000, Message: secret}
		}, wantCode: -32603, wantReason: protocol.ReasonInternal, wantMsg: "internal error"},
		{name: "typed nil error", answer: func(*protocol.Message) (*protocol.Message, error) { return nil, (*protocol.Error)(nil) },
			wantCode: -32603, wantReason: protocol.ReasonInternal, wantMsg: "internal error"},
		{name: "no answer", answer: func(*protocol.Message) (*protocol.Message, error) { return nil, nil },
			wantCode: -32603, wantReason: protocol.ReasonInternal, wantMsg: "internal error"},
		{name: "answer violates its schema", answer: func(in *protocol.Message) (*protocol.Message, error) {
			a, err := in.Reply(protocol.HeartbeatResponse, protocol.SenderLeagueManager, map[string]any{"status": secret})
			return a, err
		}, wantCode: -32603, wantReason: protocol.ReasonInternal, wantMsg: "internal error"},
		{name: "answer with unencodable payload", answer: func(in *protocol.Message) (*protocol.Message, error) {
			a := heartbeatAnswer(t, in)
			a.Payload = json.RawMessage(`{"status":`)
			return a, nil
		}, wantCode: -32603, wantReason: protocol.ReasonInternal, wantMsg: "internal error"},
	}
	for _, r := range protocol.Reasons() {
		if c := r.Code(); c < -32099 || c > -32000 {
			continue
		}
		tests = append(tests, struct {
			name       string
			answer     func(in *protocol.Message) (*protocol.Message, error)
			wantCode   int
			wantReason protocol.Reason
			wantMsg    string
		}{name: string(r), answer: func(*protocol.Message) (*protocol.Message, error) {
			return nil, protocol.Errorf(r, "refused: %s", r)
		}, wantCode: r.Code(), wantReason: r, wantMsg: "refused: " + string(r)})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := protocol.HandlerFunc(func(_ context.Context, in *protocol.Message) (*protocol.Message, error) { return tt.answer(in) })
			srv := serve(t, h, nil)
			m := heartbeat(t)
			status, out := post(t, srv.URL, call(t, "x", m))
			if status != http.StatusOK {
				t.Fatalf("got status %d, want 200", status)
			}
			resp := decodeResponse(t, out)
			if resp.Error == nil {
				t.Fatalf("got result %s, want error", resp.Result)
			}
			if resp.Error.Code != tt.wantCode || resp.Error.Message != tt.wantMsg {
				t.Errorf("got %d %q, want %d %q", resp.Error.Code, resp.Error.Message, tt.wantCode, tt.wantMsg)
			}
			if resp.Error.Data == nil || resp.Error.Data.Reason != tt.wantReason {
				t.Fatalf("got data %+v, want reason %s", resp.Error.Data, tt.wantReason)
			}
			if resp.Error.Data.ConversationID != m.Envelope.ConversationID {
				t.Errorf("got data.conversation_id %q, want %q", resp.Error.Data.ConversationID, m.Envelope.ConversationID)
			}
			// INTERNAL says nothing beyond its message; every other reason names its cause.
			wantDetails := tt.wantMsg
			if tt.wantReason == protocol.ReasonInternal {
				wantDetails = ""
			}
			if resp.Error.Data.Details != wantDetails {
				t.Errorf("got data.details %q, want %q", resp.Error.Data.Details, wantDetails)
			}
			for _, leak := range []string{secret, "hunter2", testToken} {
				if bytes.Contains(out, []byte(leak)) {
					t.Errorf("answer %s leaks %q", out, leak)
				}
			}
		})
	}
	if shared.Data.ConversationID != "" {
		t.Errorf("server wrote conversation id %q into the handler's shared error", shared.Data.ConversationID)
	}
}

// TestServerErrorDetails checks data.details beyond the defaults: a handler's own details
// are kept, and details are bounded without splitting a character.
func TestServerErrorDetails(t *testing.T) {
	own := protocol.Errorf(protocol.ReasonBusy, "busy")
	own.Data.Details = "3 of 3 matches running, 16 of 16 queued"
	long := protocol.Errorf(protocol.ReasonInvalidResult, "%s", strings.Repeat("é", 5000))
	tests := []struct {
		name   string
		err    *protocol.Error
		check  func(d string) bool
		expect string
	}{
		{"handler's own details", own, func(d string) bool { return d == own.Data.Details }, "the handler's details"},
		{"long cause", long, func(d string) bool {
			return len(d) <= 4096 && utf8.ValidString(d) && strings.HasSuffix(d, "…") && strings.HasPrefix(d, "éé")
		}, "at most 4096 bytes of valid UTF-8 ending in …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, protocol.HandlerFunc(func(context.Context, *protocol.Message) (*protocol.Message, error) { return nil, tt.err }), nil)
			_, out := post(t, srv.URL, call(t, 1, heartbeat(t)))
			resp := decodeResponse(t, out)
			if resp.Error == nil || resp.Error.Data == nil {
				t.Fatalf("got %s, want an error with data", out)
			}
			if d := resp.Error.Data.Details; !tt.check(d) {
				t.Errorf("got data.details of %d bytes %.60q, want %s", len(d), d, tt.expect)
			}
		})
	}
}

// A recorder that fails changes no answer: the handler has committed what it says, and
// the recorder owns catching up (the League Manager's database leads its audit log).
func TestServerRecorderFailure(t *testing.T) {
	var called atomic.Bool
	h := protocol.HandlerFunc(func(_ context.Context, in *protocol.Message) (*protocol.Message, error) {
		called.Store(true)
		return heartbeatAnswer(t, in), nil
	})
	rec := &recorder{err: errRecord}
	srv := serve(t, h, rec)
	m := heartbeat(t)
	status, out := post(t, srv.URL, call(t, 9, m))
	if status != http.StatusOK {
		t.Fatalf("got status %d, want 200", status)
	}
	if !called.Load() {
		t.Error("handler not called")
	}
	resp := decodeResponse(t, out)
	if resp.Error != nil || !bytes.Contains(resp.Result, []byte(`"HEARTBEAT_RESPONSE"`)) {
		t.Fatalf("got %s, want the handler's HEARTBEAT_RESPONSE", out)
	}
	if string(resp.ID) != "9" {
		t.Errorf("got id %s, want 9", resp.ID)
	}
	if bytes.Contains(out, []byte(errRecord.Error())) {
		t.Errorf("answer %s leaks the recorder's error", out)
	}
	exs := rec.exchanges()
	if len(exs) != 1 || exs[0].ConversationID != m.Envelope.ConversationID || exs[0].Response == nil {
		t.Errorf("got exchanges %+v, want the one attempted", exs)
	}
}

// TestServerProcessDirect checks Process without HTTP: a notification is nil, a call is JSON.
func TestServerProcessDirect(t *testing.T) {
	s := protocol.NewServer(echoHandler(t), validator(t), nil, zerolog.Nop())
	if out := s.Process(context.Background(), call(t, nil, heartbeat(t))); out != nil {
		t.Errorf("got %s for a notification, want nil", out)
	}
	out := s.Process(context.Background(), call(t, 1, heartbeat(t)))
	if resp := decodeResponse(t, out); resp.Error != nil {
		t.Errorf("got error %v, want a result", resp.Error)
	}
}

// A handler owns the payload it was given: writing over it or appending to it changes
// neither the request the recorder was given nor the id of the answer.
func TestServerHandlerOwnsPayload(t *testing.T) {
	h := protocol.HandlerFunc(func(_ context.Context, in *protocol.Message) (*protocol.Message, error) {
		_ = append(in.Payload, `!!!!!!!!!!!!!!!!`...)
		for i := range in.Payload {
			in.Payload[i] = 'x'
		}
		return heartbeatAnswer(t, in), nil
	})
	rec := &recorder{}
	s := protocol.NewServer(h, validator(t), rec, zerolog.Nop())
	body := call(t, "abc", heartbeat(t))
	kept := bytes.Clone(body)
	out := s.Process(context.Background(), body)
	if resp := decodeResponse(t, out); resp.Error != nil || string(resp.ID) != `"abc"` {
		t.Errorf("got %s, want a result with id \"abc\"", out)
	}
	if exs := rec.exchanges(); len(exs) != 1 || !bytes.Equal(exs[0].Request, kept) {
		t.Errorf("the recorded request changed under the handler: %+v", exs)
	}
}

// Exchanges counts every request body processed, however it was answered: a call, a
// notification, a refusal and a batch (one body, one exchange).
func TestServerExchanges(t *testing.T) {
	s := protocol.NewServer(echoHandler(t), validator(t), nil, zerolog.Nop())
	if got := s.Exchanges(); got != 0 {
		t.Fatalf("got %d exchanges before any request, want 0", got)
	}
	ctx := context.Background()
	hb := heartbeat(t)
	batch := fmt.Appendf(nil, "[%s,%s]", call(t, 1, hb), call(t, 2, hb))
	for _, body := range [][]byte{call(t, 1, hb), call(t, nil, hb), []byte("not json"), batch} {
		s.Process(ctx, body)
	}
	if got := s.Exchanges(); got != 4 {
		t.Errorf("got %d exchanges, want 4", got)
	}
}
