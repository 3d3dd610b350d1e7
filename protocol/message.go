// Package protocol is the league.v2 wire contract shared by every role: JSON-RPC 2.0
// framing, the envelope, message types, schema validation, errors, match credentials,
// and an HTTP server and client.
package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Wire constants.
const (
	JSONRPCVersion = "2.0"
	Method         = "league.handle"
	Version        = "league.v2"
	// MaxBodyBytes caps every request body.
	MaxBodyBytes = 1 << 20
)

// Message types of league.v2.
const (
	RegisterRefereeRequest   = "REGISTER_REFEREE_REQUEST"
	RegisterRefereeResponse  = "REGISTER_REFEREE_RESPONSE"
	RegisterPlayerRequest    = "REGISTER_PLAYER_REQUEST"
	RegisterPlayerResponse   = "REGISTER_PLAYER_RESPONSE"
	AgentReadyRequest        = "AGENT_READY_REQUEST"
	AgentReadyResponse       = "AGENT_READY_RESPONSE"
	MatchAssignment          = "MATCH_ASSIGNMENT"
	MatchAssignmentAck       = "MATCH_ASSIGNMENT_ACK"
	MatchResultReport        = "MATCH_RESULT_REPORT"
	MatchResultAck           = "MATCH_RESULT_ACK"
	QueryStandings           = "QUERY_STANDINGS"
	StandingsResponse        = "STANDINGS_RESPONSE"
	GameInvitation           = "GAME_INVITATION"
	GameJoinAck              = "GAME_JOIN_ACK"
	RequestMove              = "REQUEST_MOVE"
	MoveResponse             = "MOVE_RESPONSE"
	GameOver                 = "GAME_OVER"
	GameOverAck              = "GAME_OVER_ACK"
	LeagueShutdown           = "LEAGUE_SHUTDOWN"
	LeagueShutdownAck        = "LEAGUE_SHUTDOWN_ACK"
	AdminStartLeagueRequest  = "ADMIN_START_LEAGUE_REQUEST"
	AdminStartLeagueResponse = "ADMIN_START_LEAGUE_RESPONSE"
	AdminShutdownRequest     = "ADMIN_SHUTDOWN_REQUEST"
	AdminShutdownResponse    = "ADMIN_SHUTDOWN_RESPONSE"
	HeartbeatRequest         = "HEARTBEAT_REQUEST"
	HeartbeatResponse        = "HEARTBEAT_RESPONSE"
	MoveEvent                = "MOVE_EVENT"
	MoveEventAck             = "MOVE_EVENT_ACK"
)

// Features a League Manager may announce at registration: the protections it applies.
const (
	// FeatureSignedAssignments: MATCH_ASSIGNMENT carries the referee's own token.
	FeatureSignedAssignments = "signed_assignments"
	// FeatureMatchCredentials: MATCH_ASSIGNMENT carries per-player match credentials.
	FeatureMatchCredentials = "match_credentials"
)

// Sender identities.
const (
	SenderLeagueManager = "league_manager"
	SenderAdmin         = "admin"
)

// RefereeSender is the envelope sender of referee id.
func RefereeSender(id string) string { return "referee:" + id }

// PlayerSender is the envelope sender of player id.
func PlayerSender(id string) string { return "player:" + id }

// ParseSender splits "referee:ref1" into ("referee", "ref1"); league_manager and admin
// have an empty id.
func ParseSender(s string) (role, id string) {
	role, id, _ = strings.Cut(s, ":")
	return role, id
}

// Envelope is the league.v2 envelope. Contextual fields are omitted when empty.
type Envelope struct {
	Protocol       string `json:"protocol"`
	MessageType    string `json:"message_type"`
	Sender         string `json:"sender"`
	Timestamp      string `json:"timestamp"`
	ConversationID string `json:"conversation_id"`
	AuthToken      string `json:"auth_token,omitempty"`
	LeagueID       string `json:"league_id,omitempty"`
	RoundID        string `json:"round_id,omitempty"`
	MatchID        string `json:"match_id,omitempty"`
	GameType       string `json:"game_type,omitempty"`
}

// Message is the params of a request and the result of a response.
type Message struct {
	Envelope Envelope        `json:"envelope"`
	Payload  json.RawMessage `json:"payload"`
}

// Now formats t as a UTC timestamp with a Z designator.
func Now(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z") }

// ParseTime reads a UTC timestamp in either accepted form (Z or +00:00).
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse timestamp: %w", err)
	}
	if _, off := t.Zone(); off != 0 {
		return time.Time{}, fmt.Errorf("parse timestamp: %q is not UTC", s)
	}
	return t.UTC(), nil
}

// NewMessage builds a message with a fresh conversation id.
func NewMessage(messageType, sender string, payload any) (*Message, error) {
	return newMessage(messageType, sender, uuid.NewString(), payload)
}

// Reply builds the answer to m: same conversation id, the given type and sender.
func (m *Message) Reply(messageType, sender string, payload any) (*Message, error) {
	return newMessage(messageType, sender, m.Envelope.ConversationID, payload)
}

func newMessage(messageType, sender, conversationID string, payload any) (*Message, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encode %s payload: %w", messageType, err)
	}
	return &Message{
		Envelope: Envelope{
			Protocol:       Version,
			MessageType:    messageType,
			Sender:         sender,
			Timestamp:      Now(time.Now()),
			ConversationID: conversationID,
		},
		Payload: raw,
	}, nil
}

// Decode unmarshals the payload into v.
func (m *Message) Decode(v any) error {
	if err := json.Unmarshal(m.Payload, v); err != nil {
		return fmt.Errorf("decode %s payload: %w", m.Envelope.MessageType, err)
	}
	return nil
}
