package protocol

import "encoding/json"

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

// messageOf builds the Message of a request that passed validation: the envelope from
// the members of its decoded params, the payload as the bytes the sender wrote (copied,
// so the handler may keep them beyond the caller's use of raw). Validation has refused
// every member but these exact names, so the typed decode, which would also match other
// cases, meets no other; of a repeated one it takes the last, as the validated value did.
func messageOf(raw []byte, params map[string]any) (*Message, bool) {
	var req struct {
		Params struct {
			Payload json.RawMessage `json:"payload"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &req) != nil || req.Params.Payload == nil {
		return nil, false
	}
	env, _ := params["envelope"].(map[string]any)
	str := func(k string) string { s, _ := env[k].(string); return s }
	return &Message{
		Envelope: Envelope{
			Protocol: str("protocol"), MessageType: str("message_type"), Sender: str("sender"),
			Timestamp: str("timestamp"), ConversationID: str("conversation_id"), AuthToken: str("auth_token"),
			LeagueID: str("league_id"), RoundID: str("round_id"), MatchID: str("match_id"), GameType: str("game_type"),
		},
		Payload: req.Params.Payload,
	}, true
}
