package protocol

import "encoding/json"

// The frames below are what json.Marshal writes for a Request or a Response carrying a
// message, built without reflection and without compacting again a payload that
// json.Marshal wrote (newMessage): encoding was the largest cost left of a call after
// reading it in one pass. Anything else is written by json.Marshal itself.

// requestBody is json.Marshal(Request{JSONRPCVersion, Method, m, id}) for a non-empty id.
func requestBody(m *Message, id json.RawMessage) ([]byte, error) {
	b := make([]byte, 0, 256+len(m.Payload))
	b = append(b, `{"jsonrpc":"2.0","method":"`+Method+`","params":`...)
	b, err := appendMessage(b, m)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"id":`...)
	b = append(b, id...)
	return append(b, '}'), nil
}

// encodeResponse is json.Marshal(r).
func encodeResponse(r *Response) ([]byte, error) {
	if r.Result == nil || r.Error != nil || r.JSONRPC != JSONRPCVersion || !plainToken(r.ID) {
		return json.Marshal(r)
	}
	b := make([]byte, 0, 256+len(r.Result.Payload))
	b = append(b, `{"jsonrpc":"2.0","result":`...)
	b, err := appendMessage(b, r.Result)
	if err != nil {
		return nil, err
	}
	b = append(b, `,"id":`...)
	b = append(b, r.ID...)
	return append(b, '}'), nil
}

// appendMessage appends json.Marshal(m).
func appendMessage(b []byte, m *Message) ([]byte, error) {
	e := &m.Envelope
	b = append(b, `{"envelope":{"protocol":`...)
	b = appendString(b, e.Protocol)
	b = append(b, `,"message_type":`...)
	b = appendString(b, e.MessageType)
	b = append(b, `,"sender":`...)
	b = appendString(b, e.Sender)
	b = append(b, `,"timestamp":`...)
	b = appendString(b, e.Timestamp)
	b = append(b, `,"conversation_id":`...)
	b = appendString(b, e.ConversationID)
	for _, f := range [...]struct{ name, value string }{
		{`,"auth_token":`, e.AuthToken}, {`,"league_id":`, e.LeagueID}, {`,"round_id":`, e.RoundID}, {`,"match_id":`, e.MatchID}, {`,"game_type":`, e.GameType},
	} {
		if f.value != "" {
			b = append(b, f.name...)
			b = appendString(b, f.value)
		}
	}
	b = append(b, `},"payload":`...)
	if d := m.cached(); d != nil && d.marshaled {
		b = append(b, m.Payload...)
	} else {
		p, err := json.Marshal(m.Payload) // checked and compacted as json.Marshal(m) does
		if err != nil {
			return nil, err
		}
		b = append(b, p...)
	}
	return append(b, '}'), nil
}

// plainToken reports whether json.Marshal copies the JSON value id as it is: a token of
// printable ASCII without spaces or characters it escapes for HTML.
func plainToken(id []byte) bool {
	for _, c := range id {
		if c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9' || string(id) == "null")
}

// appendString appends s quoted as encoding/json quotes it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
