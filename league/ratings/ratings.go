// Package ratings rates league players from stored game results, so that replaying the
// results reproduces the numbers exactly.
//
// Model. Bradley-Terry: player i beats player j with probability pi_i/(pi_i+pi_j). A draw
// counts as half a win for each side. Strengths are the maximum a posteriori estimate,
// found by iterating the likelihood equations to a tight tolerance.
//
// Prior. Every player gets one virtual win and one virtual loss against a virtual opponent
// of fixed strength 1. This is a logistic prior on each player's log-strength, centred on
// the virtual opponent with a standard deviation of about 315 Elo: weak next to a few
// dozen real games, but it keeps the rating of a player who won or lost everything finite.
// It is also the only link between groups of players that never met, so ratings across
// such groups compare little more than each group's results against the virtual opponent.
//
// Scale. A strength becomes 400*log10(pi) Elo, shifted so that the mean over the players
// with games is exactly 1500. A player without games has no evidence either way and sits
// at 1500, so the mean over all listed players is 1500 too.
//
// Intervals. The games are resampled with replacement (same count) Options.Samples times,
// each resample is refitted and re-anchored the same way, and a player's interval runs
// from the 2.5th to the 97.5th percentile of its resampled ratings, interpolated linearly
// between order statistics (numpy's default, Hyndman-Fan type 7). The point estimate need
// not lie between them; when it does not, the nearer end is moved onto it. A player without
// games gets an interval spanning everyone else's, from the lowest Low to the highest High.
//
// Likelihood of superiority (Options.LOS). Two players' intervals both move with the anchor
// (the mean rating), so their overlap overstates how unsure their order is. A row's LOSNext
// is the probability that it is stronger than the next row by the normal approximation of
// the posterior at the estimate, as BayesElo and Ordo give it: Phi(d / sd), where d is the
// two log-strengths' difference and sd^2 its variance in the inverse of the Hessian of the
// log-posterior (each game adds p(1-p) between its players, the prior 2q(1-q) to each, q a
// player's expected score against the virtual opponent). It is not taken from the bootstrap:
// resampling a pair whose games all ended alike (all draws, 3-0) never varies their score,
// and would call a 3-0 record certain.
//
// Rank ranges. Intervals that overlap do not make a player's neighbours equal (overlap is
// not transitive), so instead of groups each player gets the ranks its interval allows:
// the best is 1 plus the number of players whose interval lies wholly above its own, the
// worst is N minus the number whose interval lies wholly below.
//
// Reproducibility. The games are put in a canonical order before resampling and the
// players are indexed in id order, so the result depends only on the set of players, the
// multiset of games and Options, not on the order the caller lists them in or on which
// side a game is written from ({A, B, 1} is {B, A, 0}). Resample k
// draws from its own PCG stream derived from (Seed, k), so the worker pool's scheduling
// does not matter. Numbers are bit-identical on one architecture; the Go compiler may fuse
// multiply-adds on some architectures (arm64, ppc64, s390x), which can move the last bits.
// A Rater's refit starts from its last fit's strengths: it stops within the tolerance of
// the same fixed point but not on the same last bits, so only Compute's numbers (and a
// Rater's first fit) are reproduced exactly.
//
// Forfeits, byes and abandoned matches say nothing about playing strength; the caller
// leaves them out.
package ratings

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
)

// DefaultSamples is the number of bootstrap resamples when Options.Samples is zero.
const DefaultSamples = 1000

// anchor is the mean rating of the players with games.
const anchor = 1500

// Percentiles of the bootstrap distribution that bound the 95% interval.
const (
	lowQuantile  = 0.025
	highQuantile = 0.975
)

// Game is one played game: A's score against B is 1 (win), 0.5 (draw) or 0 (loss).
type Game struct {
	A, B  string
	Score float64
}

// Options tune Compute. The zero value takes the defaults: DefaultSamples resamples and
// seed 0, which is a seed like any other. Time grows as Samples times the number of
// games, memory as Samples times the number of players.
type Options struct {
	Samples int    // bootstrap resamples; 0 means DefaultSamples, negative is an error
	Seed    uint64 // seeds the bootstrap (math/rand/v2 PCG), so the same input gives the same numbers
	// LOS asks for each row's LOSNext: time grows as players cubed and memory as players
	// squared, which suits an arena's ranking, not a league of thousands.
	LOS bool
}

// Rating is one player's rating on the Elo scale.
type Rating struct {
	PlayerID string  `json:"player_id"`
	Rating   float64 `json:"rating"`    // point estimate; the mean over all listed players is 1500
	Low      float64 `json:"ci_low"`    // 2.5th percentile of the bootstrap, at most Rating
	High     float64 `json:"ci_high"`   // 97.5th percentile of the bootstrap, at least Rating
	RankLow  int     `json:"rank_low"`  // best rank its interval allows (1 = top)
	RankHigh int     `json:"rank_high"` // worst rank its interval allows
	Games    int     `json:"games"`     // games played, the virtual ones not counted
	// Provisional marks a rating of fewer games than the league asks for (MarkProvisional).
	Provisional bool `json:"provisional,omitempty"`
	// LOSNext is the likelihood of superiority over the next row, the one rated just below,
	// when Options.LOS asks for it (see the package comment); 0 on the last row and when
	// either of the two has no games.
	LOSNext float64 `json:"-"`
}

// MarkProvisional marks the rows of fewer than games games provisional, and returns them.
func MarkProvisional(rows []Rating, games int) []Rating {
	for i := range rows {
		rows[i].Provisional = rows[i].Games < games
	}
	return rows
}

// Compute rates players from games. Every listed player gets one row; a repeated id counts
// once. Rows are sorted by Rating descending, then PlayerID ascending. It returns an error
// for a game naming an unknown player, a player against itself, a score other than 0, 0.5
// or 1, or negative Options.Samples.
func Compute(players []string, games []Game, opt Options) ([]Rating, error) {
	samples := opt.Samples
	switch {
	case samples < 0:
		return nil, fmt.Errorf("negative bootstrap samples %d", samples)
	case samples == 0:
		samples = DefaultSamples
	}

	ids, played, d, err := prepare(players, games)
	if err != nil {
		return nil, err
	}
	rows := d.rows(ids)
	var pi []float64
	if len(played) > 0 {
		pi = make([]float64, len(ids))
		for i := range pi {
			pi[i] = 1
		}
		newFitter(d.g).fit(d.won, d.lost, pi)
		point := make([]float64, len(ids))
		d.anchor(pi, point)

		boot := d.bootstrap(pi, samples, opt.Seed)
		column := make([]float64, samples)
		for i := range rows {
			if d.games[i] == 0 {
				continue
			}
			for k := range samples {
				column[k] = boot[k*len(ids)+i]
			}
			slices.Sort(column)
			rows[i].Rating = point[i]
			rows[i].Low = math.Min(quantile(column, lowQuantile), point[i])
			rows[i].High = math.Max(quantile(column, highQuantile), point[i])
		}
	}
	unrated(rows)
	rankRanges(rows)
	order := byRating(rows)
	if opt.LOS && pi != nil {
		next, err := neighbourLOS(pi, played, d.games, order)
		if err != nil {
			return nil, err
		}
		for k, p := range next {
			rows[order[k]].LOSNext = p
		}
	}
	return pick(rows, order), nil
}

// Rater fits point ratings as results arrive, without intervals: each fit starts from
// the strengths the last one found, which after a few more games are nearly the solution
// (one more game in a Swiss of 10,000 players: 27 sweeps instead of 51). It converges
// to Compute's fixed point within the fit's tolerance, but not to the same last bits:
// where numbers are compared exactly (an export, a replay), only Compute's count. The
// zero value is ready; a Rater serves one goroutine. Point never changes the slices of
// an earlier fit, so a copy of a Rater keeps its state.
type Rater struct {
	ids []string  // players of the last fit, in id order
	pi  []float64 // their fitted strengths
}

// Point returns the point ratings of players from games, as Compute's rows but without
// intervals: Low, High, RankLow, RankHigh and LOSNext are zero. A Rater's first fit starts
// where Compute's does, so its ratings are Compute's exactly. Its errors are Compute's.
func (r *Rater) Point(players []string, games []Game) ([]Rating, error) {
	ids, played, d, err := prepare(players, games)
	if err != nil {
		return nil, err
	}
	rows := d.rows(ids)
	pi := make([]float64, len(ids))
	// Both id lists are sorted: a merge finds each player's last strength.
	k := 0
	for i, id := range ids {
		for k < len(r.ids) && r.ids[k] < id {
			k++
		}
		pi[i] = 1
		if k < len(r.ids) && r.ids[k] == id {
			pi[i] = r.pi[k]
		}
	}
	if len(played) > 0 {
		newFitter(d.g).fit(d.won, d.lost, pi)
		point := make([]float64, len(ids))
		d.anchor(pi, point)
		for i := range rows {
			rows[i].Rating = point[i]
		}
	} else {
		for i := range rows {
			rows[i].Rating = anchor
		}
	}
	r.ids, r.pi = ids, pi
	return pick(rows, byRating(rows)), nil
}

// prepare indexes the players in id order (a repeated id counts once) and validates and
// aggregates the games.
func prepare(players []string, games []Game) ([]string, []played, *data, error) {
	ids := slices.Clone(players)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	index := make(map[string]int32, len(ids))
	for i, id := range ids {
		index[id] = int32(i)
	}
	played, err := canonical(index, games)
	if err != nil {
		return nil, nil, nil, err
	}
	return ids, played, newData(len(ids), played), nil
}

// rows returns one row per player of ids, in id order, with its games counted.
func (d *data) rows(ids []string) []Rating {
	rows := make([]Rating, len(ids))
	for i, id := range ids {
		rows[i] = Rating{PlayerID: id, Games: d.games[i]}
	}
	return rows
}

// byRating returns the indexes of rows sorted by Rating descending, then PlayerID
// ascending. rows are in id order, as the fits are: the indexes link the two.
func byRating(rows []Rating) []int {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		if c := cmp.Compare(rows[j].Rating, rows[i].Rating); c != 0 {
			return c
		}
		return cmp.Compare(rows[i].PlayerID, rows[j].PlayerID)
	})
	return order
}

// pick returns the rows in order.
func pick(rows []Rating, order []int) []Rating {
	sorted := make([]Rating, len(rows))
	for k, i := range order {
		sorted[k] = rows[i]
	}
	return sorted
}

// played is one game in canonical form: a < b by index, s is a's score.
type played struct {
	a, b int32
	s    float64
}

// canonical validates games and returns them with the lower-indexed player first, sorted,
// so the bootstrap resamples the same list whatever order or orientation the caller used.
func canonical(index map[string]int32, games []Game) ([]played, error) {
	out := make([]played, 0, len(games))
	for k, g := range games {
		a, ok := index[g.A]
		if !ok {
			return nil, fmt.Errorf("game %d: unknown player %q", k, g.A)
		}
		b, ok := index[g.B]
		if !ok {
			return nil, fmt.Errorf("game %d: unknown player %q", k, g.B)
		}
		if a == b {
			return nil, fmt.Errorf("game %d: player %q against itself", k, g.A)
		}
		if g.Score != 0 && g.Score != 0.5 && g.Score != 1 {
			return nil, fmt.Errorf("game %d: score %v is not 0, 0.5 or 1", k, g.Score)
		}
		s := g.Score
		if a > b {
			a, b, s = b, a, 1-s
		}
		out = append(out, played{a, b, s})
	}
	slices.SortFunc(out, func(x, y played) int {
		if c := cmp.Compare(x.a, y.a); c != 0 {
			return c
		}
		if c := cmp.Compare(x.b, y.b); c != 0 {
			return c
		}
		return cmp.Compare(x.s, y.s)
	})
	return out, nil
}

// data is the games aggregated for fitting.
type data struct {
	g      *graph
	played []played
	slotA  []int32 // slotA[k] is game k's slot in a's list
	slotB  []int32 // and in b's list
	games  []int   // games per player
	won    []float64
	lost   []float64
}

// newData builds the adjacency lists of the pairs that met and the score totals of all the
// games. Totals are sums of halves, so they are exact whatever the order of addition.
func newData(n int, games []played) *data {
	d := &data{
		g:      &graph{start: make([]int32, n+1)},
		played: games,
		slotA:  make([]int32, len(games)),
		slotB:  make([]int32, len(games)),
		games:  make([]int, n),
	}
	// Games are sorted by pair, so each pair's games are consecutive.
	type pair struct{ a, b int32 }
	var pairs []pair
	for k, x := range games {
		d.games[x.a]++
		d.games[x.b]++
		if k == 0 || x.a != games[k-1].a || x.b != games[k-1].b {
			pairs = append(pairs, pair{x.a, x.b})
			d.g.start[x.a+1]++
			d.g.start[x.b+1]++
		}
	}
	for i := range n {
		d.g.start[i+1] += d.g.start[i]
	}
	d.g.nbr = make([]int32, d.g.start[n])
	next := slices.Clone(d.g.start[:n])
	slotA := make([]int32, len(pairs))
	slotB := make([]int32, len(pairs))
	for p, x := range pairs {
		slotA[p], slotB[p] = next[x.a], next[x.b]
		d.g.nbr[next[x.a]] = x.b
		d.g.nbr[next[x.b]] = x.a
		next[x.a]++
		next[x.b]++
	}
	p := -1
	for k, x := range games {
		if k == 0 || x.a != games[k-1].a || x.b != games[k-1].b {
			p++
		}
		d.slotA[k], d.slotB[k] = slotA[p], slotB[p]
	}
	d.won = make([]float64, len(d.g.nbr))
	d.lost = make([]float64, len(d.g.nbr))
	for k := range games {
		d.add(d.won, d.lost, k)
	}
	return d
}

// add counts game k into the score totals.
func (d *data) add(won, lost []float64, k int) {
	x := d.played[k]
	a, b := d.slotA[k], d.slotB[k]
	won[a] += x.s
	lost[a] += 1 - x.s
	won[b] += 1 - x.s
	lost[b] += x.s
}

// anchor converts strengths to Elo, shifted so the players with games average 1500.
// Players without games get 1500.
func (d *data) anchor(pi, out []float64) {
	var sum float64
	var n int
	for i, p := range pi {
		if d.games[i] > 0 {
			out[i] = 400 * math.Log10(p)
			sum += out[i]
			n++
		}
	}
	shift := anchor - sum/float64(n)
	for i := range out {
		if d.games[i] > 0 {
			out[i] += shift
		} else {
			out[i] = anchor
		}
	}
}

// bootstrap refits samples resamples of the games and returns their anchored ratings,
// resample k in out[k*n:(k+1)*n]. Each fit starts from the point estimate pi. Resample k
// depends only on (seed, k), so the number of workers does not change the result.
func (d *data) bootstrap(pi []float64, samples int, seed uint64) []float64 {
	n := len(pi)
	out := make([]float64, samples*n)
	var next atomic.Int64
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), samples)
	for range workers {
		wg.Go(func() {
			won := make([]float64, len(d.won))
			lost := make([]float64, len(d.lost))
			fitted := make([]float64, n)
			fr := newFitter(d.g)
			src := new(rand.PCG)
			for {
				k := int(next.Add(1) - 1)
				if k >= samples {
					return
				}
				src.Seed(seed, splitmix(uint64(k)))
				clear(won)
				clear(lost)
				for range d.played {
					d.add(won, lost, int(bounded(src, uint64(len(d.played)))))
				}
				copy(fitted, pi)
				fr.fit(won, lost, fitted)
				d.anchor(fitted, out[k*n:(k+1)*n])
			}
		})
	}
	wg.Wait()
	return out
}

// splitmix scrambles a resample index into a PCG stream seed (SplitMix64's finaliser), so
// neighbouring resamples do not start from neighbouring states.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// bounded returns a uniform integer in [0, n) by Lemire's method. It is written out rather
// than taken from rand.Rand so the stream of draws, and with it every interval, cannot
// change with the Go release.
func bounded(src *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(src.Uint64(), n)
		}
	}
	return hi
}

// quantile returns the q-quantile of sorted, interpolating linearly between order
// statistics: position q*(len-1), counted from 0.
func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	i := int(h)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}

// unrated gives every player without games 1500 and an interval spanning everyone else's,
// so its rank range is 1..N: nothing is known about it.
func unrated(rows []Rating) {
	low, high := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if r.Games > 0 {
			low, high = math.Min(low, r.Low), math.Max(high, r.High)
		}
	}
	if math.IsInf(low, 0) {
		low, high = anchor, anchor
	}
	for i := range rows {
		if rows[i].Games == 0 {
			rows[i].Rating, rows[i].Low, rows[i].High = anchor, low, high
		}
	}
}

// rankRanges sets each row's best and worst rank from the intervals. A row's own interval
// is never wholly above or below itself, so it need not be excluded from the counts.
func rankRanges(rows []Rating) {
	lows := make([]float64, len(rows))
	highs := make([]float64, len(rows))
	for i, r := range rows {
		lows[i], highs[i] = r.Low, r.High
	}
	slices.Sort(lows)
	slices.Sort(highs)
	for i, r := range rows {
		above := len(lows) - sort.Search(len(lows), func(j int) bool { return lows[j] > r.High })
		below := sort.Search(len(highs), func(j int) bool { return highs[j] >= r.Low })
		rows[i].RankLow = 1 + above
		rows[i].RankHigh = len(rows) - below
	}
}

// neighbourLOS is the likelihood of superiority of each player in order (indexes, best
// first) over the next, by the normal approximation (see the package comment); 0 for the
// last and beside a player without games.
func neighbourLOS(pi []float64, games []played, counts []int, order []int) ([]float64, error) {
	n := len(pi)
	h := mat.NewSymDense(n, nil)
	for i, p := range pi {
		q := p / (p + 1)
		h.SetSym(i, i, 2*q*(1-q))
	}
	for _, x := range games {
		a, b := int(x.a), int(x.b)
		p := pi[a] / (pi[a] + pi[b])
		w := p * (1 - p)
		h.SetSym(a, a, h.At(a, a)+w)
		h.SetSym(b, b, h.At(b, b)+w)
		h.SetSym(a, b, h.At(a, b)-w)
	}
	var chol mat.Cholesky
	if !chol.Factorize(h) {
		return nil, errors.New("the information matrix of the ratings is not positive definite")
	}
	out := make([]float64, len(order))
	e := mat.NewVecDense(n, nil)
	var x mat.VecDense
	for k := 0; k+1 < len(order); k++ {
		i, j := order[k], order[k+1]
		if counts[i] == 0 || counts[j] == 0 {
			continue
		}
		e.Zero()
		e.SetVec(i, 1)
		e.SetVec(j, -1)
		// A poorly conditioned solve (a player far from the rest) is still the answer.
		if err := chol.SolveVecTo(&x, e); err != nil && !errors.As(err, new(mat.Condition)) {
			return nil, fmt.Errorf("the variance of a rating difference: %w", err)
		}
		sd := math.Sqrt(mat.Dot(e, &x))
		out[k] = 0.5 * math.Erfc(-math.Log(pi[i]/pi[j])/sd/math.Sqrt2)
	}
	return out, nil
}
