package league

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// Players of strategy llm send a note beside each move; its tokens and errors (refused
// answers and failed calls) add up in the player's statistics, also after a restart.
// Notes of other players, and values that are not whole counts, add nothing.
func TestPlayerStatisticsOfLanguageModels(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	l.start()
	h.settle()
	_, ms := h.round()
	a, b := ms[0].Players[0], ms[0].Players[1]
	llmNote := func(in, out, rethinks, retries any) map[string]any {
		return map[string]any{"llm": map[string]any{"model": "m", "tokens_in": in, "tokens_out": out, "rethinks": rethinks, "call_retries": retries}}
	}
	move := func(step int, player string, meta any) map[string]any {
		return map[string]any{"step": step, "player": player, "move": map[string]int{"row": 0, "col": step}, "outcome": "SUCCESS", "elapsed_ms": 10, "metadata": meta}
	}
	l.reportWithMeta(ms[0], decided(ms[0], 0), map[string]any{
		"moves": []any{
			move(1, a, llmNote(100, 20, 1, 0)),
			move(2, b, map[string]any{"model": map[string]any{"reasoning": "perfect"}}), // another strategy's note
			move(3, a, llmNote(150, 30, 0, 2)),
			move(4, b, llmNote(-5, 1.5, "2", nil)),                                            // nothing to count
			move(5, a, map[string]any{"dropped": "metadata larger than 1024 bytes"}),          // the referee dropped it
			map[string]any{"step": 6, "player": "p99", "metadata": llmNote(1000, 1000, 9, 9)}, // not in the match
		},
		"violations": []any{},
	})
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
				continue
			}
			got := *ag.Stats
			want := [3]int64{}
			if ag.ID == a {
				want = [3]int64{250, 50, 3}
			}
			if [3]int64{got.TokensIn, got.TokensOut, got.LLMErrors} != want || got.Moves != map[string]int{a: 3, b: 2}[ag.ID] {
				t.Errorf("%s: statistics of %s %+v, want tokens in, out and llm errors %v", when, ag.ID, got, want)
			}
		}
	}
	check("after the result")
	h.restart()
	check("after a restart")
}
