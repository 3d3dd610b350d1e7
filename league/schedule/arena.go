package schedule

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/agentleague/agentleague/league/ratings"
)

// Arena pairs one round at a time where the rating order is least certain, and stops
// once it is settled or the game budget is spent (see arena.pairs).
const Arena = "arena"

// arenaCertain is the likelihood of superiority (ratings.Rating.LOSNext) from which the
// order of two neighbours is settled: their difference's 95% interval excludes zero.
const arenaCertain = 0.975

// maxArenaGames bounds scheduling.arena.max_games.
const maxArenaGames = 1000000

// Why an arena stopped: the values of ArenaState.Stopped.
const (
	// ArenaSettled: every player's likelihood of superiority over the next one in the
	// rating order is at least 97.5%, so the order is settled.
	ArenaSettled = "settled"
	// ArenaBudget: the arena paired max_games games.
	ArenaBudget = "budget"
	// ArenaDeserted: fewer than two players are left who play (see outOfArena).
	ArenaDeserted = "deserted"
)

// outOfArena is how many pairings in a row a player may end without a rated game (a
// forfeit, a no-show, an abandoned match) before the arena leaves it out: it is not paired
// again, and the order is settled without it. Rated it would sit at 1500 with nothing to
// place it, its neighbours' order never certain.
const outOfArena = 2

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
	// Unsettled counts the neighbours in the rating order whose order is not yet certain.
	Unsettled int `json:"unsettled"`
	// Out lists the players left out: their last outOfArena pairings ended without a
	// rated game.
	Out []string `json:"out,omitempty"`
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
	// active are the players not left out, in the league's order.
	active []string
	// rows are the ratings of the active players from their games among themselves, best
	// first; nil before the first such game.
	rows []ratings.Rating
	// balance is a player's first moves minus its second moves in played games.
	balance map[string]int
	// lastRound holds the pairings of the last round, by meetingKey.
	lastRound map[[2]string]bool
}

// newArena rates played and decides whether the arena is over.
func newArena(f Format, players []string, leagueSeed int64, played []Played) (*arena, error) {
	in := make(map[string]bool, len(players))
	for _, p := range players {
		in[p] = true
	}
	a := &arena{state: ArenaState{Budget: f.Arena.MaxGames}, balance: map[string]int{}, lastRound: map[[2]string]bool{}}
	var games []ratings.Game
	unrated := map[string]int{} // pairings in a row without a rated game
	for k, p := range played {
		for _, m := range p.Round.Matches {
			if !in[m.Players[0]] || !in[m.Players[1]] || m.Players[0] == m.Players[1] {
				return nil, fmt.Errorf("round %d: match %s pairs %q and %q, not two players of the league", p.Round.Number, m.ID, m.Players[0], m.Players[1])
			}
			a.state.Games++
			if k == len(played)-1 {
				a.lastRound[meetingKey(m.Players[0], m.Players[1])] = true
			}
			res, played := p.Results[m.ID]
			if played {
				a.balance[m.Players[0]]++
				a.balance[m.Players[1]]--
			}
			// A forfeit says nothing of strength: the arena rates what the ratings do.
			g, rated := ratings.FromOutcome(res.Outcome, res.Ending)
			for _, id := range m.Players {
				if played && rated {
					unrated[id] = 0
				} else {
					unrated[id]++
				}
			}
			if played && rated {
				games = append(games, g)
			}
		}
	}
	out := map[string]bool{}
	for _, id := range players {
		if unrated[id] >= outOfArena {
			out[id] = true
			a.state.Out = append(a.state.Out, id)
		} else {
			a.active = append(a.active, id)
		}
	}
	games = slices.DeleteFunc(games, func(g ratings.Game) bool { return out[g.A] || out[g.B] })
	if len(games) > 0 {
		rows, err := ratings.Compute(a.active, games, ratings.Options{Samples: f.RatingSamples, Seed: uint64(leagueSeed), LOS: true})
		if err != nil {
			return nil, err
		}
		a.rows = rows
		for i := 0; i+1 < len(rows); i++ {
			if rows[i].LOSNext < arenaCertain {
				a.state.Unsettled++
			}
		}
	}
	switch s := &a.state; {
	case len(a.active) < 2:
		s.Stopped = ArenaDeserted
		s.Reason = fmt.Sprintf("deserted after %d games: %d players left out, %d left to play", s.Games, len(s.Out), len(a.active))
	case a.rows != nil && s.Unsettled == 0:
		s.Stopped = ArenaSettled
		s.Reason = fmt.Sprintf("settled after %d games: every player's place in the order is certain", s.Games)
	case s.Games >= s.Budget:
		s.Stopped = ArenaBudget
		s.Reason = fmt.Sprintf("budget spent: %d of %d games, %d neighbours in the rating order still uncertain", s.Games, s.Budget, s.Unsettled)
	case a.rows == nil:
		s.Reason = fmt.Sprintf("%d of %d games, no rated game yet", s.Games, s.Budget)
	default:
		s.Reason = fmt.Sprintf("%d of %d games, %d neighbours in the rating order still uncertain", s.Games, s.Budget, s.Unsettled)
	}
	if len(a.state.Out) > 0 && len(a.active) >= 2 {
		a.state.Reason += "; left out, not playing: " + strings.Join(a.state.Out, ", ")
	}
	return a, nil
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
	pairs := a.pairs(a.active, leagueSeed, number)
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
// After it: only neighbours in the rating order whose order is uncertain play (LOSNext
// below arenaCertain): first the pairs that did not meet in the last round, then those
// that did, each group the least certain first (the lowest LOSNext, then the higher in
// the order); a pair one of whose players is already paired this round waits. A game
// between neighbours tells most about the order, one between players whose order is
// certain tells nothing the ranking needs, so everyone else sits out. A pair that met in
// the last round goes after the others so that a near-tie, never certain, does not keep
// the pairs beside it from playing. The pairing is O(players log players); the ratings
// it starts from cost players cubed (ratings.Options.LOS).
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
	var open []int // k: rows k and k+1 are uncertain
	for k := 0; k+1 < len(rows); k++ {
		if rows[k].LOSNext < arenaCertain {
			open = append(open, k)
		}
	}
	metLast := func(k int) bool { return a.lastRound[meetingKey(rows[k].PlayerID, rows[k+1].PlayerID)] }
	slices.SortStableFunc(open, func(i, j int) int {
		return cmp.Or(cmpBool(metLast(i), metLast(j)), cmp.Compare(rows[i].LOSNext, rows[j].LOSNext))
	})
	taken := make([]bool, len(rows))
	var out [][2]string
	for _, k := range open {
		if taken[k] || taken[k+1] {
			continue
		}
		taken[k], taken[k+1] = true, true
		out = append(out, [2]string{rows[k].PlayerID, rows[k+1].PlayerID})
	}
	return out
}

// cmpBool orders false before true.
func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case x:
		return 1
	}
	return -1
}

func meetingKey(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
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
