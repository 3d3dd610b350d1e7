package protocol_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// TestCompileAll: schemas compile on first use while serving, so a broken one must
// fail here instead. Compiling checks each file against the draft 2020-12 meta-schema.
func TestCompileAll(t *testing.T) {
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.CompileAll(); err != nil {
		t.Fatalf("CompileAll: %v", err)
	}
	for _, mt := range v.MessageTypes() {
		m := exampleMessage(t, strings.ToLower(mt))
		if err := v.ValidateMessage(m); err != nil {
			t.Errorf("example %s: %v", mt, err)
		}
	}
}

// TestWarm: every role's list names message types with a schema, and a warmed validator
// judges their examples as a cold one does; a type without a schema is refused by name.
func TestWarm(t *testing.T) {
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range [][]string{protocol.PlayerReceives, protocol.RefereeReceives, protocol.LeagueManagerReceives} {
		if err := v.Warm(list...); err != nil {
			t.Fatalf("Warm(%v): %v", list, err)
		}
		for _, mt := range list {
			if err := v.ValidateMessage(exampleMessage(t, strings.ToLower(mt))); err != nil {
				t.Errorf("example %s after Warm: %v", mt, err)
			}
		}
	}
	if err := v.Warm(protocol.RequestMove, "NO_SUCH_MESSAGE"); err == nil || !strings.Contains(err.Error(), `"NO_SUCH_MESSAGE"`) {
		t.Errorf("Warm of an unknown type: %v, want an error naming it", err)
	}
}

func exampleMessage(t *testing.T, name string) *protocol.Message {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "schemas", "testdata", "examples", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m protocol.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("decode example %s: %v", name, err)
	}
	return &m
}

// TestLazyCompileViolations: the first message of a type, which compiles its schema, gets
// the same path-shaped violations as every later one.
func TestLazyCompileViolations(t *testing.T) {
	warm := validator(t)
	for _, mt := range warm.MessageTypes() {
		t.Run(mt, func(t *testing.T) {
			p := params(t, exampleMessage(t, strings.ToLower(mt)))
			delete(p["envelope"].(map[string]any), "sender")
			p["envelope"].(map[string]any)["extra"] = true
			p["payload"] = map[string]any{"a": map[string]any{"b": []any{json.Number("1")}}}
			cold, err := protocol.NewValidator()
			if err != nil {
				t.Fatal(err)
			}
			got := cold.ValidateParams(p)
			if len(got) == 0 {
				t.Fatal("got no violation")
			}
			for _, vi := range got {
				if s := vi.String(); !strings.HasPrefix(s, "/") || !strings.Contains(s, ": ") {
					t.Errorf("violation %q is not `path: message`", s)
				}
			}
			if want := warm.ValidateParams(p); !reflect.DeepEqual(got, want) {
				t.Errorf("cold validator: got %v, warm one %v", got, want)
			}
		})
	}
}

// TestValidateMessageAsOnTheWire: ValidateMessage judges a message exactly as it would
// be judged after encoding it and decoding the bytes.
func TestValidateMessageAsOnTheWire(t *testing.T) {
	v := validator(t)
	viaWire := func(m *protocol.Message) string {
		raw, err := json.Marshal(m)
		if err != nil {
			return "encode"
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var p any
		if err := d.Decode(&p); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(v.ValidateParams(p))
	}
	direct := func(m *protocol.Message) string {
		err := v.ValidateMessage(m)
		switch {
		case err == nil:
			return "[]"
		case strings.HasPrefix(err.Error(), "encode message"):
			return "encode"
		}
		_, vs, _ := strings.Cut(err.Error(), "violates its schema: ")
		return "[" + strings.ReplaceAll(vs, "; ", " ") + "]"
	}
	mutations := map[string]func(m *protocol.Message){
		"as is":                   func(*protocol.Message) {},
		"invalid utf-8 in sender": func(m *protocol.Message) { m.Envelope.Sender = "player:\xffp\xfe\xfd1" },
		"invalid utf-8 in match":  func(m *protocol.Message) { m.Envelope.MatchID = "m\xc3" },
		"empty context fields":    func(m *protocol.Message) { m.Envelope.MatchID, m.Envelope.AuthToken = "", "" },
		"empty required field":    func(m *protocol.Message) { m.Envelope.Timestamp = "" },
		"no payload":              func(m *protocol.Message) { m.Payload = nil },
		"null payload":            func(m *protocol.Message) { m.Payload = json.RawMessage("null") },
		"spaced payload":          func(m *protocol.Message) { m.Payload = json.RawMessage(" {\n\"x\" : 1e3 } ") },
		"payload with html":       func(m *protocol.Message) { m.Payload = json.RawMessage(`{"reason":"<b>&amp;</b>","n":1.50}`) },
		"invalid payload":         func(m *protocol.Message) { m.Payload = json.RawMessage(`{"a":`) },
		"empty payload":           func(m *protocol.Message) { m.Payload = json.RawMessage{} },
		"trailing payload":        func(m *protocol.Message) { m.Payload = json.RawMessage(`{} {}`) },
		"deep payload": func(m *protocol.Message) {
			m.Payload = json.RawMessage(strings.Repeat(`{"a":`, 40) + "1" + strings.Repeat("}", 40))
		},
	}
	for _, name := range []string{"request_move", "move_response", "match_result_report", "game_over"} {
		for mname, mutate := range mutations {
			m := exampleMessage(t, name)
			mutate(m)
			if got, want := direct(m), viaWire(m); got != want {
				t.Errorf("%s, %s: got %s, want %s", name, mname, got, want)
			}
		}
	}
}
