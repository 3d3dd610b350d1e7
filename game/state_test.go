package game

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// builtins are the default games with small round counts so playouts reach the end.
var builtins = []struct {
	gameType string
	params   map[string]any
}{
	{TypeEvenOdd, map[string]any{"rounds": 9}},
	{TypeRockPaperScissors, map[string]any{"rounds": 9}},
	{TypeTicTacToe, nil},
	{TypeConnectFour, nil},
	{TypeChess, map[string]any{"max_plies": 60}},
}

// randomMoves picks a legal move for every player to move, from the context it would be shown.
func randomMoves(t *testing.T, g Game, s State, rng *rand.Rand) []json.RawMessage {
	t.Helper()
	var moves []json.RawMessage
	for _, i := range s.ToMove() {
		legal, err := g.LegalMoves(contextJSON(t, s, i))
		if err != nil {
			t.Fatalf("legal moves of player %d: %v", i, err)
		}
		moves = append(moves, legal[rng.IntN(len(legal))])
	}
	return moves
}

// TestApplyLeavesReceiver branches every position of random playouts two ways and checks that
// neither the parent nor the first child changes: states sharing history must not alias it.
func TestApplyLeavesReceiver(t *testing.T) {
	for _, b := range builtins {
		t.Run(b.gameType, func(t *testing.T) {
			g := mustGame(t, b.gameType, b.params)
			rng := rand.New(rand.NewPCG(1, 2))
			for game := range 20 {
				s := g.NewState(int64(game))
				for !s.Terminal() {
					before := snapshot(t, s)
					childA, err := s.Apply(randomMoves(t, g, s, rng))
					if err != nil {
						t.Fatal(err)
					}
					afterA := snapshot(t, childA)
					childB, err := s.Apply(randomMoves(t, g, s, rng))
					if err != nil {
						t.Fatal(err)
					}
					if got := snapshot(t, s); got != before {
						t.Fatalf("Apply changed its receiver:\n got %s\nwant %s", got, before)
					}
					if got := snapshot(t, childA); got != afterA {
						t.Fatalf("applying to the parent changed a sibling:\n got %s\nwant %s", got, afterA)
					}
					// Mutating what a state handed out must not reach the state either.
					s.Context(0)["round"] = -1
					s.Final()["rounds"] = -1
					if got := snapshot(t, s); got != before {
						t.Fatalf("changing a returned map changed the state:\n got %s\nwant %s", got, before)
					}
					s = childB
				}
			}
		})
	}
}

// TestLegalMovesAgreeWithParseMove checks, along random playouts, that every move LegalMoves
// lists for a player's context is accepted as is, and that ForcedMove is the first of them.
func TestLegalMovesAgreeWithParseMove(t *testing.T) {
	for _, b := range builtins {
		t.Run(b.gameType, func(t *testing.T) {
			g := mustGame(t, b.gameType, b.params)
			rng := rand.New(rand.NewPCG(3, 4))
			for game := range 50 {
				s := g.NewState(int64(game))
				steps := 0
				for !s.Terminal() {
					for _, i := range s.ToMove() {
						legal, err := g.LegalMoves(contextJSON(t, s, i))
						if err != nil {
							t.Fatal(err)
						}
						if len(legal) == 0 {
							t.Fatalf("no legal move for player %d in a running match", i)
						}
						if got := string(s.ForcedMove(i)); got != string(legal[0]) {
							t.Errorf("got forced move %s, want the first legal move %s", got, legal[0])
						}
						for _, m := range legal {
							got, err := s.ParseMove(i, m)
							if err != nil || string(got) != string(m) {
								t.Fatalf("ParseMove(%d, %s) = %s, %v; want it back unchanged", i, m, got, err)
							}
						}
					}
					next, err := s.Apply(randomMoves(t, g, s, rng))
					if err != nil {
						t.Fatal(err)
					}
					s = next
					steps++
				}
				if got := s.Outcomes(); !slices.Contains([][2]protocol.Outcome{{protocol.Win, protocol.Loss}, {protocol.Loss, protocol.Win}, {protocol.Draw, protocol.Draw}}, got) {
					t.Errorf("got outcomes %v after %d steps, want a result", got, steps)
				}
			}
		})
	}
}

// TestMaxStepsBoundsEveryPlayout: MaxSteps is each game's documented bound (a full board,
// every round, max_plies) and no random playout lasts more steps.
func TestMaxStepsBoundsEveryPlayout(t *testing.T) {
	want := map[string]int{TypeEvenOdd: 9, TypeRockPaperScissors: 9, TypeTicTacToe: 9, TypeConnectFour: 42, TypeChess: 60}
	for _, b := range builtins {
		t.Run(b.gameType, func(t *testing.T) {
			g := mustGame(t, b.gameType, b.params)
			if got := g.MaxSteps(); got != want[b.gameType] {
				t.Fatalf("MaxSteps() = %d, want %d", got, want[b.gameType])
			}
			rng := rand.New(rand.NewPCG(3, 4))
			longest := 0
			for game := range 200 {
				s, steps := g.NewState(int64(game)), 0
				for !s.Terminal() {
					next, err := s.Apply(randomMoves(t, g, s, rng))
					if err != nil {
						t.Fatal(err)
					}
					s, steps = next, steps+1
				}
				if steps > g.MaxSteps() {
					t.Fatalf("a playout took %d steps, MaxSteps() is %d", steps, g.MaxSteps())
				}
				longest = max(longest, steps)
			}
			if longest == 0 {
				t.Fatal("no playout made a step")
			}
		})
	}
}
