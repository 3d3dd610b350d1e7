package schedule

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/agentleague/agentleague/internal/problem"
)

// resultFunc decides what a match came to; ok false means it was abandoned.
type resultFunc func(m Match) (res Result, ok bool)

// decisive builds the result of a game won by winner ("" for a draw).
func decisive(m Match, winner string) Result {
	r := Result{Outcome: map[string]string{}, Points: map[string]int{}}
	for _, p := range m.Players {
		switch {
		case winner == "":
			r.Outcome[p], r.Points[p] = "draw", 1
		case p == winner:
			r.Outcome[p], r.Points[p] = "win", 2
		default:
			r.Outcome[p], r.Points[p] = "loss", 0
		}
	}
	return r
}

// randomResults wins, loses, draws or abandons at random; abandon is the abandon rate.
func randomResults(rng *rand.Rand, abandon float64) resultFunc {
	return func(m Match) (Result, bool) {
		if rng.Float64() < abandon {
			return Result{}, false
		}
		switch rng.IntN(5) {
		case 0, 1:
			return decisive(m, m.Players[0]), true
		case 2, 3:
			return decisive(m, m.Players[1]), true
		}
		return decisive(m, ""), true
	}
}

// complete plays round r with results.
func complete(r Round, results resultFunc) Played {
	p := Played{Round: r, Results: map[string]Result{}}
	for _, m := range r.Matches {
		if res, ok := results(m); ok {
			p.Results[m.ID] = res
		}
	}
	return p
}

// playLeague calls Next until the league is over, completing every round with results,
// and calls check (if not nil) before each round is played with the history so far.
// It fails the test after limit rounds.
func playLeague(t *testing.T, f Format, players []string, seed int64, results resultFunc, limit int,
	check func(played []Played, r Round)) []Played {
	t.Helper()
	var played []Played
	for {
		rounds, err := Next(f, players, seed, played)
		if err != nil {
			t.Fatalf("Next after %d rounds: %v", len(played), err)
		}
		if len(rounds) == 0 {
			return played
		}
		for _, r := range rounds {
			if check != nil {
				check(played, r)
			}
			played = append(played, complete(r, results))
			if len(played) > limit {
				t.Fatalf("league still running after %d rounds", limit)
			}
		}
	}
}

// checkRoundShape checks what every round of every format must satisfy: its number, id,
// cycle, match indexes, ids and seeds, registered players, and nobody twice.
func checkRoundShape(t *testing.T, players []string, seed int64, number int, r Round) {
	t.Helper()
	if r.Number != number || r.ID != fmt.Sprintf("round-%d", number) || r.Cycle != 1 {
		t.Fatalf("round %d: got number %d id %q cycle %d", number, r.Number, r.ID, r.Cycle)
	}
	seen := map[string]bool{}
	if r.Bye != "" {
		if !slices.Contains(players, r.Bye) {
			t.Fatalf("round %d: bye %q is not a player", number, r.Bye)
		}
		seen[r.Bye] = true
	}
	for i, m := range r.Matches {
		if m.Round != number || m.Cycle != 1 || m.Index != i+1 {
			t.Fatalf("round %d: match %d has round %d cycle %d index %d", number, i+1, m.Round, m.Cycle, m.Index)
		}
		id, s := matchIdentity(seed, m)
		if m.ID != id || m.Seed != s || !idPattern.MatchString(m.ID) {
			t.Fatalf("round %d: match %d has id %q seed %d, want %q %d", number, i+1, m.ID, m.Seed, id, s)
		}
		for _, p := range m.Players {
			if !slices.Contains(players, p) {
				t.Fatalf("round %d: %q is not a player", number, p)
			}
			if seen[p] {
				t.Fatalf("round %d: %q appears twice", number, p)
			}
			seen[p] = true
		}
	}
}

func shuffled(rng *rand.Rand, s []string) []string {
	out := slices.Clone(s)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func TestNextRoundRobinIsBuild(t *testing.T) {
	for _, n := range []int{2, 3, 6, 9} {
		for _, cycles := range []int{1, 2} {
			players := playerIDs(n)
			want, err := Build(players, cycles, 99)
			if err != nil {
				t.Fatal(err)
			}
			f := roundRobinFormat(cycles)
			got, err := Next(f, players, 99, nil)
			if err != nil {
				t.Fatalf("Next: %v", err)
			}
			if !reflect.DeepEqual(got, want.Rounds) {
				t.Errorf("%d players, %d cycles: Next differs from Build", n, cycles)
			}
			played := make([]Played, len(got))
			for i, r := range got {
				played[i] = Played{Round: r}
			}
			if more, err := Next(f, players, 99, played); err != nil || len(more) != 0 {
				t.Errorf("%d players, %d cycles: after the schedule got %d rounds, %v", n, cycles, len(more), err)
			}
		}
	}
}

// roundRobin is the default format played over cycles.
func roundRobinFormat(cycles int) Format {
	f := Default()
	f.Cycles = cycles
	return f
}

// swiss is a Swiss of rounds rounds whose byes score byePoints, seeded by seeding.
func swissFormat(rounds, byePoints int, seeding []string) Format {
	f := Default()
	f.Algorithm, f.Rounds, f.ByePoints, f.Seeding = Swiss, rounds, &byePoints, seeding
	return f
}

// knockout is a knockout of best-of-bestOf pairings decided by tie, seeded by seeding.
func knockoutFormat(bestOf int, tie string, seeding []string) Format {
	f := Default()
	f.Algorithm, f.BestOf, f.TieRule, f.Seeding = Knockout, bestOf, tie, seeding
	return f
}

// gauntlet is a gauntlet of candidates, who meet each other player gamesPerPair times.
func gauntletFormat(candidates []string, gamesPerPair int) Format {
	f := Default()
	f.Algorithm, f.Candidates, f.GamesPerPair = Gauntlet, candidates, gamesPerPair
	return f
}

// changed is the default format changed by set.
func changed(set func(f *Format)) Format {
	f := Default()
	set(&f)
	return f
}

// Validate names every broken rule by its league.yaml path, whatever the algorithm.
func TestValidateProblems(t *testing.T) {
	on := true
	tests := []struct {
		name string
		f    Format
		want problem.List
	}{
		{"unknown algorithm", changed(func(f *Format) { f.Algorithm = "ladder" }),
			problem.List{{Path: "scheduling.algorithm", Message: `must be one of "round_robin", "swiss", "knockout", "gauntlet", "arena", got "ladder"`}}},
		{"cycles", roundRobinFormat(3), problem.List{{Path: "scheduling.cycles", Message: "must be between 1 and 2, got 3"}}},
		{"rounds below range", swissFormat(-1, 0, nil), problem.List{{Path: "scheduling.rounds", Message: "must be between 0 and 999, got -1"}}},
		{"rounds above range", swissFormat(1000, 0, nil), problem.List{{Path: "scheduling.rounds", Message: "must be between 0 and 999, got 1000"}}},
		{"bye points", swissFormat(3, 1001, nil), problem.List{{Path: "scheduling.bye_points", Message: "must be between 0 and 1000, got 1001"}}},
		{"fields of another format", changed(func(f *Format) { f.BestOf, f.TieRule, f.GamesPerPair = 0, "replay", 0 }), problem.List{
			{Path: "scheduling.best_of", Message: "must be between 1 and 99, got 0"},
			{Path: "scheduling.tie_rule", Message: `must be one of "higher_seed", "coin_toss", "sudden_death", got "replay"`},
			{Path: "scheduling.games_per_pair", Message: "must be between 1 and 100, got 0"},
		}},
		{"seeding", swissFormat(3, 0, []string{"a", "no way", "a"}), problem.List{
			{Path: "scheduling.seeding[1]", Message: `must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$, got "no way"`},
			{Path: "scheduling.seeding[2]", Message: `"a" is already listed as scheduling.seeding[0]`},
		}},
		{"no candidates", gauntletFormat(nil, 1), problem.List{{Path: "scheduling.candidates", Message: "a gauntlet needs at least one candidate"}}},
		{"candidate twice", gauntletFormat([]string{"a", "a"}, 1), problem.List{{Path: "scheduling.candidates[1]", Message: `"a" is already listed as scheduling.candidates[0]`}}},
		{"overlapping knockout", changed(func(f *Format) { f.Algorithm, f.OverlapRounds = Knockout, &on }),
			problem.List{{Path: "scheduling.overlap_rounds", Message: "knockout pairs each round from the results before it, so its rounds cannot overlap"}}},
		{"unknown tiebreak", changed(func(f *Format) { f.Tiebreaks = []string{"head_to_head", "buchholz", "head_to_head"} }), problem.List{
			{Path: "ranking.tiebreaks[1]", Message: `must be one of "sonneborn_berger", "head_to_head", got "buchholz"`},
			{Path: "ranking.tiebreaks[2]", Message: `"head_to_head" is listed twice`},
		}},
		{"rating samples", changed(func(f *Format) { f.RatingSamples = 0 }), problem.List{{Path: "ranking.rating_samples", Message: "must be between 1 and 100000, got 0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inv problem.List
			if err := tt.f.Validate(); !errors.As(err, &inv) || !reflect.DeepEqual(inv, tt.want) {
				t.Fatalf("Validate: got %v, want the problems %v", err, tt.want)
			}
			if _, err := Next(tt.f, []string{"a", "b", "c"}, 1, nil); !errors.As(err, &inv) || !reflect.DeepEqual(inv, tt.want) {
				t.Errorf("Next: got %v, want the problems %v", err, tt.want)
			}
		})
	}
}

// Schedulable adds to Validate what the players decide.
func TestSchedulableErrors(t *testing.T) {
	players := []string{"a", "b", "c"}
	tests := []struct {
		name    string
		f       Format
		players []string
		want    string
	}{
		{"invalid format", roundRobinFormat(0), players, "scheduling.cycles: must be between 1 and 2, got 0"},
		{"swiss rounds not resolved", swissFormat(0, 1, nil), players, "a swiss format is scheduled with its rounds and bye_points set (Format.For)"},
		{"swiss bye not resolved", changed(func(f *Format) { f.Algorithm, f.Rounds = Swiss, 2 }), players,
			"a swiss format is scheduled with its rounds and bye_points set (Format.For)"},
		{"candidate not a player", gauntletFormat([]string{"a", "z"}, 1), players, `scheduling.candidates[1]: "z" is not a registered player`},
		{"one player", swissFormat(1, 0, nil), []string{"a"}, "need at least 2 players, got 1"},
		{"duplicate player", knockoutFormat(1, TieHigherSeed, nil), []string{"a", "b", "a"}, `duplicate player id "a"`},
		{"empty player", gauntletFormat([]string{"a"}, 1), []string{"a", ""}, "empty player id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.f.Schedulable(tt.players); err == nil || err.Error() != tt.want {
				t.Errorf("Schedulable: got %v, want %q", err, tt.want)
			}
			if _, err := Next(tt.f, tt.players, 1, nil); err == nil || err.Error() != tt.want {
				t.Errorf("Next: got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestSchedulableAccepts(t *testing.T) {
	players := []string{"a", "b", "c"}
	for _, f := range []Format{
		roundRobinFormat(1),
		roundRobinFormat(2),
		swissFormat(1, 0, nil),
		swissFormat(20, 2, []string{"c", "unknown"}),
		knockoutFormat(1, TieHigherSeed, nil),
		knockoutFormat(5, TieSuddenDeath, []string{"b"}),
		gauntletFormat([]string{"c"}, 1),
		gauntletFormat([]string{"a", "b", "c"}, 4),
	} {
		if err := f.Schedulable(players); err != nil {
			t.Errorf("Schedulable(%+v): %v", f, err)
		}
	}
}

// For resolves what league.yaml leaves to the players and the game: Swiss rounds and
// the points of a bye.
func TestFor(t *testing.T) {
	for _, tt := range []struct {
		f                   Format
		players             int
		wantRounds, wantBye int
	}{
		{swissFormat(0, 0, nil), 2, 1, 0},
		{swissFormat(0, 0, nil), 5, 3, 0},
		{swissFormat(0, 0, nil), 8, 3, 0},
		{swissFormat(0, 0, nil), 9, 4, 0},
		{swissFormat(7, 1, nil), 9, 7, 1},
		{changed(func(f *Format) { f.Algorithm = Swiss }), 4, 2, 3},
		{roundRobinFormat(1), 9, 0, 3},
	} {
		got := tt.f.For(tt.players, 3)
		if got.Rounds != tt.wantRounds || got.ByePoints == nil || *got.ByePoints != tt.wantBye {
			t.Errorf("%s with rounds %d for %d players: rounds %d, bye points %v; want %d, %d",
				tt.f.Algorithm, tt.f.Rounds, tt.players, got.Rounds, got.ByePoints, tt.wantRounds, tt.wantBye)
		}
	}
}

func TestOverlapDefaults(t *testing.T) {
	on, off := true, false
	for _, c := range []struct {
		algorithm string
		set       *bool
		want      bool
	}{
		{RoundRobin, nil, true}, {RoundRobin, &off, false}, {RoundRobin, &on, true},
		{Gauntlet, nil, true}, {Gauntlet, &off, false},
		{Swiss, nil, false}, {Knockout, nil, false}, {Knockout, &off, false},
	} {
		f := changed(func(f *Format) { f.Algorithm, f.OverlapRounds = c.algorithm, c.set })
		if got := f.Overlap(); got != c.want {
			t.Errorf("%s with overlap_rounds %v: Overlap() = %v, want %v", c.algorithm, c.set, got, c.want)
		}
	}
}

// The stored form of a format is the flat JSON object League Managers have always
// written: a database or an audit log of an earlier version reads back the same.
func TestFormatJSON(t *testing.T) {
	stored := `{"algorithm":"swiss","cycles":1,"rounds":3,"bye_points":2,"best_of":1,"tie_rule":"higher_seed",` +
		`"seeding":["p2"],"candidates":[],"games_per_pair":2,"tiebreaks":["sonneborn_berger"],"rating_samples":50}`
	var f Format
	if err := json.Unmarshal([]byte(stored), &f); err != nil {
		t.Fatal(err)
	}
	want := swissFormat(3, 2, []string{"p2"})
	want.Tiebreaks, want.RatingSamples, want.ConcurrentMatchesPerRound = []string{"sonneborn_berger"}, 50, false
	if !reflect.DeepEqual(f, want) {
		t.Errorf("read %+v, want %+v", f, want)
	}
	b, err := json.Marshal(f)
	if err != nil || string(b) != stored {
		t.Errorf("written %s, %v; want %s", b, err, stored)
	}
}

func TestNextRejectsMisnumberedHistory(t *testing.T) {
	f := swissFormat(3, 0, nil)
	players := playerIDs(4)
	rounds, err := Next(f, players, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rounds[0]
	r.Number = 2
	if _, err := Next(f, players, 1, []Played{{Round: r}}); err == nil || err.Error() != "played round 1 is numbered 2" {
		t.Errorf("got %v", err)
	}
}

func TestInitialOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	players := playerIDs(30)
	base := initialOrder(nil, players, 5)
	for range 20 {
		if got := initialOrder(nil, shuffled(rng, players), 5); !slices.Equal(got, base) {
			t.Fatalf("order depends on the order of players: %v vs %v", got, base)
		}
	}
	if slices.Equal(base, players) || slices.Equal(base, initialOrder(nil, players, 6)) {
		t.Errorf("order does not look drawn from the league seed: %v", base)
	}
	// The drawn order is the order of the documented hashes.
	for i := 1; i < len(base); i++ {
		a, b := seedingKey(5, base[i-1]), seedingKey(5, base[i])
		if string(a[:]) >= string(b[:]) {
			t.Errorf("%s before %s against their hashes", base[i-1], base[i])
		}
	}
	seeding := []string{"player-07", "ghost", "player-03"}
	got := initialOrder(seeding, shuffled(rng, players), 5)
	if got[0] != "player-07" || got[1] != "player-03" || len(got) != len(players) {
		t.Fatalf("seeding not first: %v", got)
	}
	rest := slices.DeleteFunc(slices.Clone(base), func(p string) bool { return p == "player-07" || p == "player-03" })
	if !slices.Equal(got[2:], rest) {
		t.Errorf("unseeded players not in drawn order: %v, want %v", got[2:], rest)
	}
}
