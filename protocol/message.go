// Package protocol is the league.v2 wire contract shared by every role: JSON-RPC 2.0
// framing, the envelope, message types, schema validation, errors, match credentials,
// and an HTTP server and client.
package protocol

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
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
	MatchCancelled           = "MATCH_CANCELLED"
	MatchCancelledAck        = "MATCH_CANCELLED_ACK"
	ResultReminder           = "RESULT_REMINDER"
	ResultReminderAck        = "RESULT_REMINDER_ACK"
	QueryMatch               = "QUERY_MATCH"
	MatchInfo                = "MATCH_INFO"
	LeagueCompleted          = "LEAGUE_COMPLETED"
	LeagueCompletedAck       = "LEAGUE_COMPLETED_ACK"
)

// Features are named capabilities announced at registration: agents list theirs in the
// registration request's features, the League Manager in the answer's. An extension is
// used only with a peer that announced it; a peer that announced nothing gets plain
// league.v2 (protocol/README.md, "Features").
const (
	// FeatureSignedAssignments (League Manager): MATCH_ASSIGNMENT, MATCH_CANCELLED and
	// RESULT_REMINDER carry the receiving referee's own token.
	FeatureSignedAssignments = "signed_assignments"
	// FeatureMatchCredentials (League Manager): MATCH_ASSIGNMENT carries per-player match
	// credentials. (Referee): it shows them to players in auth_token. (Player): it checks
	// them and answers with them.
	FeatureMatchCredentials = "match_credentials"
	// FeatureHeartbeats (League Manager): HEARTBEAT_REQUEST renews a lease. (Referee): it
	// sends them at the heartbeat_interval_ms it was given.
	FeatureHeartbeats = "heartbeats"
	// FeatureMatchProgress: heartbeats carry match_progress, and the League Manager keeps a
	// match alive while its step changes.
	FeatureMatchProgress = "match_progress"
	// FeatureResultReminders: RESULT_REMINDER (League Manager -> referee).
	FeatureResultReminders = "result_reminders"
	// FeatureMoveEvents: MOVE_EVENT (referee -> League Manager).
	FeatureMoveEvents = "move_events"
	// FeatureMoveBatches (League Manager): a MOVE_EVENT may carry a batch of moves
	// (MoveBatch), taken atomically, and moves already received are ignored rather than
	// refused, so a referee can resend a batch whose answer it lost. (Referee): it sends
	// batches to a League Manager that announced it.
	FeatureMoveBatches = "move_batches"
	// FeatureResultMoves (League Manager): when it stores a result, its live view shows
	// every move of game_metadata.moves that no MOVE_EVENT brought, so a referee need not
	// send the moves still pending when play ends: they reach the live view with the
	// result, which follows at once.
	FeatureResultMoves = "result_moves"
	// FeatureMatchCancellation: MATCH_CANCELLED (League Manager -> referee or player).
	FeatureMatchCancellation = "match_cancellation"
	// FeatureMatchQuery (League Manager): QUERY_MATCH is answered with MATCH_INFO.
	FeatureMatchQuery = "match_query"
	// FeatureRelay (League Manager): an agent that announces FeatureOutbound may register
	// without an endpoint and take its requests from the relay (protocol/README.md,
	// "Outbound agents").
	FeatureRelay = "relay"
	// FeatureOutbound (player, referee): the agent accepts no connections; it registers
	// without endpoint_url and is given a relay endpoint.
	FeatureOutbound = "outbound"
	// FeatureClocks (referee): it plays a MATCH_ASSIGNMENT's time_control (clocks in
	// REQUEST_MOVE, clock_ms and network_ms in the move records). A League Manager whose
	// league has a time control takes only referees that announce it.
	FeatureClocks = "clocks"
	// FeatureLeagueCompleted (League Manager): it sends LEAGUE_COMPLETED with the final
	// standings when the league completes. (Player, referee): it takes LEAGUE_COMPLETED
	// and answers LEAGUE_COMPLETED_ACK.
	FeatureLeagueCompleted = "league_completed"
	// FeatureOpenings (referee): it starts a match from a MATCH_ASSIGNMENT's opening and
	// records it in the result. A League Manager whose league plays openings takes only
	// referees that announce it.
	FeatureOpenings = "openings"
)

// Match phases in HEARTBEAT_REQUEST match_progress and RESULT_REMINDER_ACK.
const (
	PhaseQueued    = "queued"
	PhaseJoining   = "joining"
	PhasePlaying   = "playing"
	PhaseReporting = "reporting"
	// PhaseUnknown (RESULT_REMINDER_ACK only): the referee does not hold the match.
	PhaseUnknown = "unknown"
)

// MatchProgress is one entry of HEARTBEAT_REQUEST match_progress.
type MatchProgress struct {
	MatchID string `json:"match_id"`
	Step    int    `json:"step"`
	Phase   string `json:"phase"`
}

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

// timestampPattern is the schema's timestamp rule (defs.json#/$defs/timestamp): UTC only,
// Z or +00:00, up to nine fractional digits after a dot.
var timestampPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|\+00:00)$`)

// ParseTime reads a UTC timestamp in either accepted form (Z or +00:00). Other offsets,
// including -00:00, and forms the schema refuses (a comma before the fraction, more than
// nine fractional digits) are refused.
func ParseTime(s string) (time.Time, error) {
	if !timestampPattern.MatchString(s) {
		return time.Time{}, fmt.Errorf("parse timestamp: %q is not RFC 3339 UTC with Z or +00:00", s)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse timestamp: %w", err)
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

// Decode unmarshals the payload into v. A payload member whose name matches a field of v
// only when case is ignored (e.g. "PLAYER_ID" for player_id) is refused: encoding/json
// would fill the field with it although the schema checked only the exact name, which
// would let an unchecked value past validation.
func (m *Message) Decode(v any) error {
	generic, err := decodeValue(m.Payload)
	if err == nil {
		err = checkMemberCase(generic, reflect.TypeOf(v), "")
	}
	if err == nil {
		err = json.Unmarshal(m.Payload, v)
	}
	if err != nil {
		return fmt.Errorf("decode %s payload: %w", m.Envelope.MessageType, err)
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// structType is t without pointers, and whether its members are checked at all: not
// when its decoding is its own (json.Unmarshaler).
func structType(t reflect.Type) (reflect.Type, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil, false
	}
	return t, true
}

// checkMemberCase walks a decoded value along the Go type it is decoded into and refuses
// an object member that names a struct field with other case than its JSON name.
func checkMemberCase(v any, t reflect.Type, path string) error {
	t, ok := structType(t)
	if !ok {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		fields := map[string]reflect.Type{}
		jsonFields(t, fields, 0)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if ft, ok := fields[k]; ok {
				if err := checkMemberCase(obj[k], ft, path+"/"+escapePointer(k)); err != nil {
					return err
				}
				continue
			}
			for name := range fields {
				if strings.EqualFold(name, k) {
					return fmt.Errorf("%s: member %q must be spelled %q", path+"/"+escapePointer(k), k, name)
				}
			}
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if err := checkMemberCase(obj[k], t.Elem(), path+"/"+escapePointer(k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := v.([]any)
		if !ok {
			return nil
		}
		for i, e := range arr {
			if err := checkMemberCase(e, t.Elem(), path+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields adds the JSON member names of struct t and their types to out, following
// embedded structs as encoding/json does; a name already present (a shallower field) wins.
func jsonFields(t reflect.Type, out map[string]reflect.Type, depth int) {
	if depth > MaxDepth {
		return
	}
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := out[name]; !ok {
			out[name] = f.Type
		}
	}
	for _, et := range embedded {
		jsonFields(et, out, depth+1)
	}
}

// MatchCredential is hex(HMAC-SHA256(key = player's token, message = match_id)): the
// League Manager hands it to the assigned referee, which shows it to the player; the
// referee never learns the player's token and the credential is worthless elsewhere.
func MatchCredential(playerToken, matchID string) string {
	mac := hmac.New(sha256.New, []byte(playerToken))
	mac.Write([]byte(matchID))
	return hex.EncodeToString(mac.Sum(nil))
}

// TokenEqual compares secrets in constant time.
func TokenEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
