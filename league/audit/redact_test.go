package audit

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRedact checks what the log needs of any message: a compact JSON object on one
// line, in which every secret field, however nested or escaped, holds "[REDACTED]".
func FuzzRedact(f *testing.F) {
	for _, raw := range []string{
		`{}`,
		` { "a" : 1 , "b" : [ 1 , 2 , { "token" : "x" } ] } `,
		`{"auth_token":"s","x":{"credential":{"k":[1,{"secret":"q"}]},"y":"auth_token"},"password":null}`,
		`{"match_credentials":{"p1":"a","p2":"b"},"z":[[],{}],"n":-1.5e3,"t":true,"f":false}`,
		`{"s":"a \"token\": b","token":"with \" quote and \\ slash","k":"\n"}`,
		`{"nested":{"auth_token":{"deep":["a","b"]},"after":1},"admin_token":123}`,
		`{"a":"\u0074oken","\u0074oken":"s"}`,
		`{"bad": json auth_token: "q1234"`,
	} {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out := redact(raw)
		var compact bytes.Buffer
		if err := json.Compact(&compact, out); err != nil || !bytes.Equal(compact.Bytes(), out) {
			t.Fatalf("redact(%q) = %s, not compact JSON: %v", raw, out, err)
		}
		var v map[string]any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("redact(%q) = %s, not an object: %v", raw, out, err)
		}
		checkRedacted(t, raw, v)
	})
}

func checkRedacted(t *testing.T, raw []byte, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if secretFields[k] && e != redacted {
				t.Fatalf("redact(%q) kept %s: %v", raw, k, e)
			}
			checkRedacted(t, raw, e)
		}
	case []any:
		for _, e := range x {
			checkRedacted(t, raw, e)
		}
	}
}
