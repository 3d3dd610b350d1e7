package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fastPathSeeds are the schemas' example messages: each is valid, and the fast path must
// see it so, or it spares nothing.
func fastPathSeeds(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "schemas", "testdata", "examples", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.ToUpper(strings.TrimSuffix(filepath.Base(f), ".json"))] = raw
	}
	return out
}

func TestProvablyValidExamples(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for mt, raw := range fastPathSeeds(t) {
		s, err := v.messages[mt]()
		if err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		p, err := decodeValue(raw)
		if err != nil {
			t.Fatal(err)
		}
		if !s.fast.provablyValid(s.Schema, p, 0) {
			t.Errorf("%s: the fast path does not see the example as valid (library: %v)", mt, s.Validate(p))
		}
	}
}

// FuzzProvablyValid holds the fast path to the schema library: whatever it accepts, for
// any message type, the library accepts too.
func FuzzProvablyValid(f *testing.F) {
	for _, raw := range fastPathSeeds(f) {
		f.Add(raw)
		// Numbers and strings at the edges of the bounds the schemas set.
		for _, r := range []struct{ old, new string }{
			{`"step_number": 1`, `"step_number": -1`}, {`"step_number": 1`, `"step_number": 1.0`},
			{`"step_number": 1`, `"step_number": 100001`}, {`"step_number": 1`, `"step_number": 1e2`},
			{`"deadline_ms": 30000`, `"deadline_ms": 0`}, {`"league.v2"`, `"league.v3"`},
			{`Z"`, `+01:00"`}, {`"p01"`, `"p0\u00e9"`}, {`"win"`, `"WIN"`},
		} {
			if bytes.Contains(raw, []byte(r.old)) {
				f.Add(bytes.Replace(raw, []byte(r.old), []byte(r.new), 1))
			}
		}
	}
	// A move batch, whose schema chooses its shape with if/then/else, with and without
	// the single-move fields beside it.
	if ev, ok := fastPathSeeds(f)["MOVE_EVENT"]; ok {
		batch := `"payload": {"moves": [{"step_number": 1, "player_id": "p01", "move": 4, "outcome": "SUCCESS"}, {"step_number": 2, "player_id": "p02", "move": 0, "outcome": "SUCCESS"}]`
		if i := bytes.Index(ev, []byte(`"payload"`)); i >= 0 {
			if j := bytes.LastIndexByte(ev, '}'); j > i {
				f.Add(append(append(slices.Clone(ev[:i]), batch...), "}}"...))
				f.Add(append(append(slices.Clone(ev[:i]), strings.Replace(batch, `{"moves"`, `{"step_number": 1, "moves"`, 1)...), "}}"...))
			}
		}
	}
	v, err := NewValidator()
	if err != nil {
		f.Fatal(err)
	}
	if err := v.CompileAll(); err != nil {
		f.Fatal(err)
	}
	types := v.MessageTypes()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodeValue(data)
		if err != nil || !boundsOK(p, 0) {
			return
		}
		for _, mt := range types {
			s, _ := v.messages[mt]()
			if s.fast.provablyValid(s.Schema, p, 0) {
				if err := s.Validate(p); err != nil {
					b, _ := json.Marshal(p)
					t.Fatalf("%s: fast path accepts %s, the library refuses: %v", mt, b, err)
				}
			}
		}
	})
}

// The if/then/else of MOVE_EVENT: a batch is proved valid through then, a single move
// through else (its payload lacks the required moves); a batch with a single-move field
// beside it is left to the library, which refuses it.
func TestProvablyValidMoveBatch(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	s, err := v.messages[MoveEvent]()
	if err != nil {
		t.Fatal(err)
	}
	env := `{"envelope": {"protocol": "league.v2", "message_type": "MOVE_EVENT", "sender": "referee:ref1", "timestamp": "2026-11-22T01:21:50.123456Z",
		"conversation_id": "3b30ff6a-1474-4b42-acdc-4d7668dd0bed", "auth_token": "b77e536c-2949-41e4-852f-2a0c6fa5c510", "match_id": "match-38adb6e2"}, "payload": `
	for _, c := range []struct {
		payload string
		want    bool
	}{
		{`{"moves": [{"step_number": 1, "player_id": "p01", "move": 4, "outcome": "SUCCESS"}, {"step_number": 2, "player_id": "p02", "move": 0, "outcome": "SUCCESS"}]}`, true},
		{`{"step_number": 1, "player_id": "p01", "move": 4, "outcome": "SUCCESS"}`, true},
		{`{"step_number": 1, "moves": [{"step_number": 1, "player_id": "p01", "move": 4, "outcome": "SUCCESS"}]}`, false},
		{`{"step_number": 1, "move": 4, "outcome": "SUCCESS"}`, false},
	} {
		p, err := decodeValue([]byte(env + c.payload + "}"))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.fast.provablyValid(s.Schema, p, 0); got != c.want {
			t.Errorf("%s: provably valid %v, want %v", c.payload, got, c.want)
		}
		if lib := s.Validate(p) == nil; lib != c.want {
			t.Errorf("%s: the library says valid %v, want %v", c.payload, lib, c.want)
		}
	}
}
