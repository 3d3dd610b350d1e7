package protocol

import "encoding/json"

// Termination is how a match ended (game_metadata.termination).
type Termination string

// Terminations our referee records, and the League Manager's forfeit.
const (
	// TerminationNormal: the rules ended the game.
	TerminationNormal Termination = "normal"
	// TerminationIllegalMove: the loser moved illegally under the illegal-move policy loss.
	TerminationIllegalMove Termination = "illegal_move"
	// TerminationTimeout: the loser came to the end of the timeout ladder.
	TerminationTimeout Termination = "timeout"
	// TerminationNoShow: the loser did not join.
	TerminationNoShow Termination = "no_show"
	// TerminationDoubleNoShow: neither player joined; both lose.
	TerminationDoubleNoShow Termination = "double_no_show"
	// TerminationForfeit: the League Manager decided the result (GameMetadata.Forfeit);
	// it is never written as a termination, only reported by Ending.
	TerminationForfeit Termination = "forfeit"
)

// Technical reports whether t ends a match before the rules do, with GameMetadata.Loser
// losing.
func (t Termination) Technical() bool {
	return t == TerminationIllegalMove || t == TerminationTimeout || t == TerminationNoShow
}

// ViolationKind is what a player did wrong (game_metadata.violations[].kind).
type ViolationKind string

// Violation kinds.
const (
	ViolationTimeout         ViolationKind = "timeout"
	ViolationInvalidMove     ViolationKind = "invalid_move"
	ViolationMalformedMove   ViolationKind = "malformed_move"
	ViolationStaleAnswer     ViolationKind = "stale_answer"
	ViolationUnreachable     ViolationKind = "unreachable"
	ViolationMalformedAnswer ViolationKind = "malformed_answer"
	ViolationRefused         ViolationKind = "refused"
	ViolationNoJoin          ViolationKind = "no_join"
	// ViolationInternal is the referee failing to build its own request: not Known, so
	// never charged to the player.
	ViolationInternal ViolationKind = "internal"
)

// Known reports whether k is a kind charged to the player it names.
func (k ViolationKind) Known() bool {
	return k.IllegalMove() || k.MissedAnswer() || k == ViolationNoJoin
}

// IllegalMove reports whether k is an answer whose move the rules refuse.
func (k ViolationKind) IllegalMove() bool {
	return k == ViolationInvalidMove || k == ViolationMalformedMove
}

// MissedAnswer reports whether k is a missed or unusable answer to REQUEST_MOVE, which
// the statistics count as a timeout.
func (k ViolationKind) MissedAnswer() bool {
	switch k {
	case ViolationTimeout, ViolationUnreachable, ViolationMalformedAnswer, ViolationRefused, ViolationStaleAnswer:
		return true
	}
	return false
}

// ViolationAction is what the referee did about a violation.
type ViolationAction string

// Violation actions, in the order of the timeout ladder.
const (
	ActionWarning       ViolationAction = "warning"
	ActionForcedMove    ViolationAction = "forced_move"
	ActionTechnicalLoss ViolationAction = "technical_loss"
)

// ForfeitSuspended is GameMetadata.Forfeit of a match forfeited because a player is
// suspended.
const ForfeitSuspended = "suspended"

// GameMetadata is the game_metadata of MATCH_RESULT_REPORT as our referee writes it
// (enough to re-play the match), and as the League Manager writes a forfeit it decided
// (ForfeitMetadata). Decode it strictly with ParseGameMetadata, where an unreadable
// record is a problem, or leniently with ReadGameMetadata, where it is a foreign
// referee's business.
type GameMetadata struct {
	// MatchSeed is nil when the record does not say.
	MatchSeed  *int64          `json:"match_seed"`
	GameParams map[string]any  `json:"game_params"`
	Moves      []MoveRecord    `json:"moves"`
	FinalState json.RawMessage `json:"final_state"`
	// Termination is how the match ended; Loser names the loser of a technical one.
	Termination Termination      `json:"termination"`
	Loser       string           `json:"loser,omitempty"`
	Violations  []MatchViolation `json:"violations"`
	Steps       int              `json:"steps"`
	TotalMoves  int              `json:"total_moves"`
	RefereeID   string           `json:"referee_id"`
	StartedAt   string           `json:"started_at"`
	FinishedAt  string           `json:"finished_at"`
	// Forfeit (a Forfeit* reason) and Suspended are set on a result the League Manager
	// decided itself.
	Forfeit   string   `json:"forfeit,omitempty"`
	Suspended []string `json:"suspended,omitempty"`
}

// MoveRecord is one applied move in game_metadata.moves.
type MoveRecord struct {
	Step    int             `json:"step"`
	Player  string          `json:"player"`
	Move    json.RawMessage `json:"move"`
	Outcome MoveOutcome     `json:"outcome"`
	// ElapsedMS is the time the player took. ReadGameMetadata sets it to -1 when the
	// record has no non-negative number there.
	ElapsedMS int64 `json:"elapsed_ms"`
	// Metadata is what the player sent beside the move, e.g. a model's reasoning.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// LLMNote is what the "llm" note an LLM player sends beside a move (MoveRecord.Metadata's
// member "llm") counts: tokens in and out, and rethinks plus call_retries as errors.
type LLMNote struct {
	TokensIn, TokensOut, Errors int64
}

// LLMNote reads the move's llm note leniently, as a foreign player or referee may write
// anything there: ok is false without an "llm" object, and a count that is not a whole
// number from 0 to 2^40 reads as 0, so one careless member neither hides the note nor
// overflows or lowers a sum. Members are matched exactly and the last of a repeated
// one wins, as a plain JSON object reader sees them.
func (m MoveRecord) LLMNote() (note LLMNote, ok bool) {
	var meta, llm map[string]json.RawMessage
	if json.Unmarshal(m.Metadata, &meta) != nil || json.Unmarshal(meta["llm"], &llm) != nil || llm == nil {
		return LLMNote{}, false
	}
	return LLMNote{
		TokensIn:  noteCount(llm["tokens_in"]),
		TokensOut: noteCount(llm["tokens_out"]),
		Errors:    noteCount(llm["rethinks"]) + noteCount(llm["call_retries"]),
	}, true
}

func noteCount(raw json.RawMessage) int64 {
	var n float64
	if json.Unmarshal(raw, &n) != nil || n < 0 || n > 1<<40 || n != float64(int64(n)) {
		return 0
	}
	return int64(n)
}

// MatchViolation is one rule or deadline event in game_metadata.violations.
type MatchViolation struct {
	Step   int             `json:"step"`
	Player string          `json:"player"`
	Kind   ViolationKind   `json:"kind"`
	Action ViolationAction `json:"action"`
	Detail string          `json:"detail,omitempty"`
}

// ForfeitMetadata is the game_metadata of a forfeit the League Manager decided: the
// reason (a Forfeit* value) and the players who lose by it.
type ForfeitMetadata struct {
	Forfeit   string   `json:"forfeit"`
	Suspended []string `json:"suspended"`
}

// Ending is how the match ended: TerminationForfeit for a forfeit the League Manager
// decided, else Termination.
func (md GameMetadata) Ending() Termination {
	if md.Forfeit != "" {
		return TerminationForfeit
	}
	return md.Termination
}

// ParseGameMetadata decodes raw strictly (json.Unmarshal): a member of the wrong type
// fails the whole. An absent game_metadata (the member is optional) is an empty one.
func ParseGameMetadata(raw json.RawMessage) (GameMetadata, error) {
	var md GameMetadata
	if len(raw) == 0 {
		return md, nil
	}
	err := json.Unmarshal(raw, &md)
	return md, err
}

// ReadGameMetadata reads what it can of raw and never fails: game_metadata is the
// referee's own record, so anything unexpected in it is passed over rather than
// refused. Members are matched exactly (case counts) and each is read on its own: one
// of the wrong type is left zero. In moves, violations and suspended an entry that does
// not fit is skipped and the others kept; a list that is not a list is none. A move
// entry fits when it is an object whose player is a string; its elapsed_ms is -1 unless
// it is a non-negative number (below 2^63, truncated). A violation entry fits when it is
// an object whose player and kind are strings.
func ReadGameMetadata(raw json.RawMessage) GameMetadata {
	var md GameMetadata
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return md
	}
	member(top["match_seed"], &md.MatchSeed)
	member(top["game_params"], &md.GameParams)
	md.FinalState = top["final_state"]
	md.Termination = Termination(str(top["termination"]))
	md.Loser = str(top["loser"])
	member(top["steps"], &md.Steps)
	member(top["total_moves"], &md.TotalMoves)
	md.RefereeID = str(top["referee_id"])
	md.StartedAt = str(top["started_at"])
	md.FinishedAt = str(top["finished_at"])
	md.Forfeit = str(top["forfeit"])
	md.Moves = entries(top["moves"], readMove)
	md.Violations = entries(top["violations"], readViolation)
	md.Suspended = entries(top["suspended"], asString)
	return md
}

// maxElapsed bounds elapsed_ms so that its conversion to int64 is defined.
const maxElapsed = 1 << 63

func readMove(e json.RawMessage) (MoveRecord, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(e, &obj) != nil || obj == nil {
		return MoveRecord{}, false
	}
	player, ok := asString(obj["player"])
	if !ok {
		return MoveRecord{}, false
	}
	rec := MoveRecord{Player: player, Move: obj["move"], Outcome: MoveOutcome(str(obj["outcome"])), ElapsedMS: -1, Metadata: obj["metadata"]}
	member(obj["step"], &rec.Step)
	var v any
	if json.Unmarshal(obj["elapsed_ms"], &v) == nil {
		if ms, isNum := v.(float64); isNum && ms >= 0 && ms < maxElapsed {
			rec.ElapsedMS = int64(ms)
		}
	}
	return rec, true
}

func readViolation(e json.RawMessage) (MatchViolation, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(e, &obj) != nil || obj == nil {
		return MatchViolation{}, false
	}
	player, okPlayer := asString(obj["player"])
	kind, okKind := asString(obj["kind"])
	if !okPlayer || !okKind {
		return MatchViolation{}, false
	}
	v := MatchViolation{Player: player, Kind: ViolationKind(kind), Action: ViolationAction(str(obj["action"])), Detail: str(obj["detail"])}
	member(obj["step"], &v.Step)
	return v, true
}

// entries reads the list raw entry by entry, keeping those read accepts; nil when raw
// is absent, null or not a list.
func entries[T any](raw json.RawMessage, read func(json.RawMessage) (T, bool)) []T {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || list == nil {
		return nil
	}
	out := make([]T, 0, len(list))
	for _, e := range list {
		if v, ok := read(e); ok {
			out = append(out, v)
		}
	}
	return out
}

// member decodes raw into *into when it fits its type, else leaves *into alone.
func member[T any](raw json.RawMessage, into *T) {
	var v T
	if len(raw) > 0 && json.Unmarshal(raw, &v) == nil {
		*into = v
	}
}

// asString reads raw when it is a JSON string (null is not).
func asString(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// str is asString's string, "" when raw is not a string.
func str(raw json.RawMessage) string {
	s, _ := asString(raw)
	return s
}
