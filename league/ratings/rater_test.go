package ratings

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// swiss plays a Swiss of rounds rounds between n players (n even) of normally spread
// strengths: each round pairs neighbours in the order of points so far, passing over
// pairs that met already where it can, so everyone meets players of similar strength.
// Results follow simulate's model.
func swiss(n, rounds int, seed uint64) ([]string, []Game) {
	r := rand.New(rand.NewPCG(seed, 1))
	players := make([]string, n)
	elo := make([]float64, n)
	for i := range players {
		players[i] = fmt.Sprintf("p%05d", i)
		elo[i] = 1500 + 200*r.NormFloat64()
	}
	points := make([]float64, n)
	met := map[[2]int]bool{}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	var games []Game
	for range rounds {
		slices.SortStableFunc(order, func(i, j int) int {
			if points[i] != points[j] {
				if points[i] > points[j] {
					return -1
				}
				return 1
			}
			return 0
		})
		paired := make([]bool, n)
		for k, a := range order {
			if paired[a] {
				continue
			}
			b := -1
			for _, c := range order[k+1:] {
				if !paired[c] && (b < 0 || !met[[2]int{a, c}]) {
					b = c
					if !met[[2]int{a, c}] {
						break
					}
				}
			}
			paired[a], paired[b] = true, true
			met[[2]int{a, b}], met[[2]int{b, a}] = true, true
			s := playGame(r, elo[a], elo[b])
			points[a] += s
			points[b] += 1 - s
			games = append(games, Game{players[a], players[b], s})
		}
	}
	return players, games
}

// A Rater's first fit starts where Compute's does: the same ratings, bit for bit.
func TestRaterFirstFitIsCompute(t *testing.T) {
	players, games := swiss(200, 7, 3)
	want, err := Compute(players, games, Options{Samples: 20, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var r Rater
	got, err := r.Point(players, games)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		w := Rating{PlayerID: want[i].PlayerID, Rating: want[i].Rating, Games: want[i].Games}
		if got[i] != w {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], w)
		}
	}
}

// Refits that start from the last strengths, a game or a round at a time and with
// players joining on the way, land on Compute's fixed point within the fit's tolerance.
// They need not match it bit for bit, so the test logs how many rows do.
func TestRaterWarmAgreesWithCompute(t *testing.T) {
	players, games := swiss(60, 9, 4)
	var r Rater
	// Players join as their first game is played; a few are listed without games.
	listed := slices.Clone(players[50:])
	seen := map[string]bool{}
	for _, p := range listed {
		seen[p] = true
	}
	exact, rows, worst := 0, 0, 0.0
	for n := 1; n <= len(games); n += 1 + n/40 {
		for _, p := range []string{games[n-1].A, games[n-1].B} {
			if !seen[p] {
				seen[p] = true
				listed = append(listed, p)
			}
		}
		got, err := r.Point(listed, games[:n])
		if err != nil {
			t.Fatal(err)
		}
		want, err := Compute(listed, games[:n], Options{Samples: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d games: %d rows, want %d", n, len(got), len(want))
		}
		byID := map[string]Rating{}
		for _, w := range want {
			byID[w.PlayerID] = w
		}
		for _, g := range got {
			w := byID[g.PlayerID]
			if g.Games != w.Games || math.Abs(g.Rating-w.Rating) > 1e-6 {
				t.Fatalf("%d games: %+v, Compute %+v", n, g, w)
			}
			worst = math.Max(worst, math.Abs(g.Rating-w.Rating))
			if g.Rating == w.Rating {
				exact++
			}
			rows++
		}
	}
	t.Logf("%d of %d warm ratings equal Compute's bit for bit, the others within %.1g Elo", exact, rows, worst)
}

// Point refuses what Compute refuses, and keeps its last fit when it does.
func TestRaterErrors(t *testing.T) {
	var r Rater
	if _, err := r.Point([]string{"a", "b"}, []Game{{"a", "b", 1}}); err != nil {
		t.Fatal(err)
	}
	before := r
	for _, g := range []Game{{"a", "c", 1}, {"a", "a", 1}, {"a", "b", 0.7}} {
		_, err := r.Point([]string{"a", "b"}, []Game{g})
		_, want := Compute([]string{"a", "b"}, []Game{g}, Options{})
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%+v: error %v, Compute's %v", g, err, want)
		}
	}
	if !slices.Equal(r.pi, before.pi) || !slices.Equal(r.ids, before.ids) {
		t.Error("a refused input changed the Rater")
	}
	if rows, err := r.Point(nil, nil); err != nil || len(rows) != 0 {
		t.Errorf("no players: %v, %v", rows, err)
	}
	rows, err := r.Point([]string{"x"}, nil)
	if err != nil || len(rows) != 1 || rows[0].Rating != anchor {
		t.Errorf("a player without games: %v, %v", rows, err)
	}
}

// swiss10000 is the league: 10,000 players, 11 Swiss rounds, 55,000 games.
func swiss10000(b *testing.B) ([]string, []Game) {
	b.Helper()
	players, games := swiss(10000, 11, 40)
	if len(games) != 55000 {
		b.Fatalf("%d games", len(games))
	}
	return players, games
}

// BenchmarkPoint10000 refits the point ratings of 10,000 players after their 55,000th
// game, starting from the fit of the first 54,999 (warm), and from scratch (cold).
func BenchmarkPoint10000(b *testing.B) {
	players, games := swiss10000(b)
	var last Rater
	if _, err := last.Point(players, games[:len(games)-1]); err != nil {
		b.Fatal(err)
	}
	for _, bb := range []struct {
		name  string
		start Rater
	}{{"warm", last}, {"cold", Rater{}}} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				r := bb.start // Point replaces the Rater's slices, never changes them
				if _, err := r.Point(players, games); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCompute10000 computes the ratings and their bootstrap intervals of 10,000
// players from 55,000 games.
func BenchmarkCompute10000(b *testing.B) {
	players, games := swiss10000(b)
	for _, samples := range []int{200, 1000} {
		b.Run(fmt.Sprintf("samples=%d", samples), func(b *testing.B) {
			for b.Loop() {
				if _, err := Compute(players, games, Options{Samples: samples, Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
