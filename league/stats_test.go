package league

import (
	"reflect"
	"strings"
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
		st, _ := h.getStatus()
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

// Under a clock each player's statistics add the spread of its think time (elapsed_ms -
// network_ms) and network time per move, its time left at the end of each game (0 when it
// ran out of time) and its flags, a draw on time included; a match is under a clock when its result records the time
// control or its moves carry clock_ms. The rest keep their meaning, and a restart
// recomputes the same.
func TestPlayerClockStatistics(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	a, b := ms[0].Players[0], ms[0].Players[1]
	c, d := ms[1].Players[0], ms[1].Players[1]
	l.reportWithMeta(ms[0], decided(ms[0], 1), map[string]any{
		"termination": "timeout", "loser": a,
		"time_control": map[string]any{"base_ms": 10000, "increment_ms": 100},
		"moves": []any{
			map[string]any{"step": 1, "player": a, "move": map[string]int{"row": 0, "col": 0}, "outcome": "SUCCESS", "elapsed_ms": 300, "network_ms": 100, "clock_ms": 9800},
			map[string]any{"step": 2, "player": b, "move": map[string]int{"row": 1, "col": 1}, "outcome": "SUCCESS", "elapsed_ms": 100, "network_ms": 0, "clock_ms": 10000},
			map[string]any{"step": 3, "player": a, "move": map[string]int{"row": 0, "col": 1}, "outcome": "SUCCESS", "elapsed_ms": 500, "network_ms": 0, "clock_ms": 9400},
			map[string]any{"step": 4, "player": b, "move": map[string]int{"row": 2, "col": 2}, "outcome": "SUCCESS", "elapsed_ms": 200, "network_ms": 50, "clock_ms": 9900},
		},
		"violations": []any{map[string]any{"step": 5, "player": a, "kind": "timeout", "action": "technical_loss"}},
	})
	// d runs out of time against c, who cannot win: a draw, and a flag of d's.
	l.reportWithMeta(ms[1], drawn(ms[1]), map[string]any{
		"termination": "timeout_vs_insufficient_material",
		"moves": []any{
			map[string]any{"step": 1, "player": c, "move": map[string]int{"row": 0, "col": 0}, "outcome": "SUCCESS", "elapsed_ms": 40, "network_ms": 10, "clock_ms": 5060},
			map[string]any{"step": 2, "player": d, "move": map[string]int{"row": 1, "col": 1}, "outcome": "FORCED", "elapsed_ms": 2000, "clock_ms": 3000},
		},
		"violations": []any{map[string]any{"step": 4, "player": d, "kind": "timeout", "action": "draw"}},
	})
	want := map[string]ClockStats{
		a: {Games: 1, Moves: 2, ThinkMS: Spread{200, 200, 500, 500}, NetworkMS: Spread{0, 0, 100, 100}, Flags: 1},
		b: {Games: 1, Moves: 2, ThinkMS: Spread{100, 100, 150, 150}, NetworkMS: Spread{0, 0, 50, 50}, LeftMS: Spread{9900, 9900, 9900, 9900}},
		c: {Games: 1, Moves: 1, ThinkMS: Spread{30, 30, 30, 30}, NetworkMS: Spread{10, 10, 10, 10}, LeftMS: Spread{5060, 5060, 5060, 5060}},
		d: {Games: 1, Moves: 1, ThinkMS: Spread{2000, 2000, 2000, 2000}, Flags: 1},
	}
	check := func(when string) {
		t.Helper()
		st, body := h.getStatus()
		for _, ag := range st.Agents {
			w, ok := want[ag.ID]
			if !ok {
				continue
			}
			if ag.Stats == nil || ag.Stats.Clock == nil || !reflect.DeepEqual(*ag.Stats.Clock, w) {
				t.Errorf("%s: statistics of %s %+v, want clock %+v", when, ag.ID, ag.Stats, w)
				continue
			}
			if ag.Stats.MatchesPlayed != 1 || ag.Stats.Moves != w.Moves {
				t.Errorf("%s: statistics of %s %+v: want 1 match and %d moves", when, ag.ID, ag.Stats, w.Moves)
			}
		}
		if !strings.Contains(body, `"clock":{"games":1,"moves":2,"think_ms":{"min":200,"p50":200,"p99":500,"max":500}`) {
			t.Errorf("%s: GET /status does not show the clock figures as documented:\n%s", when, body)
		}
	}
	check("after the results")
	h.restart()
	check("after a restart")
}

// spread takes the nearest rank: of 1..100 the median is 50 and the 99th percentile 99.
func TestSpread(t *testing.T) {
	var v []int64
	for i := int64(100); i >= 1; i-- {
		v = insertSorted(v, i)
	}
	if got, want := spread(v), (Spread{1, 50, 99, 100}); got != want {
		t.Errorf("spread(1..100) = %+v, want %+v", got, want)
	}
	if got, want := spread(v[:3]), (Spread{1, 2, 3, 3}); got != want {
		t.Errorf("spread(1..3) = %+v, want %+v", got, want)
	}
	if got := spread(nil); got != (Spread{}) {
		t.Errorf("spread() = %+v, want zeros", got)
	}
}
