package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agentleague/agentleague/protocol"
)

// FuzzServerProcess feeds arbitrary bodies to Server.Process. The handler echoes the
// message, which validates as an answer only for some types, so both the result and the
// INTERNAL paths run. Process must never panic; its output is nil or valid JSON made of
// well-formed JSON-RPC answers whose codes agree with their reasons.
func FuzzServerProcess(f *testing.F) {
	f.Add(call(f, 1, heartbeat(f)))
	f.Add(call(f, nil, heartbeat(f)))
	h := protocol.HandlerFunc(func(_ context.Context, m *protocol.Message) (*protocol.Message, error) { return m, nil })
	s := protocol.NewServer(h, validator(f), discard{}, zerolog.Nop())
	f.Fuzz(func(t *testing.T, body []byte) {
		out := s.Process(context.Background(), body)
		if out == nil {
			if !json.Valid(body) {
				t.Fatalf("no answer to invalid JSON %q", body)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("answer is not JSON: %q", out)
		}
		var answers []json.RawMessage
		if trimmed := bytes.TrimSpace(out); len(trimmed) > 0 && trimmed[0] == '[' {
			if err := json.Unmarshal(out, &answers); err != nil {
				t.Fatalf("batch answer %q: %v", out, err)
			}
			if len(answers) == 0 || len(answers) > protocol.MaxBatch {
				t.Fatalf("got a batch answer of %d, want 1..%d", len(answers), protocol.MaxBatch)
			}
		} else {
			answers = []json.RawMessage{out}
		}
		for _, a := range answers {
			resp := decodeResponse(t, a)
			if e := resp.Error; e != nil {
				if e.Data == nil || e.Data.Reason == "" {
					t.Fatalf("error without reason: %s", a)
				}
				if e.Code != e.Data.Reason.Code() {
					t.Fatalf("got code %d for reason %s, want %d", e.Code, e.Data.Reason, e.Data.Reason.Code())
				}
			}
		}
	})
}

// discard is a Recorder that keeps nothing, so a long fuzzing run does not grow.
type discard struct{}

func (discard) Record(protocol.Exchange) error { return nil }

// FuzzValidateParams feeds arbitrary JSON values to Validator.ValidateParams: it must
// never panic, always name a JSON pointer and a message, and be deterministic.
func FuzzValidateParams(f *testing.F) {
	f.Add(mustJSON(f, heartbeat(f)))
	v := validator(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		var params any
		if err := d.Decode(&params); err != nil {
			return
		}
		first := v.ValidateParams(params)
		for _, vi := range first {
			if vi.Path != "" && !strings.HasPrefix(vi.Path, "/") {
				t.Fatalf("violation path %q is not a JSON pointer", vi.Path)
			}
			if vi.Message == "" {
				t.Fatalf("violation at %q has no message", vi.Path)
			}
			if s := vi.String(); !strings.HasPrefix(s, "/") || !strings.Contains(s, ": ") {
				t.Fatalf("violation %q is not `path: message`", s)
			}
		}
		if again := v.ValidateParams(params); !reflect.DeepEqual(first, again) {
			t.Fatalf("not deterministic: %v then %v", first, again)
		}
	})
}
