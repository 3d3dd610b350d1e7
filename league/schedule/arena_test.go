package schedule

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func arenaFormat(maxGames, samples int) Format {
	f := Default()
	f.Algorithm, f.Arena, f.RatingSamples = Arena, &ArenaRules{MaxGames: maxGames}, samples
	return f
}

func TestArenaValidate(t *testing.T) {
	on := true
	cases := []struct {
		name string
		edit func(*Format)
		want string
	}{
		{"no section", func(f *Format) { f.Arena = nil }, "scheduling.arena: an arena needs its game budget: set scheduling.arena.max_games"},
		{"no budget", func(f *Format) { f.Arena.MaxGames = 0 }, "scheduling.arena.max_games: must be between 1 and 1000000, got 0"},
		{"budget too big", func(f *Format) { f.Arena.MaxGames = 1000001 }, "scheduling.arena.max_games: must be between 1 and 1000000, got 1000001"},
		{"another algorithm", func(f *Format) { f.Algorithm = Swiss }, `scheduling.arena: is for scheduling.algorithm "arena", not "swiss"`},
		{"overlap", func(f *Format) { f.OverlapRounds = &on }, "scheduling.overlap_rounds: arena pairs each round from the results before it, so its rounds cannot overlap"},
	}
	if err := arenaFormat(100, 10).Validate(); err != nil {
		t.Fatalf("a valid arena: %v", err)
	}
	for _, c := range cases {
		f := arenaFormat(100, 10)
		c.edit(&f)
		if err := f.Validate(); err == nil || err.Error() != c.want {
			t.Errorf("%s: Validate = %v, want %s", c.name, err, c.want)
		}
	}
}

// elos are 8 simulated players of known strength, 0 to 700, ids not in strength order.
func elos() ([]string, map[string]float64) {
	elo := map[string]float64{}
	var players []string
	for i := range 8 {
		id := fmt.Sprintf("p%d", i*5%8)
		elo[id] = float64(100 * i)
		players = append(players, id)
	}
	return players, elo
}

// playRound plays r's games by elo: expected score e, draws in 1.2 e (1 - e) of them.
func playRound(rng *rand.Rand, elo map[string]float64, r Round) Played {
	p := Played{Round: r, Results: map[string]Result{}}
	for _, m := range r.Matches {
		a, b := m.Players[0], m.Players[1]
		e := eloScore(elo[a] - elo[b])
		d := 1.2 * e * (1 - e)
		out := map[string]string{a: "draw", b: "draw"}
		switch x := rng.Float64(); {
		case x < e-d/2:
			out = map[string]string{a: "win", b: "loss"}
		case x >= e+d/2:
			out = map[string]string{a: "loss", b: "win"}
		}
		p.Results[m.ID] = Result{Outcome: out, Points: map[string]int{}}
	}
	return p
}

// runArena plays f to its end, checking every round, and returns the rounds.
func runArena(t *testing.T, f Format, players []string, seed int64, rng *rand.Rand, elo map[string]float64) []Played {
	t.Helper()
	var played []Played
	for {
		rs, err := Next(f, players, seed, played)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			return played
		}
		if len(rs) != 1 || rs[0].Number != len(played)+1 {
			t.Fatalf("after %d rounds: got %d rounds, want round %d alone", len(played), len(rs), len(played)+1)
		}
		seen := map[string]bool{}
		for _, m := range rs[0].Matches {
			for _, p := range m.Players {
				if seen[p] || !slices.Contains(players, p) {
					t.Fatalf("round %d: %q plays twice or is no player: %+v", rs[0].Number, p, rs[0].Matches)
				}
				seen[p] = true
			}
		}
		if len(rs[0].Matches) != len(players)/2 && len(rs[0].Matches) != f.Arena.MaxGames%(len(players)/2) {
			t.Fatalf("round %d has %d games, want every player but an odd one out to play", rs[0].Number, len(rs[0].Matches))
		}
		played = append(played, playRound(rng, elo, rs[0]))
	}
}

// Same seed and results, same rounds; the order of players does not matter; and the
// arena stops at its budget, the last round cut to it.
func TestArenaDeterministicAndBudget(t *testing.T) {
	players, elo := elos()
	f := arenaFormat(30, 50)
	played := runArena(t, f, players, 7, rand.New(rand.NewPCG(1, 2)), elo)
	reversed := slices.Clone(players)
	slices.Reverse(reversed)
	again := runArena(t, f, reversed, 7, rand.New(rand.NewPCG(1, 2)), elo)
	if !reflect.DeepEqual(played, again) {
		t.Error("two runs of the same arena differ")
	}
	st, ok := ArenaOf(f, players, 7, played)
	if !ok || st.Games != 30 || st.Budget != 30 || st.Stopped != ArenaBudget || !strings.HasPrefix(st.Reason, "budget spent: 30 of 30 games") {
		t.Errorf("ArenaOf = %+v, %v: want stopped at the budget of 30 games", st, ok)
	}
	if len(played) != 8 || len(played[7].Round.Matches) != 2 {
		t.Errorf("%d rounds, the last of %d games: want 7 of 4 and one of 2", len(played), len(played[len(played)-1].Round.Matches))
	}
	other := runArena(t, f, players, 8, rand.New(rand.NewPCG(1, 2)), elo)
	if reflect.DeepEqual(played[0].Round, other[0].Round) {
		t.Error("another league seed gives the same first round")
	}
	if _, ok := ArenaOf(Default(), players, 7, nil); ok {
		t.Error("ArenaOf a round robin is ok")
	}
}

// An odd player out sits out with no bye; the first move goes to whoever moved first
// less.
func TestArenaOddAndFirstMove(t *testing.T) {
	players := []string{"a", "b", "c", "d", "e"}
	elo := map[string]float64{"a": 0, "b": 100, "c": 200, "d": 300, "e": 400}
	played := runArena(t, arenaFormat(40, 50), players, 3, rand.New(rand.NewPCG(3, 4)), elo)
	balance := map[string]int{}
	for _, p := range played {
		if p.Round.Bye != "" || len(p.Round.Matches) != 2 {
			t.Fatalf("round %d: bye %q, %d games: want 2 games and no bye", p.Round.Number, p.Round.Bye, len(p.Round.Matches))
		}
		for _, m := range p.Round.Matches {
			balance[m.Players[0]]++
			balance[m.Players[1]]--
		}
	}
	for id, b := range balance {
		if b < -2 || b > 2 {
			t.Errorf("%s moved first %+d times more than second", id, b)
		}
	}
}
