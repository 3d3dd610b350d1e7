package game

import (
	"encoding/json"
	"errors"
	"testing"
)

func mustGame(t testing.TB, gameType string, params map[string]any) Game {
	t.Helper()
	g, err := Default().New(gameType, params)
	if err != nil {
		t.Fatalf("new %s: %v", gameType, err)
	}
	return g
}

// contextJSON is player i's context as the wire carries it.
func contextJSON(t testing.TB, s State, i int) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(s.Context(i))
	if err != nil {
		t.Fatalf("marshal context: %v", err)
	}
	return raw
}

// play applies steps, each one move per player in ToMove order, as raw JSON strings.
func play(t testing.TB, s State, steps ...[]string) State {
	t.Helper()
	for n, step := range steps {
		moves := make([]json.RawMessage, len(step))
		for k, m := range step {
			moves[k] = json.RawMessage(m)
		}
		next, err := s.Apply(moves)
		if err != nil {
			t.Fatalf("step %d %v: %v", n+1, step, err)
		}
		s = next
	}
	return s
}

// snapshot renders everything a State shows, to detect a change of the receiver.
func snapshot(t testing.TB, s State) string {
	t.Helper()
	view := map[string]any{
		"to_move":  s.ToMove(),
		"terminal": s.Terminal(),
		"outcomes": s.Outcomes(),
		"final":    s.Final(),
		"context0": s.Context(0),
		"context1": s.Context(1),
		"forced0":  s.ForcedMove(0),
	}
	raw, err := json.Marshal(view)
	if err != nil {
		t.Fatalf("marshal snapshot: %v", err)
	}
	return string(raw)
}

// errKind names which sentinel err wraps, for table comparisons.
func errKind(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrMalformedMove) && errors.Is(err, ErrIllegalMove):
		return "both"
	case errors.Is(err, ErrMalformedMove):
		return "malformed"
	case errors.Is(err, ErrIllegalMove):
		return "illegal"
	default:
		return "other"
	}
}

// checkParseMove parses raw as player's move in state: want is the canonical move, or
// the error kind ("malformed" or "illegal") the parse must fail with.
func checkParseMove(t *testing.T, state State, player int, raw, want string) {
	t.Helper()
	got, err := state.ParseMove(player, json.RawMessage(raw))
	if err != nil {
		if kind := errKind(err); kind != want {
			t.Fatalf("got %s error %v, want %s", kind, err, want)
		}
		return
	}
	if string(got) != want {
		t.Errorf("got move %s, want %s", got, want)
	}
}
