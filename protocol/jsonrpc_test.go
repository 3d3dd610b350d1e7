package protocol

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRawMember holds rawMember to encoding/json: for any JSON object, the value of a
// member is the one decoding into a map keeps (the last of duplicates), byte for byte.
func FuzzRawMember(f *testing.F) {
	for _, s := range []string{
		`{"params":{"envelope":{},"payload":{"a":[1,"}",{"b":"\""}]}},"id":1}`,
		` { "payload" : null , "pay\u006coad" : [ ] } `,
		`{"payload":"x\\","payload":true}`,
		`{"a":{"payload":1},"b":"payload"}`,
		`{}`,
		`[{"payload":1}]`,
	} {
		f.Add([]byte(s), "payload")
	}
	f.Fuzz(func(t *testing.T, obj []byte, name string) {
		var want map[string]json.RawMessage
		if json.Unmarshal(obj, &want) != nil || want == nil {
			return
		}
		got, ok := rawMember(obj, name)
		w, found := want[name]
		if ok != found {
			t.Fatalf("rawMember(%q, %q): found %v, encoding/json %v", obj, name, ok, found)
		}
		if ok && !bytes.Equal(got, w) {
			t.Fatalf("rawMember(%q, %q) = %q, encoding/json %q", obj, name, got, w)
		}
	})
}
