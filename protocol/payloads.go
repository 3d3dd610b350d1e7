package protocol

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Payloads of the messages two roles exchange. Each role builds and reads these types
// only; the schemas in schemas/ stay the contract for agents written elsewhere.
//
// Members are declared in the order their sender has always written them, so that the
// bytes on the wire do not change: where a role used to send a Go map, that order is
// alphabetical. Fields a sender may leave out are omitempty (omitzero where an empty
// list differs from none).

// Answer statuses.
const (
	// StatusAcknowledged is the status of every plain acknowledgement.
	StatusAcknowledged = "acknowledged"
	// StatusRegistered is the status of a registration answer.
	StatusRegistered = "registered"
	// StatusAccepted and StatusDeclined answer GAME_INVITATION.
	StatusAccepted = "accepted"
	StatusDeclined = "declined"
)

// Outcome is one player's result of a finished match: win, draw or loss.
type Outcome string

// Outcomes as MATCH_RESULT_REPORT and GAME_OVER carry them.
const (
	Win  Outcome = "win"
	Draw Outcome = "draw"
	Loss Outcome = "loss"
)

// Valid reports whether o is one of the three outcomes.
func (o Outcome) Valid() bool { return o == Win || o == Draw || o == Loss }

// Consistent reports whether a and b can be the outcomes of one match's two players: a
// decided game, a draw, or both losing (neither showed up, or a double forfeit).
func Consistent(a, b Outcome) bool {
	switch {
	case a == Win:
		return b == Loss
	case a == Draw:
		return b == Draw
	case a == Loss:
		return b == Win || b == Loss
	}
	return false
}

// MoveOutcome is what the referee made of one answer to REQUEST_MOVE (seed 001
// section 5.2): in last_result, MOVE_EVENT and the moves of game_metadata.
type MoveOutcome string

// Move outcomes.
const (
	MoveSuccess MoveOutcome = "SUCCESS"
	MoveInvalid MoveOutcome = "INVALID"
	MoveTimeout MoveOutcome = "TIMEOUT"
	MoveForced  MoveOutcome = "FORCED"
)

// IntentMove is the intent of last_result: the player was asked for a move.
const IntentMove = "MOVE"

// Match states of MATCH_INFO.
const (
	MatchStatePending    = "PENDING"
	MatchStateAssigned   = "ASSIGNED"
	MatchStateInProgress = "IN_PROGRESS"
	MatchStateCompleted  = "COMPLETED"
	MatchStateFailed     = "FAILED"
	MatchStateCancelled  = "CANCELLED"
	MatchStateAbandoned  = "ABANDONED"
)

// RefereeRegistration is the REGISTER_REFEREE_REQUEST payload.
type RefereeRegistration struct {
	DisplayName string `json:"display_name,omitempty"`
	// EndpointURL is empty for an outbound referee (FeatureOutbound).
	EndpointURL          string   `json:"endpoint_url,omitempty"`
	Features             []string `json:"features"`
	GameTypes            []string `json:"game_types"`
	MaxConcurrentMatches int      `json:"max_concurrent_matches"`
	RefereeID            string   `json:"referee_id"`
}

// PlayerRegistration is the REGISTER_PLAYER_REQUEST payload.
type PlayerRegistration struct {
	PlayerID string `json:"player_id"`
	// EndpointURL is empty for an outbound player (FeatureOutbound).
	EndpointURL string `json:"endpoint_url,omitempty"`
	DisplayName string `json:"display_name,omitempty"`
	// GameTypes, when set, are the only games the player can play.
	GameTypes []string `json:"game_types,omitempty"`
	Features  []string `json:"features"`
	// AgentCard, when set, says what the player is and how it is set up.
	AgentCard *AgentCard `json:"agent_card,omitempty"`
}

// SameOpening reports whether a and b are the same opening (or both none), as JSON.
func SameOpening(a, b *Opening) bool {
	ja, _ := json.Marshal(a) // strings and JSON values always encode
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// OpeningName names o in a message: its name, or the game's start for none.
func OpeningName(o *Opening) string {
	if o == nil {
		return "none (the game's start)"
	}
	return o.Name
}

// AgentCard is what a player says of itself at registration (agent_card), so that a
// rating can be traced to the exact configuration behind it: the League Manager stores
// it, shows it beside the rating and exports it; it never judges it. A player whose card
// changed is another entry: it registers under another id.
type AgentCard struct {
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
	// PromptHash is a hash of the prompt and the settings the player runs with, e.g.
	// "sha256:<hex>".
	PromptHash string `json:"prompt_hash,omitempty"`
	Version    string `json:"version,omitempty"`
	Author     string `json:"author,omitempty"`
}

// Hash identifies the card: the first 12 hex digits of the SHA-256 of its JSON.
func (c AgentCard) Hash() string {
	b, _ := json.Marshal(c) // a struct of strings always encodes
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// RegistrationAnswer is the payload of REGISTER_REFEREE_RESPONSE and
// REGISTER_PLAYER_RESPONSE.
type RegistrationAnswer struct {
	Status    string `json:"status"`
	AuthToken string `json:"auth_token"`
	LeagueID  string `json:"league_id"`
	RefereeID string `json:"referee_id,omitempty"`
	PlayerID  string `json:"player_id,omitempty"`
	// Features are those the League Manager announces (protocol/README.md, "Features").
	Features []string `json:"features"`
	// HeartbeatIntervalMS and LeaseMS go to referees under feature heartbeats.
	HeartbeatIntervalMS int `json:"heartbeat_interval_ms,omitempty"`
	LeaseMS             int `json:"lease_ms,omitempty"`
	// EndpointURL is the relay endpoint the League Manager gave an outbound agent: where
	// others call it.
	EndpointURL string `json:"endpoint_url,omitempty"`
}

// AgentReady is the AGENT_READY_REQUEST payload: an empty object.
type AgentReady struct{}

// AgentReadyAnswer is the AGENT_READY_RESPONSE payload.
type AgentReadyAnswer struct {
	AgentID    string `json:"agent_id"`
	AgentState string `json:"agent_state"`
	AgentType  string `json:"agent_type"`
	Status     string `json:"status"`
}

// Assignment is the MATCH_ASSIGNMENT payload. Scoring, Deadlines and Penalties are
// nil when the League Manager sends none (one written from the seeds alone).
type Assignment struct {
	MatchID  string `json:"match_id"`
	RoundID  string `json:"round_id"`
	GameType string `json:"game_type"`
	// Players are the two players, the first mover first.
	Players          []string          `json:"players"`
	PlayerEndpoints  map[string]string `json:"player_endpoints"`
	MatchSeed        int64             `json:"match_seed"`
	MatchCredentials map[string]string `json:"match_credentials"`
	GameParams       map[string]any    `json:"game_params"`
	Scoring          *Scoring          `json:"scoring"`
	Deadlines        *Deadlines        `json:"deadlines"`
	// IllegalMovePolicy and Penalties make the league's rules the referee's rules.
	IllegalMovePolicy string     `json:"illegal_move_policy"`
	Penalties         *Penalties `json:"penalties"`
	// TimeControl, when set, gives each player a clock instead of the fixed deadline per
	// move (feature clocks).
	TimeControl *TimeControl `json:"time_control,omitempty"`
	// Opening, when set, is where the match starts (feature openings).
	Opening *Opening `json:"opening,omitempty"`
}

// Opening is where a match starts instead of the game's initial position: a position
// (FEN, chess only) and moves played from it before the players' first move, as the
// game's rules take moves (chess: UCI strings). The players' moves follow; the
// opening's moves are not theirs and are not in the result's moves.
type Opening struct {
	// Name says where it comes from: "<book file>#<n>" for the n-th entry of an opening
	// book (from 1), "random#<n>" for the n-th opening drawn at random from the league seed.
	Name  string            `json:"name"`
	FEN   string            `json:"fen,omitempty"`
	Moves []json.RawMessage `json:"moves"`
}

// Scoring is the number of league points for each outcome of a match, in
// MATCH_ASSIGNMENT and in game_registry.yaml.
type Scoring struct {
	Draw int `json:"draw" yaml:"draw"`
	Loss int `json:"loss" yaml:"loss"`
	Win  int `json:"win" yaml:"win"`
}

// Points is what outcome o scores; an unknown outcome scores nothing.
func (s Scoring) Points(o Outcome) int {
	switch o {
	case Win:
		return s.Win
	case Draw:
		return s.Draw
	case Loss:
		return s.Loss
	}
	return 0
}

// Deadlines are the match-level deadlines in milliseconds.
type Deadlines struct {
	JoinAckMS int `json:"join_ack_ms"`
	MoveMS    int `json:"move_ms"`
}

// Illegal-move policies (MATCH_ASSIGNMENT illegal_move_policy).
const (
	// PolicyLoss: an illegal or malformed move loses the match for its mover.
	PolicyLoss = "loss"
	// PolicyForced: an illegal move is replaced by the forced move and counts as a
	// violation, like a timeout.
	PolicyForced = "forced"
)

// Penalties is the timeout ladder: warnings (requests sent again), then forced moves,
// then a technical loss.
type Penalties struct {
	ForcedMoves  int `json:"forced_moves"`
	MoveWarnings int `json:"move_warnings"`
}

// MatchAck is the payload of MATCH_ASSIGNMENT_ACK, MATCH_RESULT_ACK and
// MATCH_CANCELLED_ACK.
type MatchAck struct {
	MatchID string `json:"match_id"`
	Status  string `json:"status"`
}

// Ack is the payload of the acknowledgements that name nothing: GAME_OVER_ACK,
// LEAGUE_SHUTDOWN_ACK, LEAGUE_COMPLETED_ACK, MOVE_EVENT_ACK.
type Ack struct {
	Status string `json:"status"`
}

// ResultReport is the MATCH_RESULT_REPORT payload. GameMetadata stays raw: it is the
// referee's own record, opaque to the league (GameMetadata, ReadGameMetadata).
type ResultReport struct {
	GameMetadata json.RawMessage `json:"game_metadata,omitempty"`
	GameType     string          `json:"game_type"`
	MatchID      string          `json:"match_id,omitempty"`
	// Outcome and Points are keyed by player id; outcomes are Outcome values.
	Outcome map[string]string `json:"outcome"`
	Players []string          `json:"players"`
	Points  map[string]int    `json:"points"`
	RoundID string            `json:"round_id,omitempty"`
}

// Invitation is the GAME_INVITATION payload.
type Invitation struct {
	Deadlines *Deadlines `json:"deadlines,omitempty"`
	// GameParams is absent when nil, but an empty object when empty.
	GameParams map[string]any `json:"game_params,omitzero"`
	GameType   string         `json:"game_type"`
	MatchID    string         `json:"match_id"`
	OpponentID string         `json:"opponent_id,omitempty"`
	Opponents  []string       `json:"opponents"`
	Players    []string       `json:"players,omitempty"`
	// YourIndex is the invited player's position in Players (0 moves first).
	YourIndex int `json:"your_index"`
}

// JoinAck is the GAME_JOIN_ACK payload.
type JoinAck struct {
	Status  string `json:"status"`
	MatchID string `json:"match_id"`
	Reason  string `json:"reason,omitempty"`
}

// MoveRequest is the REQUEST_MOVE payload.
type MoveRequest struct {
	ContextHash string `json:"context_hash,omitempty"`
	// Deadline is the instant the referee stops waiting, DeadlineMS the same as a span.
	Deadline   string      `json:"deadline,omitempty"`
	DeadlineMS int         `json:"deadline_ms,omitempty"`
	LastResult *LastResult `json:"last_result,omitempty"`
	// StepContext is what the player may see of the game.
	StepContext json.RawMessage `json:"step_context"`
	StepNumber  int             `json:"step_number"`
	// Warning says why a request is sent again.
	Warning string `json:"warning,omitempty"`
	// Clocks are both players' clocks when the match is played under a time control;
	// DeadlineMS is then the mover's clock, bank and network credit.
	Clocks *Clocks `json:"clocks,omitempty"`
}

// LastResult is what became of the player's previous move (REQUEST_MOVE last_result).
type LastResult struct {
	Intent string `json:"intent,omitempty"`
	// Move is the move played: the player's own, or the forced one.
	Move    json.RawMessage `json:"move,omitempty"`
	Outcome MoveOutcome     `json:"outcome"`
	Reason  string          `json:"reason,omitempty"`
	// StepNumber is nil when the referee does not say.
	StepNumber *int `json:"step_number,omitempty"`
}

// MoveAnswer is the MOVE_RESPONSE payload.
type MoveAnswer struct {
	MovePayload json.RawMessage `json:"move_payload"`
	// StepNumber and ContextHash, when given, tie the answer to its request.
	StepNumber  *int   `json:"step_number,omitempty"`
	ContextHash string `json:"context_hash,omitempty"`
	// Metadata is what the player says beside its move, e.g. a model's reasoning.
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// GameResult is the GAME_OVER payload.
type GameResult struct {
	FinalState json.RawMessage `json:"final_state"`
	// Outcome is the receiving player's, Outcomes and Points everyone's by player id.
	Outcome  Outcome           `json:"outcome"`
	Outcomes map[string]string `json:"outcomes,omitempty"`
	Points   map[string]int    `json:"points,omitempty"`
	// Reason is how the match ended (a Termination, for our referee).
	Reason string `json:"reason,omitempty"`
	// Winner is nil for a draw or when both players lost.
	Winner *string `json:"winner"`
}

// MoveNotice is the MOVE_EVENT payload: one applied move of a running match.
type MoveNotice struct {
	Move    json.RawMessage `json:"move"`
	Outcome MoveOutcome     `json:"outcome"`
	// PlayerID moved at StepNumber; State is the game's state after the step.
	PlayerID   string          `json:"player_id"`
	State      json.RawMessage `json:"state,omitempty"`
	StepNumber int             `json:"step_number"`
	// ClockMS is the mover's clock after the move, in a match under a clock.
	ClockMS *int64 `json:"clock_ms,omitempty"`
}

// MaxMoveBatch is the most moves one MOVE_EVENT batch carries (schemas/move_event.json).
const MaxMoveBatch = 256

// MoveBatch is the MOVE_EVENT payload of a batch (FeatureMoveBatches): moves of one
// running match in the order they were applied, 1 to MaxMoveBatch of them.
type MoveBatch struct {
	Moves []MoveNotice `json:"moves"`
}

// Heartbeat is the HEARTBEAT_REQUEST payload. MatchProgress is absent, not empty, when
// the League Manager did not announce match_progress.
type Heartbeat struct {
	ActiveMatches []string        `json:"active_matches"`
	MatchProgress []MatchProgress `json:"match_progress,omitzero"`
}

// HeartbeatAnswer is the HEARTBEAT_RESPONSE payload.
type HeartbeatAnswer struct {
	LeaseMS int    `json:"lease_ms"`
	Status  string `json:"status"`
}

// Cancellation is the MATCH_CANCELLED payload.
type Cancellation struct {
	MatchID string `json:"match_id"`
	Reason  string `json:"reason"`
}

// Reminder is the RESULT_REMINDER payload.
type Reminder struct {
	Attempt int    `json:"attempt"`
	MatchID string `json:"match_id"`
	Reason  string `json:"reason,omitempty"`
}

// ReminderAck is the RESULT_REMINDER_ACK payload: where the match stands (a Phase*
// value) and whether its report is being sent again.
type ReminderAck struct {
	MatchID string `json:"match_id"`
	Phase   string `json:"phase"`
	Resent  bool   `json:"resent"`
	Status  string `json:"status"`
}

// Shutdown is the LEAGUE_SHUTDOWN payload.
type Shutdown struct {
	LeagueID string `json:"league_id,omitempty"`
	Reason   string `json:"reason"`
}

// LeagueCompletion is the LEAGUE_COMPLETED payload: the final standings (the rows of
// STANDINGS_RESPONSE) of the league that completed.
type LeagueCompletion struct {
	LeagueID    string         `json:"league_id"`
	CompletedAt string         `json:"completed_at"`
	Rounds      int            `json:"rounds"`
	Standings   []StandingsRow `json:"standings"`
}

// MatchQuery is the QUERY_MATCH payload.
type MatchQuery struct {
	MatchID string `json:"match_id"`
}

// MatchDetails is the MATCH_INFO payload. RefereeID is nil when no referee holds the
// match; Status is a MatchState* value.
type MatchDetails struct {
	MatchID   string   `json:"match_id"`
	RoundID   string   `json:"round_id,omitempty"`
	Players   []string `json:"players"`
	RefereeID *string  `json:"referee_id"`
	Status    string   `json:"status"`
}

// StandingsQuery is the QUERY_STANDINGS payload: no round asks for the live standings.
type StandingsQuery struct {
	RoundID string `json:"round_id,omitempty"`
}

// Standings is the STANDINGS_RESPONSE payload.
type Standings struct {
	// RoundID is the round of the snapshot; nil before any round completed.
	RoundID   *string        `json:"round_id"`
	UpdatedAt string         `json:"updated_at"`
	Standings []StandingsRow `json:"standings"`
	// LeagueState is the League Manager's state; Final is true once the league is
	// complete and the standings will not change.
	LeagueState string `json:"league_state"`
	Final       bool   `json:"final"`
	// MatchesLeft, in the answer to a player, counts that player's matches not yet
	// finished, when the schedule fixes them all (round robin, gauntlet) or the league is
	// complete; nil when it is not known (registration open, or a Swiss or knockout
	// league whose next rounds are not paired yet).
	MatchesLeft *int `json:"matches_left,omitempty"`
}

// StandingsRow is one player's line of the standings.
type StandingsRow struct {
	Rank          int    `json:"rank"`
	PlayerID      string `json:"player_id"`
	Points        int    `json:"points"`
	Wins          int    `json:"wins"`
	Draws         int    `json:"draws"`
	Losses        int    `json:"losses"`
	MatchesPlayed int    `json:"matches_played"`
	// Suspended marks, in the live standings only, a player serving a suspension.
	Suspended bool `json:"suspended,omitempty"`
}
