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
// the members of its decoded params, the payload as the bytes the sender wrote. raw is
// the request object, already decoded once, so it is known to be valid JSON. Members
// are read into maps, so that each name is matched exactly and the last of a repeated
// one is taken, as in the value that was validated.
func messageOf(raw []byte, params map[string]any) (*Message, bool) {
	var req, rawParams map[string]json.RawMessage
	if json.Unmarshal(raw, &req) != nil || json.Unmarshal(req["params"], &rawParams) != nil {
		return nil, false
	}
	// Its own bytes, not raw's: the handler may keep it beyond the caller's use of raw.
	payload, ok := rawParams["payload"]
	if !ok {
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
		Payload: payload,
	}, true
}
