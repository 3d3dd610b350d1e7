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
