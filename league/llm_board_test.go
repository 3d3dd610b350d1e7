package league

import (
	"math"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/web"
)

// Strength apart from legality, in a test built to show it: p01 beats p02 over the board,
// but loses to p03 on time (its model gave up its moves: refused answers, a technical
// loss); p02 and p03 draw. With that forfeit p03 rates best; without it p01 does. The
// leaderboard of the language models shows both ratings beside p01's legality (its
// unreadable and illegal answers, the moves it gave up, the forfeit) and its cost.
func TestRatingsWithoutForfeits(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *config.Config) { c.Ranking.ProvisionalGames = 2 }})
	l := h.register([]string{"ref1"}, nil, playerIDs(3))
	l.start()
	note := func(step int, player string, fields map[string]any) map[string]any {
		fields["model"] = "m"
		return map[string]any{"step": step, "player": player, "move": map[string]int{"row": 0, "col": step}, "outcome": "SUCCESS", "elapsed_ms": 10,
			"metadata": map[string]any{"llm": fields}}
	}
	for played := 0; played < 3; {
		h.settle()
		_, ms := h.round()
		for _, mt := range ms {
			has := func(p string) bool { return mt.Players[0] == p || mt.Players[1] == p }
			idx := func(p string) int {
				if mt.Players[0] == p {
					return 0
				}
				return 1
			}
			switch {
			case has("p01") && has("p02"):
				l.reportWithMeta(mt, decided(mt, idx("p01")), map[string]any{"termination": "normal",
					"moves": []any{note(1, "p01", map[string]any{"tokens_in": 100, "tokens_out": 10, "rethinks": 1, "unreadable": 1, "latency_ms": 500, "cost_usd": 0.01})}})
			case has("p01") && has("p03"):
				l.reportWithMeta(mt, decided(mt, idx("p03")), map[string]any{"termination": "timeout", "loser": "p01",
					"moves":      []any{note(1, "p01", map[string]any{"tokens_in": 100, "tokens_out": 10, "rethinks": 1, "illegal": 1, "latency_ms": 700, "cost_usd": 0.01})},
					"violations": []any{map[string]any{"step": 3, "player": "p01", "kind": "refused", "action": "technical_loss"}}})
			default:
				l.reportOK(mt, drawn(mt))
			}
			played++
		}
	}
	v, err := h.m.LeagueView(web.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Ratings) != 3 || len(v.RatingsWithoutForfeits) != 3 || v.Ratings[0].PlayerID != "p03" || v.RatingsWithoutForfeits[0].PlayerID != "p01" {
		t.Fatalf("ratings %+v, without forfeits %+v: want p03 first with the forfeit, p01 without", v.Ratings, v.RatingsWithoutForfeits)
	}
	// Each played 2 rated games, p01 only 1 without its forfeit: provisional there alone.
	if v.Ratings[0].Provisional || !v.RatingsWithoutForfeits[0].Provisional {
		t.Errorf("provisional marks %+v, %+v: want none with the forfeit, p01 without", v.Ratings, v.RatingsWithoutForfeits)
	}
	if len(v.LLM) != 1 {
		t.Fatalf("leaderboard %+v, want p01 alone: the others sent no llm notes", v.LLM)
	}
	row := v.LLM[0]
	// 3 moves: 2 with a note, 1 given up.
	third := 100.0 / 3
	if row.PlayerID != "p01" || row.RatingWithoutForfeits <= row.Rating || row.Forfeits != 1 || row.GivenUp != 1 || row.Moves != 3 ||
		row.FirstTry != 0 || math.Abs(row.UnreadablePer100-third) > 1e-9 || math.Abs(row.IllegalPer100-third) > 1e-9 || row.TokensPerMove != 110 || row.LatencyP50MS != 500 ||
		math.Abs(row.CostPerGameUSD-0.01) > 1e-12 || row.CostPerRatingPointUSD <= 0 {
		t.Errorf("leaderboard row %+v", row)
	}
	t.Logf("p01: rating %.0f with its forfeit, %.0f without", row.Rating, row.RatingWithoutForfeits)
}
