package protocol

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
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
		if !provablyValid(s, p, 0) {
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
			if provablyValid(s, p, 0) {
				if err := s.Validate(p); err != nil {
					b, _ := json.Marshal(p)
					t.Fatalf("%s: fast path accepts %s, the library refuses: %v", mt, b, err)
				}
			}
		}
	})
}
