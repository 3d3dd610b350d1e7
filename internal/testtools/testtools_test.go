package testtools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckPGN counts the games of a valid file and refuses files pgn-extract has something
// to say about.
func TestCheckPGN(t *testing.T) {
	game := func(event, result, moves string) string {
		return `[Event "` + event + `"]` + "\n[Site \"s\"]\n[Date \"2025.01.02\"]\n[Round \"1\"]\n[White \"a\"]\n[Black \"b\"]\n" +
			`[Result "` + result + `"]` + "\n\n" + moves + "\n"
	}
	mate := game(`The \"Cup\" \\ 2025`, "0-1", "1. f3 e5 2. g4 Qh4# 0-1")
	for _, tt := range []struct {
		name, pgn string
		games     int
		wantErr   bool
	}{
		{"two valid games", mate + "\n" + game("e", "*", "*"), 2, false},
		{"one valid game", mate, 1, false},
		{"no game", "", 0, false},
		{"an illegal move", game("e", "1-0", "1. e4 Ke7 1-0"), 0, true},
		{"result strings that differ", game("e", "1-0", "1. e4 e5 0-1"), 0, true},
		{"a result checkmate contradicts", game("e", "1-0", "1. f3 e5 2. g4 Qh4# 1-0"), 0, true},
		{"an unescaped quote", game(`The "Cup"`, "*", "*"), 0, true},
		{"an unclosed string", strings.Replace(mate, `2025"]`, `2025]`, 1), 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "games.pgn")
			if err := os.WriteFile(path, []byte(tt.pgn), 0o644); err != nil {
				t.Fatal(err)
			}
			n, err := CheckPGN(path)
			if tt.wantErr {
				if err == nil {
					t.Errorf("got %d games and no error, want an error", n)
				}
				return
			}
			if err != nil || n != tt.games {
				t.Errorf("got %d games, error %v; want %d games", n, err, tt.games)
			}
		})
	}
}
