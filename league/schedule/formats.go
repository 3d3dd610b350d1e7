package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"regexp"
	"slices"
	"strings"

	"github.com/agentleague/agentleague/internal/problem"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
)

// Algorithms: the values of scheduling.algorithm (and Arena, in arena.go).
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

// MaxPlayers is the most players a league schedules, and so the most ids a list of the
// format (seeding, candidates) may hold.
const MaxPlayers = 1000

// Bounds of the format's numbers.
const (
	maxSwissRounds   = 999
	maxByePoints     = 1000
	maxBestOf        = 99
	maxGamesPerPair  = 100
	maxSPRTGames     = 100000
	maxRatingSamples = 100000
	// maxProvisionalGames bounds ranking.provisional_games.
	maxProvisionalGames = 100000
)

// IDPattern is the shape of a player id: defs.json's id, which league and referee ids
// share.
var IDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Format is how a league is played and ranked: the scheduling and ranking sections of
// league.yaml. It is fixed when registration closes (For resolves it for the players,
// and it is stored with the schedule and in the audit log's SCHEDULE event), so a
// restart, an export and a replay all use the one the league started with. Its JSON is
// the stored form: one flat object.
type Format struct {
	Scheduling
	Ranking
}

// Scheduling is league.yaml's scheduling section: who meets whom, and when.
type Scheduling struct {
	// Algorithm is RoundRobin, Swiss, Knockout, Gauntlet or Arena.
	Algorithm string `json:"algorithm" yaml:"algorithm"`
	// Cycles is, for round robin, 1 or 2 (every pair meets twice).
	Cycles int `json:"cycles" yaml:"cycles"`
	// Rounds is, for swiss, the number of rounds to play; 0 plays ceil(log2(players))
	// rounds (For resolves it).
	Rounds int `json:"rounds" yaml:"rounds"`
	// ByePoints is what a Swiss bye scores; unset (nil) scores the game's win points
	// (For resolves it).
	ByePoints *int `json:"bye_points" yaml:"bye_points"`
	// BestOf is, for knockout, the number of games per pairing.
	BestOf int `json:"best_of" yaml:"best_of"`
	// TieRule is, for knockout, how a pairing still level after BestOf games is decided:
	// TieHigherSeed, TieCoinToss or TieSuddenDeath.
	TieRule string `json:"tie_rule" yaml:"tie_rule"`
	// Seeding is, for knockout and swiss, a given ranking, best first. It may be empty or
	// partial: players not in it follow in an order drawn from the league seed (never in
	// registration order). Ids that are not registered players are ignored.
	Seeding []string `json:"seeding" yaml:"seeding"`
	// Candidates are, for gauntlet, the players who play everybody (each registered).
	Candidates []string `json:"candidates" yaml:"candidates"`
	// GamesPerPair is, for gauntlet, how often a candidate meets each other player; under
	// an SPRT, the most games the test may take.
	GamesPerPair int `json:"games_per_pair" yaml:"games_per_pair"`
	// SPRT, for a gauntlet of one candidate against one opponent, stops it as soon as the
	// test decides (see SPRT).
	SPRT *SPRT `json:"sprt,omitempty" yaml:"sprt"`
	// Arena is, for an arena, its game budget (see ArenaRules).
	Arena *ArenaRules `json:"arena,omitempty" yaml:"arena"`
	// ConcurrentMatchesPerRound is the seed's key; the matches of a round always run at
	// once, as far as the referees' capacity goes. It is not stored.
	ConcurrentMatchesPerRound bool `json:"-" yaml:"concurrent_matches_per_round"`
	// OverlapRounds lets a match start as soon as its players' earlier matches are over
	// and a referee is free, instead of waiting for the round's slowest match (see
	// Overlap). It says how a League Manager runs the rounds, not what they are, so it is
	// not stored: a restart takes it from the configuration.
	OverlapRounds *bool `json:"-" yaml:"overlap_rounds"`
}

// Ranking is league.yaml's ranking section: how the standings are ordered and rated.
type Ranking struct {
	// Tiebreaks, when set, replace wins and draws after points in the official order
	// (any of standings.Tiebreaks); player id stays last.
	Tiebreaks []string `json:"tiebreaks" yaml:"tiebreaks"`
	// RatingSamples is the number of bootstrap resamples behind the rating intervals.
	RatingSamples int `json:"rating_samples" yaml:"rating_samples"`
	// ProvisionalGames marks a rating provisional until its player has played that many
	// rated games (0: never).
	ProvisionalGames int `json:"provisional_games,omitempty" yaml:"provisional_games"`
}

// Default is the format of a league.yaml that sets none: a single round robin, ranked
// by points, wins and draws.
func Default() Format {
	return Format{
		Scheduling: Scheduling{Algorithm: RoundRobin, Cycles: 1, BestOf: 1, TieRule: TieHigherSeed,
			Seeding: []string{}, Candidates: []string{}, GamesPerPair: 2, ConcurrentMatchesPerRound: true},
		Ranking: Ranking{Tiebreaks: []string{}, RatingSamples: 1000},
	}
}

// For is f as a league of players whose game scores winPoints for a win plays it: Swiss
// rounds 0 become ceil(log2(players)) and an unset bye scores winPoints.
func (f Format) For(players, winPoints int) Format {
	if f.ByePoints == nil {
		f.ByePoints = &winPoints
	}
	if f.Algorithm == Swiss && f.Rounds == 0 {
		f.Rounds = max(1, bits.Len(uint(players-1)))
	}
	return f
}

// ByeScore is what a bye scores: ByePoints in a Swiss, nothing in the other formats,
// whose byes only fill an odd round.
func (f Format) ByeScore() int {
	if f.Algorithm != Swiss || f.ByePoints == nil {
		return 0
	}
	return *f.ByePoints
}

// Overlap reports whether rounds overlap: OverlapRounds (unset is on) for the formats
// whose pairings are all known before the first game; Swiss and knockout pair each
// round from the results before it, so they always wait for the round to end.
func (f Format) Overlap() bool {
	return f.fixedPairings() && (f.OverlapRounds == nil || *f.OverlapRounds)
}

// fixedPairings reports whether every pairing is known before the first game.
func (f Format) fixedPairings() bool { return f.Algorithm == RoundRobin || f.Algorithm == Gauntlet }

// Validate returns nil, or a problem.List of every rule f breaks, each at its field's
// path as league.yaml spells it ("scheduling.rounds", "ranking.tiebreaks[1]"). Every field is
// checked whatever the algorithm, so that a mistake in a field of another format is not
// silently carried along. Configuration checks, the store, replay and the scheduler
// (through Schedulable) all judge a format by it.
func (f Format) Validate() error {
	var v validation
	v.oneOf("scheduling.algorithm", f.Algorithm, RoundRobin, Swiss, Knockout, Gauntlet, Arena)
	v.between("scheduling.cycles", f.Cycles, 1, 2)
	v.between("scheduling.rounds", f.Rounds, 0, maxSwissRounds)
	if f.ByePoints != nil {
		v.between("scheduling.bye_points", *f.ByePoints, 0, maxByePoints)
	}
	v.between("scheduling.best_of", f.BestOf, 1, maxBestOf)
	v.oneOf("scheduling.tie_rule", f.TieRule, TieHigherSeed, TieCoinToss, TieSuddenDeath)
	v.ids("scheduling.seeding", f.Seeding)
	v.ids("scheduling.candidates", f.Candidates)
	if f.Algorithm == Gauntlet && len(f.Candidates) == 0 {
		v.add("scheduling.candidates", "a gauntlet needs at least one candidate")
	}
	if f.SPRT == nil {
		v.between("scheduling.games_per_pair", f.GamesPerPair, 1, maxGamesPerPair)
	} else {
		f.validateSPRT(&v)
	}
	f.validateArena(&v)
	if f.OverlapRounds != nil && *f.OverlapRounds && !f.fixedPairings() {
		v.add("scheduling.overlap_rounds", "%s pairs each round from the results before it, so its rounds cannot overlap", f.Algorithm)
	}
	for i, tb := range f.Tiebreaks {
		p := problem.Index("ranking.tiebreaks", i)
		if v.oneOf(p, tb, standings.Tiebreaks...) && slices.Contains(f.Tiebreaks[:i], tb) {
			v.add(p, "%q is listed twice", tb)
		}
	}
	v.between("ranking.rating_samples", f.RatingSamples, 1, maxRatingSamples)
	v.between("ranking.provisional_games", f.ProvisionalGames, 0, maxProvisionalGames)
	return v.problems.Err()
}

// Schedulable reports why f cannot be scheduled for players, or nil: the rules f breaks
// (Validate), a Swiss not resolved by For, players that are not a roster (fewer than 2,
// an empty id, one twice) and gauntlet candidates who are not among them.
func (f Format) Schedulable(players []string) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if f.Algorithm == Swiss && (f.Rounds < 1 || f.ByePoints == nil) {
		return errors.New("a swiss format is scheduled with its rounds and bye_points set (Format.For)")
	}
	if err := validatePlayers(players); err != nil {
		return err
	}
	if f.Algorithm == Gauntlet {
		for i, c := range f.Candidates {
			if !slices.Contains(players, c) {
				return problem.List{{Path: problem.Index("scheduling.candidates", i), Message: fmt.Sprintf("%q is not a registered player", c)}}
			}
		}
	}
	if f.SPRT != nil && len(players) != 2 {
		return problem.List{{Path: "scheduling.sprt", Message: fmt.Sprintf("an SPRT tests one candidate against one opponent: 2 players, got %d", len(players))}}
	}
	return nil
}

// validateSPRT adds the problems of an SPRT: a gauntlet of one candidate, an even bound
// of games (they come in pairs), elo0 < elo1, error rates in (0, 0.5).
func (f Format) validateSPRT(v *validation) {
	s := f.SPRT
	if f.Algorithm != Gauntlet || len(f.Candidates) != 1 {
		v.add("scheduling.sprt", "an SPRT is for a gauntlet of one candidate (against one opponent)")
	}
	switch {
	case f.GamesPerPair < 2 || f.GamesPerPair > maxSPRTGames:
		v.add("scheduling.games_per_pair", "must be between 2 and %d under an SPRT, got %d", maxSPRTGames, f.GamesPerPair)
	case f.GamesPerPair%2 != 0:
		v.add("scheduling.games_per_pair", "under an SPRT games come in pairs: must be even, got %d", f.GamesPerPair)
	}
	if !(s.Elo0 < s.Elo1) || math.IsInf(s.Elo0, 0) || math.IsInf(s.Elo1, 0) || math.Abs(s.Elo0) > 1000 || math.Abs(s.Elo1) > 1000 {
		v.add("scheduling.sprt.elo1", "must be more than elo0, both within -1000..1000: got elo0 %v, elo1 %v", s.Elo0, s.Elo1)
	}
	for _, r := range []struct {
		name string
		p    float64
	}{{"alpha", s.Alpha}, {"beta", s.Beta}} {
		if !(r.p > 0 && r.p < 0.5) {
			v.add("scheduling.sprt."+r.name, "must be more than 0 and less than 0.5, got %v", r.p)
		}
	}
}

// validation collects the problems of a Format.
type validation struct {
	problems problem.List
}

func (v *validation) add(path, format string, args ...any) { v.problems.Add(path, format, args...) }

// between checks lo <= n <= hi.
func (v *validation) between(path string, n, lo, hi int) {
	if n < lo || n > hi {
		v.add(path, "must be between %d and %d, got %d", lo, hi, n)
	}
}

// oneOf checks that s is one of allowed and reports whether it is.
func (v *validation) oneOf(path, s string, allowed ...string) bool {
	if slices.Contains(allowed, s) {
		return true
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	v.add(path, "must be one of %s, got %q", strings.Join(quoted, ", "), s)
	return false
}

// ids checks a list of player ids: at most MaxPlayers, each of IDPattern, none twice.
func (v *validation) ids(path string, ids []string) {
	if len(ids) > MaxPlayers {
		v.add(path, "must list at most %d players, got %d", MaxPlayers, len(ids))
		return
	}
	for i, id := range ids {
		p := problem.Index(path, i)
		switch j := slices.Index(ids[:i], id); {
		case !IDPattern.MatchString(id):
			v.add(p, "must match %s, got %q", IDPattern, id)
		case j >= 0:
			v.add(p, "%q is already listed as %s", id, problem.Index(path, j))
		}
	}
}

// Result is what a stored match came to: each player's outcome ("win", "loss" or "draw"),
// points, and how it ended (the termination of its game_metadata), which tells a forfeit
// from a game played.
type Result struct {
	Outcome map[string]string
	Points  map[string]int
	Ending  protocol.Termination
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
// and none after; swiss, knockout and arena return one round at a time, each decided from
// the results of the rounds before it. An empty result means the league is over. Next is a
// pure function of its arguments: the order of players does not matter, and the same
// arguments always give the same rounds. It fails on a bad Format or players (fewer than
// 2, duplicates, an empty id, a candidate who is not a player) and on played rounds that
// are not numbered 1, 2, ... or do not follow the format.
func Next(f Format, players []string, leagueSeed int64, played []Played) ([]Round, error) {
	if err := f.Schedulable(players); err != nil {
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
		if f.SPRT != nil {
			return sprtRounds(f, players, leagueSeed, played), nil
		}
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
	case Arena:
		return nextArena(f, players, leagueSeed, played)
	}
	// Validate rejects every other algorithm.
	return nil, fmt.Errorf("scheduling.algorithm: unknown algorithm %q", f.Algorithm)
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
