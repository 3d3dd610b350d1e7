package ratings

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

// simulate plays cycles round robins between players of the given Elo strengths, A and B
// swapping sides every cycle. A game is drawn with probability half the underdog's chance
// and otherwise won as Bradley-Terry says, so A's expected score is the Bradley-Terry one.
func simulate(elo []float64, cycles int, seed uint64) ([]string, []Game) {
	r := rand.New(rand.NewPCG(seed, 0))
	players := make([]string, len(elo))
	for i := range elo {
		players[i] = fmt.Sprintf("p%03d", i)
	}
	var games []Game
	for c := range cycles {
		for i := range elo {
			for j := i + 1; j < len(elo); j++ {
				a, b := i, j
				if c%2 == 1 {
					a, b = j, i
				}
				s := playGame(r, elo[a], elo[b])
				games = append(games, Game{players[a], players[b], s})
			}
		}
	}
	return players, games
}

// ladder returns n strengths gap Elo apart, strongest first.
func ladder(n int, gap float64) []float64 {
	elo := make([]float64, n)
	for i := range elo {
		elo[i] = 1500 + gap*(float64(n-1)/2-float64(i))
	}
	return elo
}

// spearman is the rank correlation between the true order (p000 strongest) and the rows'
// order. Rows are already sorted by rating, so there are no ties to share.
func spearman(rows []Rating) float64 {
	n := float64(len(rows))
	var d2 float64
	for pos, r := range rows {
		var truth int
		fmt.Sscanf(r.PlayerID, "p%d", &truth)
		d := float64(pos - truth)
		d2 += d * d
	}
	return 1 - 6*d2/(n*(n*n-1))
}

// check asserts what must hold for any output: one row per player, no NaN or Inf, the
// point inside its interval, rows sorted, each row's position inside its rank range, the
// rank range matching its definition, and a mean rating of 1500.
func check(t *testing.T, players []string, rows []Rating) {
	t.Helper()
	ids := slices.Clone(players)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(rows) != len(ids) {
		t.Fatalf("%d rows for %d players", len(rows), len(ids))
	}
	got := make([]string, len(rows))
	var sum float64
	for pos, r := range rows {
		got[pos] = r.PlayerID
		sum += r.Rating
		for _, x := range []float64{r.Rating, r.Low, r.High} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%s: not finite: %+v", r.PlayerID, r)
			}
		}
		if !(r.Low <= r.Rating && r.Rating <= r.High) {
			t.Errorf("%s: rating %v outside [%v, %v]", r.PlayerID, r.Rating, r.Low, r.High)
		}
		if pos > 0 {
			prev := rows[pos-1]
			if prev.Rating < r.Rating || prev.Rating == r.Rating && prev.PlayerID > r.PlayerID {
				t.Errorf("rows %d and %d out of order: %+v, %+v", pos-1, pos, prev, r)
			}
		}
		if rank := pos + 1; r.RankLow > rank || rank > r.RankHigh {
			t.Errorf("%s: rank %d outside %d..%d", r.PlayerID, rank, r.RankLow, r.RankHigh)
		}
		above, below := 0, 0
		for _, o := range rows {
			if o.Low > r.High {
				above++
			}
			if o.High < r.Low {
				below++
			}
		}
		if r.RankLow != 1+above || r.RankHigh != len(rows)-below {
			t.Errorf("%s: rank range %d..%d, want %d..%d", r.PlayerID, r.RankLow, r.RankHigh, 1+above, len(rows)-below)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		t.Errorf("rows for %v, want %v", got, ids)
	}
	if len(rows) > 0 && math.Abs(sum/float64(len(rows))-anchor) > 1e-9 {
		t.Errorf("mean rating %v, want 1500", sum/float64(len(rows)))
	}
}

// meanWidth is the mean interval width.
func meanWidth(rows []Rating) float64 {
	var w float64
	for _, r := range rows {
		w += r.High - r.Low
	}
	return w / float64(len(rows))
}

// TestComputeRecoversOrder simulates leagues of players with set strengths and checks the
// estimated order against the true one, for five simulated leagues per league length.
func TestComputeRecoversOrder(t *testing.T) {
	// Ten players 60 Elo apart: neighbours score 58.5% against each other.
	elo := ladder(10, 60)
	const leagues = 5
	tests := []struct {
		cycles  int
		minRho  float64 // floor for the mean Spearman rank correlation
		maxRank int     // widest rank range allowed at the end
	}{
		{cycles: 2, minRho: 0.8, maxRank: 10},
		{cycles: 8, minRho: 0.9, maxRank: 10},
		{cycles: 32, minRho: 0.95, maxRank: 6},
		{cycles: 128, minRho: 0.98, maxRank: 4},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d cycles", tt.cycles), func(t *testing.T) {
			var rhos []float64
			var sum float64
			var widest, covered, total int
			for seed := range uint64(leagues) {
				players, games := simulate(elo, tt.cycles, 100+seed)
				rows, err := Compute(players, games, Options{Samples: 400, Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				check(t, players, rows)
				rho := spearman(rows)
				rhos = append(rhos, rho)
				sum += rho
				for _, r := range rows {
					widest = max(widest, r.RankHigh-r.RankLow+1)
					var truth int
					fmt.Sscanf(r.PlayerID, "p%d", &truth)
					if r.RankLow <= truth+1 && truth+1 <= r.RankHigh {
						covered++
					}
					total++
				}
			}
			mean := sum / leagues
			t.Logf("%d games a league: mean Spearman rho %.3f (leagues %.3f); true rank inside the rank range for %d of %d players; widest rank range %d",
				len(elo)*(len(elo)-1)/2*tt.cycles, mean, rhos, covered, total, widest)
			if mean < tt.minRho {
				t.Errorf("mean Spearman rho %.3f, want at least %.2f", mean, tt.minRho)
			}
			if widest > tt.maxRank {
				t.Errorf("widest rank range %d, want at most %d", widest, tt.maxRank)
			}
			// Ranges come from 95% intervals, so nearly every true rank should be inside.
			if float64(covered) < 0.9*float64(total) {
				t.Errorf("true rank inside the rank range for only %d of %d players", covered, total)
			}
		})
	}
}

func TestComputeIntervalsShrink(t *testing.T) {
	elo := ladder(10, 60)
	prev := math.Inf(1)
	for _, cycles := range []int{2, 8, 32, 128} {
		players, games := simulate(elo, cycles, 11)
		rows, err := Compute(players, games, Options{Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		w := meanWidth(rows)
		t.Logf("%d cycles, %d games: mean interval width %.1f Elo", cycles, len(games), w)
		if !(w < prev) {
			t.Errorf("%d cycles: mean width %.1f, not below %.1f with fewer games", cycles, w, prev)
		}
		prev = w
	}
}

func TestComputeDeterministic(t *testing.T) {
	players, games := simulate(ladder(12, 40), 4, 5)
	want, err := Compute(players, games, Options{Samples: 300, Seed: 42})
	if err != nil {
		t.Fatal(err)
	}

	// The same set of players and games in another order, some games written from B's
	// side, some players listed twice.
	r := rand.New(rand.NewPCG(9, 9))
	players2 := append(slices.Clone(players), players[3], players[0])
	r.Shuffle(len(players2), func(i, j int) { players2[i], players2[j] = players2[j], players2[i] })
	games2 := slices.Clone(games)
	r.Shuffle(len(games2), func(i, j int) { games2[i], games2[j] = games2[j], games2[i] })
	for i := range games2 {
		if i%3 == 0 {
			g := games2[i]
			games2[i] = Game{A: g.B, B: g.A, Score: 1 - g.Score}
		}
	}

	tests := []struct {
		name     string
		players  []string
		games    []Game
		maxprocs int
	}{
		{"same input", players, games, 0},
		{"same input, one worker", players, games, 1},
		{"same input, many workers", players, games, 7},
		{"reordered and flipped", players2, games2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.maxprocs > 0 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tt.maxprocs))
			}
			got, err := Compute(tt.players, tt.games, Options{Samples: 300, Seed: 42})
			if err != nil {
				t.Fatal(err)
			}
			// reflect.DeepEqual compares floats exactly.
			if !reflect.DeepEqual(got, want) {
				t.Errorf("different result:\n got %+v\nwant %+v", got, want)
			}
		})
	}

	t.Run("another seed moves only the intervals", func(t *testing.T) {
		got, err := Compute(players, games, Options{Samples: 300, Seed: 43})
		if err != nil {
			t.Fatal(err)
		}
		same := true
		for i := range got {
			if got[i].PlayerID != want[i].PlayerID || got[i].Rating != want[i].Rating {
				t.Fatalf("row %d: point estimate changed with the seed: %+v, %+v", i, got[i], want[i])
			}
			same = same && got[i].Low == want[i].Low && got[i].High == want[i].High
		}
		if same {
			t.Error("another seed gave the very same intervals")
		}
	})
}

func TestComputeEdgeCases(t *testing.T) {
	win := func(a, b string) Game { return Game{a, b, 1} }
	draw := func(a, b string) Game { return Game{a, b, 0.5} }
	roundRobin := func(players []string, game func(a, b string) Game) []Game {
		var games []Game
		for i := range players {
			for j := i + 1; j < len(players); j++ {
				games = append(games, game(players[i], players[j]))
			}
		}
		return games
	}
	abcd := []string{"a", "b", "c", "d"}
	tests := []struct {
		name    string
		players []string
		games   []Game
		verify  func(t *testing.T, byID map[string]Rating)
	}{
		{name: "no players"},
		{
			name:    "one player, no games",
			players: []string{"solo"},
			verify: func(t *testing.T, byID map[string]Rating) {
				want := Rating{PlayerID: "solo", Rating: 1500, Low: 1500, High: 1500, RankLow: 1, RankHigh: 1}
				if byID["solo"] != want {
					t.Errorf("got %+v, want %+v", byID["solo"], want)
				}
			},
		},
		{
			name:    "no games",
			players: abcd,
			verify: func(t *testing.T, byID map[string]Rating) {
				for _, r := range byID {
					if r.Rating != 1500 || r.RankLow != 1 || r.RankHigh != 4 {
						t.Errorf("got %+v, want 1500 and rank 1..4", r)
					}
				}
			},
		},
		{
			name:    "all draws",
			players: abcd,
			games:   append(roundRobin(abcd, draw), roundRobin(abcd, draw)...),
			verify: func(t *testing.T, byID map[string]Rating) {
				for _, r := range byID {
					for _, x := range []float64{r.Rating, r.Low, r.High} {
						if math.Abs(x-1500) > 1e-9 {
							t.Errorf("got %+v, want 1500 throughout", r)
						}
					}
					if r.RankLow != 1 || r.RankHigh != 4 || r.Games != 6 {
						t.Errorf("got %+v, want rank 1..4 and 6 games", r)
					}
				}
			},
		},
		{
			name:    "one undefeated, one winless",
			players: abcd,
			games: []Game{
				win("a", "b"), win("a", "c"), win("a", "d"),
				draw("b", "c"), win("b", "d"), win("c", "d"),
			},
			verify: func(t *testing.T, byID map[string]Rating) {
				a, b, c, d := byID["a"], byID["b"], byID["c"], byID["d"]
				if a.RankLow != 1 || a.Rating <= b.Rating || d.RankHigh != 4 || d.Rating >= c.Rating {
					t.Errorf("undefeated a %+v, winless d %+v", a, d)
				}
				if math.Abs(b.Rating-c.Rating) > 1e-6 {
					t.Errorf("b %+v and c %+v had the same results", b, c)
				}
			},
		},
		{
			name:    "strict order, everyone wins every game against those below",
			players: abcd,
			games:   append(roundRobin(abcd, win), roundRobin(abcd, win)...),
			verify: func(t *testing.T, byID map[string]Rating) {
				// Finite although the maximum likelihood without the prior is infinite.
				if !(byID["a"].Rating > byID["b"].Rating && byID["b"].Rating > byID["c"].Rating && byID["c"].Rating > byID["d"].Rating) {
					t.Errorf("order lost: %+v", byID)
				}
				if spread := byID["a"].Rating - byID["d"].Rating; spread > 2000 {
					t.Errorf("spread %.0f Elo: prior too weak", spread)
				}
			},
		},
		{
			name:    "two groups that never met, and a player without games",
			players: []string{"a", "b", "c", "d", "idle"},
			games:   []Game{win("a", "b"), win("a", "b"), draw("a", "b"), win("c", "d"), draw("d", "c")},
			verify: func(t *testing.T, byID map[string]Rating) {
				idle := byID["idle"]
				low, high := math.Inf(1), math.Inf(-1)
				for id, r := range byID {
					if id != "idle" {
						low, high = math.Min(low, r.Low), math.Max(high, r.High)
					}
				}
				if idle.Rating != 1500 || idle.Low != low || idle.High != high || idle.RankLow != 1 || idle.RankHigh != 5 || idle.Games != 0 {
					t.Errorf("idle: %+v, want 1500 in [%v, %v], rank 1..5", idle, low, high)
				}
				if byID["a"].Games != 3 || byID["d"].Games != 2 {
					t.Errorf("games: a %d, d %d, want 3 and 2", byID["a"].Games, byID["d"].Games)
				}
			},
		},
		{
			name:    "one game",
			players: []string{"x", "y"},
			games:   []Game{win("y", "x")},
			verify: func(t *testing.T, byID map[string]Rating) {
				x, y := byID["x"], byID["y"]
				if math.Abs(x.Rating+y.Rating-3000) > 1e-9 || y.Rating <= x.Rating {
					t.Errorf("x %+v, y %+v", x, y)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := Compute(tt.players, tt.games, Options{Samples: 200})
			if err != nil {
				t.Fatal(err)
			}
			if rows == nil {
				t.Fatal("nil rows")
			}
			check(t, tt.players, rows)
			byID := map[string]Rating{}
			for _, r := range rows {
				byID[r.PlayerID] = r
			}
			if tt.verify != nil {
				tt.verify(t, byID)
			}
		})
	}
}

func TestComputeErrors(t *testing.T) {
	players := []string{"a", "b"}
	tests := []struct {
		name  string
		games []Game
		opt   Options
		want  string
	}{
		{"unknown player A", []Game{{"a", "b", 1}, {"z", "b", 1}}, Options{}, `game 1: unknown player "z"`},
		{"unknown player B", []Game{{"a", "z", 0}}, Options{}, `game 0: unknown player "z"`},
		{"self-play", []Game{{"a", "a", 0.5}}, Options{}, `game 0: player "a" against itself`},
		{"bad score", []Game{{"a", "b", 0.25}}, Options{}, "game 0: score 0.25 is not 0, 0.5 or 1"},
		{"score above 1", []Game{{"a", "b", 2}}, Options{}, "game 0: score 2 is not 0, 0.5 or 1"},
		{"NaN score", []Game{{"a", "b", math.NaN()}}, Options{}, "game 0: score NaN is not 0, 0.5 or 1"},
		{"negative samples", nil, Options{Samples: -1}, "negative bootstrap samples -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := Compute(players, tt.games, tt.opt)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if rows != nil {
				t.Errorf("rows %v with an error", rows)
			}
		})
	}
}

// TestComputeRandomLeagues checks the invariants on many small random leagues, including
// sparse and lopsided ones and very few resamples.
func TestComputeRandomLeagues(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 1))
	for trial := range 200 {
		n := 1 + r.IntN(9)
		players := make([]string, n)
		for i := range players {
			players[i] = string(rune('a' + i))
		}
		var games []Game
		if n > 1 {
			for range r.IntN(4 * n * n) {
				a, b := r.IntN(n), r.IntN(n-1)
				if b >= a {
					b++
				}
				games = append(games, Game{players[a], players[b], []float64{0, 0.5, 1}[r.IntN(3)]})
			}
		}
		opt := Options{Samples: 1 + r.IntN(60), Seed: r.Uint64()}
		rows, err := Compute(players, games, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(trial), func(t *testing.T) { check(t, players, rows) })
	}
}

func TestRatingJSON(t *testing.T) {
	b, err := json.Marshal(Rating{PlayerID: "p", Rating: 1510.5, Low: 1400, High: 1600, RankLow: 1, RankHigh: 3, Games: 4})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"player_id":"p","rating":1510.5,"ci_low":1400,"ci_high":1600,"rank_low":1,"rank_high":3,"games":4}`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestQuantile(t *testing.T) {
	tests := []struct {
		sorted []float64
		q      float64
		want   float64
	}{
		{[]float64{7}, 0.025, 7},
		{[]float64{7}, 0.975, 7},
		{[]float64{1, 2}, 0.5, 1.5},
		{[]float64{0, 10, 20, 30, 40}, 0.025, 1}, // position 0.1
		{[]float64{0, 10, 20, 30, 40}, 0.975, 39},
		{[]float64{0, 10, 20, 30, 40}, 1, 40},
		{[]float64{0, 10, 20, 30, 40}, 0, 0},
	}
	for _, tt := range tests {
		if got := quantile(tt.sorted, tt.q); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("quantile(%v, %v) = %v, want %v", tt.sorted, tt.q, got, tt.want)
		}
	}
}

func TestBoundedIsUniform(t *testing.T) {
	src := rand.NewPCG(1, 2)
	const n, draws = 7, 70000
	var counts [n]int
	for range draws {
		counts[bounded(src, n)]++
	}
	for i, c := range counts {
		// Expected 10000 each; 5 standard deviations is about 470.
		if math.Abs(float64(c)-draws/n) > 500 {
			t.Errorf("value %d drawn %d times of %d", i, c, draws)
		}
	}
}

func ExampleCompute() {
	players := []string{"ada", "bob", "cy"}
	var games []Game
	for range 10 {
		games = append(games, Game{"ada", "bob", 1}, Game{"bob", "cy", 0.5}, Game{"cy", "ada", 0})
	}
	games = append(games, Game{"bob", "ada", 1}, Game{"cy", "bob", 1})
	rows, _ := Compute(players, games, Options{Seed: 1})
	for _, r := range rows {
		fmt.Printf("%s %4.0f  ranks %d-%d  %d games\n", r.PlayerID, r.Rating, r.RankLow, r.RankHigh, r.Games)
	}
	// Output:
	// ada 1782  ranks 1-1  21 games
	// cy 1360  ranks 2-3  21 games
	// bob 1358  ranks 2-3  22 games
}

func BenchmarkCompute100Players(b *testing.B) {
	elo := make([]float64, 100)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range elo {
		elo[i] = 1500 + 200*r.NormFloat64()
	}
	players, games := simulate(elo, 1, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compute(players, games, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// A rating of fewer games than the league asks for is marked provisional; 0 marks none.
func TestMarkProvisional(t *testing.T) {
	rows := []Rating{{PlayerID: "a", Games: 9}, {PlayerID: "b", Games: 10}}
	if got := MarkProvisional(rows, 10); !got[0].Provisional || got[1].Provisional {
		t.Errorf("at 10 games: %+v", got)
	}
	if got := MarkProvisional(rows, 0); got[0].Provisional || got[1].Provisional {
		t.Errorf("at 0 games: %+v", got)
	}
}

// LOSNext follows the evidence for the order of two neighbours: near one for a clear
// winner, near a half for an even record (all draws, which a bootstrap would call
// certain), short of certain for 3-0, absent on the last row and beside a player without
// games; and only when asked.
func TestLOSNext(t *testing.T) {
	var games []Game
	for i := range 40 {
		games = append(games, Game{A: "a", B: "b", Score: map[bool]float64{true: 1, false: 0}[i%10 < 8]}) // a 32-8
		games = append(games, Game{A: "b", B: "c", Score: 0.5})                                           // b and c even
	}
	los := func(players []string, games []Game, opt Options) map[string]float64 {
		t.Helper()
		rows, err := Compute(players, games, opt)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for k, r := range rows {
			if k+1 < len(rows) {
				got[r.PlayerID+">"+rows[k+1].PlayerID] = r.LOSNext
			} else if r.LOSNext != 0 {
				t.Errorf("the last row %+v has a LOS", r)
			}
		}
		return got
	}
	got := los([]string{"a", "b", "c"}, games, Options{Seed: 1, LOS: true})
	if p, ok := got["a>c"]; !ok || p < 0.99 {
		t.Errorf("LOS %v: want a above c, near certain", got)
	}
	if p, ok := got["c>b"]; !ok || p < 0.4 || p > 0.6 {
		t.Errorf("LOS %v: want c above b near a half, from 40 draws", got)
	}
	threeNil := []Game{{A: "x", B: "y", Score: 1}, {A: "x", B: "y", Score: 1}, {A: "x", B: "y", Score: 1}}
	if p := los([]string{"x", "y"}, threeNil, Options{LOS: true})["x>y"]; p < 0.6 || p > 0.975 {
		t.Errorf("3-0 gives LOS %v: want above a half, short of certain", p)
	}
	withIdle := los([]string{"a", "b", "c", "idle"}, games, Options{Seed: 1, LOS: true})
	if withIdle["a>idle"] != 0 || withIdle["idle>c"] != 0 {
		t.Errorf("LOS %v: want none beside the player without games", withIdle)
	}
	for pair, p := range los([]string{"a", "b", "c"}, games, Options{Seed: 1}) {
		if p != 0 {
			t.Errorf("%s: LOS %v without Options.LOS", pair, p)
		}
	}
}

// playGame is a's score against b at their Elo, drawn by r: expected score p, draws in
// min(p, 1-p)/2 of games.
func playGame(r *rand.Rand, a, b float64) float64 {
	p := 1 / (1 + math.Pow(10, (b-a)/400))
	draw := math.Min(p, 1-p) / 2
	switch u := r.Float64(); {
	case u < p-draw/2:
		return 1
	case u < p+draw/2:
		return 0.5
	}
	return 0
}
