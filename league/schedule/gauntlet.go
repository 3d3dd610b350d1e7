package schedule

import (
	"cmp"
	"slices"
)

// Gauntlet.
//
// Every candidate meets every other player GamesPerPair times: each non-candidate, and each
// other candidate once per game count (not once from each side). Within a pair the first
// move alternates game by game, the candidate first in game 1 (between two candidates, the
// one earlier in Candidates). Pairs are listed candidate by candidate in Candidates order,
// opponents in sorted id order.
//
// Games are packed into rounds greedily, one round after another. A player's load is the
// number of games it still has to play; the busiest players bound the rounds left. Each
// round first takes the pairs with games left busiest first (the larger, then the smaller
// load of its two players, then the more games left in the pair, then list order) whenever
// neither player already plays in the round; then every busiest player still idle is
// given a game along an augmenting path (Edmonds), which keeps everybody already playing
// busy. Each round's matches are in list order. Nobody has a bye.

type gauntletPair struct {
	players [2]string // the candidate first
	left    int       // games still to schedule
	played  int       // games scheduled so far
	index   int       // position in the pair list
}

func gauntletRounds(f Format, players []string, leagueSeed int64) []Round {
	ids := slices.Clone(players)
	slices.Sort(ids)
	var pairs []*gauntletPair
	for i, c := range f.Candidates {
		for _, o := range ids {
			if o == c || slices.Contains(f.Candidates[:i], o) {
				continue
			}
			pairs = append(pairs, &gauntletPair{players: [2]string{c, o}, left: f.GamesPerPair, index: len(pairs)})
		}
	}
	load := make(map[string]int, len(ids))
	for _, p := range pairs {
		load[p.players[0]] += p.left
		load[p.players[1]] += p.left
	}

	var rounds []Round
	for {
		var open []*gauntletPair
		for _, p := range pairs {
			if p.left > 0 {
				open = append(open, p)
			}
		}
		if len(open) == 0 {
			return rounds
		}
		chosen := gauntletRound(ids, open, load)
		slices.SortFunc(chosen, func(x, y *gauntletPair) int { return cmp.Compare(x.index, y.index) })
		boards := make([][2]string, len(chosen))
		for i, p := range chosen {
			p.played++
			p.left--
			load[p.players[0]]--
			load[p.players[1]]--
			if p.played%2 == 1 {
				boards[i] = p.players
			} else {
				boards[i] = [2]string{p.players[1], p.players[0]}
			}
		}
		rounds = append(rounds, newRound(leagueSeed, len(rounds)+1, boards))
	}
}

// gauntletRound picks the pairs that play the next round among open (pairs with games
// left), as described above.
func gauntletRound(ids []string, open []*gauntletPair, load map[string]int) []*gauntletPair {
	vertex := make(map[string]int, len(ids))
	for i, id := range ids {
		vertex[id] = i
	}
	pairOf := make(map[[2]int]*gauntletPair, len(open))
	ends := func(p *gauntletPair) (int, int) {
		i, j := vertex[p.players[0]], vertex[p.players[1]]
		return min(i, j), max(i, j)
	}
	for _, p := range open {
		i, j := ends(p)
		pairOf[[2]int{i, j}] = p
	}
	m := &matcher{n: len(ids)}
	m.init(func(i, j int) bool { return pairOf[[2]int{i, j}] != nil })

	busiestFirst := slices.Clone(open)
	slices.SortStableFunc(busiestFirst, func(x, y *gauntletPair) int {
		lx0, lx1 := load[x.players[0]], load[x.players[1]]
		ly0, ly1 := load[y.players[0]], load[y.players[1]]
		return cmp.Or(
			cmp.Compare(max(ly0, ly1), max(lx0, lx1)),
			cmp.Compare(min(ly0, ly1), min(lx0, lx1)),
			cmp.Compare(y.left, x.left),
			cmp.Compare(x.index, y.index),
		)
	})
	for _, p := range busiestFirst {
		if i, j := ends(p); m.mate[i] < 0 && m.mate[j] < 0 {
			m.mate[i], m.mate[j] = j, i
			m.size++
		}
	}
	top := 0
	for _, id := range ids {
		top = max(top, load[id])
	}
	for v, id := range ids {
		if load[id] == top && m.mate[v] < 0 {
			m.augmentFrom(v)
		}
	}

	var chosen []*gauntletPair
	for v, w := range m.mate {
		if w > v {
			chosen = append(chosen, pairOf[[2]int{v, w}])
		}
	}
	return chosen
}
