package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/league/export"
	"github.com/agentleague/agentleague/league/replay"
)

// logExitCodes is the part of the usage of verify and replay that documents their exit
// codes: run maps a replay.TornTailError to 3.
const logExitCodes = `exit codes:
  0  every check passed
  1  the log was changed or damaged: a line that is not an audit entry with more lines
     after it, a check that fails (verify also checks the hash chain; replay does
     not); or any other error
  2  a bad command line
  3  a torn tail: the last line was cut short by a crash mid-write, and every line
     before it checks out. The League Manager cuts such a line when it starts and
     writes an AUDIT_RECOVERY line saying how many bytes it removed.
A line that stops the reading is named with its kind on stderr ("line 42: torn last
line: ..."); the lines before it are still checked.`

// logCommand parses the command line of verify or replay: flags and the audit log.
func logCommand(fset *flag.FlagSet, synopsis, about string, args []string) (string, error) {
	fset.Usage = func() {
		fmt.Fprintf(fset.Output(), "usage: %s\n\n%s\n\n%s\n\nflags:\n", synopsis, about, logExitCodes)
		fset.PrintDefaults()
	}
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return "", cli.UsageError{Err: err}
	}
	if len(pos) != 1 {
		return "", cli.UsageError{Err: errors.New("usage: " + synopsis)}
	}
	return pos[0], nil
}

// replayCmd rebuilds the league from the audit log alone and prints its standings.
func replayCmd(args []string) error {
	fset := flag.NewFlagSet("league replay", flag.ContinueOnError)
	var o replay.ReplayOptions
	fset.BoolVar(&o.Rounds, "rounds", false, "print the standings after every round")
	fset.StringVar(&o.CheckDB, "check", "", "compare every round snapshot, the final standings and the ratings with this database")
	fset.BoolVar(&o.Ratings, "ratings", false, "print the tie-break columns and the ratings (with 95% intervals and rank ranges) computed from the log")
	fset.BoolVar(&o.Crosstable, "crosstable", false, "print the crosstable")
	path, err := logCommand(fset, "league replay AUDIT [--rounds] [--ratings] [--crosstable] [--check DB]", strings.TrimSpace(`
Rebuilds the league from its audit log alone and prints its standings, checks that
the format pairs every logged round as logged, and with --check compares the log with
the League Manager's database. A log with a torn tail may leave the database ahead of
it (a result committed, its exchange torn): --check then exits 1 and says so; the
League Manager writes what its log lacks when it starts again.`), args)
	if err != nil {
		return err
	}
	return replay.ReplayLog(os.Stdout, path, o)
}

// verifyCmd checks the hash chain and re-plays every match through the rules.
func verifyCmd(args []string) error {
	fset := flag.NewFlagSet("league verify", flag.ContinueOnError)
	dbPath := fset.String("db", "", "also check the log still holds the last line the database recorded")
	path, err := logCommand(fset, "league verify AUDIT [--db DB]", strings.TrimSpace(`
Checks the audit log's hash chain (and with --db that it still holds the last line the
database recorded), rebuilds the league from it and re-plays every match through the
rules.`), args)
	if err != nil {
		return err
	}
	return replay.VerifyLog(os.Stdout, path, *dbPath)
}

// exportCmd writes results and standings from a database.
func exportCmd(args []string) error {
	fset := flag.NewFlagSet("league export", flag.ContinueOnError)
	dbPath := fset.String("db", "data/league.db", "League Manager database")
	format := fset.String("format", "csv", "csv, json, or pgn (chess leagues: every game in one PGN file)")
	out := fset.String("out", "", "output file (default stdout)")
	if _, err := cli.Parse(fset, args); err != nil {
		return cli.UsageError{Err: err}
	}
	if !slices.Contains(export.Formats, *format) {
		return cli.UsageError{Err: fmt.Errorf("unknown format %q: want csv, json or pgn", *format)}
	}
	d, err := export.LoadFile(*dbPath)
	switch {
	case err != nil:
		return err
	case *out == "":
		return export.Write(os.Stdout, *format, d)
	}
	return export.WriteFile(*out, *format, d)
}
