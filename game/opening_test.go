package game

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

func rawMoves(moves ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(moves))
	for k, m := range moves {
		out[k] = json.RawMessage(m)
	}
	return out
}

// A match opens from an opening's position and moves: the players' first move is made
// where the opening ends, the context and the final state name the start position, and the
// PGN sets it up. Openings the game cannot start from are refused with the reason.
func TestOpen(t *testing.T) {
	reg := Default()
	chessG, err := reg.New(TypeChess, nil)
	if err != nil {
		t.Fatal(err)
	}
	const sicilian = "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 0 2"
	s, err := Open(chessG, 1, &protocol.Opening{Name: "book.epd#1", FEN: sicilian, Moves: rawMoves(`"g1f3"`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ToMove(); len(got) != 1 || got[0] != 1 {
		t.Fatalf("to move %v, want Black (1) after 2. Nf3", got)
	}
	ctx := s.Context(1)
	if ctx["start_fen"] != sicilian || ctx["ply"] != 1 || !strings.HasPrefix(ctx["fen"].(string), "rnbqkbnr/pp1ppppp/8/2p5/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq") {
		t.Errorf("context %v: want the start position, ply 1 and the position after Nf3", ctx)
	}
	raw, _ := json.Marshal(ctx)
	parsed, err := ParseChessContext(raw)
	if err != nil || parsed.StartFEN != sicilian || parsed.CheckMoves() != nil {
		t.Errorf("the context reads back as %+v (%v), its moves checked from the start: %v", parsed, err, parsed.CheckMoves())
	}
	s = chessPlay(t, s, "b8c6")
	final := s.Final()
	if final["start_fen"] != sicilian || !strings.Contains(final["pgn"].(string), `[FEN "`+sicilian+`"]`) || !strings.Contains(final["pgn"].(string), "2. Nf3 Nc6") {
		t.Errorf("final state %v: want the start position and a PGN set up from it", final)
	}
	if _, ok := chessG.NewState(1).Context(0)["start_fen"]; ok {
		t.Error("a match from the standard start names a start_fen")
	}

	ttt, _ := reg.New(TypeTicTacToe, nil)
	rps, _ := reg.New(TypeRockPaperScissors, nil)
	for _, c := range []struct {
		name string
		g    Game
		o    protocol.Opening
		want string
	}{
		{"a bad FEN", chessG, protocol.Opening{Name: "b#2", FEN: "8/8/8 w - - 0 1"}, "opening b#2: fen"},
		{"a position with a king in check out of turn", chessG, protocol.Opening{Name: "b#3", FEN: "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1"}, "the side not to move is in check"},
		{"an illegal move", chessG, protocol.Opening{Name: "b#4", Moves: rawMoves(`"e2e5"`)}, "opening b#4: move 1"},
		{"a game over at its end", chessG, protocol.Opening{Name: "b#5", Moves: rawMoves(`"f2f3"`, `"e7e5"`, `"g2g4"`, `"d8h4"`)}, "the game is over at its end"},
		{"a position for a game without", ttt, protocol.Opening{Name: "x", FEN: sicilian}, "tic_tac_toe starts from no position"},
		{"a move after the game ends", ttt, protocol.Opening{Name: "y", Moves: rawMoves(`{"row":0,"col":0}`, `{"row":1,"col":0}`, `{"row":0,"col":1}`, `{"row":1,"col":1}`, `{"row":0,"col":2}`, `{"row":2,"col":2}`)}, "move 6"},
		{"a game whose players move together", rps, protocol.Opening{Name: "z", Moves: rawMoves(`"rock"`)}, "players take turns"},
	} {
		if _, err := Open(c.g, 1, &c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// A random opening is the same for the same seed, another for another seed, and never
// ends the game; a game whose players move together has none.
func TestRandomOpening(t *testing.T) {
	reg := Default()
	for _, gt := range []string{TypeTicTacToe, TypeConnectFour, TypeChess} {
		g, err := reg.New(gt, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := RandomOpening(g, 7, 6)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := RandomOpening(g, 7, 6)
		c, _ := RandomOpening(g, 8, 6)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		jc, _ := json.Marshal(c)
		if len(a) != 6 || string(ja) != string(jb) || string(ja) == string(jc) {
			t.Errorf("%s: seed 7 gives %s then %s, seed 8 %s: want 6 moves, the same for the same seed", gt, ja, jb, jc)
		}
		if _, err := Open(g, 1, &protocol.Opening{Name: "random", Moves: a}); err != nil {
			t.Errorf("%s: the random opening %s does not open: %v", gt, ja, err)
		}
	}
	// Tic-tac-toe has 9 cells: 8 plies that never end the game are not always there, and
	// the opening stops where every move would end it.
	g, _ := reg.New(TypeTicTacToe, nil)
	for seed := range int64(20) {
		moves, err := RandomOpening(g, seed, 9)
		if err != nil || len(moves) > 8 {
			t.Fatalf("seed %d: %d moves (%v), want at most 8", seed, len(moves), err)
		}
		if _, err := Open(g, 1, &protocol.Opening{Name: "random", Moves: moves}); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	rps, _ := reg.New(TypeRockPaperScissors, nil)
	if _, err := RandomOpening(rps, 1, 2); err == nil || !strings.Contains(err.Error(), "take turns") {
		t.Errorf("rock paper scissors: %v, want a game whose players take turns", err)
	}
}

// An EPD book of 20 positions reads as 20 openings named by file and entry, each with the
// clocks its operations set; a PGN book as each game's moves from its start (its FEN tag's
// position when it has one), cut to plies. Bad books are refused with the entry named.
func TestReadChessBook(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "testdata", "openings", "book20.epd"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	book, err := ReadChessBook("config/book20.epd", f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(book) != 20 || book[0].Name != "book20.epd#1" || book[0].FEN != "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq c6 0 2" ||
		book[4].FEN != "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3" || len(book[4].Moves) != 0 {
		t.Errorf("book %+v: want 20 positions, the first the Sicilian, the fifth the Italian with Black to move", book)
	}
	pgn, err := os.ReadFile(filepath.Join("..", "testdata", "openings", "book3.pgn"))
	if err != nil {
		t.Fatal(err)
	}
	games, err := ReadChessBook("book3.pgn", bytes.NewReader(pgn), 4)
	if err != nil {
		t.Fatal(err)
	}
	moves := func(o protocol.Opening) string { b, _ := json.Marshal(o.Moves); return string(b) }
	if len(games) != 3 || moves(games[0]) != `["e2e4","e7e5","g1f3","b8c6"]` || games[0].FEN != "" ||
		games[2].FEN != "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2" || moves(games[2]) != `["g1f3","d7d6","d2d4"]` || games[2].Name != "book3.pgn#3" {
		t.Errorf("PGN book %+v: want 3 openings cut to 4 plies, the third from its FEN", games)
	}
	for _, c := range []struct{ name, text, want string }{
		{"b.epd", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq\n", "line 1"},
		{"b.epd", "# only a comment\n\n", "no openings"},
		{"b.epd", "4k3/8/8/8/8/8/4R3/4K3 w - - hmvc 0; fmvn 1;\n", "the side not to move is in check"},
		{"b.epd", "4k3/8/8/8/8/8/8/4K3 w - - hmvc x;\n", `hmvc "x" is not a number`},
		{"b.epd", "4k3/8/8/8/8/8/8/4K3 w - - 12 40 c0 \"x\";\n", "game is over"}, // a full FEN read with its clocks: kings alone
		{"b.pgn", "1. e4 e5 2. Ke3 *\n", "game 1"},
		{"b.txt", "", "must end with .epd or .pgn"},
	} {
		if _, err := ReadChessBook(c.name, strings.NewReader(c.text), 0); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: got %v, want an error with %q", c.name, c.text, err, c.want)
		}
	}
}

// An EPD line's FEN: the clocks of its operations, or of a full FEN's number fields
// whatever operations follow.
func TestEPDFEN(t *testing.T) {
	for line, want := range map[string]string{
		`4k3/8/8/8/8/8/8/R3K3 w Q - hmvc 3; fmvn 20; id "x";`:  "4k3/8/8/8/8/8/8/R3K3 w Q - 3 20",
		`4k3/8/8/8/8/8/8/R3K3 w Q - id "no clocks";`:           "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1",
		`4k3/8/8/8/8/8/8/R3K3 w Q - 12 40 c0 "full FEN, ops";`: "4k3/8/8/8/8/8/8/R3K3 w Q - 12 40",
		`4k3/8/8/8/8/8/8/R3K3 w Q - 12 40`:                     "4k3/8/8/8/8/8/8/R3K3 w Q - 12 40",
	} {
		if got, err := epdFEN(line); err != nil || got != want {
			t.Errorf("epdFEN(%s) = %q, %v; want %q", line, got, err, want)
		}
	}
}
