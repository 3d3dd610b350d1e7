package ratings

import (
	"math"
	"math/rand/v2"
	"testing"
)

// randomPlayed returns n players' games: every pair meets with probability density, a
// random number of times, with random scores. Games come grouped by pair, as newData needs.
func randomPlayed(r *rand.Rand, n int, density float64) []played {
	var out []played
	for a := range n {
		for b := a + 1; b < n; b++ {
			if r.Float64() >= density {
				continue
			}
			for range 1 + r.IntN(4) {
				out = append(out, played{int32(a), int32(b), float64(r.IntN(3)) / 2})
			}
		}
	}
	return out
}

// mm is Hunter's MM algorithm with the same prior, run to convergence as a reference. It
// works from the raw games, not the adjacency lists, so it checks those too. ok reports
// convergence.
func mm(n int, games []played) (pi []float64, ok bool) {
	pi = make([]float64, n)
	for i := range pi {
		pi[i] = 1
	}
	for range 1000000 {
		wins := make([]float64, n)
		den := make([]float64, n)
		for i := range n {
			wins[i] = 1              // the virtual win
			den[i] = 2 / (pi[i] + 1) // two virtual games against strength 1
		}
		for _, g := range games {
			wins[g.a] += g.s
			wins[g.b] += 1 - g.s
			inv := 1 / (pi[g.a] + pi[g.b])
			den[g.a] += inv
			den[g.b] += inv
		}
		var moved float64
		for i := range pi {
			next := wins[i] / den[i]
			moved = math.Max(moved, math.Abs(next-pi[i])/pi[i])
			pi[i] = next
		}
		if moved < 1e-14 {
			return pi, true
		}
	}
	return pi, false
}

// TestFitAgreesWithMM checks the fast update lands on the MM fixed point, and that the
// fixed point solves the likelihood equations with the prior.
func TestFitAgreesWithMM(t *testing.T) {
	// wide returns a few round robins between players spread over about 3000 Elo: nearly
	// every result goes the expected way, so without the prior the fit would diverge.
	wide := func(n int) []played {
		elo := make([]float64, n)
		for i := range elo {
			elo[i] = 3000 * float64(i) / float64(n)
		}
		players, games := simulate(elo, 3, 4)
		index := map[string]int32{}
		for i, p := range players {
			index[p] = int32(i)
		}
		out, err := canonical(index, games)
		if err != nil {
			panic(err)
		}
		return out
	}
	random := func(n int, density float64) []played {
		return randomPlayed(rand.New(rand.NewPCG(1, uint64(n))), n, density)
	}
	tests := []struct {
		name   string
		n      int
		games  []played
		groups int // players linked by games, counting those without any
	}{
		{"pair", 2, random(2, 1), 1},
		{"small dense", 5, random(5, 1), 1},
		{"sparse, in several groups", 12, random(12, 0.15), 2},
		{"medium", 30, random(30, 0.5), 1},
		{"wide spread", 20, wide(20), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			games := tt.games
			d := newData(tt.n, games)
			pi := make([]float64, tt.n)
			for i := range pi {
				pi[i] = 1
			}
			f := newFitter(d.g)
			sweeps := f.fit(d.won, d.lost, pi)
			if sweeps >= fitMaxIter {
				t.Fatalf("no convergence in %d sweeps", sweeps)
			}
			t.Logf("%d games, %d sweeps", len(games), sweeps)
			groups := 0
			for i, r := range f.root {
				if int(r) == i {
					groups++
				}
			}
			if groups != tt.groups {
				t.Errorf("%d groups, want %d", groups, tt.groups)
			}
			want, ok := mm(tt.n, games)
			if !ok {
				t.Fatal("reference MM did not converge")
			}
			for i := range pi {
				if math.Abs(math.Log(pi[i]/want[i])) > 1e-8 {
					t.Errorf("player %d: strength %v, MM %v", i, pi[i], want[i])
				}
			}
			// Score equation: expected score equals actual score, virtual games included.
			for i := range tt.n {
				actual, expected := 1.0, 2*pi[i]/(pi[i]+1)
				for _, g := range games {
					switch i {
					case int(g.a):
						actual += g.s
						expected += pi[g.a] / (pi[g.a] + pi[g.b])
					case int(g.b):
						actual += 1 - g.s
						expected += pi[g.b] / (pi[g.a] + pi[g.b])
					}
				}
				if math.Abs(actual-expected) > 1e-8 {
					t.Errorf("player %d: score %v, expected %v", i, actual, expected)
				}
			}
		})
	}
}
