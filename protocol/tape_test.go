package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// callBody wraps params as our client sends them.
func callBody(t testing.TB, params []byte, id string) []byte {
	t.Helper()
	var m Message
	if err := json.Unmarshal(params, &m); err != nil {
		t.Fatalf("decode params: %v", err)
	}
	body, err := json.Marshal(Request{JSONRPC: JSONRPCVersion, Method: Method, Params: &m, ID: json.RawMessage(id)})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestTapeReadsTheExamples checks that the one-pass path takes every example message,
// as a call and as an answer, and reads it as the long way does: otherwise it spares
// nothing.
func TestTapeReadsTheExamples(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for mt, raw := range fastPathSeeds(t) {
		body := callBody(t, raw, `"c1"`)
		id, got, ok := v.readCall(body)
		if !ok {
			t.Errorf("%s: not read in one pass", mt)
			continue
		}
		generic, _ := decodeValue(body)
		params := generic.(map[string]any)["params"].(map[string]any)
		want, _ := messageOf(body, "params", params)
		if string(id) != `"c1"` || got.Envelope != want.Envelope || !bytes.Equal(got.Payload, want.Payload) {
			t.Errorf("%s: got id %s, %+v %s; want \"c1\", %+v %s", mt, id, got.Envelope, got.Payload, want.Envelope, want.Payload)
		}
		answer, _ := json.Marshal(Response{JSONRPC: JSONRPCVersion, Result: want, ID: json.RawMessage(`"c1"`)})
		if _, ok := v.readAnswer(answer, []byte(`"c1"`), want.Envelope.ConversationID); !ok {
			t.Errorf("%s: answer not read in one pass", mt)
		}
		if _, ok := v.readAnswer(answer, []byte(`"c2"`), want.Envelope.ConversationID); ok {
			t.Errorf("%s: an answer with another id is read", mt)
		}
		if _, ok := v.readAnswer(answer, []byte(`"c1"`), "another"); ok {
			t.Errorf("%s: an answer of another conversation is read", mt)
		}
	}
}

// TestTapeLeavesTheRestToTheLongWay lists what the one-pass path must not take: each
// is answered by the long way, which names what is wrong or reads what is unusual.
func TestTapeLeavesTheRestToTheLongWay(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	good := callBody(t, fastPathSeeds(t)["REQUEST_MOVE"], `7`)
	if _, _, ok := v.readCall(good); !ok {
		t.Fatal("the good call is not read in one pass")
	}
	for name, body := range map[string][]byte{
		"trailing value":   append(bytes.Clone(good), ` {}`...),
		"trailing garbage": append(bytes.Clone(good), `x`...),
		"duplicate member": bytes.Replace(good, []byte(`"jsonrpc":"2.0"`), []byte(`"jsonrpc":"2.0","jsonrpc":"2.0"`), 1),
		"unknown member":   bytes.Replace(good, []byte(`"jsonrpc":"2.0"`), []byte(`"jsonrpc":"2.0","x":1`), 1),
		"escaped name":     bytes.Replace(good, []byte(`"method"`), []byte(`"\u006dethod"`), 1),
		"notification":     bytes.Replace(good, []byte(`,"id":7`), nil, 1),
		"object id":        bytes.Replace(good, []byte(`"id":7`), []byte(`"id":{}`), 1),
		"html in id":       bytes.Replace(good, []byte(`"id":7`), []byte(`"id":"<7>"`), 1),
		"invalid utf-8":    bytes.Replace(good, []byte(`"your_mark":"O"`), []byte("\"your_mark\":\"O\xff\""), 1),
		"other version":    bytes.Replace(good, []byte(`"2.0"`), []byte(`"1.0"`), 1),
		"batch":            append(append([]byte(`[`), good...), ']'),
		"schema violation": bytes.Replace(good, []byte(`"league.v2"`), []byte(`"league.v3"`), 1),
		"too deep":         bytes.Replace(good, []byte(`"id":7`), []byte(`"id":7,"x":`+string(bytes.Repeat([]byte(`[`), MaxDepth+2))+string(bytes.Repeat([]byte(`]`), MaxDepth+2))), 1),
	} {
		if bytes.Equal(body, good) {
			t.Fatalf("%s: the call was not changed", name)
		}
		if _, _, ok := v.readCall(body); ok {
			t.Errorf("%s: read in one pass", name)
		}
	}
}

// FuzzTape holds the one-pass path to the long way: a document it reads is valid JSON
// within the bounds; a message it proves valid, the schema library accepts; a member
// name check it is sure of agrees with the one over the decoded value.
func FuzzTape(f *testing.F) {
	for _, raw := range fastPathSeeds(f) {
		f.Add(raw)
		for _, r := range []struct{ old, new string }{
			{`"step_number": 1`, `"step_number": -1`}, {`"step_number": 1`, `"step_number": 1.0`},
			{`"league.v2"`, `"league.v3"`}, {`Z"`, `+01:00"`}, {`"p01"`, `"p0\u00e9"`}, {`"p01"`, `"p\u0030\u0031"`},
			{`"win"`, `"WIN"`}, {`"player_id"`, `"PLAYER_ID"`}, {`"move"`, `"Move"`}, {`"envelope"`, `"envelop\u0065"`},
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
	payloads := []reflect.Type{
		reflect.TypeFor[MoveRequest](), reflect.TypeFor[MoveAnswer](), reflect.TypeFor[ResultReport](),
		reflect.TypeFor[Invitation](), reflect.TypeFor[MoveBatch](), reflect.TypeFor[map[string]any](),
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tp := readTape(data)
		if tp == nil {
			return
		}
		p, err := decodeValue(data)
		if err != nil || !json.Valid(data) || !boundsOK(p, 0) {
			t.Fatalf("the tape reads %q, the long way refuses it (%v)", data, err)
		}
		for _, mt := range types {
			s, _ := v.messages[mt]()
			if s.fast.tapeValid(s.Schema, tp, 0, 0) {
				if err := s.Validate(p); err != nil {
					t.Fatalf("%s: the tape proves %s valid, the library refuses it: %v", mt, data, err)
				}
			}
		}
		for _, typ := range payloads {
			if ok, sure := tp.memberCaseOK(0, typ); sure && ok != memberCaseOK(p, typ) {
				t.Fatalf("%s: member names of %s: tape says %v, the decoded value %v", typ, data, ok, !ok)
			}
		}
	})
}

// TestReadTape checks what a tape refuses, each a case the long way must see.
func TestReadTape(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		read bool
	}{
		{`{"a":[1,"x",null,true,false,{"b":{}}]}`, true},
		{` {"a":1} `, true},
		{"\"a\xffb\"", false},
		{`{"a":1,"a":2}`, false},
		{`{"a":1} {"a":1}`, false},
		{`{"a":1}]`, false},
		{`1e1000`, false},
		{`"` + string(bytes.Repeat([]byte("x"), MaxStringBytes+1)) + `"`, false},
		{`[` + string(bytes.Repeat([]byte("0,"), MaxArrayItems)) + `0]`, false},
		{``, false},
	} {
		if got := readTape([]byte(tc.doc)) != nil; got != tc.read {
			t.Errorf("readTape(%.40q): read %v, want %v", tc.doc, got, tc.read)
		}
	}
	tp := readTape([]byte(`{"a":[1,"x"],"b":"\n"}`))
	if tp == nil || len(tp.nodes) != 7 || tp.nodes[0].count != 2 || tp.nodes[2].count != 2 || tp.member(0, "b") != 6 || !tp.nodes[6].escaped || string(tp.bytes(2)) != `[1,"x"]` {
		t.Errorf("tape of a small document: %+v", tp)
	}
}
