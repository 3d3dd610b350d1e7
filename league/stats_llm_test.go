package league

import (
	"testing"
)

// Players of strategy llm send a note beside each move. The statistics keep the
// legality axis apart from strength: notes, first-try answers, unreadable and illegal
// answers, rethinks, call retries, moves given up (refused) and matches lost for it
// (forfeits); and the cost: tokens, latency, dollars per game. They are the same after
// a restart. Notes of other strategies, and values that are not whole counts, add
// nothing; a player without notes has no llm block.
func TestPlayerStatisticsOfLanguageModels(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	a, b := ms[0].Players[0], ms[0].Players[1]
	c := ms[1].Players[0]
	note := func(fields map[string]any) map[string]any {
		fields["model"] = "m"
		return map[string]any{"llm": fields}
	}
	move := func(step int, player string, meta any) map[string]any {
		return map[string]any{"step": step, "player": player, "move": map[string]int{"row": 0, "col": step}, "outcome": "SUCCESS", "elapsed_ms": 10, "metadata": meta}
	}
	l.reportWithMeta(ms[0], decided(ms[0], 0), map[string]any{
		"moves": []any{
			move(1, a, note(map[string]any{"tokens_in": 100, "tokens_out": 20, "rethinks": 1, "unreadable": 1, "latency_ms": 900, "cost_usd": 0.001})),
			move(2, b, map[string]any{"model": map[string]any{"reasoning": "perfect"}}), // another strategy's note
			move(3, a, note(map[string]any{"tokens_in": 150, "tokens_out": 30, "rethinks": 2, "illegal": 2, "call_retries": 2, "latency_ms": 300, "cost_usd": 0.002})),
			move(4, b, map[string]any{"dropped": "metadata larger than 1024 bytes"}), // the referee dropped it
			move(5, a, note(map[string]any{"tokens_in": 50, "tokens_out": 10, "latency_ms": 100})),
			map[string]any{"step": 6, "player": "p99", "metadata": note(map[string]any{"tokens_in": 1000})}, // not in the match
		},
		"violations": []any{},
	})
	// c, a model that gave up twice (refused) and lost the match for it.
	l.reportWithMeta(ms[1], decided(ms[1], 1), map[string]any{
		"termination": "timeout", "loser": c,
		"moves": []any{move(1, c, note(map[string]any{"tokens_in": -5, "tokens_out": 1.5, "rethinks": "2", "latency_ms": 40}))}, // careless counts read as 0
		"violations": []any{
			map[string]any{"step": 3, "player": c, "kind": "refused", "action": "warning"},
			map[string]any{"step": 3, "player": c, "kind": "refused", "action": "technical_loss"},
		},
	})
	want := map[string]*LLMStats{
		a: {Notes: 3, FirstTry: 1, Unreadable: 1, Illegal: 2, Rethinks: 3, CallRetries: 2, TokensIn: 300, TokensOut: 60,
			LatencyMS: Spread{100, 300, 900, 900}, CostUSD: 0.003, CostPerGame: 0.003},
		c: {Notes: 1, FirstTry: 1, GivenUp: 2, Forfeits: 1, LatencyMS: Spread{40, 40, 40, 40}},
	}
	check := func(when string) {
		t.Helper()
		st, _ := h.getStatus()
		for _, ag := range st.Agents {
			if ag.Kind == "referee" {
				continue
			}
			got, w := ag.Stats.LLM, want[ag.ID]
			switch {
			case w == nil && got != nil:
				t.Errorf("%s: %s has llm statistics %+v, want none", when, ag.ID, got)
			case w != nil && (got == nil || *got != *w):
				t.Errorf("%s: llm statistics of %s %+v, want %+v", when, ag.ID, got, w)
			}
		}
	}
	check("after the results")
	h.restart()
	check("after a restart")
}
