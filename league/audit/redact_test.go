package audit

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// redactScan and the decoding redaction agree on every object they both take: the same
// document, secrets replaced, whatever the nesting, spacing and key order.
func TestRedactScanAgreesWithDecoding(t *testing.T) {
	for _, raw := range redactSeeds {
		checkScanAgrees(t, []byte(raw))
	}
}

// FuzzRedactScan checks the agreement on arbitrary input: wherever scannable accepts a
// document, the scan keeps no secret and changes nothing else.
func FuzzRedactScan(f *testing.F) {
	for _, raw := range redactSeeds {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkScanAgrees(t, raw)
	})
}

var redactSeeds = []string{
	`{}`,
	` { "a" : 1 , "b" : [ 1 , 2 , { "token" : "x" } ] } `,
	`{"auth_token":"s","x":{"credential":{"k":[1,{"secret":"q"}]},"y":"auth_token"},"password":null}`,
	`{"match_credentials":{"p1":"a","p2":"b"},"z":[[],{}],"n":-1.5e3,"t":true,"f":false}`,
	`{"s":"a \"token\": b","token":"with \" quote and \\ slash","k":"\n"}`,
	`{"nested":{"auth_token":{"deep":["a","b"]},"after":1},"admin_token":123}`,
	`{"a":"\u0074oken"}`,
}

func checkScanAgrees(t *testing.T, raw []byte) {
	t.Helper()
	obj, ok := scannable(raw)
	if !ok {
		return
	}
	fast := redactScan(obj)
	if !json.Valid(fast) {
		t.Fatalf("scan of %s gave invalid JSON %s", raw, fast)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, fast); err != nil || !bytes.Equal(compact.Bytes(), fast) {
		t.Fatalf("scan of %s is not compact: %s", raw, fast)
	}
	var got, want any
	if err := json.Unmarshal(fast, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(redactDecoded(obj), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("scan of %s:\n got %s\nwant %s", raw, fast, redactDecoded(obj))
	}
}
