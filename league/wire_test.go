package league

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// wireCase is one request body and the answer it must get.
type wireCase struct {
	name string
	body string
	// want is the reason of the error answer; "" means no answer at all (HTTP 204).
	want protocol.Reason
}

// jsonWith returns the JSON of a valid QUERY_STANDINGS request changed by edit, which
// works on the decoded request.
func jsonWith(t *testing.T, base []byte, edit func(req map[string]any)) string {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(base, &req); err != nil {
		t.Fatal(err)
	}
	edit(req)
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func env(req map[string]any) map[string]any {
	return req["params"].(map[string]any)["envelope"].(map[string]any)
}

func payload(req map[string]any) map[string]any {
	return req["params"].(map[string]any)["payload"].(map[string]any)
}

// Every rule of the JSON-RPC framing and of the league.v2 envelope, over HTTP: each bad
// request is answered with HTTP 200, its JSON-RPC code and reason, and changes nothing.
func TestWireValidationRules(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2", "p3"})
	l.start()
	h.settle()
	web := httptest.NewServer(Routes(h.m, h.srv))
	defer web.Close()
	tok := l.playerTokens["p1"]
	q := requestBody(t, standingsQuery(t, "player:p1", tok, ""))
	reg := requestBody(t, playerRegistration(t, "p9"))
	_, ms := h.round()
	rep := requestBody(t, h.report("ref1", l.refTokens["ref1"], ms[0], decided(ms[0], 0)))
	deep := strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40)

	with := func(base []byte, edit func(map[string]any)) string { return jsonWith(t, base, edit) }
	setEnv := func(k string, v any) string { return with(q, func(r map[string]any) { env(r)[k] = v }) }
	delEnv := func(k string) string { return with(q, func(r map[string]any) { delete(env(r), k) }) }

	tests := []wireCase{
		// JSON-RPC 2.0 framing.
		{"not JSON", `{"jsonrpc": "2.0", "method": "league.handle",`, protocol.ReasonParseError},
		{"empty body", ``, protocol.ReasonParseError},
		{"trailing data", string(q) + ` {}`, protocol.ReasonParseError},
		{"not an object", `42`, protocol.ReasonInvalidRequest},
		{"empty batch", `[]`, protocol.ReasonInvalidRequest},
		{"batch of non-requests", `[1]`, protocol.ReasonInvalidRequest},
		{"no jsonrpc", with(q, func(r map[string]any) { delete(r, "jsonrpc") }), protocol.ReasonInvalidRequest},
		{"jsonrpc 1.0", with(q, func(r map[string]any) { r["jsonrpc"] = "1.0" }), protocol.ReasonInvalidRequest},
		{"method not a string", with(q, func(r map[string]any) { r["method"] = 7 }), protocol.ReasonInvalidRequest},
		{"id an object", with(q, func(r map[string]any) { r["id"] = map[string]any{} }), protocol.ReasonInvalidRequest},
		{"unknown member", with(q, func(r map[string]any) { r["extra"] = true }), protocol.ReasonInvalidRequest},
		{"other method", with(q, func(r map[string]any) { r["method"] = "league.other" }), protocol.ReasonMethodNotFound},
		{"no params", with(q, func(r map[string]any) { delete(r, "params") }), protocol.ReasonSchemaViolation},
		{"params not an object", with(q, func(r map[string]any) { r["params"] = []any{1} }), protocol.ReasonSchemaViolation},
		{"no envelope", with(q, func(r map[string]any) { delete(r["params"].(map[string]any), "envelope") }), protocol.ReasonSchemaViolation},
		{"no payload", with(q, func(r map[string]any) { delete(r["params"].(map[string]any), "payload") }), protocol.ReasonSchemaViolation},
		{"member beside envelope and payload", with(q, func(r map[string]any) { r["params"].(map[string]any)["meta"] = 1 }), protocol.ReasonSchemaViolation},
		// Envelope.
		{"protocol league.v1", setEnv("protocol", "league.v1"), protocol.ReasonSchemaViolation},
		{"no protocol", delEnv("protocol"), protocol.ReasonSchemaViolation},
		{"unknown message_type", setEnv("message_type", "FOO"), protocol.ReasonSchemaViolation},
		{"no message_type", delEnv("message_type"), protocol.ReasonSchemaViolation},
		{"no sender", delEnv("sender"), protocol.ReasonSchemaViolation},
		{"sender without role", setEnv("sender", "p1"), protocol.ReasonSchemaViolation},
		{"sender with empty id", setEnv("sender", "player:"), protocol.ReasonSchemaViolation},
		{"sender with a path", setEnv("sender", "player:../p1"), protocol.ReasonSchemaViolation},
		{"sender role not allowed for the message", setEnv("sender", "referee:ref1"), protocol.ReasonSchemaViolation},
		{"no timestamp", delEnv("timestamp"), protocol.ReasonSchemaViolation},
		{"timestamp not UTC", setEnv("timestamp", "2026-11-22T01:21:50+02:00"), protocol.ReasonSchemaViolation},
		{"timestamp -00:00", setEnv("timestamp", "2026-11-22T01:21:50-00:00"), protocol.ReasonSchemaViolation},
		{"timestamp without zone", setEnv("timestamp", "2026-11-22T01:21:50"), protocol.ReasonSchemaViolation},
		{"timestamp not a date", setEnv("timestamp", "yesterday"), protocol.ReasonSchemaViolation},
		{"no conversation_id", delEnv("conversation_id"), protocol.ReasonSchemaViolation},
		{"conversation_id not a UUID", setEnv("conversation_id", "conv-1"), protocol.ReasonSchemaViolation},
		{"conversation_id UUID v1", setEnv("conversation_id", "c232ab00-9414-11ec-b3c8-9f6bdeced846"), protocol.ReasonSchemaViolation},
		{"unknown envelope field", setEnv("priority", "high"), protocol.ReasonSchemaViolation},
		{"no auth_token where required", delEnv("auth_token"), protocol.ReasonSchemaViolation},
		{"auth_token with bad characters", setEnv("auth_token", "tok en"), protocol.ReasonSchemaViolation},
		{"auth_token too long", setEnv("auth_token", strings.Repeat("a", 257)), protocol.ReasonSchemaViolation},
		{"league_id with a slash", setEnv("league_id", "league/1"), protocol.ReasonSchemaViolation},
		{"round_id with a space", setEnv("round_id", "round 1"), protocol.ReasonSchemaViolation},
		{"game_type upper case", setEnv("game_type", "TicTacToe"), protocol.ReasonSchemaViolation},
		{"envelope field of the wrong type", setEnv("league_id", 7), protocol.ReasonSchemaViolation},
		// Payloads.
		{"registration without endpoint_url", with(reg, func(r map[string]any) { delete(payload(r), "endpoint_url") }), protocol.ReasonSchemaViolation},
		{"registration endpoint not http", with(reg, func(r map[string]any) { payload(r)["endpoint_url"] = "ftp://127.0.0.1/mcp" }), protocol.ReasonSchemaViolation},
		{"registration id that is a path", with(reg, func(r map[string]any) {
			payload(r)["player_id"] = "../p9"
			env(r)["sender"] = "player:p9"
		}), protocol.ReasonSchemaViolation},
		{"registration id too long", with(reg, func(r map[string]any) { payload(r)["player_id"] = strings.Repeat("p", 65) }), protocol.ReasonSchemaViolation},
		{"payload not an object", with(q, func(r map[string]any) { r["params"].(map[string]any)["payload"] = "x" }), protocol.ReasonSchemaViolation},
		{"payload field of the wrong type", with(q, func(r map[string]any) { payload(r)["round_id"] = 3 }), protocol.ReasonSchemaViolation},
		{"payload nested too deep", with(rep, func(r map[string]any) {
			var v any
			_ = json.Unmarshal([]byte(deep), &v)
			payload(r)["game_metadata"] = map[string]any{"x": v}
		}), protocol.ReasonSchemaViolation},
		{"payload string too long", with(rep, func(r map[string]any) {
			payload(r)["game_metadata"] = map[string]any{"log": strings.Repeat("x", 70<<10)}
		}), protocol.ReasonSchemaViolation},
		{"huge number", with(rep, func(r map[string]any) { payload(r)["game_metadata"] = map[string]any{"n": json.Number("1e999999")} }), protocol.ReasonSchemaViolation},
		// A League Manager only takes the messages addressed to it.
		{"message for a player", with(q, func(r map[string]any) {
			e := env(r)
			e["message_type"], e["sender"], e["match_id"], e["game_type"] = "GAME_INVITATION", "referee:ref1", ms[0].ID, "tic_tac_toe"
			p := r["params"].(map[string]any)
			p["payload"] = map[string]any{"match_id": ms[0].ID, "game_type": "tic_tac_toe", "opponents": []string{"p2"}}
		}), protocol.ReasonUnsupportedMessage},
		// A valid notification (no id) gets no answer.
		{"notification", with(q, func(r map[string]any) { delete(r, "id") }), ""},
		// An invalid one without id is still answered, with id null.
		{"invalid notification", with(q, func(r map[string]any) { delete(r, "id"); r["jsonrpc"] = "1.0" }), protocol.ReasonInvalidRequest},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			h.unchanged(tc.name, func() { postWire(t, h, web.URL+"/mcp", tc) })
		})
	}

	t.Run("HTTP-level refusals", func(t *testing.T) {
		for _, c := range []struct {
			name, method, path string
			body               []byte
			want               int
		}{
			{"GET /mcp", http.MethodGet, "/mcp", nil, http.StatusMethodNotAllowed},
			{"body over 1 MiB", http.MethodPost, "/mcp", bytes.Repeat([]byte(" "), protocol.MaxBodyBytes+1), http.StatusRequestEntityTooLarge},
			{"wrong path", http.MethodPost, "/rpc", q, http.StatusNotFound},
		} {
			h.unchanged(c.name, func() {
				req, _ := http.NewRequest(c.method, web.URL+c.path, bytes.NewReader(c.body))
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != c.want {
					t.Errorf("%s: HTTP %d, want %d", c.name, res.StatusCode, c.want)
				}
			})
		}
	})
}

// postWire posts tc.body and checks the HTTP status and the JSON-RPC error.
func postWire(t *testing.T, h *harness, url string, tc wireCase) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(tc.body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if tc.want == "" {
		if res.StatusCode != http.StatusNoContent || len(out) != 0 {
			t.Fatalf("HTTP %d %s, want 204 and no body", res.StatusCode, out)
		}
		return
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d, want 200 for every JSON-RPC answer", res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	h.checkNoSecret("error answer", out)
	if bytes.HasPrefix(out, []byte("[")) { // a batch of one
		var batch []json.RawMessage
		if err := json.Unmarshal(out, &batch); err != nil || len(batch) != 1 {
			t.Fatalf("batch answer %s, want one answer", out)
		}
		out = batch[0]
	}
	var resp protocol.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("answer %s: %v", out, err)
	}
	if resp.JSONRPC != "2.0" || resp.Error == nil || resp.Result != nil {
		t.Fatalf("answer %s, want a JSON-RPC 2.0 error", out)
	}
	checkError(t, resp.Error, tc.want)
}
