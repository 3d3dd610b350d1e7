package game

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/corentings/chess/v2"
)

// PGNClock writes a clock as lichess and cutechess do: H:MM:SS, tenths when not zero,
// cut rather than rounded.
func TestPGNClock(t *testing.T) {
	for ms, want := range map[int64]string{
		9900: "[%clk 0:00:09.9]", 9999: "[%clk 0:00:09.9]", 10000: "[%clk 0:00:10]", 0: "[%clk 0:00:00]", 99: "[%clk 0:00:00]",
		62000: "[%clk 0:01:02]", 3600000: "[%clk 1:00:00]", 3723450: "[%clk 1:02:03.4]", 36000000: "[%clk 10:00:00]", -5: "[%clk 0:00:00]",
	} {
		if got := PGNClock(ms); got != want {
			t.Errorf("PGNClock(%d) = %q, want %q", ms, got, want)
		}
	}
}

// ChessPGNCommented puts each move's comment after it, numbers a Black move after a
// comment again, wraps within 79 columns, and pgn-extract and the chess library read it.
func TestChessPGNCommented(t *testing.T) {
	tags := []PGNTag{{"Event", "?"}, {"Site", "?"}, {"Date", "????.??.??"}, {"Round", "?"}, {"White", "a"}, {"Black", "b"}, {"Result", "0-1"}, {"TimeControl", "10+0.1"}}
	san := []string{"f3", "e5", "g4", "Qh4#"}
	comments := []string{PGNClock(9900), PGNClock(10050), "", "a } b"}
	got := ChessPGNCommented(tags, san, comments, "0-1")
	movetext := "1. f3 {[%clk 0:00:09.9]} 1... e5 {[%clk 0:00:10]} 2. g4 Qh4# {a ) b} 0-1\n"
	if !strings.HasSuffix(got, "\n\n"+movetext) || !strings.Contains(got, `[TimeControl "10+0.1"]`) {
		t.Errorf("got\n%s\nwant the movetext\n%s", got, movetext)
	}
	if plain := ChessPGNCommented(tags, san, nil, "0-1"); plain != ChessPGN(tags, san, "0-1") || !strings.HasSuffix(plain, "\n1. f3 e5 2. g4 Qh4# 0-1\n") {
		t.Errorf("without comments got\n%s", plain)
	}

	// A long game with a clock after every move: lines within 79 columns, read back by
	// the chess library and by pgn-extract.
	g := chess.NewGame()
	san, comments = nil, nil
	for i := 0; i < 120 && g.Outcome() == chess.NoOutcome; i++ {
		moves := g.ValidMoves()
		mv := moves[(i*7)%len(moves)]
		san = append(san, chess.AlgebraicNotation{}.Encode(g.Position(), &mv))
		if err := g.Move(&mv, nil); err != nil {
			t.Fatal(err)
		}
		comments = append(comments, PGNClock(int64(600000-i*4321)))
	}
	tags[6].Value = "*"
	pgn := ChessPGNCommented(tags, san, comments, "*")
	for n, line := range strings.Split(pgn, "\n") {
		if len(line) > pgnLineWidth {
			t.Errorf("line %d has %d characters, want at most %d", n+1, len(line), pgnLineWidth)
		}
	}
	read, err := chess.PGN(strings.NewReader(pgn))
	if err != nil {
		t.Fatalf("read PGN: %v\n%s", err, pgn)
	}
	if n := len(chess.NewGame(read).Moves()); n != len(san) {
		t.Errorf("read back %d moves, want %d", n, len(san))
	}
	path := filepath.Join(t.TempDir(), "clocks.pgn")
	if err := os.WriteFile(path, []byte(pgn+"\n"+got), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := testtools.CheckPGN(path); err != nil || n != 2 {
		t.Errorf("pgn-extract read %d games, error %v; want 2 and none\n%s", n, err, pgn)
	}
}
