package league

import (
	"encoding/json"
	"strings"
	"testing"
)

// The match page of a match under a clock has the time control (the one the result
// records, else the league's) and the mover's clock after each move; a match without one
// has neither.
func TestMatchViewClocks(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	clocked, plain := ms[0], ms[1]
	a, b := clocked.Players[0], clocked.Players[1]
	l.reportWithMeta(clocked, decided(clocked, 0), map[string]any{
		"termination":  "normal",
		"time_control": map[string]any{"base_ms": 5000, "increment_ms": 50, "bank_ms": 1000},
		"moves": []any{
			map[string]any{"step": 1, "player": a, "move": map[string]int{"row": 0, "col": 0}, "outcome": "SUCCESS", "elapsed_ms": 300, "network_ms": 100, "clock_ms": 4850},
			map[string]any{"step": 2, "player": b, "move": map[string]int{"row": 1, "col": 1}, "outcome": "SUCCESS", "elapsed_ms": 100, "network_ms": 0, "clock_ms": 4950},
		},
	})
	l.reportOK(plain, decided(plain, 0))

	v, err := h.m.MatchView(clocked.ID)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(v)
	for _, want := range []string{
		`"clock":{"time_control":"5+0.05","base_ms":5000}`,
		`"player":"` + a + `","move":{"col":0,"row":0},"outcome":"SUCCESS","clock_ms":4850}`,
		`"player":"` + b + `","move":{"col":1,"row":1},"outcome":"SUCCESS","clock_ms":4950}`,
	} {
		if !strings.Contains(string(js), want) {
			t.Errorf("match view %s\nholds no %s", js, want)
		}
	}
	v, err = h.m.MatchView(plain.ID)
	if err != nil {
		t.Fatal(err)
	}
	if js, _ := json.Marshal(v); v.Clock != nil || strings.Contains(string(js), "clock") {
		t.Errorf("a match without a clock: got %s", js)
	}
}
