package schedule

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
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
		if len(rs[0].Matches) == 0 {
			t.Fatalf("round %d has no games", rs[0].Number)
		}
		if len(played) == 0 && len(rs[0].Matches) != len(players)/2 {
			t.Fatalf("round 1 has %d games, want every player but an odd one out to play", len(rs[0].Matches))
		}
		if len(played) > 0 {
			checkNeighbours(t, f, players, seed, played, rs[0])
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
	games := 0
	for _, p := range played {
		games += len(p.Round.Matches)
	}
	if games != 30 {
		t.Errorf("%d rounds of %d games in all, want the last cut to the budget of 30", len(played), games)
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
		if p.Round.Bye != "" || len(p.Round.Matches) > 2 {
			t.Fatalf("round %d: bye %q, %d games: want at most 2 games and no bye", p.Round.Number, p.Round.Bye, len(p.Round.Matches))
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

// checkNeighbours fails unless every pairing of r pairs neighbours in the rating order of
// played whose order is uncertain, among them the least certain of those that did not
// meet in the last round (of all, when all did).
func checkNeighbours(t *testing.T, f Format, players []string, seed int64, played []Played, r Round) {
	t.Helper()
	a, err := newArena(f, players, seed, played)
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]int{}
	least := -1 // the least certain pair, among those that did not meet last round if any did not
	metLast := func(k int) bool { return a.lastRound[meetingKey(a.rows[k].PlayerID, a.rows[k+1].PlayerID)] }
	for k, row := range a.rows {
		at[row.PlayerID] = k
		if k+1 == len(a.rows) || row.LOSNext >= arenaCertain {
			continue
		}
		if least < 0 || (metLast(least) && !metLast(k)) || (metLast(least) == metLast(k) && row.LOSNext < a.rows[least].LOSNext) {
			least = k
		}
	}
	found := false
	for _, m := range r.Matches {
		i, j := at[m.Players[0]], at[m.Players[1]]
		k := min(i, j)
		if max(i, j) != k+1 || a.rows[k].LOSNext >= arenaCertain {
			t.Fatalf("round %d pairs %s (place %d) and %s (place %d), not uncertain neighbours", r.Number, m.Players[0], i+1, m.Players[1], j+1)
		}
		found = found || k == least
	}
	if !found {
		t.Fatalf("round %d leaves out the least certain neighbours, places %d and %d", r.Number, least+1, least+2)
	}
}

// A forfeit says nothing of strength: the arena does not rate it, as the ratings do not.
func TestArenaLeavesForfeitsOut(t *testing.T) {
	players := []string{"a", "b", "c", "d"}
	f := arenaFormat(100, 50)
	rs, err := Next(f, players, 5, nil)
	if err != nil || len(rs) != 1 {
		t.Fatalf("round 1: %v, %v", rs, err)
	}
	p := Played{Round: rs[0], Results: map[string]Result{}}
	for _, m := range rs[0].Matches {
		p.Results[m.ID] = Result{Outcome: map[string]string{m.Players[0]: "win", m.Players[1]: "loss"}, Ending: protocol.TerminationForfeit}
	}
	st, _ := ArenaOf(f, players, 5, []Played{p})
	if st.Games != 2 || !strings.Contains(st.Reason, "no rated game yet") {
		t.Errorf("after two forfeits: %+v, want 2 games paired and none rated", st)
	}
	for id, r := range p.Results {
		r.Ending = protocol.TerminationNormal
		p.Results[id] = r
	}
	if st, _ := ArenaOf(f, players, 5, []Played{p}); strings.Contains(st.Reason, "no rated game yet") {
		t.Errorf("after two games played: %+v, want them rated", st)
	}
}

// A player who never plays (every game of its a forfeit) is left out after outOfArena
// pairings, and the arena settles the order of the others; when fewer than two are left
// to play, it stops as deserted.
func TestArenaLeavesOutAPlayerWhoNeverPlays(t *testing.T) {
	players, elo := elos()
	f := arenaFormat(3000, 50)
	rng := rand.New(rand.NewPCG(5, 6))
	var played []Played
	pairings := 0
	for {
		rs, err := Next(f, players, 4, played)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			break
		}
		p := playRound(rng, elo, rs[0])
		for _, m := range rs[0].Matches {
			if i := slices.Index(m.Players[:], "p0"); i >= 0 {
				pairings++
				p.Results[m.ID] = Result{Outcome: map[string]string{"p0": "loss", m.Players[1-i]: "win"}, Ending: protocol.TerminationForfeit}
			}
		}
		played = append(played, p)
	}
	st, _ := ArenaOf(f, players, 4, played)
	if st.Stopped != ArenaSettled || !slices.Equal(st.Out, []string{"p0"}) || pairings != outOfArena {
		t.Errorf("arena %+v with p0 paired %d times: want settled without p0, paired %d times", st, pairings, outOfArena)
	}
	t.Logf("%s", st.Reason)

	// Two players, one of whom never plays: deserted.
	two := []string{"p0", "p1"}
	played = nil
	for range 5 {
		rs, err := Next(f, two, 4, played)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			break
		}
		m := rs[0].Matches[0]
		played = append(played, Played{Round: rs[0], Results: map[string]Result{m.ID: {Outcome: map[string]string{"p0": "loss", "p1": "win"}, Ending: protocol.TerminationForfeit}}})
	}
	if st, _ := ArenaOf(f, two, 4, played); st.Stopped != ArenaDeserted || len(played) != outOfArena {
		t.Errorf("two players, one never playing: %+v after %d rounds, want deserted after %d", st, len(played), outOfArena)
	}
}
