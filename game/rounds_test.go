package game

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// TestRoundsEndWhenDecided plays rock_paper_scissors, whose throws are not random, to check
// best-of-N: the match ends once the trailing player cannot catch up, and not before.
func TestRoundsEndWhenDecided(t *testing.T) {
	win, loss, draw := []string{choice("paper"), choice("rock")}, []string{choice("rock"), choice("paper")}, []string{choice("rock"), choice("rock")}
	tests := []struct {
		name     string
		rounds   int
		steps    [][]string
		terminal bool
		want     [2]protocol.Outcome
	}{
		{"best of 1 decided", 1, [][]string{win}, true, [2]protocol.Outcome{protocol.Win, protocol.Loss}},
		{"best of 1 drawn", 1, [][]string{draw}, true, [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{"2-0 of 3 cannot be caught", 3, [][]string{win, win}, true, [2]protocol.Outcome{protocol.Win, protocol.Loss}},
		{"1-0 of 3 can be caught", 3, [][]string{win}, false, [2]protocol.Outcome{}},
		{"lead equal to rounds left can still be tied", 5, [][]string{loss, loss, draw}, false, [2]protocol.Outcome{}},
		{"3-0 of 5 cannot be caught", 5, [][]string{loss, loss, loss}, true, [2]protocol.Outcome{protocol.Loss, protocol.Win}},
		{"all rounds played, level", 4, [][]string{win, loss, draw, draw}, true, [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{"all rounds played, one ahead", 3, [][]string{win, draw, draw}, true, [2]protocol.Outcome{protocol.Win, protocol.Loss}},
		{"1-0 with 1 left", 3, [][]string{win, draw}, false, [2]protocol.Outcome{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := play(t, mustGame(t, TypeRockPaperScissors, map[string]any{"rounds": tt.rounds}).NewState(0), tt.steps...)
			if s.Terminal() != tt.terminal {
				t.Fatalf("got terminal %v, want %v", s.Terminal(), tt.terminal)
			}
			if got := s.Outcomes(); got != tt.want {
				t.Errorf("got outcomes %v, want %v", got, tt.want)
			}
			wantToMove := []int{0, 1}
			if tt.terminal {
				wantToMove = nil
				if got := s.ForcedMove(0); got != nil {
					t.Errorf("got forced move %s after the end, want nil", got)
				}
			}
			if got := s.ToMove(); !slices.Equal(got, wantToMove) {
				t.Errorf("got to move %v, want %v", got, wantToMove)
			}
		})
	}
}

func TestRoundsParseMove(t *testing.T) {
	for _, gameType := range []string{TypeEvenOdd, TypeRockPaperScissors} {
		g := mustGame(t, gameType, map[string]any{"rounds": 1})
		s := g.NewState(5)
		first := evenOddRules.choices[0]
		if gameType == TypeRockPaperScissors {
			first = rockPaperScissorsRules.choices[0]
		}
		over := play(t, s, []string{choice(first), choice(first)})
		tests := []struct {
			name   string
			state  State
			player int
			raw    string
			want   string // canonical move, or the error kind
		}{
			{"plain", s, 0, choice(first), choice(first)},
			{"second player, extra field", s, 1, `{"why":"because","choice":"` + first + `"}`, choice(first)},
			{"upper case", s, 0, choice(strings.ToUpper(first)), "illegal"},
			{"other game's choice", s, 1, choice("maybe"), "illegal"},
			{"empty choice", s, 1, choice(""), "illegal"},
			{"number choice", s, 0, `{"choice":1}`, "malformed"},
			{"null choice", s, 0, `{"choice":null}`, "malformed"},
			{"array choice", s, 0, `{"choice":["` + first + `"]}`, "malformed"},
			{"no choice", s, 0, `{}`, "malformed"},
			{"bare string", s, 0, `"` + first + `"`, "malformed"},
			{"null", s, 0, `null`, "malformed"},
			{"not json", s, 0, `choice=` + first, "malformed"},
			{"oversized", s, 0, `{"choice":"` + first + `","pad":"` + strings.Repeat(" ", maxMoveSize) + `"}`, "malformed"},
			{"no such player", s, 2, choice(first), "illegal"},
			{"match over", over, 0, choice(first), "illegal"},
		}
		for _, tt := range tests {
			t.Run(gameType+" "+tt.name, func(t *testing.T) {
				checkParseMove(t, tt.state, tt.player, tt.raw, tt.want)
			})
		}
	}
}

func TestRoundsApplyRefuses(t *testing.T) {
	s := mustGame(t, TypeRockPaperScissors, nil).NewState(0)
	tests := []struct {
		name  string
		moves []string
		want  string
	}{
		{"one move", []string{choice("rock")}, "apply: want 2 moves, got 1"},
		{"three moves", []string{choice("rock"), choice("rock"), choice("rock")}, "apply: want 2 moves, got 3"},
		{"bad second", []string{choice("rock"), choice("lizard")}, `apply player 1: illegal move: choice must be one of "rock", "paper", "scissors" (got "lizard")`},
		{"bad first", []string{`{}`, choice("rock")}, `apply player 0: malformed move: missing field "choice"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			moves := make([]json.RawMessage, len(tt.moves))
			for k, m := range tt.moves {
				moves[k] = json.RawMessage(m)
			}
			_, err := s.Apply(moves)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRoundsLegalMovesRefusesContext(t *testing.T) {
	rps := func(round, rounds, you, opp int, history string) string {
		return fmt.Sprintf(`{"round":%d,"rounds":%d,"your_score":%d,"opponent_score":%d,"history":%s}`, round, rounds, you, opp, history)
	}
	tests := []struct {
		name     string
		gameType string
		ctx      string
		want     string
	}{
		{"not an object", TypeRockPaperScissors, `"round 1"`, "not a JSON object"},
		{"truncated", TypeRockPaperScissors, `{"round":1`, "decode object: unexpected end of JSON input"},
		{"missing round", TypeRockPaperScissors, `{"rounds":3,"your_score":0,"opponent_score":0,"history":[]}`, `missing field "round"`},
		{"string rounds", TypeRockPaperScissors, `{"round":1,"rounds":"3","your_score":0,"opponent_score":0,"history":[]}`, `field "rounds" has the wrong type (got string)`},
		{"round 0", TypeRockPaperScissors, rps(0, 3, 0, 0, `[]`), "round 0 outside 1..3"},
		{"round past the end", TypeRockPaperScissors, rps(4, 3, 0, 0, `[]`), "round 4 outside 1..3"},
		{"null history", TypeRockPaperScissors, rps(1, 3, 0, 0, `null`), `missing field "history"`},
		{"history too short", TypeRockPaperScissors, rps(2, 3, 0, 0, `[]`), "round 2 with 0 history entries"},
		{"entry not an object", TypeRockPaperScissors, rps(2, 3, 0, 0, `[1]`), `field "history" has the wrong type (got number)`},
		{"null entry", TypeRockPaperScissors, rps(2, 3, 0, 0, `[null]`), `history[0]: field "you" must be one of "rock", "paper", "scissors" (got "")`},
		{"number throw", TypeRockPaperScissors, rps(2, 3, 0, 0, `[{"you":1,"opponent":"rock","result":"draw"}]`), `field "history.you" has the wrong type (got number)`},
		{"missing throw", TypeRockPaperScissors, rps(2, 3, 0, 0, `[{"opponent":"rock","result":"draw"}]`), `history[0]: field "you" must be one of "rock", "paper", "scissors" (got "")`},
		{"bad throw", TypeRockPaperScissors, rps(2, 3, 0, 0, `[{"you":"lizard","opponent":"rock","result":"draw"}]`), `field "you" must be one of`},
		{"missing result", TypeRockPaperScissors, rps(2, 3, 0, 0, `[{"you":"rock","opponent":"rock"}]`), `history[0]: result "", want "draw"`},
		{"wrong result", TypeRockPaperScissors, rps(2, 3, 1, 0, `[{"you":"rock","opponent":"paper","result":"win"}]`), `result "win", want "loss"`},
		{"wrong score", TypeRockPaperScissors, rps(2, 3, 0, 0, `[{"you":"rock","opponent":"scissors","result":"win"}]`), "score 0-0 does not match the history's 1-0"},
		{"decided", TypeRockPaperScissors, rps(3, 3, 2, 0, `[{"you":"rock","opponent":"scissors","result":"win"},{"you":"rock","opponent":"scissors","result":"win"}]`), "match is over"},
		{"even_odd missing number", TypeEvenOdd, rps(2, 3, 0, 0, `[{"you":"odd","opponent":"odd","result":"draw"}]`), `history[0]: field "number" must be in 1..10 (got 0)`},
		{"even_odd float number", TypeEvenOdd, rps(2, 3, 0, 0, `[{"you":"odd","opponent":"odd","number":2.5,"result":"draw"}]`), `field "history.number" has the wrong type (got number 2.5)`},
		{"even_odd number 0", TypeEvenOdd, rps(2, 3, 0, 0, `[{"you":"odd","opponent":"odd","number":0,"result":"draw"}]`), `history[0]: field "number" must be in 1..10 (got 0)`},
		{"even_odd number 11", TypeEvenOdd, rps(2, 3, 0, 0, `[{"you":"odd","opponent":"odd","number":11,"result":"draw"}]`), `history[0]: field "number" must be in 1..10 (got 11)`},
		{"even_odd wrong result", TypeEvenOdd, rps(2, 3, 1, 0, `[{"you":"odd","opponent":"even","number":4,"result":"win"}]`), `result "win", want "loss"`},
		{"even_odd rps throw", TypeEvenOdd, rps(2, 3, 0, 0, `[{"you":"rock","opponent":"odd","number":4,"result":"draw"}]`), `field "you" must be one of "even", "odd"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mustGame(t, tt.gameType, nil).LegalMoves(json.RawMessage(tt.ctx))
			prefix := "parse " + tt.gameType + " context: "
			if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want %q...%q", err, prefix, tt.want)
			}
			if over := strings.Contains(tt.want, "match is over"); errors.Is(err, ErrMatchOver) != over {
				t.Errorf("got errors.Is(err, ErrMatchOver) = %t, want %t", !over, over)
			}
		})
	}
}
