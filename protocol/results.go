package protocol

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

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
	// TerminationTimeoutDraw: the player to move ran out of time on its clock, but its
	// opponent could not win by any series of legal moves (chess: not enough material to
	// mate): a draw, not a loss (FIDE 6.9).
	TerminationTimeoutDraw Termination = "timeout_vs_insufficient_material"
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
	// ActionDraw: out of time on the clock against an opponent who could not win.
	ActionDraw ViolationAction = "draw"
)

// ForfeitSuspended is GameMetadata.Forfeit of a match forfeited because a player is
// suspended.
const ForfeitSuspended = "suspended"

// GameMetadata is the game_metadata of MATCH_RESULT_REPORT as our referee writes it
// (enough to re-play the match), and as the League Manager writes a forfeit it decided
// (ForfeitMetadata). schemas/game_metadata.json says what of it the League Manager
// reads; ReadGameMetadata is the one way to read it.
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
	// TimeControl is the clock the match was played under (MATCH_ASSIGNMENT
	// time_control); nil under the fixed deadline per move.
	TimeControl *TimeControl `json:"time_control,omitempty"`
	// Opening is where the match started (MATCH_ASSIGNMENT opening); nil from the game's
	// initial position.
	Opening *Opening `json:"opening,omitempty"`
}

// MoveRecord is one applied move in game_metadata.moves.
type MoveRecord struct {
	Step    int             `json:"step"`
	Player  string          `json:"player"`
	Move    json.RawMessage `json:"move"`
	Outcome MoveOutcome     `json:"outcome"`
	// ElapsedMS is the time the player took, -1 when the record does not say.
	ElapsedMS int64 `json:"elapsed_ms"`
	// Under a time control: RTTMS is the player's network round trip as measured before
	// the move (the raw figure: its shortest answer so far), NetworkMS the network time
	// credited back of ElapsedMS (RTTMS within the caps), and ClockMS what was left on the
	// mover's clock after the move.
	RTTMS     *int64 `json:"rtt_ms,omitempty"`
	NetworkMS *int64 `json:"network_ms,omitempty"`
	ClockMS   *int64 `json:"clock_ms,omitempty"`
	// Metadata is what the player sent beside the move, e.g. a model's reasoning.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// UnmarshalJSON decodes a move record, its ElapsedMS -1 when elapsed_ms is absent (0 is
// a time: a move answered within the millisecond).
func (m *MoveRecord) UnmarshalJSON(b []byte) error {
	type plain MoveRecord // without this method
	rec := plain{ElapsedMS: -1}
	if err := json.Unmarshal(b, &rec); err != nil {
		return err
	}
	*m = MoveRecord(rec)
	return nil
}

// LLMNote is what the "llm" note an LLM player sends beside a move (MoveRecord.Metadata's
// member "llm") counts: tokens in and out; the answers refused and asked again
// (rethinks), of them those that could not be read (unreadable) and those read as a move
// the rules refuse (illegal); failed calls made again (call_retries); the move's latency;
// and, with prices in the player's profile, its cost in US dollars. It is the player's
// own account: reported, never checked.
type LLMNote struct {
	TokensIn, TokensOut, Rethinks, Unreadable, Illegal, CallRetries, LatencyMS int64
	CostUSD                                                                  float64
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
	note = LLMNote{
		TokensIn: noteCount(llm["tokens_in"]), TokensOut: noteCount(llm["tokens_out"]),
		Rethinks: noteCount(llm["rethinks"]), CallRetries: noteCount(llm["call_retries"]),
		Unreadable: noteCount(llm["unreadable"]), Illegal: noteCount(llm["illegal"]),
		LatencyMS: noteCount(llm["latency_ms"]),
	}
	var cost float64
	if json.Unmarshal(llm["cost_usd"], &cost) == nil && cost >= 0 && cost <= 1e6 {
		note.CostUSD = cost
	}
	return note, true
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

// metadataValidator validates what ReadGameMetadata reads; built on its first use.
var metadataValidator = sync.OnceValues(NewValidator)

// ReadGameMetadata is the one reader of game_metadata: raw is validated against
// schemas/game_metadata.json (Validator.ValidateGameMetadata), then decoded into md by
// encoding/json. It never fails: violations say what of raw could not be read, with
// paths under GameMetadataPath, and md holds the rest. The League Manager refuses a
// report with violations; a result stored before the schema (by a version that took
// anything) is read as far as it goes, for the match page, statistics, ratings and
// replay.
//
// What could not be read is left out of md: the top-level member a violation is in or,
// in moves, violations and suspended, the entry's member (an entry then without its
// player or kind goes whole). A violation of the record as a whole (not an object, too
// many members) leaves md empty. An absent game_metadata (the member is optional) or
// null is an empty record. Members are matched exactly: one named in another case
// ("Steps") is the referee's own, not ours.
func ReadGameMetadata(raw json.RawMessage) (md GameMetadata, violations []Violation) {
	if len(raw) == 0 || string(raw) == "null" {
		return md, nil
	}
	v, err := metadataValidator()
	if err != nil {
		return md, []Violation{{Path: GameMetadataPath, Message: "no usable game_metadata schema"}}
	}
	value, err := decodeValue(raw)
	if err != nil {
		return md, []Violation{{Path: GameMetadataPath, Message: "not a JSON value"}}
	}
	violations = v.ValidateGameMetadata(value)
	// Each pass leaves out at least one value, so this ends.
	for vs := violations; len(vs) > 0; vs = v.ValidateGameMetadata(value) {
		if !leaveOut(value, vs) {
			return GameMetadata{}, violations
		}
	}
	// encoding/json reads raw as the schema does, keeping moves and states byte for byte,
	// unless a value was left out, a member is named in another case, or an integer is
	// written 3.0 or 3e0 (which it refuses for an int): then it reads the value, mended.
	src := []byte(raw)
	cased, rewritten := otherCase(value), integral(value)
	if cased || rewritten || violations != nil {
		src, err = json.Marshal(value)
	}
	if err == nil {
		err = json.Unmarshal(src, &md)
	}
	if err != nil {
		// Cannot happen to a value the schema took; said rather than hidden.
		return GameMetadata{}, append(violations, Violation{Path: GameMetadataPath, Message: "cannot be decoded"})
	}
	return md, violations
}

// metadataLists are the lists of game_metadata whose entries are left out one by one.
var metadataLists = []string{"moves", "violations", "suspended"}

// leaveOut removes from the game_metadata value what vs are about (see ReadGameMetadata)
// and reports whether it removed anything; false for a violation of the whole.
func leaveOut(value any, vs []Violation) bool {
	obj, ok := value.(map[string]any)
	if !ok {
		return false
	}
	removed := false
	drop := map[string][]int{} // entries to drop, by list
	for _, v := range vs {
		rel, _ := strings.CutPrefix(v.Path, GameMetadataPath)
		if rel == "" {
			return false
		}
		tok := strings.Split(rel[1:], "/")
		for i, t := range tok {
			tok[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		}
		member, ok := obj[tok[0]]
		if !ok {
			continue // left out already
		}
		list, isList := member.([]any)
		i := -1
		if isList && len(tok) > 1 && slices.Contains(metadataLists, tok[0]) {
			i, _ = strconv.Atoi(tok[1])
		}
		if i < 0 || i >= len(list) {
			delete(obj, tok[0])
			removed = true
			continue
		}
		if entry, isObj := list[i].(map[string]any); isObj && len(tok) > 2 {
			if _, ok := entry[tok[2]]; ok {
				delete(entry, tok[2])
				removed = true
			}
			continue
		}
		drop[tok[0]] = append(drop[tok[0]], i)
		removed = true
	}
	for name, idx := range drop {
		list, ok := obj[name].([]any)
		if !ok {
			continue // the whole list went
		}
		slices.Sort(idx)
		for _, i := range slices.Backward(slices.Compact(idx)) {
			list = slices.Delete(list, i, i+1)
		}
		obj[name] = list
	}
	return removed
}

// otherCase removes from a valid game_metadata value the members that encoding/json
// would take for GameMetadata's, MoveRecord's or MatchViolation's but are named in
// another case, and reports whether there were any.
func otherCase(value any) bool {
	// The schema makes the record and the entries of its lists objects.
	obj, _ := value.(map[string]any)
	found := dropOtherCase(obj, reflect.TypeFor[GameMetadata]())
	for name, t := range map[string]reflect.Type{"moves": reflect.TypeFor[MoveRecord](), "violations": reflect.TypeFor[MatchViolation]()} {
		list, _ := obj[name].([]any)
		for _, e := range list {
			entry, _ := e.(map[string]any)
			found = dropOtherCase(entry, t) || found
		}
	}
	return found
}

// dropOtherCase removes the members of obj named like a json tag of struct type t in
// another case, and reports whether there were any.
func dropOtherCase(obj map[string]any, t reflect.Type) bool {
	found := false
	for k := range obj {
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if k != name && strings.EqualFold(k, name) {
				delete(obj, k)
				found = true
			}
		}
	}
	return found
}

// integral writes as integers the integral numbers of a decoded value written with a
// fraction or an exponent, and reports whether there were any: the schema takes 3.0
// and 3e0 for integers, encoding/json does not.
func integral(v any) bool {
	found := false
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			if n, ok := integer(e); ok {
				x[i], found = n, true
			} else {
				found = integral(e) || found
			}
		}
	case map[string]any:
		for k, e := range x {
			if n, ok := integer(e); ok {
				x[k], found = n, true
			} else {
				found = integral(e) || found
			}
		}
	}
	return found
}

// integer is v written as an integer when it is an integral json.Number in int64
// written otherwise.
func integer(v any) (json.Number, bool) {
	n, ok := v.(json.Number)
	if !ok || !strings.ContainsAny(string(n), ".eE") {
		return "", false
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return "", false
	}
	return json.Number(r.Num().String()), true
}

// CheckResult is the one check of "is this a valid result of this match", used by the
// League Manager when a report comes, by league verify on the audit log and by league
// conform on a referee's reports. It returns nil when r is a valid result of a match
// between players, else an error saying, in words fit for the referee, the first thing
// wrong:
//   - r.Players are the match's two players, in either order;
//   - r.Outcome and r.Points name both of them and no one else;
//   - the outcomes are win, loss or draw and fit together (Consistent: a decided game,
//     a draw, or both losing);
//   - each player's points are what scoring gives its outcome; a nil scoring (not known
//     to the caller) leaves the points unchecked.
//
// What the match's context adds (round, game type, what the rules give on re-play) is
// the caller's to check.
func CheckResult(r *ResultReport, players [2]string, scoring *Scoring) error {
	want := []string{players[0], players[1]}
	got := slices.Clone(r.Players)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("players must be %s and %s", players[0], players[1])
	}
	for _, id := range players {
		if _, ok := r.Outcome[id]; !ok {
			return fmt.Errorf("no outcome for %s", id)
		}
		if _, ok := r.Points[id]; !ok {
			return fmt.Errorf("no points for %s", id)
		}
	}
	if len(r.Outcome) != 2 || len(r.Points) != 2 {
		return fmt.Errorf("outcome and points name %d and %d players, not the match's two", len(r.Outcome), len(r.Points))
	}
	a, b := Outcome(r.Outcome[players[0]]), Outcome(r.Outcome[players[1]])
	if !a.Valid() || !b.Valid() || !Consistent(a, b) {
		return fmt.Errorf("outcomes %s/%s do not fit together", a, b)
	}
	if scoring == nil {
		return nil
	}
	for _, id := range players {
		o := Outcome(r.Outcome[id])
		if pts, due := r.Points[id], scoring.Points(o); pts != due {
			return fmt.Errorf("reported %d points for %s, a %s scores %d", pts, id, o, due)
		}
	}
	return nil
}
