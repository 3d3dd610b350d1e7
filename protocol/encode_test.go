package protocol

import (
	"encoding/json"
	"testing"
)

// checkFrames checks that the frames built by hand are the bytes json.Marshal writes.
func checkFrames(t *testing.T, m *Message) {
	t.Helper()
	id := json.RawMessage(`"7b0e"`)
	want, err := json.Marshal(Request{JSONRPC: JSONRPCVersion, Method: Method, Params: m, ID: id})
	got, gotErr := requestBody(m, id)
	if (err != nil) != (gotErr != nil) || string(got) != string(want) {
		t.Fatalf("request:\n got %s (%v)\nwant %s (%v)", got, gotErr, want, err)
	}
	r := &Response{JSONRPC: JSONRPCVersion, Result: m, ID: id}
	want, err = json.Marshal(r)
	got, gotErr = encodeResponse(r)
	if (err != nil) != (gotErr != nil) || string(got) != string(want) {
		t.Fatalf("response:\n got %s (%v)\nwant %s (%v)", got, gotErr, want, err)
	}
}

func TestFramesAreMarshal(t *testing.T) {
	for mt, raw := range fastPathSeeds(t) {
		t.Run(mt, func(t *testing.T) {
			var m Message
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			checkFrames(t, &m) // a payload as read, with its whitespace
			var p map[string]any
			if err := json.Unmarshal(m.Payload, &p); err != nil {
				t.Fatal(err)
			}
			built, err := m.Reply(m.Envelope.MessageType, m.Envelope.Sender, p)
			if err != nil {
				t.Fatal(err)
			}
			checkFrames(t, built) // a payload json.Marshal wrote
		})
	}
	odd, err := NewMessage(HeartbeatRequest, "referee:<r&1>", map[string]string{"note": "a\u2028b <tag> \"q\" \\ \x01 \xff é"})
	if err != nil {
		t.Fatal(err)
	}
	odd.Envelope.MatchID = "m\xff\u2029"
	checkFrames(t, odd)
	odd.Payload = json.RawMessage(" { \"a\" : [1, 2] } ")
	checkFrames(t, odd)
	odd.Payload = json.RawMessage(`{"a":`)
	checkFrames(t, odd)
	odd.Payload = nil
	checkFrames(t, odd)
}

// FuzzFramesAreMarshal varies the envelope's strings and the payload.
func FuzzFramesAreMarshal(f *testing.F) {
	f.Add("referee:r1", "m-1", "p01", `{"a":1}`)
	f.Add("<&>", "\u2028", "\xff", ` {"a" : "\u003c"} `)
	f.Fuzz(func(t *testing.T, sender, matchID, value, payload string) {
		m, err := NewMessage(MoveEvent, sender, map[string]string{"v": value})
		if err != nil {
			t.Fatal(err)
		}
		m.Envelope.MatchID = matchID
		checkFrames(t, m)
		m.Payload = json.RawMessage(payload)
		checkFrames(t, m)
	})
}
