package game

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentleague/agentleague/protocol"
	"github.com/corentings/chess/v2"
)

// chessFrom is a match that starts from fen; the registry's games always start from the
// standard position.
func chessFrom(t testing.TB, fen string, maxPlies int) State {
	t.Helper()
	pos, err := decodeFEN(fen)
	if err != nil {
		t.Fatalf("decode %s: %v", fen, err)
	}
	return newChessState(pos, &chessPly{}, pos, maxPlies)
}

// chessPlay applies UCI moves, sent as bare strings.
func chessPlay(t testing.TB, s State, moves ...string) State {
	t.Helper()
	for _, m := range moves {
		s = play(t, s, []string{`"` + m + `"`})
	}
	return s
}

// chessLegal is the legal_moves of the player to move.
func chessLegal(s State) []string {
	return s.Context(s.ToMove()[0])["legal_moves"].([]string)
}

// perft counts the leaf positions depth plies below s, listing moves from the context the
// player to move is shown and applying them through the State: the whole wrapper is tested.
func perft(t *testing.T, s State, depth int) int {
	t.Helper()
	if s.Terminal() {
		return 0
	}
	legal := chessLegal(s)
	if depth == 1 {
		return len(legal)
	}
	n := 0
	for _, m := range legal {
		next, err := s.Apply([]json.RawMessage{uciMove(m)})
		if err != nil {
			t.Fatalf("apply %s: %v", m, err)
		}
		n += perft(t, next, depth-1)
	}
	return n
}

// TestChessPerft checks move generation against the published counts of the standard perft
// positions (chessprogramming.org/Perft_Results), depth 1 to 3.
func TestChessPerft(t *testing.T) {
	tests := []struct {
		name string
		fen  string
		want [3]int
	}{
		{"start", chessStartFEN, [3]int{20, 400, 8902}},
		{"kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", [3]int{48, 2039, 97862}},
		{"position 3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", [3]int{14, 191, 2812}},
		{"position 4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", [3]int{6, 264, 9467}},
		{"position 5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", [3]int{44, 1486, 62379}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := chessFrom(t, tt.fen, 200)
			for depth := 1; depth <= 3; depth++ {
				if got := perft(t, s, depth); got != tt.want[depth-1] {
					t.Errorf("perft(%d) = %d, want %d", depth, got, tt.want[depth-1])
				}
			}
		})
	}
}

// TestChessRules plays a position and one more move, then checks whether the move was legal,
// what the position became, and whether and how the game ended.
func TestChessRules(t *testing.T) {
	tests := []struct {
		name string
		fen  string   // "" for the starting position
		pre  []string // moves played first
		move string
		// illegal: the move must be refused; otherwise it is played.
		illegal bool
		// wantFEN is the position after the move, if set.
		wantFEN string
		// wantLegal is the legal moves before the move, if set.
		wantLegal   []string
		termination string // "" while the game goes on
		outcomes    [2]protocol.Outcome
		maxPlies    int // 200 if zero
	}{
		{name: "castling king side", fen: "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", move: "e1g1",
			wantFEN: "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1"},
		{name: "castling queen side", fen: "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", move: "e8c8",
			wantFEN: "2kr3r/8/8/8/8/8/8/R3K2R w KQ - 1 2"},
		{name: "no castling through check", fen: "4k3/8/8/8/8/8/5r2/R3K2R w KQ - 0 1", move: "e1g1", illegal: true},
		{name: "castling past an attacked b1", fen: "4k3/8/8/8/8/8/1r6/R3K2R w KQ - 0 1", move: "e1c1",
			wantFEN: "4k3/8/8/8/8/8/1r6/2KR3R b - - 1 1"},
		{name: "no castling out of check", fen: "4k3/8/8/8/8/8/4r3/R3K2R w KQ - 0 1", move: "e1c1", illegal: true},
		{name: "no castling into check", fen: "4k3/8/8/8/8/8/6r1/R3K2R w KQ - 0 1", move: "e1g1", illegal: true},
		{name: "no castling after the rook moved", fen: "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", pre: []string{"h1h2", "a8a7", "h2h1", "a7a8"},
			move: "e1g1", illegal: true},
		{name: "no castling after the rook is taken", fen: "r3k2r/8/8/8/4B3/8/8/4K3 w kq - 0 1", pre: []string{"e4a8"},
			move: "e8c8", illegal: true},
		{name: "castling on the side that kept its rook", fen: "r3k2r/8/8/8/4B3/8/8/4K3 w kq - 0 1", pre: []string{"e4a8"},
			move: "e8g8", wantFEN: "B4rk1/8/8/8/8/8/8/4K3 w - - 1 2"},
		{name: "en passant", pre: []string{"e2e4", "a7a6", "e4e5", "d7d5"}, move: "e5d6",
			wantFEN: "rnbqkbnr/1pp1pppp/p2P4/8/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3"},
		{name: "en passant only at once", pre: []string{"e2e4", "a7a6", "e4e5", "d7d5", "a2a3", "a6a5"}, move: "e5d6", illegal: true},
		{name: "promotion", fen: "4k3/P7/8/8/8/8/7p/4K3 w - - 0 1", move: "a7a8q",
			wantFEN: "Q3k3/8/8/8/8/8/7p/4K3 b - - 0 1"},
		{name: "under-promotion", fen: "4k3/P7/8/8/8/8/7p/4K3 w - - 0 1", move: "a7a8n",
			wantFEN: "N3k3/8/8/8/8/8/7p/4K3 b - - 0 1"},
		{name: "promotion by capture", fen: "1r2k3/P7/8/8/8/8/7p/4K3 w - - 0 1", move: "a7b8r",
			wantFEN: "1R2k3/8/8/8/8/8/7p/4K3 b - - 0 1"},
		{name: "promotion needs a piece", fen: "4k3/P7/8/8/8/8/7p/4K3 w - - 0 1", move: "a7a8", illegal: true},
		{name: "check evasions only", fen: "4k3/8/8/8/8/8/4r3/R3K3 w Q - 0 1", move: "a1a2", illegal: true,
			wantLegal: []string{"e1d1", "e1e2", "e1f1"}},
		{name: "pinned piece stays", fen: "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1", move: "e2d3", illegal: true},
		{name: "checkmate", pre: []string{"f2f3", "e7e5", "g2g4"}, move: "d8h4",
			termination: chessCheckmate, outcomes: [2]protocol.Outcome{protocol.Loss, protocol.Win}},
		{name: "checkmate by white", fen: "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", move: "a1a8",
			termination: chessCheckmate, outcomes: [2]protocol.Outcome{protocol.Win, protocol.Loss}},
		{name: "stalemate", fen: "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", move: "f1f7",
			termination: chessStalemate, outcomes: [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{name: "insufficient material, kings alone", fen: "4k3/8/8/8/8/8/3r4/4K3 w - - 0 1", move: "e1d2",
			termination: chessInsufficient, outcomes: [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{name: "insufficient material, under-promotion", fen: "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", move: "a7a8b",
			termination: chessInsufficient, outcomes: [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{name: "bishops on one colour", fen: "4k3/8/8/8/1b6/8/3B4/4K1r1 w - - 0 1", move: "e1f2",
			wantFEN: "4k3/8/8/8/1b6/8/3B1K2/6r1 b - - 1 1"},
		{name: "bishops on one colour after a capture", fen: "4k3/8/8/8/1b6/8/3B4/4K1r1 w - - 0 1", pre: []string{"e1f2", "e8d7"}, move: "f2g1",
			termination: chessInsufficient, outcomes: [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{name: "threefold repetition", pre: []string{"g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"}, move: "f6g8",
			termination: chessThreefold, outcomes: [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{name: "twofold is not enough", pre: []string{"g1f3", "g8f6", "f3g1"}, move: "f6g8"},
		// After 1. e4 no black pawn can take on e3, so the position repeats with the knights' moves.
		{name: "threefold ignores an en passant square without capture", pre: []string{"e2e4", "g8f6", "g1f3", "f6g8", "f3g1", "g8f6", "g1f3", "f6g8"},
			move: "f3g1", termination: chessThreefold, outcomes: [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{name: "threefold counts an en passant right", pre: []string{"e2e4", "h7h6", "e4e5", "d7d5", "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"},
			move: "f6g8"},
		{name: "fifty-move rule", fen: "4k3/8/8/8/8/8/8/R3K3 w - - 99 80", move: "a1a2",
			termination: chessFiftyMoves, outcomes: [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
		{name: "fifty-move clock reset by a pawn move", fen: "4k3/8/8/8/8/8/P7/4K3 w - - 99 80", move: "a2a3",
			wantFEN: "4k3/8/8/8/8/P7/8/4K3 b - - 0 80"},
		{name: "checkmate on the hundredth half-move", fen: "7k/8/6K1/8/8/8/8/R7 w - - 99 80", move: "a1a8",
			termination: chessCheckmate, outcomes: [2]protocol.Outcome{protocol.Win, protocol.Loss}},
		{name: "move cap", maxPlies: 10, pre: []string{"e2e4", "e7e5", "d2d4", "d7d5", "c2c4", "c7c5", "b2b4", "b7b5", "a2a4"}, move: "a7a5",
			termination: chessMoveCap, outcomes: [2]protocol.Outcome{protocol.Draw, protocol.Draw}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fen := tt.fen
			if fen == "" {
				fen = chessStartFEN
			}
			maxPlies := tt.maxPlies
			if maxPlies == 0 {
				maxPlies = 200
			}
			s := chessPlay(t, chessFrom(t, fen, maxPlies), tt.pre...)
			if s.Terminal() {
				t.Fatalf("terminal before the move: %v", s.Final())
			}
			if tt.wantLegal != nil {
				if got := chessLegal(s); !slices.Equal(got, tt.wantLegal) {
					t.Errorf("got legal moves %v, want %v", got, tt.wantLegal)
				}
			}
			i := s.ToMove()[0]
			_, err := s.ParseMove(i, json.RawMessage(`"`+tt.move+`"`))
			if tt.illegal {
				if errKind(err) != "illegal" {
					t.Errorf("got error %v, want an illegal move", err)
				}
				if slices.Contains(chessLegal(s), tt.move) {
					t.Errorf("%s is among the legal moves %v", tt.move, chessLegal(s))
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want %s legal", err, tt.move)
			}
			next := chessPlay(t, s, tt.move)
			if tt.wantFEN != "" {
				if got := next.Final()["fen"]; got != tt.wantFEN {
					t.Errorf("got position %s, want %s", got, tt.wantFEN)
				}
			}
			term := next.Final()["termination"]
			if tt.termination == "" {
				if next.Terminal() || term != chessInProgress {
					t.Errorf("got terminal %v by %v, want the game to go on", next.Terminal(), term)
				}
				return
			}
			if !next.Terminal() || term != tt.termination || next.ToMove() != nil {
				t.Errorf("got terminal %v by %v, to move %v; want over by %s", next.Terminal(), term, next.ToMove(), tt.termination)
			}
			if got := next.Outcomes(); got != tt.outcomes {
				t.Errorf("got outcomes %v, want %v", got, tt.outcomes)
			}
			if got := next.Context(i)["legal_moves"]; len(got.([]string)) != 0 {
				t.Errorf("got legal_moves %v after the end, want none", got)
			}
			if got := next.ForcedMove(1 - i); got != nil {
				t.Errorf("got forced move %s after the end, want nil", got)
			}
			if _, err := next.ParseMove(1-i, s.ForcedMove(i)); errKind(err) != "illegal" {
				t.Errorf("got error %v for a move after the end, want an illegal move", err)
			}
		})
	}
}

func TestInsufficientMaterial(t *testing.T) {
	tests := []struct {
		placement string
		want      bool
	}{
		{"4k3/8/8/8/8/8/8/4K3", true},
		{"4k3/8/8/8/8/8/8/3BK3", true},
		{"4k3/8/8/8/8/8/8/3NK3", true},
		{"4kb2/8/8/8/8/8/8/2B1K3", true},   // both bishops on dark squares
		{"4k1b1/8/8/8/8/8/8/2B1K3", false}, // opposite colours
		{"4k3/8/8/8/8/8/8/2NNK3", false},
		{"4kn2/8/8/8/8/8/8/3NK3", false},
		{"4k3/8/8/8/8/8/4P3/4K3", false},
		{"4k3/8/8/8/8/8/8/R3K3", false},
		{"4k3/8/8/8/8/8/8/3QK3", false},
	}
	for _, tt := range tests {
		t.Run(tt.placement, func(t *testing.T) {
			pos, err := decodeFEN(tt.placement + " w - - 0 1")
			if err != nil {
				t.Fatal(err)
			}
			if got := insufficientMaterial(pos.Board()); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChessParseMove(t *testing.T) {
	g := mustGame(t, TypeChess, nil)
	s := g.NewState(0)
	promo := chessFrom(t, "4k3/P7/8/8/8/8/7p/4K3 w - - 0 1", 200)
	over := chessPlay(t, s, "f2f3", "e7e5", "g2g4", "d8h4")
	tests := []struct {
		name   string
		state  State
		player int
		raw    string
		want   string // canonical move, or the error kind
	}{
		{"uci object", s, 0, `{"uci":"e2e4"}`, string(uciMove("e2e4"))},
		{"bare string", s, 0, `"g1f3"`, string(uciMove("g1f3"))},
		{"upper case", s, 0, `"E2E4"`, string(uciMove("e2e4"))},
		{"from and to", s, 0, `{"from":"e2","to":"e4"}`, string(uciMove("e2e4"))},
		{"null promotion", s, 0, `{"from":"b1","to":"c3","promotion":null}`, string(uciMove("b1c3"))},
		{"empty promotion", s, 0, `{"from":"b1","to":"c3","promotion":""}`, string(uciMove("b1c3"))},
		{"extra fields", s, 0, ` {"uci": "d2d4", "reasoning": "centre", "confidence": 0.8} `, string(uciMove("d2d4"))},
		{"promotion in uci", promo, 0, `"a7a8q"`, string(uciMove("a7a8q"))},
		{"upper-case promotion", promo, 0, `{"from":"a7","to":"a8","promotion":"N"}`, string(uciMove("a7a8n"))},
		{"under-promotion in uci", promo, 0, `{"uci":"A7A8R"}`, string(uciMove("a7a8r"))},
		{"null", s, 0, `null`, "malformed"},
		{"empty", s, 0, ``, "malformed"},
		{"number", s, 0, `42`, "malformed"},
		{"array", s, 0, `["e2e4"]`, "malformed"},
		{"truncated", s, 0, `{"uci":"e2e4"`, "malformed"},
		{"trailing data", s, 0, `"e2e4" "e7e5"`, "malformed"},
		{"short", s, 0, `"e2"`, "malformed"},
		{"spaces inside", s, 0, `" e2e4"`, "malformed"},
		{"san", s, 0, `"Nf3"`, "malformed"},
		{"castling notation", s, 0, `"O-O"`, "malformed"},
		{"off the board", s, 0, `"e2e9"`, "malformed"},
		{"file i", s, 0, `"i2i4"`, "malformed"},
		{"promotion to king", promo, 0, `"a7a8k"`, "malformed"},
		{"six characters", s, 0, `"e2e4qq"`, "malformed"},
		{"uci number", s, 0, `{"uci":42}`, "malformed"},
		{"uci null", s, 0, `{"uci":null}`, "malformed"},
		{"empty object", s, 0, `{}`, "malformed"},
		{"from without to", s, 0, `{"from":"e2"}`, "malformed"},
		{"to a number", s, 0, `{"from":"e2","to":4}`, "malformed"},
		{"squares split oddly", s, 0, `{"from":"e","to":"2e4"}`, "malformed"},
		{"uci and from", s, 0, `{"uci":"e2e4","from":"e2","to":"e4"}`, "malformed"},
		{"promotion word", promo, 0, `{"from":"a7","to":"a8","promotion":"queen"}`, "malformed"},
		{"promotion number", promo, 0, `{"from":"a7","to":"a8","promotion":5}`, "malformed"},
		{"oversized string", s, 0, `"` + strings.Repeat("e", maxMoveSize) + `"`, "malformed"},
		{"oversized object", s, 0, `{"uci":"e2e4","pad":"` + strings.Repeat("x", maxMoveSize) + `"}`, "malformed"},
		{"pawn three squares", s, 0, `"e2e5"`, "illegal"},
		{"same square", s, 0, `"e2e2"`, "illegal"},
		{"opponent's piece", s, 0, `"e7e5"`, "illegal"},
		{"castling blocked", s, 0, `"e1g1"`, "illegal"},
		{"promotion without piece", promo, 0, `{"from":"a7","to":"a8"}`, "illegal"},
		{"promotion off the last rank", s, 0, `"e2e4q"`, "illegal"},
		{"not your turn", s, 1, `"e7e5"`, "illegal"},
		{"no such player", s, 2, `"e2e4"`, "illegal"},
		{"match over", over, 0, `"a2a3"`, "illegal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkParseMove(t, tt.state, tt.player, tt.raw, tt.want)
		})
	}
}

func TestChessApplyRefuses(t *testing.T) {
	s := mustGame(t, TypeChess, nil).NewState(0)
	tests := []struct {
		name  string
		moves []json.RawMessage
		want  string
	}{
		{"no move", nil, "apply: want 1 move, got 0"},
		{"two moves", []json.RawMessage{uciMove("e2e4"), uciMove("d2d4")}, "apply: want 1 move, got 2"},
		{"illegal", []json.RawMessage{uciMove("e2e5")}, "apply: illegal move: e2e5 is not a legal move in " + chessStartFEN},
		{"malformed", []json.RawMessage{json.RawMessage(`{}`)}, `apply: malformed move: missing field "from"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Apply(tt.moves)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestChessContext(t *testing.T) {
	g := mustGame(t, TypeChess, nil)
	s := g.NewState(0)
	start := `{"fen":"` + chessStartFEN + `","is_check":false,"last_move":null,"legal_moves":["a2a3","a2a4","b1a3","b1c3","b2b3","b2b4",` +
		`"c2c3","c2c4","d2d3","d2d4","e2e3","e2e4","f2f3","f2f4","g1f3","g1h3","g2g3","g2g4","h2h3","h2h4"],` +
		`"move_number":1,"moves":[],"ply":0,"side_to_move":"white","your_color":"white"}`
	if got := string(contextJSON(t, s, 0)); got != start {
		t.Errorf("got start context %s, want %s", got, start)
	}
	legal, err := g.LegalMoves(contextJSON(t, s, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rawStrings(legal), []string{string(uciMove("a2a3")), string(uciMove("a2a4"))}; !slices.Equal(got[:2], want) || len(got) != 20 {
		t.Errorf("got legal moves %v, want 20 starting %v", got, want)
	}
	tests := []struct {
		moves                  []string
		player                 int
		side, last             string
		moveNumber, ply, legal int
		check                  bool
	}{
		{[]string{"e2e4"}, 1, "black", "e2e4", 1, 1, 20, false},
		{[]string{"e2e4", "e7e5"}, 0, "white", "e7e5", 2, 2, 29, false},
		{[]string{"e2e4", "e7e5", "g1f3"}, 1, "black", "g1f3", 2, 3, 29, false},
		{[]string{"e2e4", "f7f6", "d2d4", "g7g5", "d1h5"}, 1, "black", "d1h5", 3, 5, 0, true},
		{[]string{"e2e4", "d7d5", "f1b5"}, 1, "black", "f1b5", 2, 3, 5, true},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.moves, " "), func(t *testing.T) {
			next := chessPlay(t, s, tt.moves...)
			ctx := next.Context(tt.player)
			if ctx["side_to_move"] != tt.side || ctx["your_color"] != tt.side || ctx["last_move"] != tt.last ||
				ctx["move_number"] != tt.moveNumber || ctx["ply"] != tt.ply || len(ctx["legal_moves"].([]string)) != tt.legal ||
				ctx["is_check"] != tt.check || !slices.Equal(ctx["moves"].([]string), tt.moves) {
				t.Errorf("got context %v, want %s to move after %v, move %d, ply %d, %d legal moves, in check %t",
					ctx, tt.side, tt.moves, tt.moveNumber, tt.ply, tt.legal, tt.check)
			}
			if next.Terminal() {
				return // checkmate: nobody is asked
			}
			if _, err := g.LegalMoves(contextJSON(t, next, tt.player)); err != nil {
				t.Errorf("got error %v for the mover's context, want none", err)
			}
			parsed, err := ParseChessContext(contextJSON(t, next, tt.player))
			if err != nil || parsed.IsCheck != tt.check || !slices.Equal(parsed.Moves, tt.moves) {
				t.Errorf("parsed is_check %t and moves %v (error %v), want %t and %v", parsed.IsCheck, parsed.Moves, err, tt.check, tt.moves)
			}
			if err := parsed.CheckMoves(); err != nil {
				t.Errorf("got error %v checking the moves, want none", err)
			}
			// The player not to move is never asked, and its context is not one it could be asked with.
			if _, err := g.LegalMoves(contextJSON(t, next, 1-tt.player)); err == nil {
				t.Error("got no error for the waiting player's context, want one")
			}
		})
	}
}

// chessContext is a context for fen as the referee would send it, before patch edits it.
func chessContext(t *testing.T, fen string, ply int, patch func(map[string]any)) string {
	t.Helper()
	pos, err := decodeFEN(fen)
	if err != nil {
		t.Fatal(err)
	}
	side := chessSides[sideIndex(pos.Turn())]
	legal := []string{}
	for _, m := range sortedMoves(pos) {
		legal = append(legal, m.String())
	}
	ctx := map[string]any{"fen": fen, "side_to_move": side, "your_color": side, "legal_moves": legal, "last_move": nil, "move_number": fullMoveNumber(pos), "ply": ply}
	if ply > 0 {
		ctx["last_move"] = "e2e4"
	}
	if patch != nil {
		patch(ctx)
	}
	return mustMarshal(t, ctx)
}

func TestChessLegalMovesRefusesContext(t *testing.T) {
	g := mustGame(t, TypeChess, map[string]any{"max_plies": 50})
	const afterE4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
	set := func(key string, v any) func(map[string]any) { return func(m map[string]any) { m[key] = v } }
	drop := func(key string) func(map[string]any) { return func(m map[string]any) { delete(m, key) } }
	tests := []struct {
		name string
		ctx  string
		want string
	}{
		{"not an object", `[]`, "not a JSON object"},
		{"null", `null`, "not a JSON object"},
		{"no fen", chessContext(t, chessStartFEN, 0, drop("fen")), `missing field "fen"`},
		{"fen a number", chessContext(t, chessStartFEN, 0, set("fen", 1)), `field "fen" must be a string`},
		{"fen garbage", chessContext(t, chessStartFEN, 0, set("fen", "start")), `field "fen": chess: fen invalid format`},
		{"fen bad piece", chessContext(t, chessStartFEN, 0, set("fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1")), `field "fen": chess: fen invalid piece`},
		{"no black king", chessContext(t, "8/8/8/8/8/8/8/4K3 w - - 0 1", 0, nil), "1 white and 0 black kings, want one each"},
		{"two white kings", chessContext(t, "4k3/8/8/8/8/8/8/3KK3 w - - 0 1", 0, nil), "2 white and 1 black kings"},
		{"pawn on the last rank", chessContext(t, "P3k3/8/8/8/8/8/8/4K3 w - - 0 1", 0, nil), "pawn on a8"},
		{"castling without the rook", chessContext(t, "4k3/8/8/8/8/8/8/4K3 w K - 0 1", 0, nil), "castling right K without king and rook at home"},
		{"castling without the king", chessContext(t, "r2k4/8/8/8/8/8/8/4K3 w q - 0 1", 0, nil), "castling right q without king and rook at home"},
		{"en passant without a pawn", chessContext(t, "4k3/8/8/8/8/8/8/4K3 w - e6 0 1", 0, nil), "en passant square e6 without a pawn"},
		{"en passant of the wrong side", chessContext(t, "4k3/8/8/8/4P3/8/8/4K3 w - e3 0 1", 0, nil), "en passant square e3 without a pawn"},
		{"opponent in check", chessContext(t, "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", 0, nil), "the side not to move is in check"},
		{"side to move disagrees", chessContext(t, chessStartFEN, 0, set("side_to_move", "black")), `side_to_move "black" but the FEN has white to move`},
		{"colour disagrees", chessContext(t, chessStartFEN, 0, set("your_color", "black")), `your_color "black" but white is to move`},
		{"no colour", chessContext(t, chessStartFEN, 0, drop("your_color")), `missing field "your_color"`},
		{"move number disagrees", chessContext(t, chessStartFEN, 0, set("move_number", 2)), "move_number 2 but the FEN has 1"},
		{"no ply", chessContext(t, chessStartFEN, 0, drop("ply")), `missing field "ply"`},
		{"negative ply", chessContext(t, chessStartFEN, 0, set("ply", -1)), "negative ply -1"},
		{"last move at ply 0", chessContext(t, chessStartFEN, 0, set("last_move", "e2e4")), `field "last_move" must be a UCI move, or null at ply 0`},
		{"no last move later", chessContext(t, chessStartFEN, 2, set("last_move", nil)), `field "last_move" must be a UCI move`},
		{"last move garbage", chessContext(t, chessStartFEN, 2, set("last_move", "e2")), `field "last_move": "e2" is not a UCI move`},
		{"legal moves disagree", chessContext(t, chessStartFEN, 0, set("legal_moves", []string{"e2e4"})), `legal_moves ["e2e4"] are not the position's 20 legal moves`},
		{"legal moves unsorted", chessContext(t, "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", 0, func(m map[string]any) { slices.Reverse(m["legal_moves"].([]string)) }),
			"are not the position's"},
		{"checkmated", chessContext(t, "R5k1/5ppp/8/8/8/8/8/6K1 b - - 1 1", 0, nil), "match is over: checkmate"},
		{"stalemated", chessContext(t, "7k/5Q2/6K1/8/8/8/8/8 b - - 1 1", 0, nil), "match is over: stalemate"},
		{"dead position", chessContext(t, "4k3/8/8/8/8/8/8/3NK3 b - - 1 1", 0, nil), "match is over: insufficient_material"},
		{"fifty moves", chessContext(t, "4k3/8/8/8/8/8/8/R3K3 b - - 100 80", 0, nil), "match is over: fifty_move_rule"},
		{"move cap", chessContext(t, chessStartFEN, 50, nil), "match is over: ply 50 reached max_plies 50"},
		{"is_check disagrees", chessContext(t, chessStartFEN, 0, set("is_check", true)), "is_check true but the side to move is in check: false"},
		{"is_check a string", chessContext(t, chessStartFEN, 0, set("is_check", "no")), `is_check "no" but`},
		{"moves a string", chessContext(t, chessStartFEN, 0, set("moves", "e2e4")), `field "moves" must be a list of UCI moves (got "e2e4")`},
		{"moves null", chessContext(t, chessStartFEN, 0, set("moves", nil)), `field "moves" must be a list of UCI moves (got null)`},
		{"moves longer than ply", chessContext(t, chessStartFEN, 0, set("moves", []string{"e2e4"})), `field "moves" holds 1 moves but ply is 0`},
		{"move garbage", chessContext(t, afterE4, 1, set("moves", []string{"e2"})), `field "moves": move 1: "e2" is not a UCI move`},
		{"moves end elsewhere", chessContext(t, afterE4, 1, set("moves", []string{"d2d4"})), `field "moves" ends with d2d4 but last_move is e2e4`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := g.LegalMoves(json.RawMessage(tt.ctx))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "parse chess context: ") {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
			if over := strings.Contains(tt.want, "match is over"); errors.Is(err, ErrMatchOver) != over {
				t.Errorf("got errors.Is(err, ErrMatchOver) = %t, want %t", !over, over)
			}
		})
	}
	if _, err := g.LegalMoves(json.RawMessage(chessContext(t, chessStartFEN, 49, nil))); err != nil {
		t.Errorf("got error %v one ply before the cap, want none", err)
	}
	if _, err := g.LegalMoves(json.RawMessage(chessContext(t, chessStartFEN, 0, drop("legal_moves")))); err != nil {
		t.Errorf("got error %v without legal_moves, want none", err)
	}
}

// TestChessCheckMoves replays the moves of contexts that parse: those that do not lead to
// the position, or lead through or to the end of the match, are refused.
func TestChessCheckMoves(t *testing.T) {
	const afterE4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
	// knightDance brings the start position back twice: its third occurrence ends the match.
	knightDance := []string{"g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"}
	moves := func(last string, ms ...string) func(map[string]any) {
		return func(m map[string]any) { m["moves"], m["last_move"] = ms, last }
	}
	tests := []struct {
		name string
		ctx  string
		want string // "" for none
	}{
		{"no moves sent", chessContext(t, afterE4, 1, nil), ""},
		{"the start", chessContext(t, chessStartFEN, 0, func(m map[string]any) { m["moves"] = []string{} }), ""},
		{"one move", chessContext(t, afterE4, 1, moves("e2e4", "e2e4")), ""},
		{"twice is no repetition yet", chessContext(t, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 4 3", 4, moves("f6g8", knightDance[:4]...)), ""},
		{"illegal move", chessContext(t, afterE4, 1, moves("e2e5", "e2e5")),
			"check chess moves: move 1: e2e5 is not a legal move in rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"},
		{"elsewhere", chessContext(t, afterE4, 1, moves("d2d4", "d2d4")),
			"check chess moves: the moves lead to rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq d3 0 1, not to the fen"},
		{"other clocks", chessContext(t, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 7", 1, moves("e2e4", "e2e4")),
			"check chess moves: the moves lead to"},
		{"threefold repetition", chessContext(t, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 8 5", 8, moves("f6g8", knightDance...)),
			"check chess moves: match is over: threefold_repetition"},
		{"moves past the end", chessContext(t, afterE4[:len(afterE4)-1]+"5", 9, moves("e2e4", append(slices.Clone(knightDance), "e2e4")...)),
			"check chess moves: move 9: the match was over (threefold_repetition)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, err := ParseChessContext(json.RawMessage(tt.ctx))
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			err = ctx.CheckMoves()
			if tt.want == "" {
				if err != nil {
					t.Errorf("got error %v, want none", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got error %v, want one starting %q", err, tt.want)
			}
			if over := strings.Contains(tt.want, "match is over"); errors.Is(err, ErrMatchOver) != over {
				t.Errorf("got errors.Is(err, ErrMatchOver) = %t, want %t", !over, over)
			}
		})
	}
}

// TestChessInCheck compares is_check with the library's check tag on every move of random
// games but under-promotions (the library tags those as if a queen stood there), and tries
// hand-picked positions.
func TestChessInCheck(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	checks := 0
	for range 20 {
		s := mustGame(t, TypeChess, map[string]any{"max_plies": 300}).NewState(0).(chessState)
		for !s.Terminal() {
			k := rng.IntN(len(s.legal))
			want := s.legal[k].HasTag(chess.Check)
			promo := s.legal[k].Promo()
			next, err := s.Apply([]json.RawMessage{uciMove(s.uci[k])})
			if err != nil {
				t.Fatal(err)
			}
			s = next.(chessState)
			if promo != chess.NoPieceType && promo != chess.Queen {
				continue
			}
			if s.Context(0)["is_check"] != want {
				t.Fatalf("after %s to %s: got is_check %v, want %t", s.last.uci, s.pos, s.Context(0)["is_check"], want)
			}
			if want {
				checks++
			}
		}
	}
	if checks < 20 {
		t.Errorf("only %d checks in 20 random games: the comparison says little", checks)
	}
	for fen, want := range map[string]bool{
		"8/7k/8/8/8/8/8/KB5r b - - 0 1":      true,  // the bishop is pinned and gives check all the same
		"8/7k/6p1/8/8/8/8/KB5r b - - 0 1":    false, // a pawn of its own shields the king
		"4k3/8/8/8/8/8/3p4/4K3 w - - 0 1":    true,  // pawns attack forward only
		"4k3/8/8/8/8/8/4p3/4K3 w - - 0 1":    false,
		"4k3/8/5N2/8/8/8/8/4K3 b - - 0 1":    true,
		"4k3/8/8/8/8/8/8/q3K3 w - - 0 1":     true,
		"7N/8/8/1B2k3/8/2p1K3/8/8 b - - 0 1": false, // an under-promotion the library calls a check
		"7B/8/8/1B2k3/8/2p1K3/8/8 b - - 0 1": true,
	} {
		pos, err := decodeFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		if got := inCheck(pos); got != want {
			t.Errorf("inCheck(%s) = %t, want %t", fen, got, want)
		}
	}
}

func TestChessFinal(t *testing.T) {
	s := chessPlay(t, mustGame(t, TypeChess, nil).NewState(0), "f2f3", "e7e5", "g2g4", "d8h4")
	got := mustMarshal(t, s.Final())
	pgn := "[Event \"Agent League\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n[White \"?\"]\n[Black \"?\"]\n" +
		"[Result \"0-1\"]\n[PlyCount \"4\"]\n[Termination \"normal\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n"
	want := mustMarshal(t, map[string]any{
		"fen":         "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
		"termination": "checkmate",
		"winner":      "black",
		"result":      "0-1",
		"moves_uci":   []string{"f2f3", "e7e5", "g2g4", "d8h4"},
		"moves_san":   []string{"f3", "e5", "g4", "Qh4#"},
		"pgn":         pgn,
	})
	if got != want {
		t.Errorf("got final\n%s\nwant\n%s", got, want)
	}
	start := mustMarshal(t, mustGame(t, TypeChess, nil).NewState(0).Final())
	if want := `"moves_san":[],"moves_uci":[],"pgn":`; !strings.Contains(start, want) || !strings.Contains(start, `"result":"*","termination":"in_progress","winner":""`) {
		t.Errorf("got final %s before any move, want empty move lists and an unfinished result", start)
	}
}

// TestChessPGNReadsBack has the library read back the PGN of random games, from the standard
// start and from a position with Black to move, and replay them to the same final position.
func TestChessPGNReadsBack(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	starts := []string{chessStartFEN, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R b KQkq - 3 17"}
	for k := range 6 {
		fen := starts[k%2]
		t.Run(fmt.Sprintf("game %d from %s", k, fen), func(t *testing.T) {
			s := chessFrom(t, fen, 700)
			for !s.Terminal() {
				legal := chessLegal(s)
				s = chessPlay(t, s, legal[rng.IntN(len(legal))])
			}
			f := s.Final()
			pgn := f["pgn"].(string)
			for n, line := range strings.Split(pgn, "\n") {
				if len(line) > pgnLineWidth {
					t.Errorf("line %d has %d characters, want at most %d", n+1, len(line), pgnLineWidth)
				}
			}
			read, err := chess.PGN(strings.NewReader(pgn))
			if err != nil {
				t.Fatalf("read PGN: %v\n%s", err, pgn)
			}
			replay := chess.NewGame(read)
			if got, want := len(replay.Moves()), len(f["moves_san"].([]string)); got != want {
				t.Errorf("PGN replays %d moves, want %d", got, want)
			}
			if got, want := replay.Position().String(), f["fen"]; got != want {
				t.Errorf("PGN replays to %s, want %s", got, want)
			}
			if got := replay.GetTagPair("Result"); got != f["result"] {
				t.Errorf("got Result tag %q, want %q", got, f["result"])
			}
		})
	}
}

// TestChessPGNTags writes tags in the order given, escapes quotes and backslashes, blanks
// control characters, and ends the movetext with the result given.
func TestChessPGNTags(t *testing.T) {
	tags := []PGNTag{{"Event", `The "Cup" \ 2025`}, {"Site", "two\tlines\nhere"}, {"Result", "0-1"}, {"MatchId", "r01-m01"}}
	got := ChessPGN(tags, []string{"f3", "e5", "g4", "Qh4#"}, "0-1")
	want := `[Event "The \"Cup\" \\ 2025"]` + "\n" + `[Site "two lines here"]` + "\n" + `[Result "0-1"]` + "\n" + `[MatchId "r01-m01"]` + "\n\n" +
		"1. f3 e5 2. g4 Qh4# 0-1\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestChessPGNFitsTheProtocol checks that the longest PGN max_plies allows stays within the
// 8192 characters the protocol allows a string of final_state: every move as long as SAN gets.
func TestChessPGNFitsTheProtocol(t *testing.T) {
	start, err := decodeFEN(chessStartFEN)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Default().Params(TypeChess, map[string]any{"max_plies": chessMaxPlies + 1}); err == nil {
		t.Fatalf("max_plies %d is accepted: this test must use the new bound", chessMaxPlies+1)
	}
	san := slices.Repeat([]string{"Qh4xe1+"}, chessMaxPlies)
	if n := len(chessPGN(start, san, "1/2-1/2", chessMoveCap)); n > 8192 {
		t.Errorf("PGN of %d plies has %d characters, want at most 8192", chessMaxPlies, n)
	}
}

// TestChessStateConcurrentUse reads and extends one state from several goroutines, as the
// referee and players do; under -race it catches any write to shared library state.
func TestChessStateConcurrentUse(t *testing.T) {
	g := mustGame(t, TypeChess, nil)
	s := chessPlay(t, g.NewState(0), "e2e4", "e7e5")
	ctx := contextJSON(t, s, 0)
	want := mustMarshal(t, s.Final())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			legal, err := g.LegalMoves(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			for _, m := range legal {
				if _, err := s.ParseMove(0, m); err != nil {
					t.Error(err)
				}
				if _, err := s.Apply([]json.RawMessage{m}); err != nil {
					t.Error(err)
				}
			}
			if got := mustMarshal(t, s.Final()); got != want {
				t.Errorf("got final %s, want %s", got, want)
			}
			g.NewState(0)
		})
	}
	wg.Wait()
}

// BenchmarkChessGame applies the moves of a 200-ply game one by one and reads the final state.
func BenchmarkChessGame(b *testing.B) {
	g := mustGame(b, TypeChess, map[string]any{"max_plies": 200})
	rng := rand.New(rand.NewPCG(1, 1))
	var moves []json.RawMessage
	s := g.NewState(0)
	for !s.Terminal() {
		legal := chessLegal(s)
		moves = append(moves, uciMove(legal[rng.IntN(len(legal))]))
		s = play(b, s, []string{string(moves[len(moves)-1])})
	}
	b.Logf("%d plies, %s", len(moves), s.Final()["termination"])
	for b.Loop() {
		s := g.NewState(0)
		for _, m := range moves {
			next, err := s.Apply([]json.RawMessage{m})
			if err != nil {
				b.Fatal(err)
			}
			s = next
		}
		s.Final()
	}
}

// TestChessCanWin: the material rule of the draw on time. Each position is judged for
// both sides: whether White, then Black, could still mate by some series of legal moves.
func TestChessCanWin(t *testing.T) {
	cases := []struct {
		name         string
		fen          string
		white, black bool
	}{
		{"start", chessStartFEN, true, true},
		{"lone kings", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", false, false},
		{"a pawn mates by promotion", "4k3/8/8/8/8/8/P7/4K3 w - - 0 1", true, false},
		{"a rook", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1", true, false},
		{"a knight against a lone king", "4k3/8/8/8/8/8/8/1N2K3 w - - 0 1", false, false},
		{"a knight against a bishop, which can block", "4k3/8/8/8/8/8/8/bN2K3 w - - 0 1", true, true},
		{"a knight against a pawn", "4k3/p7/8/8/8/8/8/1N2K3 w - - 0 1", true, true},
		{"two knights mate with help", "4k3/8/8/8/8/8/8/NN2K3 w - - 0 1", true, false},
		{"bishop and knight", "4k3/8/8/8/8/8/8/BN2K3 w - - 0 1", true, false},
		{"a bishop against a lone king", "4k3/8/8/8/8/8/8/2B1K3 w - - 0 1", false, false},
		{"bishops on one colour", "4k3/8/8/8/8/8/B7/1B2K3 w - - 0 1", false, false},
		{"bishops on both colours", "4k3/8/8/8/8/8/8/2BBK3 w - - 0 1", true, false},
		{"bishops of one colour on both sides", "4k3/8/8/8/8/8/b7/1B2K3 w - - 0 1", false, false},
		{"bishops of opposite colours", "4k3/8/8/8/8/8/8/2BbK3 w - - 0 1", true, true},
		{"a bishop against a knight", "4k3/8/8/8/8/8/8/2B1K1n1 w - - 0 1", true, true},
		{"a bishop against a rook", "4k3/8/8/8/8/8/8/2B1K2r w - - 0 1", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := chessFrom(t, c.fen, 100)
			if got := CanWin(s, 0); got != c.white {
				t.Errorf("White can win: %v, want %v", got, c.white)
			}
			if got := CanWin(s, 1); got != c.black {
				t.Errorf("Black can win: %v, want %v", got, c.black)
			}
		})
	}
	if g, err := Default().New("tic_tac_toe", nil); err != nil || !CanWin(g.NewState(1), 0) {
		t.Error("a game without the rule is winnable")
	}
}
