package game

import (
	"encoding/json"
	"fmt"
)

// Record is one recorded move of a match: the step it belongs to, the player who made it
// and its payload as sent.
type Record struct {
	Step   int
	Player string
	Move   json.RawMessage
}

// ReplayError names the record where a replay stopped.
type ReplayError struct {
	// Move is the 1-based index of the record, 0 when the problem is not one record.
	Move int
	Msg  string
}

func (e *ReplayError) Error() string {
	if e.Move > 0 {
		return fmt.Sprintf("move %d: %s", e.Move, e.Msg)
	}
	return e.Msg
}

// Replay re-plays the recorded moves of a match between players from start (Open gives
// it: the initial state of the match's seed, or where its opening ends). The records of one step are the moves of the players to move at it, in
// any order; steps come in the order recorded. after, when not nil, sees each state
// reached, with its step number and the index of the step's first record. It returns the
// last state; a record the rules refuse stops it with a *ReplayError. The live view of a
// finished match and the verifier of an audit log both re-play with it.
func Replay(start State, players [2]string, records []Record, after func(step, first int, s State)) (State, error) {
	fail := func(move int, format string, args ...any) (State, error) {
		return nil, &ReplayError{Move: move, Msg: fmt.Sprintf(format, args...)}
	}
	seat := map[string]int{players[0]: 0, players[1]: 1}
	state := start
	for i := 0; i < len(records); {
		step, first := records[i].Step, i
		if state.Terminal() {
			return fail(i+1, "move after the game was over")
		}
		movers := state.ToMove()
		batch := map[int]json.RawMessage{}
		for ; i < len(records) && records[i].Step == step; i++ {
			r := records[i]
			s, ok := seat[r.Player]
			if !ok {
				return fail(i+1, "moved by %s, who is not in the match", r.Player)
			}
			parsed, err := state.ParseMove(s, r.Move)
			if err != nil {
				return fail(i+1, "%s's move %s is refused by the rules: %v", r.Player, r.Move, err)
			}
			batch[s] = parsed
		}
		moves := make([]json.RawMessage, len(movers))
		for k, s := range movers {
			mv, ok := batch[s]
			if !ok {
				return fail(first+1, "step %d lacks the move of %s", step, players[s])
			}
			moves[k] = mv
		}
		if len(batch) != len(movers) {
			return fail(first+1, "step %d has a move from a player not to move", step)
		}
		next, err := state.Apply(moves)
		if err != nil {
			return fail(first+1, "cannot apply step %d: %v", step, err)
		}
		state = next
		if after != nil {
			after(step, first, state)
		}
	}
	return state, nil
}
