package schedule

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
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
			f := Format{Algorithm: RoundRobin, Cycles: cycles}
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

func TestValidateErrors(t *testing.T) {
	players := []string{"a", "b", "c"}
	tests := []struct {
		name    string
		f       Format
		players []string
		want    string
	}{
		{"unknown algorithm", Format{Algorithm: "ladder"}, players,
			`scheduling.algorithm must be round_robin, swiss, knockout or gauntlet, got "ladder"`},
		{"no algorithm", Format{}, players,
			`scheduling.algorithm must be round_robin, swiss, knockout or gauntlet, got ""`},
		{"cycles", Format{Algorithm: RoundRobin, Cycles: 3}, players, "scheduling.cycles must be 1 or 2, got 3"},
		{"rounds zero", Format{Algorithm: Swiss}, players, "scheduling.rounds must be at least 1, got 0"},
		{"rounds negative", Format{Algorithm: Swiss, Rounds: -2}, players, "scheduling.rounds must be at least 1, got -2"},
		{"bye points", Format{Algorithm: Swiss, Rounds: 3, ByePoints: -1}, players,
			"scheduling.bye_points must not be negative, got -1"},
		{"swiss seeding twice", Format{Algorithm: Swiss, Rounds: 3, Seeding: []string{"a", "x", "a"}}, players,
			`scheduling.seeding lists "a" twice`},
		{"best of", Format{Algorithm: Knockout, TieRule: TieCoinToss}, players,
			"scheduling.best_of must be at least 1, got 0"},
		{"tie rule", Format{Algorithm: Knockout, BestOf: 1, TieRule: "replay"}, players,
			`scheduling.tie_rule must be higher_seed, coin_toss or sudden_death, got "replay"`},
		{"no tie rule", Format{Algorithm: Knockout, BestOf: 1}, players,
			`scheduling.tie_rule must be higher_seed, coin_toss or sudden_death, got ""`},
		{"knockout seeding twice", Format{Algorithm: Knockout, BestOf: 1, TieRule: TieHigherSeed, Seeding: []string{"b", "b"}},
			players, `scheduling.seeding lists "b" twice`},
		{"no candidates", Format{Algorithm: Gauntlet, GamesPerPair: 1}, players,
			"scheduling.candidates must name at least 1 player"},
		{"candidate not a player", Format{Algorithm: Gauntlet, Candidates: []string{"a", "z"}, GamesPerPair: 1}, players,
			`scheduling.candidates: "z" is not a registered player`},
		{"candidate twice", Format{Algorithm: Gauntlet, Candidates: []string{"a", "a"}, GamesPerPair: 1}, players,
			`scheduling.candidates lists "a" twice`},
		{"games per pair", Format{Algorithm: Gauntlet, Candidates: []string{"a"}}, players,
			"scheduling.games_per_pair must be at least 1, got 0"},
		{"one player", Format{Algorithm: Swiss, Rounds: 1}, []string{"a"}, "need at least 2 players, got 1"},
		{"duplicate player", Format{Algorithm: Knockout, BestOf: 1, TieRule: TieHigherSeed}, []string{"a", "b", "a"},
			`duplicate player id "a"`},
		{"empty player", Format{Algorithm: Gauntlet, Candidates: []string{"a"}, GamesPerPair: 1}, []string{"a", ""},
			"empty player id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.f.Validate(tt.players); err == nil || err.Error() != tt.want {
				t.Errorf("Validate: got %v, want %q", err, tt.want)
			}
			if _, err := Next(tt.f, tt.players, 1, nil); err == nil || err.Error() != tt.want {
				t.Errorf("Next: got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestValidateAccepts(t *testing.T) {
	players := []string{"a", "b", "c"}
	for _, f := range []Format{
		{Algorithm: RoundRobin, Cycles: 1},
		{Algorithm: RoundRobin, Cycles: 2, Rounds: -5}, // other algorithms' fields are ignored
		{Algorithm: Swiss, Rounds: 1},
		{Algorithm: Swiss, Rounds: 20, ByePoints: 2, Seeding: []string{"c", "unknown"}},
		{Algorithm: Knockout, BestOf: 1, TieRule: TieHigherSeed},
		{Algorithm: Knockout, BestOf: 5, TieRule: TieSuddenDeath, Seeding: []string{"b"}},
		{Algorithm: Gauntlet, Candidates: []string{"c"}, GamesPerPair: 1},
		{Algorithm: Gauntlet, Candidates: []string{"a", "b", "c"}, GamesPerPair: 4},
	} {
		if err := f.Validate(players); err != nil {
			t.Errorf("Validate(%+v): %v", f, err)
		}
	}
}

func TestNextRejectsMisnumberedHistory(t *testing.T) {
	f := Format{Algorithm: Swiss, Rounds: 3}
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
