package schedule

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestBracketPlacement(t *testing.T) {
	if got, want := bracketPlacement(8), []int{1, 8, 4, 5, 2, 7, 3, 6}; !slices.Equal(got, want) {
		t.Errorf("size 8: got %v, want %v", got, want)
	}
	for size := 2; size <= 128; size *= 2 {
		place := bracketPlacement(size)
		sorted := slices.Sorted(slices.Values(place))
		for i, s := range sorted {
			if s != i+1 {
				t.Fatalf("size %d: placement %v is not a permutation of 1..%d", size, place, size)
			}
		}
		for i := 0; i < size; i += 2 {
			if place[i]+place[i+1] != size+1 || place[i] > place[i+1] {
				t.Errorf("size %d: first-stage pairing %d v %d", size, place[i], place[i+1])
			}
		}
		// Seeds 1..k sit in k different blocks of size/k positions, so two of them can
		// meet only once fewer than k players are left.
		for k := 2; k <= size; k *= 2 {
			block := map[int]int{}
			for pos, s := range place {
				if s <= k {
					if other, ok := block[pos/(size/k)]; ok {
						t.Errorf("size %d: seeds %d and %d in the same 1/%d of the bracket", size, other, s, k)
					}
					block[pos/(size/k)] = s
				}
			}
		}
	}
}

// favouriteWins lets the better seed win every game.
func favouriteWins(seeds map[string]int) resultFunc {
	return func(m Match) (Result, bool) {
		w := m.Players[0]
		if seeds[m.Players[1]] < seeds[w] {
			w = m.Players[1]
		}
		return decisive(m, w), true
	}
}

func seedsOf(f Format, players []string, seed int64) map[string]int {
	out := map[string]int{}
	for i, p := range initialOrder(f.Seeding, players, seed) {
		out[p] = i + 1
	}
	return out
}

// TestKnockoutProperties plays every player count 2..64 with best-of 1, 2 and 3 and every
// tie rule on random results.
func TestKnockoutProperties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(64, 3))
	ties := []string{TieHigherSeed, TieCoinToss, TieSuddenDeath}
	for n := 2; n <= 64; n++ {
		for bestOf := 1; bestOf <= 3; bestOf++ {
			for k, tie := range ties {
				if (testing.Short() || raceEnabled) && k != (n+bestOf)%len(ties) {
					continue // still every n, best of and tie rule, not every combination
				}
				t.Run(fmt.Sprintf("%d/best_of_%d/%s", n, bestOf, tie), func(t *testing.T) {
					players := playerIDs(n)
					f := knockoutFormat(bestOf, tie, nil)
					if rng.IntN(2) == 0 {
						f.Seeding = shuffled(rng, players)[:rng.IntN(n)]
					}
					seed := rng.Int64()
					results := randomResults(rng, []float64{0, 0.1, 0.5}[rng.IntN(3)])
					if rng.IntN(4) == 0 {
						results = func(m Match) (Result, bool) { return decisive(m, ""), true } // every game drawn
					}
					checkKnockout(t, f, shuffled(rng, players), seed, results)
				})
			}
		}
	}
}

func checkKnockout(t *testing.T, f Format, players []string, seed int64, results resultFunc) {
	t.Helper()
	n := len(players)
	size := 1
	for size < n {
		size *= 2
	}
	stagesWant := bits.Len(uint(n - 1)) // ceil(log2 n)
	seeds := seedsOf(f, players, seed)
	maxLegs := f.BestOf
	if f.TieRule == TieSuddenDeath {
		maxLegs *= 2
	}

	legsSoFar := map[[2]string]int{}
	var lastStage int
	check := func(played []Played, r Round) {
		checkRoundShape(t, players, seed, len(played)+1, r)
		if r.Bye != "" {
			t.Fatalf("round %d: knockout round with bye %q", r.Number, r.Bye)
		}
		stages, err := Bracket(f, players, seed, played)
		if err != nil {
			t.Fatalf("Bracket: %v", err)
		}
		// The round is one leg of every undecided pairing of the first undecided stage.
		cur := slices.IndexFunc(stages, func(s Stage) bool {
			return slices.ContainsFunc(s.Pairings, func(p Pairing) bool { return p.Winner == "" })
		})
		if cur < lastStage {
			t.Fatalf("round %d: back to stage %d", r.Number, cur)
		}
		lastStage = cur
		var want []Pairing
		for _, p := range stages[cur].Pairings {
			if p.Winner == "" {
				want = append(want, p)
			}
		}
		if len(want) != len(r.Matches) {
			t.Fatalf("round %d: %d matches for %d undecided pairings", r.Number, len(r.Matches), len(want))
		}
		for i, m := range r.Matches {
			p := want[i]
			if p.Players[0] == "" || p.Players[1] == "" {
				t.Fatalf("round %d: pairing with an unknown player %v", r.Number, p.Players)
			}
			better, worse := p.Players[0], p.Players[1]
			if seeds[worse] < seeds[better] {
				better, worse = worse, better
			}
			key := [2]string{better, worse}
			legsSoFar[key]++
			leg := legsSoFar[key]
			if leg != p.Legs+1 {
				t.Fatalf("round %d: leg %d of %v but the bracket counts %d legs", r.Number, leg, key, p.Legs)
			}
			if leg > maxLegs {
				t.Fatalf("round %d: leg %d of %v with best of %d and %s", r.Number, leg, key, f.BestOf, f.TieRule)
			}
			first := [2]string{better, worse}
			if leg%2 == 0 {
				first = [2]string{worse, better}
			}
			if m.Players != first {
				t.Fatalf("round %d leg %d: got %v, want %v first mover first", r.Number, leg, m.Players, first)
			}
		}
		reversed := slices.Clone(players)
		slices.Reverse(reversed)
		again, err := Next(f, reversed, seed, played)
		if err != nil || len(again) != 1 || !reflect.DeepEqual(again[0], r) {
			t.Fatalf("round %d: Next with the players reordered gave another round (%v)", r.Number, err)
		}
	}
	played := playLeague(t, f, players, seed, results, stagesWant*maxLegs, check)

	stages, err := Bracket(f, players, seed, played)
	if err != nil {
		t.Fatalf("Bracket: %v", err)
	}
	if len(stages) != stagesWant {
		t.Fatalf("%d stages, want %d", len(stages), stagesWant)
	}
	if Champion(stages) == "" {
		t.Fatalf("no champion after %d rounds", len(played))
	}
	// Byes: size-n of them, to seeds 1..size-n.
	byes := 0
	for _, p := range stages[0].Pairings {
		if p.Decided == DecidedBye {
			byes++
			if p.Players[1] != "" || p.Winner != p.Players[0] || p.Seeds[0] > size-n || p.Legs != 0 {
				t.Errorf("bye pairing %+v", p)
			}
		} else if p.Players[0] == "" || p.Players[1] == "" {
			t.Errorf("pairing %+v with an empty slot is not a bye", p)
		}
	}
	if byes != size-n {
		t.Errorf("%d byes, want %d", byes, size-n)
	}
	// Everybody once in the first stage; each later stage holds exactly the winners of the
	// one before, in bracket order.
	alive := slices.Clone(players)
	for k, s := range stages {
		if want := size >> (k + 1); len(s.Pairings) != want {
			t.Fatalf("stage %d (%s): %d pairings, want %d", k+1, s.Name, len(s.Pairings), want)
		}
		var in, winners []string
		for i, p := range s.Pairings {
			for j, pl := range p.Players {
				if pl != "" {
					in = append(in, pl)
					if p.Seeds[j] != seeds[pl] {
						t.Errorf("stage %d: %s has seed %d, want %d", k+1, pl, p.Seeds[j], seeds[pl])
					}
				}
			}
			if k > 0 && (p.Players[0] != stages[k-1].Pairings[2*i].Winner || p.Players[1] != stages[k-1].Pairings[2*i+1].Winner) {
				t.Errorf("stage %d pairing %d: %v are not the winners before", k+1, i, p.Players)
			}
			if !slices.Contains(p.Players[:], p.Winner) {
				t.Errorf("stage %d: winner %q not in %v", k+1, p.Winner, p.Players)
			}
			winners = append(winners, p.Winner)
			checkDecision(t, f, seeds, p)
		}
		if !sameSet(in, alive) {
			t.Fatalf("stage %d: players %v, want the survivors %v", k+1, in, alive)
		}
		if len(s.Rounds) == 0 {
			t.Errorf("stage %d played in no round", k+1)
		}
		alive = winners
	}
	if more, err := Next(f, players, seed, played); err != nil || len(more) != 0 {
		t.Errorf("after the final: %d rounds, %v", len(more), err)
	}
	// Every round belongs to exactly one stage, in order.
	var rounds []int
	for _, s := range stages {
		rounds = append(rounds, s.Rounds...)
	}
	for i, r := range rounds {
		if r != i+1 {
			t.Fatalf("stage rounds %v, want 1..%d", rounds, len(played))
		}
	}
	if len(rounds) != len(played) {
		t.Fatalf("stage rounds %v for %d rounds", rounds, len(played))
	}
}

// checkDecision checks that a decided pairing was decided by the rules.
func checkDecision(t *testing.T, f Format, seeds map[string]int, p Pairing) {
	t.Helper()
	if p.Decided == DecidedBye {
		return
	}
	w := slices.Index(p.Players[:], p.Winner)
	better := 0
	if seeds[p.Players[1]] < seeds[p.Players[0]] {
		better = 1
	}
	switch p.Decided {
	case DecidedWins:
		// Out of reach within BestOf legs.
		if p.Legs > f.BestOf || p.Wins[w] <= p.Wins[1-w]+f.BestOf-p.Legs {
			t.Errorf("%+v: not decided by wins", p)
		}
	case DecidedHigherSeed:
		level := p.Wins[0] == p.Wins[1]
		if f.TieRule == TieHigherSeed && (!level || p.Legs != f.BestOf) ||
			f.TieRule == TieSuddenDeath && (!level || p.Legs != 2*f.BestOf) ||
			f.TieRule == TieCoinToss || w != better {
			t.Errorf("%+v: higher seed decision with best of %d, %s", p, f.BestOf, f.TieRule)
		}
	case DecidedCoinToss:
		if f.TieRule != TieCoinToss || p.Wins[0] != p.Wins[1] || p.Legs != f.BestOf {
			t.Errorf("%+v: coin toss with best of %d, %s", p, f.BestOf, f.TieRule)
		}
	case DecidedSuddenDeath:
		if f.TieRule != TieSuddenDeath || p.Legs <= f.BestOf || p.Legs > 2*f.BestOf || p.Wins[w] != p.Wins[1-w]+1 {
			t.Errorf("%+v: sudden death with best of %d", p, f.BestOf)
		}
	default:
		t.Errorf("%+v: decided %q", p, p.Decided)
	}
	if p.Wins[0]+p.Wins[1]+p.Draws > p.Legs {
		t.Errorf("%+v: more games than legs", p)
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// TestKnockoutFavouritesMeetInFinal: when the better seed always wins, every stage pairs
// seed i with seed 2k+1-i, so seeds 1 and 2 meet only in the final.
func TestKnockoutFavouritesMeetInFinal(t *testing.T) {
	for n := 2; n <= 64; n++ {
		players := playerIDs(n)
		f := knockoutFormat(1, TieHigherSeed, nil)
		seeds := seedsOf(f, players, 9)
		played := playLeague(t, f, players, 9, favouriteWins(seeds), 10, nil)
		stages, err := Bracket(f, players, 9, played)
		if err != nil {
			t.Fatal(err)
		}
		for k, s := range stages {
			for _, p := range s.Pairings {
				if k == 0 && p.Decided == DecidedBye {
					continue
				}
				if p.Seeds[0]+p.Seeds[1] != 2*len(s.Pairings)+1 {
					t.Errorf("%d players, %s: seeds %v", n, s.Name, p.Seeds)
				}
			}
		}
		if final := stages[len(stages)-1].Pairings[0]; final.Seeds != [2]int{1, 2} || Champion(stages) != final.Players[0] {
			t.Errorf("%d players: final %+v", n, final)
		}
	}
}

func TestKnockoutStageNames(t *testing.T) {
	players := playerIDs(40)
	stages, err := Bracket(knockoutFormat(1, TieCoinToss, nil), players, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range stages {
		names = append(names, s.Name)
	}
	want := []string{"round of 64", "round of 32", "round of 16", "quarterfinal", "semifinal", "final"}
	if !slices.Equal(names, want) {
		t.Errorf("got %v, want %v", names, want)
	}
}

// TestKnockoutTieRules plays one pairing of two players, best of 2, through fixed results.
func TestKnockoutTieRules(t *testing.T) {
	players := []string{"top", "low"}
	type game = string // "top", "low", "draw" or "abandoned"
	tests := []struct {
		name    string
		tie     string
		games   []game
		winner  string
		decided string
	}{
		{"wins", TieCoinToss, []game{"low", "low"}, "low", DecidedWins},
		{"draw then win", TieHigherSeed, []game{"draw", "low"}, "low", DecidedWins},
		{"level to higher seed", TieHigherSeed, []game{"low", "top"}, "top", DecidedHigherSeed},
		{"abandoned legs", TieHigherSeed, []game{"abandoned", "abandoned"}, "top", DecidedHigherSeed},
		{"sudden death", TieSuddenDeath, []game{"top", "low", "draw", "low"}, "low", DecidedSuddenDeath},
		{"sudden death exhausted", TieSuddenDeath, []game{"draw", "draw", "abandoned", "draw"}, "top", DecidedHigherSeed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := knockoutFormat(2, tt.tie, []string{"top"})
			i := 0
			played := playLeague(t, f, players, 5, func(m Match) (Result, bool) {
				g := tt.games[i]
				// Leg i+1: top moves first in odd legs.
				if first := []string{"top", "low"}[i%2]; m.Players[0] != first {
					t.Errorf("leg %d: %v moves first", i+1, m.Players)
				}
				i++
				switch g {
				case "draw":
					return decisive(m, ""), true
				case "abandoned":
					return Result{}, false
				}
				return decisive(m, g), true
			}, len(tt.games), nil)
			if len(played) != len(tt.games) {
				t.Fatalf("%d legs, want %d", len(played), len(tt.games))
			}
			stages, err := Bracket(f, players, 5, played)
			if err != nil {
				t.Fatal(err)
			}
			final := stages[0].Pairings[0]
			if final.Winner != tt.winner || final.Decided != tt.decided || Champion(stages) != tt.winner {
				t.Errorf("got %+v, want %s by %s", final, tt.winner, tt.decided)
			}
		})
	}

	// The toss depends on the league seed and the players, and is the same every time.
	f := knockoutFormat(1, TieCoinToss, []string{"top"})
	won := map[string]bool{}
	for seed := range int64(16) {
		played := playLeague(t, f, players, seed, func(m Match) (Result, bool) { return decisive(m, ""), true }, 1, nil)
		stages, err := Bracket(f, players, seed, played)
		if err != nil {
			t.Fatal(err)
		}
		p := stages[0].Pairings[0]
		if p.Decided != DecidedCoinToss || p.Winner != p.Players[coinToss(seed, &p)] {
			t.Fatalf("seed %d: %+v", seed, p)
		}
		won[p.Winner] = true
	}
	if len(won) != 2 {
		t.Errorf("16 tosses all went to %v", won)
	}
}

func TestKnockoutRejectsForeignRounds(t *testing.T) {
	players := playerIDs(4)
	f := knockoutFormat(1, TieHigherSeed, players)
	rounds, err := Next(f, players, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rounds[0]
	swapped := r
	swapped.Matches = slices.Clone(r.Matches)
	swapped.Matches[0].Players = [2]string{"player-01", "player-02"}
	if _, err := Next(f, players, 1, []Played{{Round: swapped}}); err == nil || !strings.Contains(err.Error(), "is not an undecided pairing of the semifinal") {
		t.Errorf("got %v", err)
	}
	short := r
	short.Matches = r.Matches[:1]
	if _, err := Next(f, players, 1, []Played{{Round: short}}); err == nil || !strings.Contains(err.Error(), "misses the pairing") {
		t.Errorf("got %v", err)
	}
	full := playLeague(t, f, players, 1, favouriteWins(seedsOf(f, players, 1)), 2, nil)
	extra := append(slices.Clone(full), Played{Round: Round{Number: 3}})
	if _, err := Next(f, players, 1, extra); err == nil || !strings.Contains(err.Error(), "after the knockout final") {
		t.Errorf("got %v", err)
	}
	if _, err := Bracket(swissFormat(1, 0, nil), players, 1, nil); err == nil {
		t.Error("Bracket accepted a swiss format")
	}
}

func TestBracketJSON(t *testing.T) {
	players := playerIDs(3)
	f := knockoutFormat(1, TieHigherSeed, players)
	stages, err := Bracket(f, players, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(stages)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"semifinal","pairings":[` +
		`{"seeds":[1,0],"players":["player-01",""],"wins":[0,0],"draws":0,"legs":0,"winner":"player-01","decided":"bye"},` +
		`{"seeds":[2,3],"players":["player-02","player-03"],"wins":[0,0],"draws":0,"legs":0,"winner":"","decided":""}]},` +
		`{"name":"final","pairings":[` +
		`{"seeds":[1,0],"players":["player-01",""],"wins":[0,0],"draws":0,"legs":0,"winner":"","decided":""}]}]`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// BenchmarkKnockout64 plays a whole 64-player best-of-3 knockout through Next.
func BenchmarkKnockout64(b *testing.B) {
	players := playerIDs(64)
	f := knockoutFormat(3, TieSuddenDeath, nil)
	results := randomResults(rand.New(rand.NewPCG(1, 2)), 0.05)
	for b.Loop() {
		var played []Played
		for {
			next, err := Next(f, players, 11, played)
			if err != nil {
				b.Fatal(err)
			}
			if len(next) == 0 {
				break
			}
			played = append(played, complete(next[0], results))
		}
	}
}
