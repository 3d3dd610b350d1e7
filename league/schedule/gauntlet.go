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
// Games are packed into rounds greedily, round after round: the pairs with games left are
// taken busiest first (the larger, then the smaller number of games its two players still
// have to play, then list order) whenever neither player already plays in the round. Each
// round's matches are in list order. Nobody has a bye.

type gauntletPair struct {
	players [2]string // the candidate first
	left    int       // games still to schedule
	played  int       // games scheduled so far
	index   int       // position in the pair list
}

func gauntletRounds(f Format, players []string, leagueSeed int64) []Round {
	others := slices.Clone(players)
	slices.Sort(others)
	var pairs []*gauntletPair
	for i, c := range f.Candidates {
		for _, o := range others {
			if o == c || slices.Contains(f.Candidates[:i], o) {
				continue
			}
			pairs = append(pairs, &gauntletPair{players: [2]string{c, o}, left: f.GamesPerPair, index: len(pairs)})
		}
	}
	load := make(map[string]int) // games left per player
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
		slices.SortStableFunc(open, func(x, y *gauntletPair) int {
			lx0, lx1 := load[x.players[0]], load[x.players[1]]
			ly0, ly1 := load[y.players[0]], load[y.players[1]]
			return cmp.Or(
				cmp.Compare(max(ly0, ly1), max(lx0, lx1)),
				cmp.Compare(min(ly0, ly1), min(lx0, lx1)),
				cmp.Compare(x.index, y.index),
			)
		})
		busy := make(map[string]bool)
		var chosen []*gauntletPair
		for _, p := range open {
			if busy[p.players[0]] || busy[p.players[1]] {
				continue
			}
			busy[p.players[0]], busy[p.players[1]] = true, true
			chosen = append(chosen, p)
		}
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
