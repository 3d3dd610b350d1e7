package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Algorithms: the values of scheduling.algorithm.
const (
	// RoundRobin plays the FIDE Berger tables once or twice (see Build).
	RoundRobin = "round_robin"
	// Swiss pairs one round at a time by score, Dutch style, without repeat pairings.
	Swiss = "swiss"
	// Knockout plays a seeded single-elimination bracket, one leg per round.
	Knockout = "knockout"
	// Gauntlet has every candidate play every other player.
	Gauntlet = "gauntlet"
)

// Knockout tie rules: the values of scheduling.tie_rule.
const (
	// TieHigherSeed sends the better seed through.
	TieHigherSeed = "higher_seed"
	// TieCoinToss decides by a toss seeded by the league seed and the pairing.
	TieCoinToss = "coin_toss"
	// TieSuddenDeath plays extra single games, first move alternating, until one is won;
	// after BestOf extra games still level, the better seed goes through.
	TieSuddenDeath = "sudden_death"
)

// Format is the scheduling section of league.yaml. Fields that do not belong to the
// chosen algorithm are ignored.
type Format struct {
	// Algorithm is RoundRobin, Swiss, Knockout or Gauntlet.
	Algorithm string `json:"algorithm"`
	// Cycles is, for round robin, 1 or 2.
	Cycles int `json:"cycles"`
	// Rounds is, for swiss, the number of rounds to play (>= 1).
	Rounds int `json:"rounds"`
	// ByePoints is, for swiss, what a bye scores (>= 0).
	ByePoints int `json:"bye_points"`
	// BestOf is, for knockout, the number of games per pairing (>= 1).
	BestOf int `json:"best_of"`
	// TieRule is, for knockout, how a pairing still level after BestOf games is decided.
	TieRule string `json:"tie_rule"`
	// Seeding is, for knockout and swiss, a given ranking, best first. It may be empty or
	// partial: players not in it follow in an order drawn from the league seed (never in
	// registration order). Ids that are not registered players are ignored.
	Seeding []string `json:"seeding"`
	// Candidates are, for gauntlet, the players who play everybody (>= 1, each registered).
	Candidates []string `json:"candidates"`
	// GamesPerPair is, for gauntlet, how often a candidate meets each other player (>= 1).
	GamesPerPair int `json:"games_per_pair"`
}

// Result is what a stored match came to: each player's outcome ("win", "loss" or "draw")
// and points.
type Result struct {
	Outcome map[string]string
	Points  map[string]int
}

// Played is a stored, completed round with its results by match id. A match without a
// result was abandoned: nobody played it, and it counts as not played (no points, no win,
// no first move), although its pairing still counts as made.
type Played struct {
	Round   Round
	Results map[string]Result
}

// Next returns the rounds to add after played (all complete), numbered on from
// len(played)+1. Round robin and gauntlet return every round at once when played is empty
// and none after; swiss and knockout return one round at a time, each decided from the
// results of the rounds before it. An empty result means the league is over. Next is a
// pure function of its arguments: the order of players does not matter, and the same
// arguments always give the same rounds. It fails on a bad Format or players (fewer than
// 2, duplicates, an empty id, a candidate who is not a player) and on played rounds that
// are not numbered 1, 2, ... or do not follow the format.
func Next(f Format, players []string, leagueSeed int64, played []Played) ([]Round, error) {
	if err := f.Validate(players); err != nil {
		return nil, err
	}
	for i, p := range played {
		if p.Round.Number != i+1 {
			return nil, fmt.Errorf("played round %d is numbered %d", i+1, p.Round.Number)
		}
	}
	switch f.Algorithm {
	case RoundRobin:
		if len(played) > 0 {
			return nil, nil
		}
		s, err := Build(players, f.Cycles, leagueSeed)
		if err != nil {
			return nil, err
		}
		return s.Rounds, nil
	case Gauntlet:
		if len(played) > 0 {
			return nil, nil
		}
		return gauntletRounds(f, players, leagueSeed), nil
	case Swiss:
		return nextSwiss(f, players, leagueSeed, played)
	case Knockout:
		b, err := playKnockout(f, players, leagueSeed, played)
		if err != nil {
			return nil, err
		}
		return b.next(leagueSeed, len(played)+1)
	}
	// Validate rejects every other algorithm.
	return nil, fmt.Errorf("scheduling.algorithm: unknown algorithm %q", f.Algorithm)
}

// Validate checks f for players without scheduling anything (used when registration
// closes and by config checks). Errors are lowercase and name the offending field as
// "scheduling.<field>".
func (f Format) Validate(players []string) error {
	if err := validatePlayers(players); err != nil {
		return err
	}
	switch f.Algorithm {
	case RoundRobin:
		if f.Cycles != 1 && f.Cycles != 2 {
			return fmt.Errorf("scheduling.cycles must be 1 or 2, got %d", f.Cycles)
		}
	case Swiss:
		if f.Rounds < 1 {
			return fmt.Errorf("scheduling.rounds must be at least 1, got %d", f.Rounds)
		}
		if f.ByePoints < 0 {
			return fmt.Errorf("scheduling.bye_points must not be negative, got %d", f.ByePoints)
		}
		if err := validateSeeding(f.Seeding); err != nil {
			return err
		}
	case Knockout:
		if f.BestOf < 1 {
			return fmt.Errorf("scheduling.best_of must be at least 1, got %d", f.BestOf)
		}
		switch f.TieRule {
		case TieHigherSeed, TieCoinToss, TieSuddenDeath:
		default:
			return fmt.Errorf("scheduling.tie_rule must be %s, %s or %s, got %q",
				TieHigherSeed, TieCoinToss, TieSuddenDeath, f.TieRule)
		}
		if err := validateSeeding(f.Seeding); err != nil {
			return err
		}
	case Gauntlet:
		if len(f.Candidates) == 0 {
			return errors.New("scheduling.candidates must name at least 1 player")
		}
		for i, c := range f.Candidates {
			if !slices.Contains(players, c) {
				return fmt.Errorf("scheduling.candidates: %q is not a registered player", c)
			}
			if slices.Contains(f.Candidates[:i], c) {
				return fmt.Errorf("scheduling.candidates lists %q twice", c)
			}
		}
		if f.GamesPerPair < 1 {
			return fmt.Errorf("scheduling.games_per_pair must be at least 1, got %d", f.GamesPerPair)
		}
	default:
		return fmt.Errorf("scheduling.algorithm must be %s, %s, %s or %s, got %q",
			RoundRobin, Swiss, Knockout, Gauntlet, f.Algorithm)
	}
	return nil
}

// validatePlayers rejects what Build rejects, with the same messages.
func validatePlayers(players []string) error {
	if len(players) < 2 {
		return fmt.Errorf("need at least 2 players, got %d", len(players))
	}
	sorted := slices.Clone(players)
	slices.Sort(sorted)
	for i, p := range sorted {
		if p == "" {
			return errors.New("empty player id")
		}
		if i > 0 && sorted[i-1] == p {
			return fmt.Errorf("duplicate player id %q", p)
		}
	}
	return nil
}

func validateSeeding(seeding []string) error {
	for i, s := range seeding {
		if slices.Contains(seeding[:i], s) {
			return fmt.Errorf("scheduling.seeding lists %q twice", s)
		}
	}
	return nil
}

// initialOrder ranks players for swiss pairing numbers and knockout seeds: the registered
// ids of seeding first, in that order, then everybody else by a hash of the league seed and
// their id, a seeded shuffle that does not depend on the order of players.
func initialOrder(seeding, players []string, leagueSeed int64) []string {
	order := make([]string, 0, len(players))
	for _, s := range seeding {
		if slices.Contains(players, s) && !slices.Contains(order, s) {
			order = append(order, s)
		}
	}
	type keyed struct {
		id  string
		key [sha256.Size]byte
	}
	var rest []keyed
	for _, p := range players {
		if !slices.Contains(order, p) {
			rest = append(rest, keyed{p, seedingKey(leagueSeed, p)})
		}
	}
	slices.SortFunc(rest, func(a, b keyed) int {
		if c := strings.Compare(string(a.key[:]), string(b.key[:])); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	for _, k := range rest {
		order = append(order, k.id)
	}
	return order
}

func seedingKey(leagueSeed int64, player string) [sha256.Size]byte {
	var buf []byte
	buf = append(buf, "agentleague/seeding/v1"...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(leagueSeed))
	buf = append(buf, player...)
	return sha256.Sum256(buf)
}

// newRound returns round number with its id and the given pairings (first mover first) as
// matches in board order, with ids and seeds from matchIdentity.
func newRound(leagueSeed int64, number int, pairs [][2]string) Round {
	r := Round{Number: number, Cycle: 1, ID: fmt.Sprintf("round-%d", number)}
	for _, p := range pairs {
		m := Match{Round: number, Cycle: 1, Index: len(r.Matches) + 1, Players: p}
		m.ID, m.Seed = matchIdentity(leagueSeed, m)
		r.Matches = append(r.Matches, m)
	}
	return r
}
