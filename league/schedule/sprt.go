package schedule

import (
	"math"
	"slices"
)

// SPRT is scheduling.sprt: a sequential probability ratio test of a gauntlet's one
// candidate against its one opponent, as fishtest and fastchess run it. H0 says the
// candidate is Elo0 stronger, H1 that it is Elo1 stronger (logistic Elo); the test stops
// the gauntlet as soon as it accepts one, with error rates Alpha (accepting H1 when H0
// holds) and Beta (the other way round); games_per_pair bounds it.
type SPRT struct {
	Elo0  float64 `json:"elo0" yaml:"elo0"`
	Elo1  float64 `json:"elo1" yaml:"elo1"`
	Alpha float64 `json:"alpha" yaml:"alpha"`
	Beta  float64 `json:"beta" yaml:"beta"`
}

// Decisions of an SPRT.
const (
	// AcceptH0: the candidate is not Elo1 stronger (it is Elo0 at most).
	AcceptH0 = "H0"
	// AcceptH1: the candidate is Elo1 stronger.
	AcceptH1 = "H1"
)

// SPRTState is an SPRT after the games so far. Games are counted in pairs, the two games
// of a pairing in a row with the first move swapped (the gauntlet's order): Penta counts
// the complete pairs by the candidate's points in them (0, 0.5, 1, 1.5, 2), the
// pentanomial model of fishtest. A pair not yet complete waits; a pair with an abandoned
// game (no result) is left out, and the test goes on with the next.
type SPRTState struct {
	LLR      float64 `json:"llr"`
	Lower    float64 `json:"lower"`
	Upper    float64 `json:"upper"`
	Decision string  `json:"decision,omitempty"`
	Pairs    int     `json:"pairs"`
	Penta    [5]int  `json:"pentanomial"`
	// WDL are the candidate's wins, draws and losses in those pairs.
	WDL [3]int `json:"wdl"`
	// Elo is the candidate's logistic Elo over its opponent, as the pairs estimate it.
	Elo float64 `json:"elo"`
}

// Bounds are the test's stopping bounds on the LLR: accept H0 at or below lower, H1 at
// or above upper (Wald).
func (s SPRT) Bounds() (lower, upper float64) {
	return math.Log(s.Beta / (1 - s.Alpha)), math.Log((1 - s.Beta) / s.Alpha)
}

// Test is the state of s after the candidate scored pairs, each the scores of its two
// games (1 a win, 0.5 a draw, 0 a loss). The LLR is fishtest's (Van den Bergh's): the
// pairs' frequencies, each of the five categories counted at least 0.001, against the
// most likely distributions whose mean score is s0 and s1, the scores Elo0 and Elo1 give:
//
//	LLR = sum_j n_j (log(1 + θ0 (x_j - s0)) - log(1 + θ1 (x_j - s1)))
//
// with x_j = j/4 a pair's mean score, n_j its count, and θ the root of
// sum_j n_j (x_j - s) / (1 + θ (x_j - s)) = 0 for s = s0 and s = s1.
func (s SPRT) Test(pairs [][2]float64) SPRTState {
	var st SPRTState
	st.Lower, st.Upper = s.Bounds()
	for _, pair := range pairs {
		st.Penta[int(math.Round((pair[0]+pair[1])*2))]++
		st.Pairs++
		for _, sc := range pair {
			switch sc {
			case 1:
				st.WDL[0]++
			case 0.5:
				st.WDL[1]++
			default:
				st.WDL[2]++
			}
		}
	}
	st.LLR = s.llr(st.Penta)
	st.Elo = eloOfPairs(st.Penta)
	switch {
	case st.Pairs == 0:
	case st.LLR >= st.Upper:
		st.Decision = AcceptH1
	case st.LLR <= st.Lower:
		st.Decision = AcceptH0
	}
	return st
}

// llr is the LLR of the pairs counted in penta; 0 without pairs.
func (s SPRT) llr(penta [5]int) float64 {
	if penta == [5]int{} {
		return 0
	}
	var n [5]float64
	for j, c := range penta {
		n[j] = max(float64(c), 1e-3)
	}
	s0, s1 := eloScore(s.Elo0), eloScore(s.Elo1)
	θ0, θ1 := mleTheta(n, s0), mleTheta(n, s1)
	llr := 0.0
	for j := range n {
		x := float64(j) / 4
		llr += n[j] * (math.Log1p(θ0*(x-s0)) - math.Log1p(θ1*(x-s1)))
	}
	return llr
}

// eloOfPairs is the logistic Elo of the mean score of the pairs counted in penta.
func eloOfPairs(penta [5]int) float64 {
	total, points := 0, 0
	for j, c := range penta {
		total += c
		points += j * c
	}
	if total == 0 {
		return 0
	}
	return scoreElo(float64(points) / float64(4*total))
}

// mleTheta is the root θ of sum_j n_j (x_j - s) / (1 + θ (x_j - s)) = 0 over the θ that keep
// every 1 + θ (x_j - s) positive, found by bisection: the sum falls as θ grows. s lies
// strictly between 0 and 1, so the interval is bounded on both sides.
func mleTheta(n [5]float64, s float64) float64 {
	lo, hi := -1/(1-s), 1/s // 1 + θ(1 - s) > 0 and 1 - θ s > 0
	f := func(θ float64) float64 {
		sum := 0.0
		for j := range n {
			d := float64(j)/4 - s
			sum += n[j] * d / (1 + θ*d)
		}
		return sum
	}
	for range 100 { // far past float64's precision
		mid := (lo + hi) / 2
		if f(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// eloScore is the expected score of a player elo stronger (logistic).
func eloScore(elo float64) float64 { return 1 / (1 + math.Pow(10, -elo/400)) }

// scoreElo is the logistic Elo of an expected score, clamped away from 0 and 1.
func scoreElo(score float64) float64 {
	score = min(max(score, 1e-6), 1-1e-6)
	return -400 * math.Log10(1/score-1)
}

// sprtPairs are the candidate's complete game pairs, in schedule order: games 2k-1 and 2k
// of the gauntlet form pair k, which counts once both have a result. A pair with a game
// still to play waits; one with an abandoned game never completes and is left out.
func sprtPairs(candidate string, played []Played) [][2]float64 {
	var out [][2]float64
	var pair [2]float64
	complete, n := true, 0
	for _, p := range played {
		for _, m := range p.Round.Matches {
			if !slices.Contains(m.Players[:], candidate) {
				continue
			}
			r, ok := p.Results[m.ID]
			complete = complete && ok
			pair[n%2] = map[string]float64{"win": 1, "draw": 0.5}[r.Outcome[candidate]]
			if n++; n%2 == 0 {
				if complete {
					out = append(out, pair)
				}
				complete = true
			}
		}
	}
	return out
}

// SPRTOf is the state of f's SPRT after played; false when f has none.
func SPRTOf(f Format, played []Played) (SPRTState, bool) {
	if f.SPRT == nil || len(f.Candidates) != 1 {
		return SPRTState{}, false
	}
	return f.SPRT.Test(sprtPairs(f.Candidates[0], played)), true
}

// sprtRounds is the gauntlet of one candidate and one opponent under an SPRT, a game pair
// at a time: the next two rounds, or none once the test decided or games_per_pair are
// played. Round r is the r-th game of the gauntlet, the candidate first in odd rounds.
func sprtRounds(f Format, players []string, leagueSeed int64, played []Played) []Round {
	if st, _ := SPRTOf(f, played); st.Decision != "" {
		return nil
	}
	c := f.Candidates[0]
	o := players[0]
	if o == c {
		o = players[1]
	}
	var rounds []Round
	for r := len(played) + 1; r <= f.GamesPerPair && len(rounds) < 2; r++ {
		board := [2]string{c, o}
		if r%2 == 0 {
			board = [2]string{o, c}
		}
		rounds = append(rounds, newRound(leagueSeed, r, [][2]string{board}))
	}
	return rounds
}
