package export

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Test helpers that run Debian's chess tools.

// debianTool is the executable name to run: the one on PATH, else where Debian's package
// installs it (/usr/games, a directory root's PATH lacks). make deps installs them.
func debianTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/games", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s is not installed (make deps installs it: apt-get install -y %s): %w", name, name, err)
	}
	return p, nil
}

// pgnSummary is the last line of pgn-extract's report.
var pgnSummary = regexp.MustCompile(`^(\d+) games? matched out of (\d+)\.$`)

// checkPGN runs Debian's pgn-extract -r (report errors, write no games) over file and
// returns how many games it read: a file it reads without a diagnostic is one chess tools
// accept. Any diagnostic is an error quoting the whole report. A clean report is a
// "Processing" line, one line per game and the summary, so every other line, and a game
// that was read but not matched, is a diagnostic.
func checkPGN(file string) (int, error) {
	bin, err := debianTool("pgn-extract")
	if err != nil {
		return 0, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "-r", file)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("pgn-extract: %w: %s", err, stderr.String())
	}
	report := strings.TrimRight(stderr.String(), "\n")
	lines := strings.Split(report, "\n")
	if stdout.Len() > 0 || len(lines) < 2 || lines[0] != "Processing "+file {
		return 0, fmt.Errorf("pgn-extract reports:\n%s%s", stdout.String(), report)
	}
	m := pgnSummary.FindStringSubmatch(lines[len(lines)-1])
	if m == nil || m[1] != m[2] || m[2] != strconv.Itoa(len(lines)-2) {
		return 0, errors.New("pgn-extract reports:\n" + report)
	}
	return len(lines) - 2, nil
}

// checkPGN counts the games of a valid file and refuses files pgn-extract has something
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
			n, err := checkPGN(path)
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
