package schedule

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FIDE Berger tables (C.05 Annex 1) written out by hand from the pairing rule, board order,
// first mover first.
var (
	fide4 = [][]string{
		{"1-4", "2-3"},
		{"4-3", "1-2"},
		{"2-4", "3-1"},
	}
	fide6 = [][]string{
		{"1-6", "2-5", "3-4"},
		{"6-4", "5-3", "1-2"},
		{"2-6", "3-1", "4-5"},
		{"6-5", "1-4", "2-3"},
		{"3-6", "4-2", "5-1"},
	}
)

// wantRound is a round in FIDE numbers: games "a-b" with a moving first, and the bye (0 for none).
type wantRound struct {
	games []string
	bye   int
}

func TestBuildFIDETables(t *testing.T) {
	// The 5-player schedule is the 6-player table with 6 as the dummy: its opponent has the bye.
	fide5 := make([]wantRound, len(fide6))
	for r, games := range fide6 {
		for _, g := range games {
			a, b := parseGame(t, g)
			switch {
			case a == 6:
				fide5[r].bye = b
			case b == 6:
				fide5[r].bye = a
			default:
				fide5[r].games = append(fide5[r].games, g)
			}
		}
	}
	plain := func(table [][]string) []wantRound {
		out := make([]wantRound, len(table))
		for r, games := range table {
			out[r] = wantRound{games: games}
		}
		return out
	}

	tests := []struct {
		name   string
		n      int
		cycles int
		want   []wantRound
	}{
		{"4 players", 4, 1, plain(fide4)},
		{"5 players", 5, 1, fide5},
		{"6 players", 6, 1, plain(fide6)},
		{
			// Rounds 2 and 3 of the first cycle swapped, then the table with first movers reversed.
			"4 players double", 4, 2, []wantRound{
				{games: []string{"1-4", "2-3"}},
				{games: []string{"2-4", "3-1"}},
				{games: []string{"4-3", "1-2"}},
				{games: []string{"4-1", "3-2"}},
				{games: []string{"3-4", "2-1"}},
				{games: []string{"4-2", "1-3"}},
			},
		},
		{
			"3 players double", 3, 2, []wantRound{
				{games: []string{"2-3"}, bye: 1},
				{games: []string{"3-1"}, bye: 2},
				{games: []string{"1-2"}, bye: 3},
				{games: []string{"3-2"}, bye: 1},
				{games: []string{"2-1"}, bye: 3},
				{games: []string{"1-3"}, bye: 2},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Names sort differently from the input order, so numbering must come from sorting.
			ids := []string{"echo", "alpha", "foxtrot", "charlie", "bravo", "delta"}[:tt.n]
			sorted := slices.Sorted(slices.Values(ids))
			s, err := Build(ids, tt.cycles, 7)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			if got, want := len(s.Rounds), len(tt.want); got != want {
				t.Fatalf("got %d rounds, want %d", got, want)
			}
			for r, round := range s.Rounds {
				var games []string
				for _, m := range round.Matches {
					games = append(games, fmt.Sprintf("%d-%d", number(sorted, m.Players[0]), number(sorted, m.Players[1])))
				}
				if !slices.Equal(games, tt.want[r].games) {
					t.Errorf("round %d: got games %v, want %v", r+1, games, tt.want[r].games)
				}
				if got, want := number(sorted, round.Bye), tt.want[r].bye; got != want {
					t.Errorf("round %d: got bye %d, want %d", r+1, got, want)
				}
			}
		})
	}
}

// TestBuildBergerRule checks single cycles against the rule text in ENGINEERING.md rather
// than against the board-order construction.
func TestBuildBergerRule(t *testing.T) {
	for n := 2; n <= 40; n++ {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ids := playerIDs(n)
			s, err := Build(ids, 1, 1)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			size := n + n%2
			mod := size - 1
			for _, round := range s.Rounds {
				r := round.Number
				type game struct{ first, second int }
				var games []game
				for _, m := range round.Matches {
					games = append(games, game{number(ids, m.Players[0]), number(ids, m.Players[1])})
				}
				if round.Bye != "" {
					// The bye is the game against the dummy, numbered size; it has no first mover.
					games = append(games, game{number(ids, round.Bye), size})
				}
				for _, g := range games {
					i, j := min(g.first, g.second), max(g.first, g.second)
					var congruent bool
					var wantFirst int
					if j == size {
						congruent = (2*i)%mod == (r+1)%mod
						wantFirst = size
						if r%2 == 1 {
							wantFirst = i
						}
					} else {
						congruent = (i+j)%mod == (r+1)%mod
						wantFirst = j
						if (j-i)%2 == 1 {
							wantFirst = i
						}
					}
					if !congruent {
						t.Errorf("round %d: %d-%d breaks the pairing rule", r, g.first, g.second)
					}
					if j != n+1 && g.first != wantFirst {
						t.Errorf("round %d: %d-%d: got first mover %d, want %d", r, g.first, g.second, g.first, wantFirst)
					}
				}
			}
		})
	}
}

func TestBuildProperties(t *testing.T) {
	for n := 2; n <= 40; n++ {
		for cycles := 1; cycles <= 2; cycles++ {
			t.Run(fmt.Sprintf("n=%d/cycles=%d", n, cycles), func(t *testing.T) {
				ids := playerIDs(n)
				s, err := Build(ids, cycles, 99)
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				perCycle := n - 1 + n%2
				if got, want := len(s.Rounds), perCycle*cycles; got != want {
					t.Fatalf("got %d rounds, want %d", got, want)
				}
				if got, want := s.TotalMatches(), cycles*n*(n-1)/2; got != want {
					t.Errorf("got %d matches, want %d", got, want)
				}

				// firstMover[cycle][pair] is who moved first when that pair met in that cycle.
				firstMover := make([]map[[2]string]string, cycles)
				firsts := make([]map[string]int, cycles)
				seconds := make([]map[string]int, cycles)
				byes := make([]map[string]int, cycles)
				for c := range cycles {
					firstMover[c] = map[[2]string]string{}
					firsts[c], seconds[c], byes[c] = map[string]int{}, map[string]int{}, map[string]int{}
				}
				matchIDs := map[string]bool{}
				for i, round := range s.Rounds {
					wantCycle := i/perCycle + 1
					if round.Number != i+1 || round.Cycle != wantCycle || round.ID != fmt.Sprintf("round-%d", i+1) {
						t.Errorf("round %d: got number %d, cycle %d, id %q, want %d, %d, %q",
							i+1, round.Number, round.Cycle, round.ID, i+1, wantCycle, fmt.Sprintf("round-%d", i+1))
					}
					c := round.Cycle - 1
					seen := map[string]bool{}
					if round.Bye != "" {
						seen[round.Bye] = true
						byes[c][round.Bye]++
					}
					if got, want := round.Bye != "", n%2 == 1; got != want {
						t.Errorf("round %d: got bye %q, want a bye: %v", round.Number, round.Bye, want)
					}
					for k, m := range round.Matches {
						if m.Round != round.Number || m.Cycle != round.Cycle || m.Index != k+1 {
							t.Errorf("match %s: got round %d, cycle %d, index %d, want %d, %d, %d",
								m.ID, m.Round, m.Cycle, m.Index, round.Number, round.Cycle, k+1)
						}
						if !idPattern.MatchString(m.ID) {
							t.Errorf("match id %q does not match %s", m.ID, idPattern)
						}
						if matchIDs[m.ID] {
							t.Errorf("duplicate match id %q", m.ID)
						}
						matchIDs[m.ID] = true
						if m.Seed < 0 || m.Seed >= 1<<53 {
							t.Errorf("match %s: got seed %d, want 0 <= seed < 2^53", m.ID, m.Seed)
						}
						for _, p := range m.Players {
							if seen[p] {
								t.Errorf("round %d: %s appears twice", round.Number, p)
							}
							seen[p] = true
						}
						pair := [2]string{min(m.Players[0], m.Players[1]), max(m.Players[0], m.Players[1])}
						if _, ok := firstMover[c][pair]; ok {
							t.Errorf("cycle %d: %v meet twice", c+1, pair)
						}
						firstMover[c][pair] = m.Players[0]
						firsts[c][m.Players[0]]++
						seconds[c][m.Players[1]]++
					}
				}

				for c := range cycles {
					if got, want := len(firstMover[c]), n*(n-1)/2; got != want {
						t.Errorf("cycle %d: got %d distinct pairs, want %d", c+1, got, want)
					}
					for _, p := range ids {
						if byes[c][p] > 1 {
							t.Errorf("cycle %d: %s has %d byes, want at most 1", c+1, p, byes[c][p])
						}
						if d := firsts[c][p] - seconds[c][p]; d < -1 || d > 1 {
							t.Errorf("cycle %d: %s moves first %d times and second %d times, want a difference of at most 1",
								c+1, p, firsts[c][p], seconds[c][p])
						}
					}
				}
				if cycles == 2 {
					for pair, first := range firstMover[0] {
						if firstMover[1][pair] == first {
							t.Errorf("%v: %s moves first in both cycles", pair, first)
						}
					}
					// The reason for swapping the last two rounds of the first cycle.
					for _, p := range ids {
						if run := longestColourRun(s, p); run > 2 {
							t.Errorf("%s has the same first-mover role in %d consecutive games, want at most 2", p, run)
						}
					}
				}
			})
		}
	}
}

func TestBuildDeterministic(t *testing.T) {
	for _, n := range []int{2, 3, 10, 17} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ids := playerIDs(n)
			input := slices.Clone(ids)
			rand.New(rand.NewPCG(1, uint64(n))).Shuffle(len(input), func(i, j int) { input[i], input[j] = input[j], input[i] })
			before := slices.Clone(input)

			a, err := Build(ids, 2, 42)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			b, err := Build(input, 2, 42)
			if err != nil {
				t.Fatalf("Build shuffled: %v", err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("got different schedules for the same players in a different order")
			}
			if !slices.Equal(input, before) {
				t.Errorf("Build reordered its input: got %v, want %v", input, before)
			}

			other, err := Build(ids, 2, 43)
			if err != nil {
				t.Fatalf("Build other seed: %v", err)
			}
			for r := range a.Rounds {
				for k, m := range a.Rounds[r].Matches {
					o := other.Rounds[r].Matches[k]
					if o.Players != m.Players {
						t.Errorf("match %d.%d: got players %v with another seed, want %v", r+1, k+1, o.Players, m.Players)
					}
					if o.Seed == m.Seed || o.ID == m.ID {
						t.Errorf("match %d.%d: got id %s seed %d for both league seeds", r+1, k+1, m.ID, m.Seed)
					}
				}
			}
		})
	}
}

// TestBuildGolden pins the id and seed derivation: ids are stored, so changing it breaks
// leagues resumed from a database.
func TestBuildGolden(t *testing.T) {
	s, err := Build([]string{"alice", "bob"}, 2, 20250121)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	want := []Match{
		{ID: "r01-m01-741864e09d61", Seed: 5152736739401582, Round: 1, Cycle: 1, Index: 1, Players: [2]string{"alice", "bob"}},
		{ID: "r02-m01-98f64d4fc2f0", Seed: 4923077377625068, Round: 2, Cycle: 2, Index: 1, Players: [2]string{"bob", "alice"}},
	}
	var got []Match
	for _, r := range s.Rounds {
		got = append(got, r.Matches...)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name    string
		players []string
		cycles  int
		want    string
	}{
		{"no players", nil, 1, "need at least 2 players, got 0"},
		{"one player", []string{"a"}, 1, "need at least 2 players, got 1"},
		{"duplicate", []string{"b", "a", "b"}, 1, `duplicate player id "b"`},
		{"empty id", []string{"a", ""}, 1, "empty player id"},
		{"zero cycles", []string{"a", "b"}, 0, "cycles must be 1 or 2, got 0"},
		{"three cycles", []string{"a", "b"}, 3, "cycles must be 1 or 2, got 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(tt.players, tt.cycles, 1)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)

// playerIDs returns n ids whose sorted order is their index order.
func playerIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("player-%02d", i+1)
	}
	return ids
}

// number is the 1-based FIDE number of id in sorted, or 0 for "".
func number(sorted []string, id string) int {
	return slices.Index(sorted, id) + 1
}

func parseGame(t *testing.T, g string) (int, int) {
	t.Helper()
	a, b, ok := strings.Cut(g, "-")
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if !ok || errA != nil || errB != nil {
		t.Fatalf("bad game %q", g)
	}
	return x, y
}

// longestColourRun is the longest run of consecutive played games in which p keeps the same
// role (first or second mover); byes neither break nor extend a run.
func longestColourRun(s Schedule, p string) int {
	longest, run, last := 0, 0, -1
	for _, round := range s.Rounds {
		for _, m := range round.Matches {
			role := slices.Index(m.Players[:], p)
			if role < 0 {
				continue
			}
			if role == last {
				run++
			} else {
				run, last = 1, role
			}
			longest = max(longest, run)
		}
	}
	return longest
}
