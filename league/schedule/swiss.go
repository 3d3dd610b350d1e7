package schedule

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
)

// Swiss pairing, Dutch style.
//
// Ranking: score (points from results plus ByePoints per bye) descending, then initial
// order (Seeding, then the league-seed shuffle).
//
// Repeat pairing: a pair that was paired in any earlier round, whoever moved first and
// whether or not the game was played (an abandoned match still counts as a meeting).
//
// First move: a player's colour history is the sequence of roles (first or second mover)
// in the games it actually played (abandoned matches and byes do not count). Let d be its
// firsts minus its seconds. Its preference is absolute for second when d >= 2, for first
// when d <= -2, else for the other role when its last two games had the same role; strong
// for the role it had less when d = ±1; mild for the role it did not have last when d = 0;
// none before its first game. Two players have an absolute conflict when both need the
// same role absolutely. A pairing grants both preferences when they differ, else the
// stronger one (between two absolute ones, the larger |d|), ties to the higher-ranked
// player. When neither has a preference, the higher-ranked moves first on odd boards and
// second on even ones.
//
// Bye (odd player count), recorded in Round.Bye: among the players with the fewest byes so
// far, the lowest-ranked whose removal lets the others be paired with the fewest repeat
// pairings, so nobody has a second bye before everybody has had one, and the bye never
// forces a repeat that another fewest-byes player's bye would avoid.
//
// Pairing: the top unpaired player picks an opponent in Dutch preference order — the
// bottom half of its score group (S2) in order, then the rest of the top half (S1) from
// the bottom up, then lower score groups from the top (a lone or left-over player floats
// down) — within each of those tiers preferring no absolute conflict, then fewer earlier
// meetings, then opponents whose preference differs from its own. It takes the first
// opponent that keeps the rest of the round completable at the level chosen for the round
// by an exact maximum-matching oracle (Edmonds, see matcher), so there is no search and no
// node budget:
//
//  1. if the players can be paired with no repeat pairing and no absolute conflict, the
//     round is such a pairing;
//  2. otherwise the round has the fewest repeat pairings possible, in particular none
//     whenever a repeat-free pairing exists.
//
// Hence these invariants hold in every round, whatever the history (tested against
// exhaustive search in the package tests):
//
//   - no-repeat: the number of repeat pairings is the minimum over all pairings of the
//     players other than the bye (zero whenever a repeat-free pairing exists);
//   - absolute preferences: a player with an absolute preference gets it unless its
//     opponent has the same absolute preference; and if a pairing with no repeat and no
//     absolute conflict exists, the round is one;
//   - balance: consequently, as long as every round so far was paired without a repeat
//     and without an absolute conflict, every player has |firsts − seconds| <= 2 and never
//     the same role in three consecutive played games.
//
// The last condition is not guaranteed in general (late in a long Swiss the repeat-free
// pairings may all contain an absolute conflict); the tests measure it instead.
//
// Boards are ordered by the higher score of the pair, then the sum of scores, then the
// better rank in the pair.

// colour roles.
const (
	first  = 1
	second = -1
)

// preference strengths.
const (
	prefNone = iota
	prefMild
	prefStrong
	prefAbsolute
)

type colourPref struct {
	want     int // first, second or 0
	strength int
}

type swissPlayer struct {
	id        string
	order     int // index in the initial order
	score     int
	byes      int
	roles     []int // first or second per game played, in order
	opponents []int // the order of the opponent in every pairing, repeats included, sorted
	rankPos   int   // position in this round's ranking
	pref      colourPref
	imbalance int // firsts - seconds
}

func nextSwiss(f Format, players []string, leagueSeed int64, played []Played) ([]Round, error) {
	if len(played) >= f.Rounds {
		return nil, nil
	}
	order := initialOrder(f.Seeding, players, leagueSeed)
	n := len(order)
	index := make(map[string]int, n)
	ps := make([]*swissPlayer, n)
	for i, id := range order {
		index[id] = i
		ps[i] = &swissPlayer{id: id, order: i}
	}
	for _, pr := range played {
		if i, ok := index[pr.Round.Bye]; ok {
			ps[i].byes++
			ps[i].score += f.ByeScore()
		}
		for _, m := range pr.Round.Matches {
			a, okA := index[m.Players[0]]
			b, okB := index[m.Players[1]]
			if !okA || !okB || a == b {
				continue
			}
			ps[a].opponents = append(ps[a].opponents, b)
			ps[b].opponents = append(ps[b].opponents, a)
			res, ok := pr.Results[m.ID]
			if !ok {
				continue // abandoned: not played
			}
			ps[a].score += res.Points[ps[a].id]
			ps[b].score += res.Points[ps[b].id]
			ps[a].roles = append(ps[a].roles, first)
			ps[b].roles = append(ps[b].roles, second)
		}
	}
	for _, p := range ps {
		p.pref, p.imbalance = preferenceOf(p.roles)
		slices.Sort(p.opponents)
	}

	ranked := slices.Clone(ps)
	slices.SortFunc(ranked, func(a, b *swissPlayer) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	for i, p := range ranked {
		p.rankPos = i
	}
	met := func(a, b *swissPlayer) int {
		i, found := slices.BinarySearch(a.opponents, b.order)
		c := 0
		for found && i+c < len(a.opponents) && a.opponents[i+c] == b.order {
			c++
		}
		return c
	}

	bye := ""
	if n%2 == 1 {
		b := chooseBye(ranked, met)
		bye = b.id
		ranked = slices.DeleteFunc(ranked, func(p *swissPlayer) bool { return p == b })
	}

	pairs, err := pairSwiss(ranked, met)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(pairs, func(x, y [2]*swissPlayer) int {
		if c := cmp.Compare(max(y[0].score, y[1].score), max(x[0].score, x[1].score)); c != 0 {
			return c
		}
		if c := cmp.Compare(y[0].score+y[1].score, x[0].score+x[1].score); c != 0 {
			return c
		}
		return cmp.Compare(min(x[0].rankPos, x[1].rankPos), min(y[0].rankPos, y[1].rankPos))
	})
	boards := make([][2]string, len(pairs))
	for i, p := range pairs {
		hi, lo := p[0], p[1]
		if lo.rankPos < hi.rankPos {
			hi, lo = lo, hi
		}
		if hiMovesFirst(hi, lo, i+1) {
			boards[i] = [2]string{hi.id, lo.id}
		} else {
			boards[i] = [2]string{lo.id, hi.id}
		}
	}
	r := newRound(leagueSeed, len(played)+1, boards)
	r.Bye = bye
	return []Round{r}, nil
}

// preferenceOf derives a colour preference and the imbalance firsts - seconds from the
// roles of the games a player played.
func preferenceOf(roles []int) (colourPref, int) {
	d := 0
	for _, r := range roles {
		d += r
	}
	k := len(roles)
	switch {
	case k == 0:
		return colourPref{}, 0
	case d >= 2:
		return colourPref{second, prefAbsolute}, d
	case d <= -2:
		return colourPref{first, prefAbsolute}, d
	case k >= 2 && roles[k-1] == roles[k-2]:
		return colourPref{-roles[k-1], prefAbsolute}, d
	case d == 1:
		return colourPref{second, prefStrong}, d
	case d == -1:
		return colourPref{first, prefStrong}, d
	default:
		return colourPref{-roles[k-1], prefMild}, d
	}
}

// absoluteConflict reports whether a and b both need the same role absolutely, so one of
// them must be refused.
func absoluteConflict(a, b *swissPlayer) bool {
	return a.pref.strength == prefAbsolute && b.pref.strength == prefAbsolute && a.pref.want == b.pref.want
}

// colourClash reports whether a and b prefer the same role, however strongly.
func colourClash(a, b *swissPlayer) bool {
	return a.pref.want != 0 && a.pref.want == b.pref.want
}

// hiMovesFirst allocates the first move between the higher-ranked hi and lo on board.
func hiMovesFirst(hi, lo *swissPlayer, board int) bool {
	ph, pl := hi.pref, lo.pref
	switch {
	case ph.want == 0 && pl.want == 0:
		return board%2 == 1
	case ph.want == 0:
		return pl.want == second
	case pl.want == 0 || ph.want != pl.want:
		return ph.want == first
	}
	// Both want the same role: the stronger preference, then the larger imbalance
	// between absolute ones, then the higher-ranked player gets it.
	hiGets := true
	switch {
	case ph.strength != pl.strength:
		hiGets = ph.strength > pl.strength
	case ph.strength == prefAbsolute && abs(hi.imbalance) != abs(lo.imbalance):
		hiGets = abs(hi.imbalance) > abs(lo.imbalance)
	}
	if hiGets {
		return ph.want == first
	}
	return pl.want == second
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// chooseBye picks the bye among the ranked players (odd count), as described above.
func chooseBye(ranked []*swissPlayer, met func(a, b *swissPlayer) int) *swissPlayer {
	n := len(ranked)
	fewest := ranked[0].byes
	for _, p := range ranked {
		fewest = min(fewest, p.byes)
	}
	m := newMatcher(n, func(i, j int) bool { return met(ranked[i], ranked[j]) == 0 })
	var buf []int
	best, bestSize := -1, -1
	for i := n - 1; i >= 0; i-- {
		if ranked[i].byes != fewest {
			continue
		}
		s := m.snapshot(buf)
		buf = s.mate
		m.remove(i, i, m.size)
		size := m.size
		m.restore(s, i, i)
		if size > bestSize {
			best, bestSize = i, size
		}
		if size == (n-1)/2 {
			break
		}
	}
	return ranked[best]
}

// pairSwiss pairs the ranked players (even count) as described above.
func pairSwiss(ranked []*swissPlayer, met func(a, b *swissPlayer) int) ([][2]*swissPlayer, error) {
	n := len(ranked)
	// Players needing the same role absolutely cannot meet at the first level, so none can
	// be paired there when either role is needed by more than half of them.
	var absolute [2]int // remaining players needing to move first, second absolutely
	class := func(p *swissPlayer) int {
		switch {
		case p.pref.strength != prefAbsolute:
			return -1
		case p.pref.want == first:
			return 0
		}
		return 1
	}
	for _, p := range ranked {
		if c := class(p); c >= 0 {
			absolute[c]++
		}
	}
	allowedAt := func(strict bool) func(i, j int) bool {
		return func(i, j int) bool {
			return met(ranked[i], ranked[j]) == 0 && !(strict && absoluteConflict(ranked[i], ranked[j]))
		}
	}
	strict := 2*max(absolute[0], absolute[1]) <= n
	allowed := allowedAt(strict)
	m := newMatcher(n, allowed)
	if strict && m.size < n/2 {
		strict, allowed = false, allowedAt(false)
		m = newMatcher(n, allowed)
	}
	// overflow reports whether pairing p with q leaves more than half of the others needing
	// the same role absolutely, which rules out pairing them all at the first level.
	overflow := func(remaining []int, p, q int) bool {
		left := absolute
		for _, x := range [2]int{p, q} {
			if c := class(ranked[x]); c >= 0 {
				left[c]--
			}
		}
		rest := len(remaining) - 2
		return 2*left[0] > rest || 2*left[1] > rest
	}

	remaining := make([]int, n) // positions in ranked, in rank order
	local := make([]int, n)     // vertex of each remaining position in m
	for i := range remaining {
		remaining[i], local[i] = i, i
	}
	var pairs [][2]*swissPlayer
	var buf []int
	for len(remaining) > 0 {
		if r := len(remaining); r <= m.n/2 {
			// Renumber the matcher's vertices: its searches take time in its size.
			keep := make([]int, r)
			for i, pos := range remaining {
				keep[i], local[pos] = local[pos], i
			}
			sub := slices.Clone(remaining)
			m = m.restrict(keep, func(i, j int) bool { return allowed(sub[i], sub[j]) })
		}
		p := remaining[0]
		lp := local[p]
		target := m.size
		// When everybody left can be paired at the level, pairing p with q keeps that
		// only if the pair is allowed and leaves a perfect matching.
		perfect := 2*target == len(remaining)
		chosen := -1
		for q := range dutchChoices(ranked, remaining, met) {
			lq := local[q]
			if m.mate[lp] == lq {
				// What is left of the maximum matching is maximum for the others.
				m.remove(lp, lq, target-1)
				chosen = q
				break
			}
			gain := 0
			if m.edge(lp, lq) {
				gain = 1
			}
			if perfect && (gain == 0 || strict && overflow(remaining, p, q)) {
				continue
			}
			s := m.snapshot(buf)
			buf = s.mate
			// Without p and q at most target-gain pairs can be allowed ones.
			m.remove(lp, lq, target-gain)
			if gain+m.size == target {
				chosen = q
				break
			}
			m.restore(s, lp, lq)
		}
		if chosen < 0 {
			// Cannot happen: p's partner in the maximum matching, or, when p is exposed in
			// it, any other exposed player keeps the level.
			return nil, fmt.Errorf("swiss pairing found no opponent for %s", ranked[p].id)
		}
		pairs = append(pairs, [2]*swissPlayer{ranked[p], ranked[chosen]})
		for _, x := range [2]int{p, chosen} {
			if c := class(ranked[x]); c >= 0 {
				absolute[c]--
			}
		}
		remaining = remaining[1:]
		i, _ := slices.BinarySearch(remaining, chosen)
		remaining = slices.Delete(remaining, i, i+1)
	}
	return pairs, nil
}

// dutchChoices yields the possible opponents of the top remaining player, best first.
// remaining holds positions in ranked, in rank order. The first is nearly always taken,
// so it is found by a scan of its tier that stops early, and the others are sorted only
// when asked for.
func dutchChoices(ranked []*swissPlayer, remaining []int, met func(a, b *swissPlayer) int) iter.Seq[int] {
	p := ranked[remaining[0]]
	group := 1
	for group < len(remaining) && ranked[remaining[group]].score == p.score {
		group++
	}
	bool01 := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	// key orders the opponents within a tier, before their order in it.
	key := func(pos int) int {
		q := ranked[pos]
		return bool01(absoluteConflict(p, q))<<62 | met(p, q)<<1 | bool01(colourClash(p, q))
	}
	half := group / 2
	// The first tier: S2, or the next score group when p is alone in its own.
	firstTier := remaining[half:group]
	if group == 1 {
		end := 2
		for end < len(remaining) && ranked[remaining[end]].score == ranked[remaining[1]].score {
			end++
		}
		firstTier = remaining[1:end]
	}
	best, bestKey := -1, 0
	for _, q := range firstTier {
		if k := key(q); best < 0 || k < bestKey {
			best, bestKey = q, k
			if k == 0 {
				break
			}
		}
	}
	return func(yield func(int) bool) {
		if !yield(best) {
			return
		}
		type choice struct {
			pos  int
			tier int // 0 bottom half, 1 top half, 2+ lower score groups
			key  int
			rank int // order within the tier
		}
		choices := make([]choice, 0, len(remaining)-1)
		if group >= 2 {
			for k, q := range remaining[half:group] {
				choices = append(choices, choice{q, 0, key(q), k})
			}
			for k, q := range remaining[1:half] {
				choices = append(choices, choice{q, 1, key(q), half - k})
			}
		}
		tier, last := 1, p.score
		for k, q := range remaining[group:] {
			if s := ranked[q].score; s != last || tier == 1 {
				tier, last = tier+1, s
			}
			choices = append(choices, choice{q, tier, key(q), k})
		}
		slices.SortFunc(choices, func(x, y choice) int {
			return cmp.Or(cmp.Compare(x.tier, y.tier), cmp.Compare(x.key, y.key), cmp.Compare(x.rank, y.rank))
		})
		// choices[0] is best: the least tier, key and rank.
		for _, c := range choices[1:] {
			if !yield(c.pos) {
				return
			}
		}
	}
}
