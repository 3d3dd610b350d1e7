package schedule

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// simulate plays pairs of games of a candidate elo stronger (a draw in drawRate of them)
// until s decides or maxGames are played; it returns the decision and the games.
func simulate(rng *rand.Rand, s SPRT, elo, drawRate float64, maxGames int) (string, int) {
	win := eloScore(elo) - drawRate/2
	lower, upper := s.Bounds()
	var penta [5]int
	for games := 2; games <= maxGames; games += 2 {
		points := 0
		for range 2 {
			switch x := rng.Float64(); {
			case x < win:
				points += 2
			case x < win+drawRate:
				points++
			}
		}
		penta[points]++
		// The test's own LLR, on counts kept here rather than the scores again.
		switch llr := s.llr(penta); {
		case llr >= upper:
			return AcceptH1, games
		case llr <= lower:
			return AcceptH0, games
		}
	}
	return "", maxGames
}

// The SPRT keeps its error rates: over 400 simulated tests (elo0 0, elo1 10, alpha = beta
// = 0.05, 40% draws), a candidate 0 Elo stronger is taken for H1 in about alpha of them,
// one 10 Elo stronger for H0 in about beta; one 60 Elo stronger is found quickly.
func TestSPRTErrorRates(t *testing.T) {
	s := SPRT{Elo0: 0, Elo1: 10, Alpha: 0.05, Beta: 0.05}
	rng := rand.New(rand.NewPCG(39, 1))
	const runs = 400
	count := func(elo float64) (h0, h1, games int) {
		for range runs {
			d, n := simulate(rng, s, elo, 0.4, 200000)
			switch d {
			case AcceptH0:
				h0++
			case AcceptH1:
				h1++
			}
			games += n
		}
		return h0, h1, games / runs
	}
	if h0, h1, games := count(0); float64(h1)/runs > 0.09 || h0+h1 != runs {
		t.Errorf("true elo 0: H1 accepted in %d of %d tests (H0 in %d, %d games on average), want about 5%%", h1, runs, h0, games)
	} else {
		t.Logf("true elo 0: H0 %d, H1 %d of %d, %d games on average", h0, h1, runs, games)
	}
	if h0, h1, games := count(10); float64(h0)/runs > 0.09 || h0+h1 != runs {
		t.Errorf("true elo 10: H0 accepted in %d of %d tests (H1 in %d, %d games on average), want about 5%%", h0, runs, h1, games)
	} else {
		t.Logf("true elo 10: H0 %d, H1 %d of %d, %d games on average", h0, h1, runs, games)
	}
	if _, h1, games := count(60); h1 < runs*99/100 || games > 2000 {
		t.Errorf("true elo 60: H1 in %d of %d tests after %d games on average, want nearly all and soon", h1, runs, games)
	}
}

// The state counts pairs of games. Wald's bounds of
// alpha = beta = 0.05 are ±ln 19; the figures of a known tally.
func TestSPRTState(t *testing.T) {
	s := SPRT{Elo0: 0, Elo1: 50, Alpha: 0.05, Beta: 0.05}
	st := s.Test([][2]float64{{1, 0.5}, {0, 0.5}, {1, 1}})
	if st.Pairs != 3 || st.Penta != [5]int{0, 1, 0, 1, 1} || st.WDL != [3]int{3, 2, 1} {
		t.Errorf("state %+v: want 3 pairs (1.5, 0.5, 2 points) and 3 wins, 2 draws, 1 loss", st)
	}
	if math.Abs(st.Upper-math.Log(19)) > 1e-12 || math.Abs(st.Lower+math.Log(19)) > 1e-12 {
		t.Errorf("bounds %v, %v, want ±ln 19", st.Lower, st.Upper)
	}
	// Mean 4/6 = 0.667 of the pairs' points: about 120 Elo, an LLR above 0 but no decision.
	if st.Decision != "" || st.LLR <= 0 || math.Abs(st.Elo-120.4) > 1 {
		t.Errorf("state %+v: want no decision yet, a positive LLR and about 120 Elo", st)
	}
	if st := s.Test(nil); st.Pairs != 0 || st.LLR != 0 || st.Decision != "" {
		t.Errorf("no games: %+v", st)
	}
}

// Under an SPRT the gauntlet comes a game pair at a time, the games those of the plain
// gauntlet (ids, seeds, first move), and ends once the test decides or at games_per_pair.
func TestSPRTSchedule(t *testing.T) {
	f := Default()
	f.Algorithm, f.Candidates, f.GamesPerPair = Gauntlet, []string{"new"}, 8
	plain, err := Next(f, []string{"new", "old"}, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.SPRT = &SPRT{Elo0: 0, Elo1: 50, Alpha: 0.05, Beta: 0.05}
	var played []Played
	play := func(r Round, candidate string) {
		res := Result{Outcome: map[string]string{}}
		for _, p := range r.Matches[0].Players {
			res.Outcome[p] = "draw"
			if candidate != "draw" {
				res.Outcome[p] = map[bool]string{true: "win", false: "loss"}[p == candidate]
			}
		}
		played = append(played, Played{Round: r, Results: map[string]Result{r.Matches[0].ID: res}})
	}
	next, err := Next(f, []string{"new", "old"}, 5, nil)
	if err != nil || len(next) != 2 || !reflect.DeepEqual(next, plain[:2]) {
		t.Fatalf("first rounds %+v (%v), want the plain gauntlet's first two", next, err)
	}
	play(next[0], "draw")
	play(next[1], "draw")
	if next, _ = Next(f, []string{"new", "old"}, 5, played); len(next) != 2 || !reflect.DeepEqual(next, plain[2:4]) {
		t.Fatalf("after a drawn pair %+v, want the next pair of the plain gauntlet", next)
	}
	// Won pairs decide for H1 before the bound: nothing more is scheduled.
	f.GamesPerPair = 100
	for len(next) > 0 {
		for _, r := range next {
			play(r, "new")
		}
		next, _ = Next(f, []string{"new", "old"}, 5, played)
	}
	if st, _ := SPRTOf(f, played); st.Decision != AcceptH1 || len(played) >= 100 {
		t.Fatalf("after a drawn pair and won ones: %+v after %d games, want H1 before the bound", st, len(played))
	} else {
		t.Logf("H1 after %d games: %+v", len(played), st)
	}
	f.GamesPerPair = 8
	// Undecided at the bound: games_per_pair ends it.
	f.SPRT.Elo1 = 5
	played = nil
	for {
		next, _ := Next(f, []string{"new", "old"}, 5, played)
		if len(next) == 0 {
			break
		}
		for _, r := range next {
			play(r, "draw")
		}
	}
	if len(played) > 8 {
		t.Errorf("%d games, want at most games_per_pair 8", len(played))
	}
}

// An SPRT's configuration is checked where league.yaml spells it.
func TestSPRTValidate(t *testing.T) {
	f := Default()
	f.Algorithm, f.Candidates, f.GamesPerPair = Gauntlet, []string{"a", "b"}, 7
	f.SPRT = &SPRT{Elo0: 5, Elo1: 5, Alpha: 0, Beta: 0.5}
	got := f.Validate().Error()
	for _, want := range []string{
		"scheduling.sprt: an SPRT is for a gauntlet of one candidate",
		"scheduling.games_per_pair: under an SPRT games come in pairs: must be even, got 7",
		"scheduling.sprt.elo1: must be more than elo0",
		"scheduling.sprt.alpha: must be more than 0 and less than 0.5, got 0",
		"scheduling.sprt.beta: must be more than 0 and less than 0.5, got 0.5",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Validate() = %s\nlacks %q", got, want)
		}
	}
	f.Candidates, f.GamesPerPair, f.SPRT = []string{"a"}, 1000, &SPRT{Elo0: 0, Elo1: 5, Alpha: 0.05, Beta: 0.05}
	if err := f.Validate(); err != nil {
		t.Errorf("a valid SPRT of 1000 games: %v", err)
	}
	if err := f.Schedulable([]string{"a", "b", "c"}); err == nil || !strings.Contains(err.Error(), "2 players, got 3") {
		t.Errorf("three players: %v", err)
	}
}

// An abandoned game (a finished round without its result) leaves its pair out, and the
// test goes on with the next pairs instead of freezing.
func TestSPRTGoesOnPastAnAbandonedGame(t *testing.T) {
	f := Default()
	f.Algorithm, f.Candidates, f.GamesPerPair = Gauntlet, []string{"new"}, 400
	f.SPRT = &SPRT{Elo0: 0, Elo1: 50, Alpha: 0.05, Beta: 0.05}
	var played []Played
	for {
		next, err := Next(f, []string{"new", "old"}, 5, played)
		if err != nil {
			t.Fatal(err)
		}
		if len(next) == 0 {
			break
		}
		for _, r := range next {
			m := r.Matches[0]
			p := Played{Round: r, Results: map[string]Result{}}
			if r.Number != 3 { // round 3 is abandoned
				loser := m.Players[0]
				if loser == "new" {
					loser = m.Players[1]
				}
				p.Results[m.ID] = Result{Outcome: map[string]string{"new": "win", loser: "loss"}}
			}
			played = append(played, p)
		}
	}
	st, _ := SPRTOf(f, played)
	if st.Decision != AcceptH1 || st.Pairs*2 != len(played)-2 || len(played) >= 400 {
		t.Errorf("after %d games with game 3 abandoned: %+v; want H1 soon, the abandoned game's pair left out", len(played), st)
	}
}
