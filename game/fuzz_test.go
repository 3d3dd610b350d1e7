package game

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// Seed corpora live in testdata/fuzz/<FuzzName>/. Each input is (setup, player, move): setup
// picks the position, one byte per step choosing among the legal moves of each player to move
// (low nibble for player 0, high nibble for player 1), so the fuzzer explores positions too.

func FuzzParseMoveEvenOdd(f *testing.F) {
	fuzzParseMove(f, TypeEvenOdd, map[string]any{"rounds": 5})
}

func FuzzParseMoveRockPaperScissors(f *testing.F) {
	fuzzParseMove(f, TypeRockPaperScissors, map[string]any{"rounds": 5})
}

func FuzzParseMoveTicTacToe(f *testing.F) {
	fuzzParseMove(f, TypeTicTacToe, nil)
}

func FuzzParseMoveConnectFour(f *testing.F) {
	fuzzParseMove(f, TypeConnectFour, nil)
}

func FuzzParseMoveChess(f *testing.F) {
	fuzzParseMove(f, TypeChess, nil)
}

// fuzzParseMove checks that ParseMove never panics, classifies every refusal, and accepts only
// moves that LegalMoves lists for the context the player was shown, in canonical form.
func fuzzParseMove(f *testing.F, gameType string, params map[string]any) {
	g := mustGame(f, gameType, params)
	f.Fuzz(func(t *testing.T, setup []byte, player uint8, move []byte) {
		s := g.NewState(int64(len(setup)))
		for _, b := range setup {
			if s.Terminal() {
				break
			}
			var moves []json.RawMessage
			for k, i := range s.ToMove() {
				legal, err := g.LegalMoves(contextJSON(t, s, i))
				if err != nil {
					t.Fatalf("legal moves of player %d: %v", i, err)
				}
				moves = append(moves, legal[int(b>>(4*k)&0xf)%len(legal)])
			}
			next, err := s.Apply(moves)
			if err != nil {
				t.Fatalf("apply legal moves: %v", err)
			}
			s = next
		}
		i := int(player % 2)
		legal, legalErr := g.LegalMoves(contextJSON(t, s, i))
		got, err := s.ParseMove(i, move)
		if err != nil {
			if kind := errKind(err); kind != "malformed" && kind != "illegal" {
				t.Fatalf("got %s error %v, want one wrapping exactly one of the move errors", kind, err)
			}
			return
		}
		if legalErr != nil {
			t.Fatalf("accepted %q as %s, but the player's context has no legal moves: %v", move, got, legalErr)
		}
		if !slices.ContainsFunc(legal, func(m json.RawMessage) bool { return bytes.Equal(m, got) }) {
			t.Fatalf("accepted %q as %s, not among the legal moves %s", move, got, legal)
		}
		if again, err := s.ParseMove(i, got); err != nil || !bytes.Equal(again, got) {
			t.Fatalf("canonical move %s parsed as %s, %v; want itself", got, again, err)
		}
	})
}
