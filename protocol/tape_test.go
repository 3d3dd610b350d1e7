package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// longCall is what Process's long way reads of a single call with an id, short of the
// handler; ok is false where it would answer with an error.
func longCall(v *Validator, body []byte) (json.RawMessage, *Message, bool) {
	val, err := decodeValue(body)
	obj, _ := val.(map[string]any)
	if err != nil || obj == nil || obj["jsonrpc"] != JSONRPCVersion || obj["method"] != Method || len(obj) != 4 {
		return nil, nil, false
	}
	id, hasID, idOK := requestID(obj)
	params, _ := obj["params"].(map[string]any)
	if !hasID || !idOK || params == nil || len(v.ValidateParams(params)) > 0 {
		return nil, nil, false
	}
	m, ok := messageOf(body, "params", params)
	return id, m, ok
}

// longAnswer is what Client.attempt's long way reads of an answer.
func longAnswer(v *Validator, raw, id []byte, conv string) (*Message, bool) {
	var resp Response
	if json.Unmarshal(raw, &resp) != nil || resp.JSONRPC != JSONRPCVersion || !bytes.Equal(bytes.TrimSpace(resp.ID), id) ||
		resp.Error != nil || resp.Result == nil || resp.Result.Envelope.ConversationID != conv || v.ValidateMessage(resp.Result) != nil {
		return nil, false
	}
	return resp.Result, true
}

// sameReading fails unless the one-pass message a and the long way's b have the same
// envelope and payload, and decode alike into every payload type.
func sameReading(t *testing.T, a, b *Message, data []byte) {
	t.Helper()
	if a.Envelope != b.Envelope || !bytes.Equal(a.Payload, b.Payload) {
		t.Fatalf("%q read as %+v %s, the long way %+v %s", data, a.Envelope, a.Payload, b.Envelope, b.Payload)
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[MoveRequest](), reflect.TypeFor[MoveAnswer](), reflect.TypeFor[ResultReport](),
		reflect.TypeFor[Invitation](), reflect.TypeFor[MoveBatch](), reflect.TypeFor[map[string]any](),
	} {
		pa, pb := reflect.New(typ), reflect.New(typ)
		ea, eb := a.Decode(pa.Interface()), b.Decode(pb.Interface())
		if fmt.Sprint(ea) != fmt.Sprint(eb) || !reflect.DeepEqual(pa.Interface(), pb.Interface()) {
			t.Fatalf("%s of %q: one pass %v %+v, the long way %v %+v", typ, data, ea, pa, eb, pb)
		}
	}
}

// FuzzOnePassReadsAsTheLongWay: a call or an answer read in one pass is one the long way
// takes, read the same, id included.
func FuzzOnePassReadsAsTheLongWay(f *testing.F) {
	for _, raw := range fastPathSeeds(f) {
		f.Add(callBody(f, raw, `7`))
		f.Add(fmt.Appendf(nil, ` { "id" : -0 , "method":"league.handle", "params" : %s , "jsonrpc":"2.0" } `, raw))
		var m Message
		if err := json.Unmarshal(raw, &m); err != nil {
			f.Fatal(err)
		}
		answer, _ := json.Marshal(Response{JSONRPC: JSONRPCVersion, Result: &m, ID: json.RawMessage(`"c1"`)})
		f.Add(answer)
	}
	v, err := NewValidator()
	if err != nil {
		f.Fatal(err)
	}
	if err := v.CompileAll(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if id, m, ok := v.readCall(data); ok {
			lid, lm, lok := longCall(v, data)
			if !lok || !bytes.Equal(id, lid) {
				t.Fatalf("%q: one pass takes it with id %s, the long way: %v, id %s", data, id, lok, lid)
			}
			sameReading(t, m, lm, data)
		}
		var probe Response
		if json.Unmarshal(data, &probe) != nil || probe.Result == nil {
			return
		}
		id, conv := bytes.TrimSpace(probe.ID), probe.Result.Envelope.ConversationID
		if m, ok := v.readAnswer(data, id, conv); ok {
			lm, lok := longAnswer(v, data, id, conv)
			if !lok {
				t.Fatalf("%q: one pass takes the answer, the long way refuses it", data)
			}
			sameReading(t, m, lm, data)
		}
	})
}

// TestOnePassPayloadOwnsItsBytes: a handler that appends to the payload it was given
// does not write over the id of its answer, and a client's caller that appends to an
// answer's payload does not change the response its recorder was given.
func TestOnePassPayloadOwnsItsBytes(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	body := callBody(t, fastPathSeeds(t)["REQUEST_MOVE"], `"abc"`)
	id, m, ok := v.readCall(body)
	if !ok {
		t.Fatal("not read in one pass")
	}
	_ = append(m.Payload, `!!!!!!!!!!!!!!!!`...)
	if string(id) != `"abc"` {
		t.Errorf("id after an append to the payload: %s", id)
	}
	answer, _ := json.Marshal(Response{JSONRPC: JSONRPCVersion, Result: m, ID: json.RawMessage(`"c1"`)})
	kept := bytes.Clone(answer)
	ans, ok := v.readAnswer(answer, []byte(`"c1"`), m.Envelope.ConversationID)
	if !ok {
		t.Fatal("answer not read in one pass")
	}
	_ = append(ans.Payload[:0], `xxxxxxxx`...)
	if !bytes.Equal(answer, kept) {
		t.Errorf("the response bytes changed under the answer's payload")
	}
}

// TestDecodingIntoAMessageForgetsItsPayload: json.Unmarshal into a built message writes
// the new payload into the old one's array; what was known of the old one must go.
func TestDecodingIntoAMessageForgetsItsPayload(t *testing.T) {
	m, err := NewMessage(HeartbeatRequest, "referee:r1", map[string]int{"a": 12})
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(`{"envelope":{},"payload":{"a": 1}}`), m); err != nil {
		t.Fatal(err)
	}
	checkFrames(t, m)
	for _, id := range []string{` 1`, `"<a>"`, `"a b"`, `1`, `null`} {
		r := &Response{JSONRPC: JSONRPCVersion, Result: m, ID: json.RawMessage(id)}
		want, _ := json.Marshal(r)
		if got, _ := encodeResponse(r); string(got) != string(want) {
			t.Errorf("id %s: got %s, want %s", id, got, want)
		}
	}
}
