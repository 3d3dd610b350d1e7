package game

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func TestRockPaperScissorsThrows(t *testing.T) {
	tests := []struct {
		a, b string
		want [2]protocol.Outcome // results for players 0 and 1
	}{
		{"rock", "scissors", [2]protocol.Outcome{protocol.Win, protocol.Loss}},
		{"rock", "paper", [2]protocol.Outcome{protocol.Loss, protocol.Win}},
		{"rock", "rock", [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{"paper", "rock", [2]protocol.Outcome{protocol.Win, protocol.Loss}},
		{"paper", "scissors", [2]protocol.Outcome{protocol.Loss, protocol.Win}},
		{"paper", "paper", [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{"scissors", "paper", [2]protocol.Outcome{protocol.Win, protocol.Loss}},
		{"scissors", "rock", [2]protocol.Outcome{protocol.Loss, protocol.Win}},
		{"scissors", "scissors", [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			// One throw decides a best of 1, so the match outcome is the throw's result.
			s := mustGame(t, TypeRockPaperScissors, map[string]any{"rounds": 1}).NewState(0)
			s = play(t, s, []string{choice(tt.a), choice(tt.b)})
			if !s.Terminal() {
				t.Fatal("best of 1 not over after one throw")
			}
			if got := s.Outcomes(); got != tt.want {
				t.Errorf("got outcomes %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRockPaperScissorsContext(t *testing.T) {
	g := mustGame(t, TypeRockPaperScissors, map[string]any{"rounds": 7})
	s := play(t, g.NewState(0),
		[]string{choice("rock"), choice("scissors")},
		[]string{choice("paper"), choice("paper")},
		[]string{choice("rock"), choice("paper")},
		[]string{choice("scissors"), choice("paper")},
	)
	tests := []struct {
		player int
		third  protocol.Outcome
		want   string
	}{
		{0, protocol.Loss, `{"history":[{"you":"rock","opponent":"scissors","result":"win"},{"you":"paper","opponent":"paper","result":"draw"},` +
			`{"you":"rock","opponent":"paper","result":"loss"},{"you":"scissors","opponent":"paper","result":"win"}],` +
			`"opponent_score":1,"round":5,"rounds":7,"your_score":2}`},
		{1, protocol.Win, `{"history":[{"you":"scissors","opponent":"rock","result":"loss"},{"you":"paper","opponent":"paper","result":"draw"},` +
			`{"you":"paper","opponent":"rock","result":"win"},{"you":"paper","opponent":"scissors","result":"loss"}],` +
			`"opponent_score":2,"round":5,"rounds":7,"your_score":1}`},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("player %d", tt.player), func(t *testing.T) {
			raw := contextJSON(t, s, tt.player)
			if string(raw) != tt.want {
				t.Errorf("got %s, want %s", raw, tt.want)
			}
			ctx, err := ParseRockPaperScissorsContext(raw)
			if err != nil {
				t.Fatal(err)
			}
			if ctx.Round != 5 || ctx.Rounds != 7 || len(ctx.History) != 4 || ctx.History[2].Result != tt.third {
				t.Errorf("got parsed context %+v, want round 5 of 7 with 4 throws, the third a %s", ctx, tt.third)
			}
		})
	}
	moves, err := g.LegalMoves(contextJSON(t, s, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rawStrings(moves), []string{choice("rock"), choice("paper"), choice("scissors")}; !slices.Equal(got, want) {
		t.Errorf("got legal moves %v, want %v", got, want)
	}
	if got, want := string(s.ForcedMove(1)), choice("rock"); got != want {
		t.Errorf("got forced move %s, want %s", got, want)
	}
}

func TestRockPaperScissorsFinal(t *testing.T) {
	s := play(t, mustGame(t, TypeRockPaperScissors, map[string]any{"rounds": 3}).NewState(0),
		[]string{choice("rock"), choice("rock")},
		[]string{choice("paper"), choice("scissors")},
		[]string{choice("rock"), choice("scissors")},
	)
	want := `{"history":[{"choices":["rock","rock"],"winner":null},{"choices":["paper","scissors"],"winner":1},` +
		`{"choices":["rock","scissors"],"winner":0}],"rounds":3,"rounds_played":3,"score":[1,1]}`
	if got := mustMarshal(t, s.Final()); got != want {
		t.Errorf("got final %s, want %s", got, want)
	}
	if got, want := s.Outcomes(), [2]protocol.Outcome{protocol.Draw, protocol.Draw}; got != want {
		t.Errorf("got outcomes %v, want %v", got, want)
	}
}
