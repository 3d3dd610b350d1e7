// Package pgnextract validates PGN files with Debian's pgn-extract, for tests: a file it
// reads without a diagnostic is one chess tools accept.
package pgnextract

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// debianPath is where Debian's package installs pgn-extract, a directory root's PATH lacks.
const debianPath = "/usr/games/pgn-extract"

// Path is the pgn-extract to run: the one on PATH, else Debian's.
func Path() (string, error) {
	if p, err := exec.LookPath("pgn-extract"); err == nil {
		return p, nil
	}
	if _, err := os.Stat(debianPath); err != nil {
		return "", fmt.Errorf("pgn-extract is not installed (make deps installs it: apt-get install -y pgn-extract): %w", err)
	}
	return debianPath, nil
}

// summary is the last line of pgn-extract's report.
var summary = regexp.MustCompile(`^(\d+) games? matched out of (\d+)\.$`)

// Check runs pgn-extract -r (report errors, write no games) over file and returns how many
// games it read. Any diagnostic is an error quoting the whole report. A clean report is a
// "Processing" line, one line per game and the summary, so every other line, and a game
// that was read but not matched, is a diagnostic.
func Check(file string) (int, error) {
	bin, err := Path()
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
	m := summary.FindStringSubmatch(lines[len(lines)-1])
	if m == nil || m[1] != m[2] || m[2] != strconv.Itoa(len(lines)-2) {
		return 0, errors.New("pgn-extract reports:\n" + report)
	}
	return len(lines) - 2, nil
}
