package schedule

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/bits"
	"slices"
)

// Knockout.
//
// Seeds are the initial order (Seeding, then the league-seed shuffle): seed 1 is the best.
// The bracket has size = the smallest power of two >= the player count, with the standard
// placement (1 v size, and seeds 1 and 2 in different halves, 1-4 in different quarters,
// ...); the top size-N seeds meet nobody in the first stage and go through on a bye.
//
// A stage is played in legs: one league round holds one game of every undecided pairing of
// the stage. In leg k the better seed moves first when k is odd and second when k is even.
// A pairing is decided as soon as one player has more wins than the other could still
// reach within BestOf games (draws and abandoned games count for nobody but use up a leg).
// A pairing level after BestOf legs is decided by the tie rule. The next stage starts when
// every pairing of the stage is decided and pairs the winners in bracket order; the league
// ends when the final is decided.

// Stage is one stage of a knockout bracket, for display.
type Stage struct {
	// Name is "final", "semifinal", "quarterfinal" or "round of <2×pairings>".
	Name string `json:"name"`
	// Rounds are the league round numbers in which the stage's legs were played.
	Rounds []int `json:"rounds,omitempty"`
	// Pairings are in bracket order.
	Pairings []Pairing `json:"pairings"`
}

// Pairing is one pairing of a knockout stage.
type Pairing struct {
	// Seeds are the players' seeds, 0 for a bye or a player not known yet.
	Seeds [2]int `json:"seeds"`
	// Players are the player ids, "" for a bye or a player not known yet.
	Players [2]string `json:"players"`
	// Wins counts the games each player won.
	Wins [2]int `json:"wins"`
	// Draws counts drawn games; abandoned games are neither wins nor draws.
	Draws int `json:"draws"`
	// Legs counts the games scheduled so far, abandoned ones included.
	Legs int `json:"legs"`
	// Winner is the player who went through, "" while undecided.
	Winner string `json:"winner"`
	// Decided says how: "wins", "higher_seed", "coin_toss", "sudden_death" or "bye";
	// "" while undecided.
	Decided string `json:"decided"`
}

// How a knockout pairing was decided.
const (
	DecidedWins        = "wins"
	DecidedHigherSeed  = TieHigherSeed
	DecidedCoinToss    = TieCoinToss
	DecidedSuddenDeath = TieSuddenDeath
	DecidedBye         = "bye"
)

// Bracket describes the knockout bracket of f after played: every stage from the first to
// the final, the ones not reached yet with the players known so far. It fails like Next,
// and when f is not a knockout.
func Bracket(f Format, players []string, leagueSeed int64, played []Played) ([]Stage, error) {
	if err := f.Schedulable(players); err != nil {
		return nil, err
	}
	if f.Algorithm != Knockout {
		return nil, fmt.Errorf("scheduling.algorithm is %q, not %s", f.Algorithm, Knockout)
	}
	for i, p := range played {
		if p.Round.Number != i+1 {
			return nil, fmt.Errorf("played round %d is numbered %d", i+1, p.Round.Number)
		}
	}
	b, err := playKnockout(f, players, leagueSeed, played)
	if err != nil {
		return nil, err
	}
	return b.stages(), nil
}

// Champion is the winner of the final of stages as returned by Bracket, or "" while the
// final is undecided.
func Champion(stages []Stage) string {
	if len(stages) == 0 {
		return ""
	}
	final := stages[len(stages)-1]
	if len(final.Pairings) != 1 {
		return ""
	}
	return final.Pairings[0].Winner
}

// stageName names a stage by its number of pairings.
func stageName(pairings int) string {
	switch pairings {
	case 1:
		return "final"
	case 2:
		return "semifinal"
	case 4:
		return "quarterfinal"
	}
	return fmt.Sprintf("round of %d", 2*pairings)
}

// bracketPlacement returns the seed at each bracket position for a bracket of size (a
// power of two >= 2): position 2i meets 2i+1 in the first stage.
func bracketPlacement(size int) []int {
	order := []int{1, 2}
	for len(order) < size {
		next := make([]int, 0, 2*len(order))
		for _, s := range order {
			next = append(next, s, 2*len(order)+1-s)
		}
		order = next
	}
	return order
}

type knockout struct {
	f       Format
	seed    map[string]int
	stageNo int // index in played of the stage being played
	played  [][]Pairing
	rounds  [][]int
	size    int
}

// playKnockout replays the bracket through played.
func playKnockout(f Format, players []string, leagueSeed int64, played []Played) (*knockout, error) {
	order := initialOrder(f.Seeding, players, leagueSeed)
	n := len(order)
	size := 1 << bits.Len(uint(n-1))
	k := &knockout{f: f, seed: make(map[string]int, n), size: size}
	for i, id := range order {
		k.seed[id] = i + 1
	}
	place := bracketPlacement(size)
	firstStage := make([]Pairing, size/2)
	for i := range firstStage {
		p := &firstStage[i]
		for j := range 2 {
			if s := place[2*i+j]; s <= n {
				p.Seeds[j], p.Players[j] = s, order[s-1]
			}
		}
		if p.Players[1] == "" {
			p.Winner, p.Decided = p.Players[0], DecidedBye
		}
	}
	k.played = [][]Pairing{firstStage}
	k.rounds = [][]int{nil}

	for _, pr := range played {
		if k.over() {
			return nil, fmt.Errorf("played round %d comes after the knockout final was decided", pr.Round.Number)
		}
		stage := k.played[k.stageNo]
		seen := make([]bool, len(stage))
		for _, m := range pr.Round.Matches {
			i := slices.IndexFunc(stage, func(p Pairing) bool {
				return p.Winner == "" && (p.Players == m.Players || p.Players == [2]string{m.Players[1], m.Players[0]})
			})
			if i < 0 || seen[i] {
				return nil, fmt.Errorf("played round %d: match %s (%s v %s) is not an undecided pairing of the %s",
					pr.Round.Number, m.ID, m.Players[0], m.Players[1], stageName(len(stage)))
			}
			seen[i] = true
			p := &stage[i]
			p.Legs++
			res, ok := pr.Results[m.ID]
			if !ok {
				continue // abandoned: a leg nobody played
			}
			w0 := res.Outcome[p.Players[0]] == "win"
			w1 := res.Outcome[p.Players[1]] == "win"
			switch {
			case w0 && !w1:
				p.Wins[0]++
			case w1 && !w0:
				p.Wins[1]++
			default:
				p.Draws++
			}
		}
		for i := range stage {
			if stage[i].Winner == "" && !seen[i] {
				return nil, fmt.Errorf("played round %d misses the pairing %s v %s of the %s",
					pr.Round.Number, stage[i].Players[0], stage[i].Players[1], stageName(len(stage)))
			}
		}
		k.rounds[k.stageNo] = append(k.rounds[k.stageNo], pr.Round.Number)
		for i := range stage {
			if stage[i].Winner == "" {
				k.decide(leagueSeed, &stage[i])
			}
		}
		k.advance()
	}
	return k, nil
}

// over reports whether the final is decided.
func (k *knockout) over() bool {
	last := k.played[len(k.played)-1]
	return len(last) == 1 && last[0].Winner != ""
}

// advance starts the next stage when the current one is decided.
func (k *knockout) advance() {
	stage := k.played[k.stageNo]
	if len(stage) == 1 {
		return
	}
	for _, p := range stage {
		if p.Winner == "" {
			return
		}
	}
	next := make([]Pairing, len(stage)/2)
	for i := range next {
		for j := range 2 {
			w := stage[2*i+j].Winner
			next[i].Players[j], next[i].Seeds[j] = w, k.seed[w]
		}
	}
	k.played = append(k.played, next)
	k.rounds = append(k.rounds, nil)
	k.stageNo++
}

// better is the index (0 or 1) of the better seed of p.
func better(p *Pairing) int {
	if p.Seeds[1] < p.Seeds[0] {
		return 1
	}
	return 0
}

// decide settles p if its games so far allow.
func (k *knockout) decide(leagueSeed int64, p *Pairing) {
	bestOf := k.f.BestOf
	settle := func(i int, how string) { p.Winner, p.Decided = p.Players[i], how }
	if p.Legs <= bestOf {
		rest := bestOf - p.Legs
		switch {
		case p.Wins[0] > p.Wins[1]+rest:
			settle(0, DecidedWins)
			return
		case p.Wins[1] > p.Wins[0]+rest:
			settle(1, DecidedWins)
			return
		case p.Legs < bestOf:
			return
		}
		// Level after BestOf legs.
		switch k.f.TieRule {
		case TieHigherSeed:
			settle(better(p), DecidedHigherSeed)
		case TieCoinToss:
			settle(coinToss(leagueSeed, p), DecidedCoinToss)
		}
		return
	}
	// Sudden death: the first extra game won decides; after BestOf extra games, the seed.
	switch {
	case p.Wins[0] > p.Wins[1]:
		settle(0, DecidedSuddenDeath)
	case p.Wins[1] > p.Wins[0]:
		settle(1, DecidedSuddenDeath)
	case p.Legs >= 2*bestOf:
		settle(better(p), DecidedHigherSeed)
	}
}

// coinToss returns the index of the player who wins the toss for p.
func coinToss(leagueSeed int64, p *Pairing) int {
	b := better(p)
	canonical := fmt.Sprintf("agentleague/knockout/coin_toss/v1 league_seed=%d players=%q,%q",
		leagueSeed, p.Players[b], p.Players[1-b])
	if sum := sha256.Sum256([]byte(canonical)); sum[0]&1 == 0 {
		return b
	}
	return 1 - b
}

// next returns the next round: one leg of every undecided pairing of the current stage,
// or nothing when the final is decided.
func (k *knockout) next(leagueSeed int64, number int) ([]Round, error) {
	if k.over() {
		return nil, nil
	}
	var boards [][2]string
	for _, p := range k.played[k.stageNo] {
		if p.Winner != "" {
			continue
		}
		b := better(&p)
		if leg := p.Legs + 1; leg%2 == 1 {
			boards = append(boards, [2]string{p.Players[b], p.Players[1-b]})
		} else {
			boards = append(boards, [2]string{p.Players[1-b], p.Players[b]})
		}
	}
	if len(boards) == 0 {
		// Cannot happen: advance moves on from a stage as soon as it is decided.
		return nil, errors.New("knockout stage with nothing to play")
	}
	return []Round{newRound(leagueSeed, number, boards)}, nil
}

// stages returns every stage of the bracket, the ones not reached yet filled in as far as
// their players are known.
func (k *knockout) stages() []Stage {
	var out []Stage
	prev := []Pairing(nil)
	for count := k.size / 2; count >= 1; count /= 2 {
		no := len(out)
		var ps []Pairing
		var rounds []int
		if no < len(k.played) {
			ps = slices.Clone(k.played[no])
			rounds = slices.Clone(k.rounds[no])
		} else {
			ps = make([]Pairing, count)
			for i := range ps {
				for j := range 2 {
					if w := prev[2*i+j].Winner; w != "" {
						ps[i].Players[j], ps[i].Seeds[j] = w, k.seed[w]
					}
				}
			}
		}
		out = append(out, Stage{Name: stageName(count), Rounds: rounds, Pairings: ps})
		prev = ps
	}
	return out
}
