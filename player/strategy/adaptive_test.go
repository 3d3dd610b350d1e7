package strategy

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentleague/agentleague/game"
)

// TestAdaptiveBeatsBiasedOpponents plays adaptive through the real game state and its real
// contexts, over best-of-999 matches in alternating seats (each ends once decided), and checks
// its share of the decided throws. The required case runs 1000 throws; the pattern cases fewer.
func TestAdaptiveBeatsBiasedOpponents(t *testing.T) {
	throwsOf := []string{"rock", "paper", "scissors"}
	tests := []struct {
		name      string
		minThrows int
		minRate   float64
		// opponent picks the k-th throw of a match.
		opponent func(rng *rand.Rand, k int) string
	}{
		{"rock half the time", 1000, 0.60, func(rng *rand.Rand, _ int) string {
			if rng.IntN(2) == 0 {
				return "rock"
			}
			return throwsOf[1+rng.IntN(2)]
		}},
		{"always scissors", 200, 0.95, func(*rand.Rand, int) string { return "scissors" }},
		{"cycles rock paper scissors", 200, 0.90, func(_ *rand.Rand, k int) string { return throwsOf[k%3] }},
		{"repeats each throw twice", 200, 0.60, func(_ *rand.Rand, k int) string { return throwsOf[k/2%3] }},
	}
	g := mustGame(t, game.TypeRockPaperScissors, map[string]any{"rounds": 999})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2026, 11))
			var throws, wins, losses int
			for match := 0; throws < tt.minThrows; match++ {
				seat := match % 2
				matchID := fmt.Sprintf("match-%d", match)
				strat := mustStrategy(t, "adaptive", g, 5, matchID)
				s := g.NewState(int64(match))
				// Stop at the throw count, mid-match if need be: Final reports the throws so far.
				for k := 0; !s.Terminal() && throws+k < tt.minThrows; k++ {
					moves := make([]json.RawMessage, 2)
					raw, err := strat.Move(Request{MatchID: matchID, GameType: g.Type(), StepNumber: k + 1, Context: contextJSON(t, s, seat)})
					if err != nil {
						t.Fatal(err)
					}
					if moves[seat], err = s.ParseMove(seat, raw); err != nil {
						t.Fatal(err)
					}
					moves[1-seat] = json.RawMessage(fmt.Sprintf(`{"choice":%q}`, tt.opponent(rng, k)))
					next, err := s.Apply(moves)
					if err != nil {
						t.Fatal(err)
					}
					s = next
				}
				var final struct {
					History []struct{ Winner *int } `json:"history"`
				}
				raw, err := json.Marshal(s.Final())
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(raw, &final); err != nil {
					t.Fatal(err)
				}
				for _, h := range final.History {
					throws++
					switch {
					case h.Winner == nil: // a drawn throw
					case *h.Winner == seat:
						wins++
					default:
						losses++
					}
				}
			}
			rate := float64(wins) / float64(wins+losses)
			t.Logf("%d throws: %d won, %d lost, %.1f%% of decided throws won", throws, wins, losses, 100*rate)
			if rate < tt.minRate {
				t.Errorf("got %.3f of decided throws won, want at least %.2f", rate, tt.minRate)
			}
		})
	}
}
