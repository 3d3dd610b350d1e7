//go:build long

package schedule

import (
	"math/rand/v2"
	"testing"

	"github.com/agentleague/agentleague/league/ratings"
)

// Against 8 simulated players 100 Elo apart, the arena finds the true order and settles
// it in fewer games than double round robins repeated until their ratings settle by the
// same rule, over several leagues. A statistical experiment of a minute under the race
// detector: it runs with make test-long.
func TestLongArenaSimulation(t *testing.T) {
	players, elo := elos()
	f := arenaFormat(5000, 100)
	arenaGames, rrGames := 0, 0
	for seed := int64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 39))
		played := runArena(t, f, players, seed, rng, elo)
		st, _ := ArenaOf(f, players, seed, played)
		if st.Stopped != ArenaSettled {
			t.Fatalf("league %d: %s, want settled", seed, st.Reason)
		}
		a, _ := newArena(f, players, seed, played)
		var order []string
		for _, r := range a.rows {
			order = append(order, r.PlayerID)
		}
		tau := kendallTau(order, elo)
		if tau < 0.9 {
			t.Errorf("league %d: order %v, Kendall tau %.2f, want at least 0.9", seed, order, tau)
		}
		var rr []Played
		for !settled(t, f, players, seed, rr) {
			s, err := Build(players, 2, seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range s.Rounds {
				rr = append(rr, playRound(rng, elo, r))
			}
		}
		rrN := 0
		for _, p := range rr {
			rrN += len(p.Results)
		}
		t.Logf("league %d: arena settled after %d games, Kendall tau %.2f; double round robins settled after %d games", seed, st.Games, tau, rrN)
		arenaGames += st.Games
		rrGames += rrN
	}
	t.Logf("in all: arena %d games, double round robins %d", arenaGames, rrGames)
	if arenaGames >= rrGames {
		t.Errorf("the arena took %d games, the double round robins %d: want fewer", arenaGames, rrGames)
	}
}

// settled reports whether the ratings of played settle the order by the arena's rule.
func settled(t *testing.T, f Format, players []string, seed int64, played []Played) bool {
	t.Helper()
	var games []ratings.Game
	for _, p := range played {
		for _, res := range p.Results {
			if g, ok := ratings.FromOutcome(res.Outcome, ""); ok {
				games = append(games, g)
			}
		}
	}
	if len(games) == 0 {
		return false
	}
	rows, err := ratings.Compute(players, games, ratings.Options{Samples: f.RatingSamples, Seed: uint64(seed), LOS: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(rows); i++ {
		if rows[i].LOSNext < arenaCertain {
			return false
		}
	}
	return true
}

// kendallTau compares order with truth (both best first, the same ids).
func kendallTau(order []string, strength map[string]float64) float64 {
	concordant, discordant := 0, 0
	for i := range order {
		for j := i + 1; j < len(order); j++ {
			if strength[order[i]] > strength[order[j]] {
				concordant++
			} else {
				discordant++
			}
		}
	}
	return float64(concordant-discordant) / float64(concordant+discordant)
}
