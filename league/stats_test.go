package league

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"testing"
)

// Each player's statistics come from the results' game_metadata: illegal moves, timeouts
// and every violation kind, moves and thinking time, matches played. They are in GET
// /status, and a restart recomputes the same from the stored results.
func TestPlayerStatistics(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	a, b := ms[0].Players[0], ms[0].Players[1]
	c, d := ms[1].Players[0], ms[1].Players[1]
	l.reportWithMeta(ms[0], decided(ms[0], 1), map[string]any{
		"moves": []any{
			map[string]any{"step": 1, "player": a, "move": map[string]int{"row": 0, "col": 0}, "outcome": "SUCCESS", "elapsed_ms": 10},
			map[string]any{"step": 2, "player": b, "move": map[string]int{"row": 1, "col": 1}, "outcome": "SUCCESS", "elapsed_ms": 20},
			map[string]any{"step": 3, "player": a, "move": map[string]int{"row": 0, "col": 1}, "outcome": "FORCED", "elapsed_ms": 50},
			map[string]any{"step": 4, "player": "p99", "outcome": "SUCCESS", "elapsed_ms": 1000}, // not in the match: ignored
			map[string]any{"step": 5, "player": b, "outcome": "SUCCESS"},                         // not timed: ignored
		},
		"violations": []any{
			map[string]any{"step": 3, "player": a, "kind": "timeout", "action": "warning"},
			map[string]any{"step": 4, "player": b, "kind": "unreachable", "action": "warning"},
			map[string]any{"step": 5, "player": a, "kind": "invalid_move", "action": "technical_loss"},
			map[string]any{"step": 5, "player": b, "kind": "slow_typing"}, // unknown kind: ignored
		},
	})
	l.reportWithMeta(ms[1], decided(ms[1], 1), map[string]any{
		"moves":      []any{},
		"violations": []any{map[string]any{"player": c, "kind": "no_join", "action": "technical_loss"}},
	})
	want := map[string]PlayerStats{
		a: {MatchesPlayed: 1, IllegalMoves: 1, Timeouts: 1, Violations: map[string]int{"timeout": 1, "invalid_move": 1}, Moves: 2, AvgThinkingMS: 30, MaxThinkingMS: 50},
		b: {MatchesPlayed: 1, Timeouts: 1, Violations: map[string]int{"unreachable": 1}, Moves: 1, AvgThinkingMS: 20, MaxThinkingMS: 20},
		c: {MatchesPlayed: 1, Violations: map[string]int{"no_join": 1}},
		d: {MatchesPlayed: 1, Violations: map[string]int{}},
	}
	check := func(when string) {
		t.Helper()
		rec := httptest.NewRecorder()
		Routes(h.m, h.srv).ServeHTTP(rec, httptest.NewRequest("GET", "/status", nil))
		var st Status
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
			t.Fatal(err)
		}
		for _, ag := range st.Agents {
			if ag.Kind == "referee" {
				if ag.Stats != nil {
					t.Errorf("%s: referee %s has statistics %+v", when, ag.ID, ag.Stats)
				}
				continue
			}
			w := want[ag.ID]
			if ag.Stats == nil || !reflect.DeepEqual(*ag.Stats, w) {
				t.Errorf("%s: statistics of %s %+v, want %+v", when, ag.ID, ag.Stats, w)
			}
		}
	}
	check("after the results")
	h.restart()
	check("after a restart")
}
