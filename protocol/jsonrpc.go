package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// JSON-RPC 2.0 error codes defined by the specification.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Reason is the stable symbolic cause of an error, sent as error.data.reason.
type Reason string

// The reason catalogue. Each reason has one fixed JSON-RPC code (see reasonCodes and
// protocol/README.md); clients branch on the reason, never on the message text.
const (
	ReasonParseError            Reason = "PARSE_ERROR"
	ReasonInvalidRequest        Reason = "INVALID_REQUEST"
	ReasonMethodNotFound        Reason = "METHOD_NOT_FOUND"
	ReasonSchemaViolation       Reason = "SCHEMA_VIOLATION"
	ReasonInternal              Reason = "INTERNAL"
	ReasonUnauthorized          Reason = "UNAUTHORIZED"
	ReasonSenderMismatch        Reason = "SENDER_MISMATCH"
	ReasonDuplicateRegistration Reason = "DUPLICATE_REGISTRATION"
	ReasonNoRefereeRegistered   Reason = "NO_REFEREE_REGISTERED"
	ReasonRegistrationClosed    Reason = "REGISTRATION_CLOSED"
	ReasonUnknownMatch          Reason = "UNKNOWN_MATCH"
	ReasonNotAssignedReferee    Reason = "NOT_ASSIGNED_REFEREE"
	ReasonDuplicateResult       Reason = "DUPLICATE_RESULT"
	ReasonInvalidResult         Reason = "INVALID_RESULT"
	ReasonLeagueNotActive       Reason = "LEAGUE_NOT_ACTIVE"
	ReasonRateLimited           Reason = "RATE_LIMITED"
	ReasonSuspended             Reason = "SUSPENDED"
	ReasonStaleAssignment       Reason = "STALE_ASSIGNMENT"
	ReasonStaleStep             Reason = "STALE_STEP"
	ReasonWrongLeague           Reason = "WRONG_LEAGUE"
	ReasonUnsupportedMessage    Reason = "UNSUPPORTED_MESSAGE"
	ReasonUnsupportedGame       Reason = "UNSUPPORTED_GAME"
	ReasonBusy                  Reason = "BUSY"
	ReasonShuttingDown          Reason = "SHUTTING_DOWN"
	ReasonUnknownRound          Reason = "UNKNOWN_ROUND"
	ReasonInsecureEndpoint      Reason = "INSECURE_ENDPOINT"
	ReasonStorageUnavailable    Reason = "STORAGE_UNAVAILABLE"
)

// reasonCodes fixes the JSON-RPC code of every reason.
var reasonCodes = map[Reason]int{
	ReasonParseError:            CodeParseError,
	ReasonInvalidRequest:        CodeInvalidRequest,
	ReasonMethodNotFound:        CodeMethodNotFound,
	ReasonSchemaViolation:       CodeInvalidParams,
	ReasonInternal:              CodeInternalError,
	ReasonUnauthorized:          -32000,
	ReasonSenderMismatch:        -32001,
	ReasonDuplicateRegistration: -32002,
	ReasonNoRefereeRegistered:   -32003,
	ReasonRegistrationClosed:    -32004,
	ReasonUnknownMatch:          -32005,
	ReasonNotAssignedReferee:    -32006,
	ReasonDuplicateResult:       -32007,
	ReasonInvalidResult:         -32008,
	ReasonLeagueNotActive:       -32009,
	ReasonRateLimited:           -32010,
	ReasonSuspended:             -32011,
	ReasonStaleAssignment:       -32012,
	ReasonStaleStep:             -32013,
	ReasonWrongLeague:           -32014,
	ReasonUnsupportedMessage:    -32015,
	ReasonUnsupportedGame:       -32016,
	ReasonBusy:                  -32017,
	ReasonShuttingDown:          -32018,
	ReasonUnknownRound:          -32019,
	ReasonInsecureEndpoint:      -32020,
	ReasonStorageUnavailable:    -32021,
}

// Transient lists the reasons a caller retries with backoff until its own deadline: the
// receiver could not take the call now (its storage failed, it failed, it is rate
// limiting), and the same call (same id and conversation_id) may succeed later without
// being applied twice.
func Transient() []Reason {
	return []Reason{ReasonInternal, ReasonStorageUnavailable, ReasonRateLimited}
}

// Reasons lists the catalogue in code order, for documentation and tests.
func Reasons() []Reason {
	out := make([]Reason, 0, len(reasonCodes))
	for r := range reasonCodes {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Reason) int { return b.Code() - a.Code() })
	return out
}

// Code is the fixed JSON-RPC code of r.
func (r Reason) Code() int {
	if c, ok := reasonCodes[r]; ok {
		return c
	}
	return CodeInternalError
}

// ErrorData is the data member of an error object.
type ErrorData struct {
	Reason         Reason   `json:"reason"`
	Details        string   `json:"details,omitempty"`
	Violations     []string `json:"violations,omitempty"`
	ConversationID string   `json:"conversation_id,omitempty"`
}

// Error is a JSON-RPC 2.0 error object. It is also the Go error handlers return to
// send a specific answer; any other error becomes an INTERNAL error with no details.
type Error struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *ErrorData `json:"data,omitempty"`
}

// Errorf builds an error with a reason and a message safe to show a remote caller.
func Errorf(reason Reason, format string, args ...any) *Error {
	return &Error{Code: reason.Code(), Message: fmt.Sprintf(format, args...), Data: &ErrorData{Reason: reason}}
}

// Error implements error.
func (e *Error) Error() string {
	if e.Data != nil && e.Data.Reason != "" {
		return fmt.Sprintf("%s (%d %s)", e.Message, e.Code, e.Data.Reason)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// ReasonOf returns the reason of err when it is (or wraps) an *Error, else "".
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) && e.Data != nil {
		return e.Data.Reason
	}
	return ""
}

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
