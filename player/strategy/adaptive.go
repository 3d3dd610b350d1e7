package strategy

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"

	"github.com/agentleague/agentleague/game"
)

// throws in the game's canonical order.
var throws = [3]string{"rock", "paper", "scissors"}

// adaptive plays rock_paper_scissors by predicting the opponent's next throw from the history
// in the context: how often it played each throw overall, and what it played after its last
// throw (a first-order pattern, weighted more because it catches cycles). It plays the throw
// with the best expected score against that prediction, breaking ties at random so it is not
// itself predictable while it knows little.
type adaptive struct{ rng *rand.Rand }

func newAdaptive(_ game.Game, rng *rand.Rand) Strategy { return adaptive{rng: rng} }

// patternWeight is how much more an observed transition counts than a plain frequency.
const patternWeight = 2

// Move implements Strategy.
func (s adaptive) Move(req Request) (json.RawMessage, error) {
	ctx, err := game.ParseRockPaperScissorsContext(req.Context)
	if err != nil {
		return nil, err
	}
	var predicted [3]int
	opp := make([]int, len(ctx.History))
	for k, h := range ctx.History {
		opp[k] = throwIndex[h.Opponent]
		predicted[opp[k]]++
	}
	// Each time the opponent's last throw came before, count what followed it.
	for k, n := 1, len(opp); k < n; k++ {
		if opp[k-1] == opp[n-1] {
			predicted[opp[k]] += patternWeight
		}
	}
	// Throw i beats throw i-1 (mod 3): paper beats rock, scissors paper, rock scissors.
	var bestScore int
	var best []int
	for i := range throws {
		score := predicted[(i+2)%3] - predicted[(i+1)%3]
		switch {
		case len(best) == 0 || score > bestScore:
			bestScore, best = score, []int{i}
		case score == bestScore:
			best = append(best, i)
		}
	}
	pick := throws[best[s.rng.IntN(len(best))]]
	return json.RawMessage(`{"choice":` + strconv.Quote(pick) + `}`), nil
}

// throwIndex maps a throw to its index in throws; the context parser has checked the names.
var throwIndex = map[string]int{"rock": 0, "paper": 1, "scissors": 2}
