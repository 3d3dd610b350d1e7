package game

import (
	"encoding/json"
	"testing"
)

// BenchmarkTicTacToeTurn is the game's part of a tic-tac-toe turn: the player reads the
// step context and lists the legal moves, the referee parses and applies the move chosen.
func BenchmarkTicTacToeTurn(b *testing.B) {
	g := mustGame(b, TypeTicTacToe, nil)
	s := g.NewState(0)
	ctx, err := json.Marshal(s.Context(0))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		legal, err := g.LegalMoves(ctx)
		if err != nil || len(legal) != 9 {
			b.Fatalf("legal moves %s: %v", legal, err)
		}
		if _, err := s.Apply([]json.RawMessage{legal[4]}); err != nil {
			b.Fatal(err)
		}
	}
}
