package schedule

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/agentleague/agentleague/league/ratings"
)

// Arena pairs one round at a time where the rating order is least certain, and stops
// once it is settled or the game budget is spent (see arenaRound).
const Arena = "arena"

// maxArenaGames bounds scheduling.arena.max_games.
const maxArenaGames = 1000000

// Why an arena stopped: the values of ArenaState.Stopped.
const (
	// ArenaSettled: every two neighbours in the rating order have rank ranges that do not
	// overlap, so the order is settled.
	ArenaSettled = "settled"
	// ArenaBudget: the arena paired max_games games.
	ArenaBudget = "budget"
)

// ArenaRules is scheduling.arena, the arena's settings.
type ArenaRules struct {
	// MaxGames is the game budget: the arena pairs at most this many games. An abandoned
	// game spends its share of the budget as a played one does.
	MaxGames int `json:"max_games" yaml:"max_games"`
}

// ArenaState is an arena after the rounds so far.
type ArenaState struct {
	// Games are the games paired so far, played or abandoned.
	Games int `json:"games"`
	// Budget is scheduling.arena.max_games.
	Budget int `json:"budget"`
	// Unsettled counts the neighbours in the rating order whose rank ranges overlap.
	Unsettled int `json:"unsettled"`
	// Stopped is "" while the arena goes on, else ArenaSettled or ArenaBudget.
	Stopped string `json:"stopped,omitempty"`
	// Reason says in a sentence where the arena stands.
	Reason string `json:"reason"`
}

// validateArena adds the problems of scheduling.arena: missing for an arena, set for
// another algorithm, a budget out of bounds.
func (f Format) validateArena(v *validation) {
	switch {
	case f.Arena == nil && f.Algorithm == Arena:
		v.add("scheduling.arena", "an arena needs its game budget: set scheduling.arena.max_games")
	case f.Arena == nil:
	case f.Algorithm != Arena:
		v.add("scheduling.arena", "is for scheduling.algorithm %q, not %q", Arena, f.Algorithm)
		fallthrough
	default:
		v.between("scheduling.arena.max_games", f.Arena.MaxGames, 1, maxArenaGames)
	}
}

// ArenaOf is the state of f's arena after played; false when f is not an arena or
// played names players that are not among players.
func ArenaOf(f Format, players []string, leagueSeed int64, played []Played) (ArenaState, bool) {
	if f.Algorithm != Arena || f.Arena == nil {
		return ArenaState{}, false
	}
	a, err := newArena(f, players, leagueSeed, played)
	if err != nil {
		return ArenaState{}, false
	}
	return a.state, true
}

// arena is what the next round is paired from.
type arena struct {
	state ArenaState
	// rows are the ratings of every player from the games played, best first; nil before
	// the first rated game.
	rows []ratings.Rating
	// meetings counts the pairings of two players, abandoned ones included, by meetingKey.
	meetings map[[2]string]int
	// balance is a player's first moves minus its second moves in played games.
	balance map[string]int
}

// newArena rates played and decides whether the arena is over.
func newArena(f Format, players []string, leagueSeed int64, played []Played) (*arena, error) {
	in := make(map[string]bool, len(players))
	for _, p := range players {
		in[p] = true
	}
	a := &arena{state: ArenaState{Budget: f.Arena.MaxGames}, meetings: map[[2]string]int{}, balance: map[string]int{}}
	var games []ratings.Game
	for _, p := range played {
		for _, m := range p.Round.Matches {
			if !in[m.Players[0]] || !in[m.Players[1]] || m.Players[0] == m.Players[1] {
				return nil, fmt.Errorf("round %d: match %s pairs %q and %q, not two players of the league", p.Round.Number, m.ID, m.Players[0], m.Players[1])
			}
			a.state.Games++
			a.meetings[meetingKey(m.Players[0], m.Players[1])]++
			res, ok := p.Results[m.ID]
			if !ok {
				continue // abandoned: not played
			}
			a.balance[m.Players[0]]++
			a.balance[m.Players[1]]--
			// A result carries no termination here, so a forfeit counts as the win it
			// scored: the arena rates what the standings count.
			if g, ok := ratings.FromOutcome(res.Outcome, ""); ok && in[g.A] && in[g.B] {
				games = append(games, g)
			}
		}
	}
	if len(games) > 0 {
		rows, err := ratings.League(players, games, f.RatingSamples, leagueSeed)
		if err != nil {
			return nil, err
		}
		a.rows = rows
		for i := 0; i+1 < len(rows); i++ {
			if rows[i].RankHigh >= rows[i+1].RankLow {
				a.state.Unsettled++
			}
		}
	}
	switch s := &a.state; {
	case a.rows != nil && s.Unsettled == 0:
		s.Stopped = ArenaSettled
		s.Reason = fmt.Sprintf("settled after %d games: every player's rank is certain", s.Games)
	case s.Games >= s.Budget:
		s.Stopped = ArenaBudget
		s.Reason = fmt.Sprintf("budget spent: %d of %d games, %d neighbours in the rating order still overlap", s.Games, s.Budget, s.Unsettled)
	case a.rows == nil:
		s.Reason = fmt.Sprintf("%d of %d games, no rated game yet", s.Games, s.Budget)
	default:
		s.Reason = fmt.Sprintf("%d of %d games, %d neighbours in the rating order still overlap", s.Games, s.Budget, s.Unsettled)
	}
	return a, nil
}

func meetingKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

// nextArena is the arena's next round, or none once it stopped.
func nextArena(f Format, players []string, leagueSeed int64, played []Played) ([]Round, error) {
	a, err := newArena(f, players, leagueSeed, played)
	if err != nil {
		return nil, err
	}
	if a.state.Stopped != "" {
		return nil, nil
	}
	number := len(played) + 1
	pairs := a.pairs(players, leagueSeed, number)
	pairs = pairs[:min(len(pairs), a.state.Budget-a.state.Games)]
	for i, p := range pairs {
		pairs[i] = a.firstMover(leagueSeed, number, p)
	}
	return []Round{newRound(leagueSeed, number, pairs)}, nil
}

// pairs are the round's pairings, each player at most once.
//
// Before the first rated game: every player in an order drawn from the league seed and
// the round number, paired first with second, third with fourth, ...; an odd one out
// sits out.
//
// After it: the players take turns, the widest rank range first (the least certain
// place), then the fewest rated games, then the rating order. Each picks, among the
// players not yet paired this round, the opponent with the highest score
//
//	score = e (1 - e) / (1 + meetings)
//
// where e is its expected score against that opponent by their ratings (logistic) and
// meetings the times the two were paired before; a tie goes to the better-rated. With
// an odd count the last in turn sits out. It is O(players^2).
func (a *arena) pairs(players []string, leagueSeed int64, number int) [][2]string {
	if a.rows == nil {
		order := arenaShuffle(players, leagueSeed, number)
		var out [][2]string
		for i := 0; i+1 < len(order); i += 2 {
			out = append(out, [2]string{order[i], order[i+1]})
		}
		return out
	}
	rows := a.rows
	turn := make([]int, len(rows))
	for i := range turn {
		turn[i] = i
	}
	slices.SortStableFunc(turn, func(i, j int) int {
		if c := cmp.Compare(rows[j].RankHigh-rows[j].RankLow, rows[i].RankHigh-rows[i].RankLow); c != 0 {
			return c
		}
		return cmp.Compare(rows[i].Games, rows[j].Games)
	})
	taken := make([]bool, len(rows))
	var out [][2]string
	for _, i := range turn {
		if taken[i] {
			continue
		}
		best, bestScore := -1, 0.0
		for j := range rows {
			if taken[j] || j == i {
				continue
			}
			// A game tells most about two players when its result is least certain, and
			// pairs that met often are worth less: over the rounds each pair gets games in
			// proportion to what they tell.
			e := eloScore(rows[i].Rating - rows[j].Rating)
			score := e * (1 - e) / float64(1+a.meetings[meetingKey(rows[i].PlayerID, rows[j].PlayerID)])
			if best < 0 || score > bestScore {
				best, bestScore = j, score
			}
		}
		if best >= 0 {
			taken[i], taken[best] = true, true
			out = append(out, [2]string{rows[i].PlayerID, rows[best].PlayerID})
		}
	}
	return out
}

// firstMover orders a pairing: the player with fewer first moves than second moves
// (in played games) moves first; between equals, the one the league seed and the round
// number draw.
func (a *arena) firstMover(leagueSeed int64, number int, p [2]string) [2]string {
	x, y := a.balance[p[0]], a.balance[p[1]]
	if x > y || (x == y && arenaKey(leagueSeed, number, p[1]) < arenaKey(leagueSeed, number, p[0])) {
		return [2]string{p[1], p[0]}
	}
	return p
}

// arenaShuffle is players in the order of their arenaKey for the round.
func arenaShuffle(players []string, leagueSeed int64, number int) []string {
	order := slices.Clone(players)
	slices.SortFunc(order, func(x, y string) int {
		if c := cmp.Compare(arenaKey(leagueSeed, number, x), arenaKey(leagueSeed, number, y)); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	return order
}

// arenaKey is a draw of the league seed, the round number and a player's id.
func arenaKey(leagueSeed int64, number int, player string) string {
	var buf []byte
	buf = append(buf, "agentleague/arena/v1"...)
	buf = binary.BigEndian.AppendUint64(buf, uint64(leagueSeed))
	buf = binary.BigEndian.AppendUint64(buf, uint64(number))
	buf = append(buf, player...)
	sum := sha256.Sum256(buf)
	return string(sum[:])
}
