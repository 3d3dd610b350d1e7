// Package audit owns the League Manager's audit log (audit.jsonl): an append-only,
// hash-chained, fsync'd JSON Lines file of every message exchange and League Manager
// event. Log writes it; Read, Parse, CheckChain and CheckMark read and check it.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Entry is one line of the audit log, as written and as read back. The order of the
// JSON fields is the file format: it must not change, or old logs no longer match.
type Entry struct {
	// Line is the 1-based line number in the file (set by Parse).
	Line int `json:"-"`
	// Raw is the line's bytes without its newline (set by Parse).
	Raw            []byte          `json:"-"`
	LogID          string          `json:"log_id"`
	Timestamp      string          `json:"timestamp"`
	Direction      Direction       `json:"direction"`
	Source         string          `json:"source"`
	Destination    string          `json:"destination"`
	ConversationID string          `json:"conversation_id"`
	Message        json.RawMessage `json:"message"`
	PrevHash       string          `json:"prev_hash"`
}

// Hash is the SHA-256 of the line's bytes, which the next line carries as prev_hash.
func (e *Entry) Hash() string { return lineHash(e.Raw) }

func lineHash(line []byte) string {
	h := sha256.Sum256(line)
	return hex.EncodeToString(h[:])
}

// Direction says what a line records.
type Direction string

const (
	// DirRequest is a request that crossed the wire, inbound or outbound.
	DirRequest Direction = "request"
	// DirResponse is the answer to the request on the line before it.
	DirResponse Direction = "response"
	// DirEvent is a League Manager event (Log.Note): the message is {"type", "body"}.
	DirEvent Direction = "event"
	// DirRecovery says torn bytes were cut at start-up: the message is
	// {"type": EventAuditRecovery, "torn_bytes_removed": n}.
	DirRecovery Direction = "recovery"
)

// Event is the type of a League Manager event (the "type" of an event's message).
type Event string

// The events the League Manager notes beside the message exchanges.
const (
	// EventSchedule is the schedule (players, rounds, match ids and seeds), noted when
	// registration closes.
	EventSchedule Event = "SCHEDULE"
	// EventRoundPaired is a round a format decided after the schedule (a Swiss or knockout
	// round), stored before it started; the body is shaped as a round of SCHEDULE.
	EventRoundPaired Event = "ROUND_PAIRED"
	// EventAgentRecovered is a registration (body: kind "player" or "referee", id) the
	// database held and the log lacked after a crash between the two writes; the League
	// Manager writes it when it starts, marked "recovered".
	EventAgentRecovered Event = "AGENT_RECOVERED"
	// EventResultRecorded is a result the League Manager decided itself (e.g. a forfeit),
	// or, marked "recovered" and naming its referee_id, a result the database held but the
	// log lacked after a crash between the two writes. SCHEDULE, ROUND_PAIRED and
	// MATCH_ABANDONED may be marked "recovered" the same way.
	EventResultRecorded Event = "RESULT_RECORDED"
	// EventMatchFailed is a match taken from its referee, to be assigned again or
	// abandoned.
	EventMatchFailed Event = "MATCH_FAILED"
	// EventMatchAbandoned is a match that failed retries.max_match_attempts times: it has
	// no result and its round completes without it.
	EventMatchAbandoned Event = "MATCH_ABANDONED"
	// EventRefereeLost is a referee whose lease expired: its matches are assigned again.
	EventRefereeLost Event = "REFEREE_LOST"
	// EventRefereeBack is a lost referee that sent a heartbeat again.
	EventRefereeBack Event = "REFEREE_BACK"
	// EventAgentSuspended is an agent suspended for its violations.
	EventAgentSuspended Event = "AGENT_SUSPENDED"
	// EventAgentReinstated is a suspended agent let back in.
	EventAgentReinstated Event = "AGENT_REINSTATED"
	// EventLeagueShutdown is a graceful shutdown before the league completed, with the
	// matches it cancelled.
	EventLeagueShutdown Event = "LEAGUE_SHUTDOWN"
	// EventLeagueResumed is a start after such a shutdown, its cancelled matches reopened.
	EventLeagueResumed Event = "LEAGUE_RESUMED"
	// EventSPRTDecided is the decision of a gauntlet's SPRT (schedule.SPRTState), noted
	// once the test accepted a hypothesis and nothing more is scheduled.
	EventSPRTDecided Event = "SPRT_DECIDED"
	// EventAuditRecovery is the type of a DirRecovery line's message.
	EventAuditRecovery Event = "AUDIT_RECOVERY"
)

// Keys of the database's meta table under which the League Manager records the audit
// mark (Log.Mark) with every transaction, so that CheckMark can find lines cut from the
// end of the log.
const (
	MetaLines    = "audit_lines"
	MetaLastHash = "audit_last_hash"
)
