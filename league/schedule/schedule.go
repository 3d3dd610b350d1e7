// Package schedule builds round-robin league schedules from the FIDE Berger tables
// (FIDE Handbook C.05, Annex 1), so the same players, cycles and league seed always give
// the same rounds, pairings, first movers, match ids and match seeds. Next schedules every
// format (round robin, swiss, knockout, gauntlet) as a pure function of the format, the
// players, the league seed and the rounds played so far.
package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
)

// Schedule is a complete league schedule in playing order.
type Schedule struct {
	Rounds []Round
}

// Round is a set of matches that can be played at the same time: nobody appears twice.
type Round struct {
	// Number counts rounds across the whole schedule, from 1.
	Number int
	// Cycle is 1, or 2 for the return games of a double round robin.
	Cycle int
	// ID is "round-<Number>".
	ID string
	// Matches are in FIDE board order.
	Matches []Match
	// Bye is the player who sits out this round, or "" when the player count is even.
	Bye string
}

// Match is one scheduled game between two players.
type Match struct {
	// ID is unique within the schedule and matches ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$.
	ID string
	// Seed drives the game's randomness. It is non-negative and below 2^53.
	Seed int64
	// Round is the global Round.Number the match belongs to.
	Round int
	// Cycle is the Round.Cycle the match belongs to.
	Cycle int
	// Index is the match's 1-based position within its round.
	Index int
	// Players lists the first mover (White in the FIDE table) first.
	Players [2]string
}

// Build schedules a round robin between players, played once (cycles 1) or twice with
// first movers reversed (cycles 2). Players are numbered 1..N in sorted id order and
// paired by the FIDE Berger table; with an odd count a dummy is added and whoever meets
// it has the bye. In a double round robin the last two rounds of the first cycle are
// swapped, as FIDE recommends, so nobody moves first (or second) three times running
// across the change of cycle. leagueSeed only affects match ids and seeds.
func Build(players []string, cycles int, leagueSeed int64) (Schedule, error) {
	if cycles != 1 && cycles != 2 {
		return Schedule{}, fmt.Errorf("cycles must be 1 or 2, got %d", cycles)
	}
	if len(players) < 2 {
		return Schedule{}, fmt.Errorf("need at least 2 players, got %d", len(players))
	}
	sorted := slices.Clone(players)
	slices.Sort(sorted)
	for i, p := range sorted {
		// "" is reserved for "no bye".
		if p == "" {
			return Schedule{}, fmt.Errorf("empty player id")
		}
		if i > 0 && sorted[i-1] == p {
			return Schedule{}, fmt.Errorf("duplicate player id %q", p)
		}
	}

	table := berger(len(sorted))
	first := slices.Clone(table)
	if cycles == 2 && len(first) >= 2 {
		last := len(first) - 1
		first[last-1], first[last] = first[last], first[last-1]
	}
	cycleTables := [][][]pairing{first}
	if cycles == 2 {
		cycleTables = append(cycleTables, table)
	}

	var s Schedule
	for c, rounds := range cycleTables {
		cycle := c + 1
		for _, pairs := range rounds {
			number := len(s.Rounds) + 1
			round := Round{Number: number, Cycle: cycle, ID: fmt.Sprintf("round-%d", number)}
			for _, p := range pairs {
				if cycle == 2 {
					p[0], p[1] = p[1], p[0]
				}
				// The dummy carries the number after the last real player.
				if p[0] > len(sorted) || p[1] > len(sorted) {
					round.Bye = sorted[min(p[0], p[1])-1]
					continue
				}
				m := Match{
					Round:   number,
					Cycle:   cycle,
					Index:   len(round.Matches) + 1,
					Players: [2]string{sorted[p[0]-1], sorted[p[1]-1]},
				}
				m.ID, m.Seed = matchIdentity(leagueSeed, m)
				round.Matches = append(round.Matches, m)
			}
			s.Rounds = append(s.Rounds, round)
		}
	}
	return s, nil
}

// TotalMatches counts the matches actually played; byes are not matches.
func (s Schedule) TotalMatches() int {
	n := 0
	for _, r := range s.Rounds {
		n += len(r.Matches)
	}
	return n
}

// pairing holds two 1-based player numbers, first mover first.
type pairing [2]int

// berger returns the FIDE Berger table for n players: rounds in order, each in board order.
// An odd n is padded with a dummy numbered n+1.
func berger(n int) [][]pairing {
	size := n + n%2
	mod := size - 1
	// Reduces v to the range 1..mod, the way the FIDE table numbers players.
	wrap := func(v int) int { return ((v-1)%mod+mod)%mod + 1 }
	// mod is odd, so 2 is invertible and half is its inverse.
	half := (mod + 1) / 2

	rounds := make([][]pairing, mod)
	for r := 1; r <= mod; r++ {
		// Player size meets the a with 2a ≡ r+1 (mod size-1); a moves first in odd rounds.
		a := wrap((r + 1) * half)
		pairs := make([]pairing, 0, size/2)
		if r%2 == 1 {
			pairs = append(pairs, pairing{a, size})
		} else {
			pairs = append(pairs, pairing{size, a})
		}
		// Board k pairs a+(k-1) with a-(k-1): their sum is 2a ≡ r+1 as the rule requires.
		for k := 1; k < size/2; k++ {
			i, j := wrap(a-k), wrap(a+k)
			if i > j {
				i, j = j, i
			}
			if (j-i)%2 == 1 {
				pairs = append(pairs, pairing{i, j})
			} else {
				pairs = append(pairs, pairing{j, i})
			}
		}
		rounds[r-1] = pairs
	}
	return rounds
}

// matchIdentity derives a match's id and seed from the league seed and its place in the
// schedule, so they are reproducible and differ between leagues with different seeds.
func matchIdentity(leagueSeed int64, m Match) (string, int64) {
	canonical := fmt.Sprintf("agentleague/schedule/v1 league_seed=%d cycle=%d round=%d index=%d players=%q,%q",
		leagueSeed, m.Cycle, m.Round, m.Index, m.Players[0], m.Players[1])
	sum := sha256.Sum256([]byte(canonical))
	id := fmt.Sprintf("r%02d-m%02d-%s", m.Round, m.Index, hex.EncodeToString(sum[:6]))
	// 53 bits keep the seed exact as a JSON number in every client language.
	seed := int64(binary.BigEndian.Uint64(sum[8:16]) & (1<<53 - 1))
	return id, seed
}
