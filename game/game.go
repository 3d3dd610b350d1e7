// Package game holds the rules of every game the league can run. Rules are pure and
// deterministic given the match seed, so referees run them and players import them.
package game

import (
	"encoding/json"
	"errors"

	"github.com/agentleague/agentleague/protocol"
)

// ErrIllegalMove marks a move that is well-formed but breaks the rules.
var ErrIllegalMove = errors.New("illegal move")

// ErrMalformedMove marks a move payload that cannot be decoded.
var ErrMalformedMove = errors.New("malformed move")

// ErrMatchOver marks a step_context of a finished match: its position breaks no rule, but
// no move is due in it. LegalMoves errors wrap it, so a caller can tell such a position from
// one the rules could never reach.
var ErrMatchOver = errors.New("match is over")

// Game creates matches of one game type with fixed, validated parameters.
type Game interface {
	// Type is the registry key, e.g. "tic_tac_toe".
	Type() string
	// Simultaneous reports whether both players move against the same snapshot each step.
	Simultaneous() bool
	// NewState returns the initial state of a match played with seed.
	NewState(seed int64) State
	// LegalMoves lists, in the game's canonical order, the moves a player may make given
	// the step_context it was shown. Players use it; it never needs hidden state.
	LegalMoves(stepContext json.RawMessage) ([]json.RawMessage, error)
	// MaxSteps bounds the steps of any match, so a League Manager can tell how long a
	// legal match may last without knowing the rules.
	MaxSteps() int
}

// State is an immutable snapshot of a match. Methods never modify the receiver.
type State interface {
	// ToMove lists the player indices (0 = players[0], 1 = players[1]) whose moves are
	// collected at this step: one for alternating games, both for simultaneous ones.
	ToMove() []int
	// Context is the step_context shown to player i: only what that player may see.
	Context(i int) map[string]any
	// ParseMove decodes and checks player i's move_payload against this snapshot. The
	// error wraps ErrMalformedMove or ErrIllegalMove.
	ParseMove(i int, raw json.RawMessage) (json.RawMessage, error)
	// ForcedMove is the first legal move of player i in canonical order.
	ForcedMove(i int) json.RawMessage
	// Apply applies one parsed move per entry of ToMove (same order) and returns the next state.
	Apply(moves []json.RawMessage) (State, error)
	// Terminal reports whether the match is over.
	Terminal() bool
	// Outcomes is the result of a terminal state, indexed like players.
	Outcomes() [2]protocol.Outcome
	// Final is the JSON-ready state for GAME_OVER and the result metadata.
	Final() map[string]any
}

// winnable is a State whose rules know positions where a player can no longer win by any
// series of legal moves.
type winnable interface {
	CanWin(i int) bool
}

// CanWin reports whether player i of s could still win by some series of legal moves; a
// game whose rules do not say is taken to be winnable. A player who runs out of time on
// its clock loses only to an opponent who could still win; otherwise the game is drawn
// (FIDE 6.9).
func CanWin(s State, i int) bool {
	w, ok := s.(winnable)
	return !ok || w.CanWin(i)
}
