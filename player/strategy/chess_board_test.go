package strategy

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/game"
)

// boardOf is the board of a context the chess rules would send.
func boardOf(t testing.TB, ctx json.RawMessage) (board, game.ChessContext) {
	t.Helper()
	c, err := game.ParseChessContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return boardFromPosition(c.Position), c
}

// fenContext is a step_context for fen at ply 0, as a match starting there would send.
func fenContext(t testing.TB, fen string) json.RawMessage {
	t.Helper()
	fields := strings.Fields(fen)
	side := map[string]string{"w": "white", "b": "black"}[fields[1]]
	number, err := strconv.Atoi(fields[5])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(map[string]any{"fen": fen, "side_to_move": side, "your_color": side, "last_move": nil, "move_number": number, "ply": 0})
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func (b *board) perft(depth int) int {
	n := 0
	for _, m := range b.generate(nil, false) {
		u := b.make(m)
		if !b.attacked(b.kings[1-b.side], b.side) {
			if depth == 1 {
				n++
			} else {
				n += b.perft(depth - 1)
			}
		}
		b.unmake(m, u)
	}
	return n
}

// TestBoardPerft checks the search's move generator against the published perft counts
// (chessprogramming.org/Perft_Results), and that make and unmake restore the board.
func TestBoardPerft(t *testing.T) {
	tests := []struct {
		name string
		fen  string
		want []int
	}{
		{"start", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", []int{20, 400, 8902, 197281}},
		{"kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", []int{48, 2039, 97862}},
		{"position 3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", []int{14, 191, 2812, 43238}},
		{"position 4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", []int{6, 264, 9467}},
		{"position 4 mirrored", "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", []int{6, 264, 9467}},
		{"position 5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", []int{44, 1486, 62379}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := boardOf(t, fenContext(t, tt.fen))
			before := b
			for depth, want := range tt.want {
				if got := b.perft(depth + 1); got != want {
					t.Errorf("perft(%d) = %d, want %d", depth+1, got, want)
				}
			}
			if b != before {
				t.Error("make and unmake did not restore the board")
			}
		})
	}
}

// TestBoardAgreesWithRules plays random games through the referee's rules and checks at every
// position that the board lists the legal moves the rules do, and that its hash follows the
// position: equal positions hash equal, as the repetition rule sees them.
func TestBoardAgreesWithRules(t *testing.T) {
	g := mustGame(t, game.TypeChess, map[string]any{"max_plies": 300})
	rng := rand.New(rand.NewPCG(11, 12))
	hashes, positions := map[string]uint64{}, map[uint64]string{}
	for range 12 {
		s := g.NewState(0)
		var b board
		for ply := 0; !s.Terminal(); ply++ {
			i := s.ToMove()[0]
			fresh, ctx := boardOf(t, contextJSON(t, s, i))
			if ply == 0 {
				b = fresh
			}
			if b != fresh {
				t.Fatalf("ply %d: board made move by move differs from the one read from %s", ply, ctx.Position)
			}
			var own []string
			for _, m := range b.legalMoves() {
				own = append(own, m.uci())
			}
			slices.Sort(own)
			if !slices.Equal(own, ctx.LegalMoves) {
				t.Fatalf("ply %d, %s: board lists %v, the rules %v", ply, ctx.Position, own, ctx.LegalMoves)
			}
			// Placement, side to move, castling rights and en passant square, without the clocks.
			key := strings.Join(strings.Fields(ctx.Position.String())[:4], " ")
			if h, ok := hashes[key]; ok && h != b.hash {
				t.Fatalf("position %s hashed %x and %x", key, h, b.hash)
			}
			if k, ok := positions[b.hash]; ok && k != key {
				t.Fatalf("positions %s and %s both hashed %x", k, key, b.hash)
			}
			hashes[key], positions[b.hash] = b.hash, key
			pick := rng.IntN(len(own))
			m, err := rootMoves(&b, ctx.LegalMoves)
			if err != nil {
				t.Fatal(err)
			}
			b.make(m[pick])
			next, err := s.Apply([]json.RawMessage{json.RawMessage(`"` + own[pick] + `"`)})
			if err != nil {
				t.Fatal(err)
			}
			s = next
		}
	}
}
