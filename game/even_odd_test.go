package game

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func choice(c string) string { return fmt.Sprintf(`{"choice":%q}`, c) }

func parityOf(n int) string {
	if n%2 == 0 {
		return "even"
	}
	return "odd"
}

func other(c string) string {
	if c == "even" {
		return "odd"
	}
	return "even"
}

func TestEvenOddJudge(t *testing.T) {
	tests := []struct {
		a, b   string
		number int
		want   int
	}{
		{"even", "odd", 4, 1},
		{"odd", "even", 4, -1},
		{"even", "even", 4, 0},
		{"odd", "odd", 4, 0},
		{"odd", "even", 7, 1},
		{"even", "odd", 7, -1},
		{"odd", "odd", 7, 0},
		{"even", "even", 7, 0},
		{"even", "odd", 10, 1},
		{"odd", "even", 1, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s %d", tt.a, tt.b, tt.number), func(t *testing.T) {
			if got := evenOddRules.judge(tt.a, tt.b, tt.number); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// drawnNumbers plays every round of a 99-round match as a draw and reads the numbers from Final.
func drawnNumbers(t *testing.T, seed int64) []int {
	t.Helper()
	s := mustGame(t, TypeEvenOdd, map[string]any{"rounds": 99}).NewState(seed)
	for !s.Terminal() {
		s = play(t, s, []string{choice("even"), choice("even")})
	}
	var final struct {
		History []struct{ Number int } `json:"history"`
	}
	if err := json.Unmarshal([]byte(mustMarshal(t, s.Final())), &final); err != nil {
		t.Fatal(err)
	}
	numbers := make([]int, len(final.History))
	for k, h := range final.History {
		numbers[k] = h.Number
	}
	return numbers
}

func TestEvenOddNumbersDeterministic(t *testing.T) {
	seen := map[string]int64{}
	for _, seed := range []int64{0, 1, 2, -1, 42, 1 << 40} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			a, b := drawnNumbers(t, seed), drawnNumbers(t, seed)
			if len(a) != 99 {
				t.Fatalf("got %d rounds of draws, want 99", len(a))
			}
			if !slices.Equal(a, b) {
				t.Errorf("got numbers %v then %v for one seed, want equal", a, b)
			}
			counts := map[int]int{}
			for _, n := range a {
				if n < 1 || n > 10 {
					t.Fatalf("got number %d, want 1..10", n)
				}
				counts[n]++
			}
			if len(counts) != 10 {
				t.Errorf("got %d distinct numbers in 99 draws, want all 10", len(counts))
			}
			key := fmt.Sprint(a)
			if prev, dup := seen[key]; dup {
				t.Errorf("seeds %d and %d drew the same numbers", prev, seed)
			}
			seen[key] = seed
		})
	}
}

func TestEvenOddRoundsFollowTheNumber(t *testing.T) {
	g := mustGame(t, TypeEvenOdd, map[string]any{"rounds": 99})
	s := g.NewState(7)
	numbers := s.(roundsState).numbers
	// Cycle through every combination of right and wrong calls.
	for k := 0; k < 12; k++ {
		right := parityOf(numbers[k])
		c0, c1 := right, other(right)
		want := protocol.Win
		switch k % 4 {
		case 1:
			c0, c1, want = other(right), right, protocol.Loss
		case 2:
			c0, c1, want = right, right, protocol.Draw
		case 3:
			c0, c1, want = other(right), other(right), protocol.Draw
		}
		s = play(t, s, []string{choice(c0), choice(c1)})
		ctx, err := evenOddRules.parseContext(contextJSON(t, s, 0))
		if err != nil {
			t.Fatalf("round %d: %v", k+1, err)
		}
		last := ctx.History[k]
		if last.Result != want || last.Number != numbers[k] || last.You != c0 || last.Opponent != c1 {
			t.Errorf("round %d: got %+v, want result %s with number %d, %s vs %s", k+1, last, want, numbers[k], c0, c1)
		}
	}
	// Three of every four rounds alternate a win and a loss, so the score is level.
	if got := s.Context(1); got["your_score"] != 3 || got["opponent_score"] != 3 {
		t.Errorf("got score %v-%v, want 3-3", got["your_score"], got["opponent_score"])
	}
}

func TestEvenOddContext(t *testing.T) {
	g := mustGame(t, TypeEvenOdd, map[string]any{"rounds": 3})
	s := g.NewState(11)
	numbers := s.(roundsState).numbers
	if got, want := string(contextJSON(t, s, 0)), `{"history":[],"opponent_score":0,"round":1,"rounds":3,"your_score":0}`; got != want {
		t.Errorf("got first context %s, want %s", got, want)
	}
	right := parityOf(numbers[0])
	s = play(t, s, []string{choice(right), choice(other(right))})
	want0 := fmt.Sprintf(`{"history":[{"you":%q,"opponent":%q,"number":%d,"result":"win"}],"opponent_score":0,"round":2,"rounds":3,"your_score":1}`,
		right, other(right), numbers[0])
	if got := string(contextJSON(t, s, 0)); got != want0 {
		t.Errorf("got winner's context %s, want %s", got, want0)
	}
	want1 := fmt.Sprintf(`{"history":[{"you":%q,"opponent":%q,"number":%d,"result":"loss"}],"opponent_score":1,"round":2,"rounds":3,"your_score":0}`,
		other(right), right, numbers[0])
	if got := string(contextJSON(t, s, 1)); got != want1 {
		t.Errorf("got loser's context %s, want %s", got, want1)
	}
}

func TestEvenOddLegalMoves(t *testing.T) {
	g := mustGame(t, TypeEvenOdd, nil)
	s := g.NewState(3)
	for i := range 2 {
		moves, err := g.LegalMoves(contextJSON(t, s, i))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := rawStrings(moves), []string{choice("even"), choice("odd")}; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		if got, want := string(s.ForcedMove(i)), choice("even"); got != want {
			t.Errorf("got forced move %s, want %s", got, want)
		}
	}
}
