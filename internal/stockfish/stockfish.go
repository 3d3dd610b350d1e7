// Package stockfish finds Debian's Stockfish, for the tests that play against it.
package stockfish

import (
	"fmt"
	"os"
	"os/exec"
)

// debianPath is where Debian's package installs stockfish, a directory root's PATH lacks.
const debianPath = "/usr/games/stockfish"

// Path is the stockfish to run: the one on PATH, else Debian's.
func Path() (string, error) {
	if p, err := exec.LookPath("stockfish"); err == nil {
		return p, nil
	}
	if _, err := os.Stat(debianPath); err != nil {
		return "", fmt.Errorf("stockfish is not installed (make deps installs it: apt-get install -y stockfish): %w", err)
	}
	return debianPath, nil
}
