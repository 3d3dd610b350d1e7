package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Request is a JSON-RPC 2.0 request carrying a league.v2 message.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	Method  string          `json:"method"`
	Params  *Message        `json:"params"`
	ID      json.RawMessage `json:"id,omitempty"`
}

// Response is a JSON-RPC 2.0 response: exactly one of Result and Error is set.
type Response struct {
	JSONRPC string          `json:"jsonrpc"`
	Result  *Message        `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	ID      json.RawMessage `json:"id"`
}

// nullID is the id of answers to requests whose id could not be read.
var nullID = json.RawMessage("null")

// messageOf builds the Message of a request's params or a response's result that
// passed validation: the envelope from its decoded members, the payload as the bytes
// the sender wrote. raw is the request or
// response object, already decoded once, so it is known to be valid JSON; member is
// "params" or "result".
func messageOf(raw []byte, member string, params map[string]any) (*Message, bool) {
	rawParams, ok := rawMember(raw, member)
	if !ok {
		return nil, false
	}
	payload, ok := rawMember(rawParams, "payload")
	if !ok {
		return nil, false
	}
	env, _ := params["envelope"].(map[string]any)
	str := func(k string) string { s, _ := env[k].(string); return s }
	// A copy: the handler may keep it beyond the caller's use of raw.
	payload = bytes.Clone(payload)
	return &Message{
		Envelope: Envelope{
			Protocol: str("protocol"), MessageType: str("message_type"), Sender: str("sender"),
			Timestamp: str("timestamp"), ConversationID: str("conversation_id"), AuthToken: str("auth_token"),
			LeagueID: str("league_id"), RoundID: str("round_id"), MatchID: str("match_id"), GameType: str("game_type"),
		},
		Payload: payload,
	}, true
}

// rawMember returns the value of the last member called name (as decoded, the way
// encoding/json picks it) of the JSON object obj, which must be valid JSON.
func rawMember(obj []byte, name string) ([]byte, bool) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false
	}
	var found []byte
	ok := false
	for i = skipSpace(obj, i+1); i < len(obj) && obj[i] != '}'; i = skipSpace(obj, i) {
		if obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
		keyEnd := skipString(obj, i)
		if keyEnd < 0 {
			return nil, false
		}
		key := obj[i:keyEnd]
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return nil, false
		}
		i = skipSpace(obj, i+1)
		end := skipValue(obj, i)
		if end < 0 {
			return nil, false
		}
		if keyIs(key, name) {
			found, ok = obj[i:end], true
		}
		i = end
	}
	return found, ok && i < len(obj)
}

// keyIs reports whether the quoted member name key decodes to name.
func keyIs(key []byte, name string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key[1:len(key)-1]) == name
	}
	var s string
	return json.Unmarshal(key, &s) == nil && s == name
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i], or -1.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[i])) {
		i++
	}
	return i
}
