package game

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/agentleague/agentleague/protocol"
)

// roundRules are what even_odd and rock_paper_scissors do not share; both are best-of-N
// matches where the two players pick one choice each round at the same time.
type roundRules struct {
	gameType string
	// choices in canonical order; choices[0] is the forced move.
	choices []string
	// numberMax > 0 makes the referee draw a hidden number in 1..numberMax per round from the
	// match seed, revealed in the history once the round is played.
	numberMax int
	// judge returns 1 when choice a wins the round, -1 when b wins and 0 for a drawn round.
	judge func(a, b string, number int) int
}

// RoundsContext is the step_context of even_odd and rock_paper_scissors as one player sees it.
type RoundsContext struct {
	// Round is the round about to be played, from 1.
	Round int
	// Rounds is the most rounds the match can last.
	Rounds int
	// YourScore and OpponentScore count rounds won.
	YourScore, OpponentScore int
	// History lists the earlier rounds, oldest first.
	History []RoundRecord
}

// RoundRecord is one played round from the viewing player's side, as in the context's history.
type RoundRecord struct {
	// You and Opponent are the two choices.
	You      string `json:"you"`
	Opponent string `json:"opponent"`
	// Number is even_odd's drawn number, from 1; 0 and absent in rock_paper_scissors.
	Number int `json:"number,omitempty"`
	// Result is the round's result for the viewing player.
	Result protocol.Outcome `json:"result"`
}

// roundsGame is a best-of-N simultaneous choice game.
type roundsGame struct {
	rules  *roundRules
	rounds int
}

var _ Game = roundsGame{}

// Type implements Game.
func (g roundsGame) Type() string { return g.rules.gameType }

// Simultaneous implements Game: both players choose against the same snapshot.
func (g roundsGame) Simultaneous() bool { return true }

// MaxSteps implements Game: one round per step.
func (g roundsGame) MaxSteps() int { return g.rounds }

// NewState implements Game. The hidden numbers are drawn up front from the seed, so a replay
// with the same seed sees the same numbers whatever the players do.
func (g roundsGame) NewState(seed int64) State {
	s := roundsState{rules: g.rules, rounds: g.rounds}
	if g.rules.numberMax > 0 {
		rng := rand.New(rand.NewPCG(uint64(seed), numberStream))
		s.numbers = make([]int, g.rounds)
		for k := range s.numbers {
			s.numbers[k] = rng.IntN(g.rules.numberMax) + 1
		}
	}
	return s
}

// numberStream separates the drawn numbers' PCG stream from any other use of the match seed.
const numberStream = 0x6576656e5f6f6464 // "even_odd"

// LegalMoves implements Game: every choice is legal in every round.
func (g roundsGame) LegalMoves(stepContext json.RawMessage) ([]json.RawMessage, error) {
	if _, err := g.rules.parseContext(stepContext); err != nil {
		return nil, err
	}
	moves := make([]json.RawMessage, len(g.rules.choices))
	for k, c := range g.rules.choices {
		moves[k] = choiceMove(c)
	}
	return moves, nil
}

// roundsState is an immutable snapshot of a best-of-N match.
type roundsState struct {
	rules  *roundRules
	rounds int
	// numbers are the drawn numbers of every round; shared between states and never written.
	numbers []int
	// played grows by copy only, so states that share a prefix never see each other's rounds.
	played []roundPlay
	score  [2]int
}

// roundPlay is one played round.
type roundPlay struct {
	choices [2]string
	// winner is the index of the round's winner, -1 for a drawn round.
	winner int
}

var _ State = roundsState{}

// ToMove implements State.
func (s roundsState) ToMove() []int {
	if s.Terminal() {
		return nil
	}
	return []int{0, 1}
}

// Context implements State: the score and history from player i's side, never the next number.
func (s roundsState) Context(i int) map[string]any {
	// Structs, not maps: a long match marshals this every step.
	history := make([]RoundRecord, 0, len(s.played))
	for k, p := range s.played {
		h := RoundRecord{You: p.choices[i], Opponent: p.choices[1-i], Result: resultFor(p.winner, i)}
		if s.numbers != nil {
			h.Number = s.numbers[k]
		}
		history = append(history, h)
	}
	return map[string]any{
		"round":          len(s.played) + 1,
		"rounds":         s.rounds,
		"your_score":     s.score[i],
		"opponent_score": s.score[1-i],
		"history":        history,
	}
}

// ParseMove implements State. A move is {"choice": c}; unknown fields are ignored.
func (s roundsState) ParseMove(i int, raw json.RawMessage) (json.RawMessage, error) {
	c, err := s.parse(i, raw)
	if err != nil {
		return nil, err
	}
	return choiceMove(c), nil
}

func (s roundsState) parse(i int, raw json.RawMessage) (string, error) {
	if s.Terminal() {
		return "", fmt.Errorf("%w: match is over", ErrIllegalMove)
	}
	if i != 0 && i != 1 {
		return "", fmt.Errorf("%w: no player %d", ErrIllegalMove, i)
	}
	fields, err := decodeMoveObject(raw)
	if err != nil {
		return "", err
	}
	c, err := stringField(fields, "choice")
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrMalformedMove, err)
	}
	if !slices.Contains(s.rules.choices, c) {
		return "", fmt.Errorf("%w: choice must be one of %s (got %q)", ErrIllegalMove, quoteAll(s.rules.choices), c)
	}
	return c, nil
}

// ForcedMove implements State; it is nil once the match is over.
func (s roundsState) ForcedMove(int) json.RawMessage {
	if s.Terminal() {
		return nil
	}
	return choiceMove(s.rules.choices[0])
}

// Apply implements State with moves of players 0 and 1.
func (s roundsState) Apply(moves []json.RawMessage) (State, error) {
	if len(moves) != 2 {
		return nil, fmt.Errorf("apply: want 2 moves, got %d", len(moves))
	}
	var p roundPlay
	for i, m := range moves {
		c, err := s.parse(i, m)
		if err != nil {
			return nil, fmt.Errorf("apply player %d: %w", i, err)
		}
		p.choices[i] = c
	}
	number := 0
	if s.numbers != nil {
		number = s.numbers[len(s.played)]
	}
	next := s
	p.winner = winnerOf(s.rules.judge(p.choices[0], p.choices[1], number))
	if p.winner >= 0 {
		next.score[p.winner]++
	}
	next.played = append(slices.Clip(s.played), p)
	return next, nil
}

// Terminal implements State: all rounds played, or one player so far ahead that the rounds left
// cannot catch them up.
func (s roundsState) Terminal() bool {
	return decided(s.score[0], s.score[1], s.rounds-len(s.played))
}

func decided(a, b, remaining int) bool {
	return remaining <= 0 || a-b > remaining || b-a > remaining
}

// Outcomes implements State: more rounds won wins the match. It is zero before the end.
func (s roundsState) Outcomes() [2]protocol.Outcome {
	switch {
	case !s.Terminal():
		return [2]protocol.Outcome{}
	case s.score[0] > s.score[1]:
		return [2]protocol.Outcome{protocol.Win, protocol.Loss}
	case s.score[0] < s.score[1]:
		return [2]protocol.Outcome{protocol.Loss, protocol.Win}
	default:
		return [2]protocol.Outcome{protocol.Draw, protocol.Draw}
	}
}

// Final implements State: the rounds played with both choices, and each round's winner index
// (null for a drawn round).
func (s roundsState) Final() map[string]any {
	history := make([]map[string]any, 0, len(s.played))
	for k, p := range s.played {
		var winner any
		if p.winner >= 0 {
			winner = p.winner
		}
		h := map[string]any{"choices": p.choices, "winner": winner}
		if s.numbers != nil {
			h["number"] = s.numbers[k]
		}
		history = append(history, h)
	}
	return map[string]any{
		"rounds":        s.rounds,
		"rounds_played": len(s.played),
		"score":         s.score,
		"history":       history,
	}
}

// winnerOf turns a judge verdict into the round winner's index, -1 for a drawn round.
func winnerOf(verdict int) int {
	switch verdict {
	case 1:
		return 0
	case -1:
		return 1
	default:
		return -1
	}
}

// resultFor is the round result for player i given the round winner's index.
func resultFor(winner, i int) protocol.Outcome {
	switch winner {
	case -1:
		return protocol.Draw
	case i:
		return protocol.Win
	default:
		return protocol.Loss
	}
}

// choiceMove is the canonical encoding of a choice move.
func choiceMove(c string) json.RawMessage {
	return json.RawMessage(`{"choice":` + strconv.Quote(c) + `}`)
}

// parseContext reads and checks a step_context: it must be one the referee could have sent,
// with a consistent history and score, for a match that is not over.
func (r *roundRules) parseContext(raw json.RawMessage) (RoundsContext, error) {
	ctx, err := r.readContext(raw)
	if err != nil {
		return RoundsContext{}, fmt.Errorf("parse %s context: %w", r.gameType, err)
	}
	return ctx, nil
}

// roundsContextJSON decodes a step_context in one pass, since a long match sends hundreds of
// history entries every step. Pointers tell a missing or null field from a zero one; history
// entries need none because their zero values fail the checks anyway.
type roundsContextJSON struct {
	Round         *int           `json:"round"`
	Rounds        *int           `json:"rounds"`
	YourScore     *int           `json:"your_score"`
	OpponentScore *int           `json:"opponent_score"`
	History       *[]RoundRecord `json:"history"`
}

func (r *roundRules) readContext(raw json.RawMessage) (RoundsContext, error) {
	if err := checkObject(raw); err != nil {
		return RoundsContext{}, err
	}
	var in roundsContextJSON
	if err := json.Unmarshal(raw, &in); err != nil {
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return RoundsContext{}, fmt.Errorf("field %q has the wrong type (got %s)", te.Field, te.Value)
		}
		return RoundsContext{}, fmt.Errorf("decode object: %w", err)
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"round", in.Round}, {"rounds", in.Rounds}, {"your_score", in.YourScore}, {"opponent_score", in.OpponentScore}} {
		if f.v == nil {
			return RoundsContext{}, fmt.Errorf("missing field %q", f.name)
		}
	}
	if in.History == nil {
		return RoundsContext{}, errors.New(`missing field "history"`)
	}
	ctx := RoundsContext{Round: *in.Round, Rounds: *in.Rounds, YourScore: *in.YourScore, OpponentScore: *in.OpponentScore, History: *in.History}
	if ctx.Round < 1 || ctx.Round > ctx.Rounds {
		return RoundsContext{}, fmt.Errorf("round %d outside 1..%d", ctx.Round, ctx.Rounds)
	}
	if len(ctx.History) != ctx.Round-1 {
		return RoundsContext{}, fmt.Errorf("round %d with %d history entries", ctx.Round, len(ctx.History))
	}
	var yours, theirs int
	for k, rec := range ctx.History {
		if err := r.checkRecord(rec); err != nil {
			return RoundsContext{}, fmt.Errorf("history[%d]: %w", k, err)
		}
		switch rec.Result {
		case protocol.Win:
			yours++
		case protocol.Loss:
			theirs++
		}
	}
	if yours != ctx.YourScore || theirs != ctx.OpponentScore {
		return RoundsContext{}, fmt.Errorf("score %d-%d does not match the history's %d-%d", ctx.YourScore, ctx.OpponentScore, yours, theirs)
	}
	if decided(yours, theirs, ctx.Rounds-len(ctx.History)) {
		return RoundsContext{}, ErrMatchOver
	}
	return ctx, nil
}

// checkRecord checks one history entry against the rules: known choices, a number in range
// when the game draws one, and the result the choices give.
func (r *roundRules) checkRecord(rec RoundRecord) error {
	for _, f := range []struct{ name, v string }{{"you", rec.You}, {"opponent", rec.Opponent}} {
		if !slices.Contains(r.choices, f.v) {
			return fmt.Errorf("field %q must be one of %s (got %q)", f.name, quoteAll(r.choices), f.v)
		}
	}
	if r.numberMax > 0 && (rec.Number < 1 || rec.Number > r.numberMax) {
		return fmt.Errorf("field \"number\" must be in 1..%d (got %d)", r.numberMax, rec.Number)
	}
	if want := resultFor(winnerOf(r.judge(rec.You, rec.Opponent, rec.Number)), 0); rec.Result != want {
		return fmt.Errorf("result %q, want %q", rec.Result, want)
	}
	return nil
}

// quoteAll renders values as `"a", "b"` for an error message.
func quoteAll(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = strconv.Quote(v)
	}
	return strings.Join(quoted, ", ")
}
