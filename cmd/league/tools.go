package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/export"
	"github.com/agentleague/agentleague/league/replay"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/store"
)

// Exit codes of verify and replay, besides 0 (every check passed), 1 (the log was
// changed or damaged, the log and the database differ, or another error) and 2 (a bad
// command line).
const exitTornTail = 3 // only the last line is torn (a crash mid-write); every line before it checks out

// logExitCodes is the part of the usage of verify and replay that documents their exit codes.
const logExitCodes = `exit codes:
  0  every check passed
  1  the log was changed or damaged: a line that is not an audit entry with more lines
     after it, a broken hash chain, a check that fails; or any other error
  2  a bad command line
  3  a torn tail: the last line was cut short by a crash mid-write, and every line
     before it checks out. The League Manager cuts a last line without a newline when
     it starts; one that ends in a newline it keeps, so cut the file where the message
     says first.
A line that stops the reading is named with its kind on stderr ("line 42: torn last
line: ..."); the lines before it are still checked.`

const replayUsage = `usage: league replay AUDIT [--rounds] [--ratings] [--crosstable] [--check DB]

Rebuilds the league from its audit log alone and prints its standings, checks that
the format pairs every logged round as logged, and with --check compares the log with
the League Manager's database. A log with a torn tail may leave the database ahead of
it (a result committed, its exchange torn): --check then exits 1 and says so; the
League Manager writes what its log lacks when it starts again.

`

const verifyUsage = `usage: league verify AUDIT [--db DB]

Checks the audit log's hash chain (and with --db that it still holds the last line the
database recorded), rebuilds the league from it and re-plays every match through the
rules.

`

// usageOf makes fset print text, the exit codes and then its flags for -h.
func usageOf(fset *flag.FlagSet, text string) {
	fset.Usage = func() {
		w := fset.Output()
		fmt.Fprint(w, text+logExitCodes+"\n\nflags:\n")
		fset.PrintDefaults()
	}
}

// tornTail is the outcome of a verify or replay whose log ends in a torn line and whose
// every other check passed.
type tornTail struct{ *audit.LineError }

// ExitCode is exitTornTail.
func (tornTail) ExitCode() int { return exitTornTail }

// readLog reads the audit log at path for verify and replay: the entries before the
// line the reading stopped at, if one did, and that line's error (torn, or the log
// changed or damaged there). Any other error, such as a log that cannot be opened, stops
// the command.
func readLog(path string) ([]audit.Entry, *audit.LineError, error) {
	entries, err := audit.Read(path)
	var stop *audit.LineError
	if errors.As(err, &stop) {
		return entries, stop, nil
	}
	return entries, nil, err
}

// outcome is the error of a verify or replay: err, the first check that failed on the
// lines read (nil if none), and stop, the line the reading stopped at (nil if none).
// Only a torn last line with nothing else wrong is a tornTail (exit code 3).
func outcome(err error, stop *audit.LineError) error {
	switch {
	case err != nil && stop != nil:
		return fmt.Errorf("%w; and the log stops at %v", err, stop)
	case err != nil:
		return err
	case stop == nil:
		return nil
	case stop.Torn:
		return tornTail{stop}
	}
	return stop
}

// linesRead describes the lines verify and replay read: all of them, or those before
// the line the reading stopped at.
func linesRead(entries []audit.Entry, stop *audit.LineError) string {
	if stop == nil {
		return fmt.Sprintf("%d lines", len(entries))
	}
	return fmt.Sprintf("the %d lines before line %d", len(entries), stop.Line)
}

// replayCmd rebuilds the league from the audit log alone and prints its standings.
func replayCmd(args []string) error {
	fset := flag.NewFlagSet("league replay", flag.ContinueOnError)
	rounds := fset.Bool("rounds", false, "print the standings after every round")
	check := fset.String("check", "", "compare every round snapshot, the final standings and the ratings with this database")
	withRatings := fset.Bool("ratings", false, "print the tie-break columns and the ratings (with 95% intervals and rank ranges) computed from the log")
	withCross := fset.Bool("crosstable", false, "print the crosstable")
	usageOf(fset, replayUsage)
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) != 1 {
		return usageError{errors.New("usage: league replay AUDIT [--rounds] [--ratings] [--crosstable] [--check DB]")}
	}
	entries, stop, err := readLog(pos[0])
	if err != nil {
		return err
	}
	if stop != nil {
		fmt.Printf("the log stops at line %d; replaying %s\n\n", stop.Line, linesRead(entries, stop))
	}
	err = replayEntries(entries, *rounds, *withRatings, *withCross, *check)
	var differ dbDiffers
	if stop != nil && stop.Torn && errors.As(err, &differ) {
		err = fmt.Errorf("%w (the log's last line is torn: the database may hold what it recorded, which the League Manager writes to the log when it starts again; check again after that)", err)
	}
	return outcome(err, stop)
}

// dbDiffers is a difference replay --check found between the log and the database.
type dbDiffers struct{ error }

func (e dbDiffers) Error() string { return "log and database differ: " + e.error.Error() }
func (e dbDiffers) Unwrap() error { return e.error }

// replayEntries rebuilds the league from entries, prints it and checks it.
func replayEntries(entries []audit.Entry, rounds, withRatings, withCross bool, check string) error {
	l, err := replay.Rebuild(entries)
	if err != nil {
		return err
	}
	if err := l.WriteReport(os.Stdout, rounds); err != nil {
		return err
	}
	n, err := l.CheckPairings()
	if err != nil {
		return fmt.Errorf("the log's rounds are not the format's: %w", err)
	}
	fmt.Printf("\npairings: %d rounds of the %s rebuilt identically from the log's results\n", n, l.Format.Algorithm)
	if withRatings || withCross {
		table, err := l.Table()
		if err != nil {
			return err
		}
		if withRatings {
			rated, err := l.Ratings()
			if err != nil {
				return err
			}
			fmt.Println("\nratings:")
			standings.WriteRated(os.Stdout, table.Detailed(), rated)
		}
		if withCross {
			fmt.Println("\ncrosstable:")
			standings.WriteCrosstable(os.Stdout, table.Crosstable())
		}
	}
	if check == "" {
		return nil
	}
	db, err := store.OpenReadOnly(check)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := l.CheckDB(db); err != nil {
		return dbDiffers{err}
	}
	fmt.Printf("check: every round snapshot, the final standings and the ratings match %s\n", check)
	return nil
}

// verifyCmd checks the hash chain and re-plays every match through the rules.
func verifyCmd(args []string) error {
	fset := flag.NewFlagSet("league verify", flag.ContinueOnError)
	dbPath := fset.String("db", "", "also check the log still holds the last line the database recorded")
	usageOf(fset, verifyUsage)
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) != 1 {
		return usageError{errors.New("usage: league verify AUDIT [--db DB]")}
	}
	entries, stop, err := readLog(pos[0])
	if err != nil {
		return err
	}
	return outcome(verifyEntries(entries, stop, *dbPath), stop)
}

// verifyEntries checks the chain of entries, the database's mark when dbPath is set,
// and every match; stop is the line the reading stopped at, for the report.
func verifyEntries(entries []audit.Entry, stop *audit.LineError, dbPath string) error {
	if err := audit.CheckChain(entries); err != nil {
		return fmt.Errorf("hash chain broken: %w", err)
	}
	if dbPath != "" {
		db, err := store.OpenReadOnly(dbPath)
		if err != nil {
			return err
		}
		lines, hash, err := db.AuditMark()
		db.Close()
		if err != nil {
			return err
		}
		if err := audit.CheckMark(entries, lines, hash); err != nil {
			return err
		}
	}
	l, err := replay.Rebuild(entries)
	if err != nil {
		return err
	}
	reg := game.Default()
	problems := l.VerifyMatches(reg)
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d of %d matches do not follow the rules", len(problems), len(l.Results))
	}
	unrecorded, unknown := l.Unrecorded(), l.RulesUnknown(reg)
	fmt.Printf("verified %s: hash chain intact, %d matches re-played through the rules, every outcome and score consistent\n", linesRead(entries, stop), len(l.Results)-len(unrecorded)-len(unknown))
	if len(unrecorded) > 0 {
		// Their referees keep no moves (game_metadata is opaque to the league).
		fmt.Printf("%d matches record no moves and were not re-played (outcomes and points checked only): %s\n", len(unrecorded), strings.Join(unrecorded, " "))
	}
	if len(unknown) > 0 {
		fmt.Printf("%d matches of %s were not re-played, rules unknown (outcomes and points checked only): %s\n", len(unknown), l.GameType, strings.Join(unknown, " "))
	}
	return nil
}

// exportCmd writes results and standings from a database.
func exportCmd(args []string) error {
	fset := flag.NewFlagSet("league export", flag.ContinueOnError)
	dbPath := fset.String("db", "data/league.db", "League Manager database")
	format := fset.String("format", "csv", "csv, json, or pgn (chess leagues: every game in one PGN file)")
	out := fset.String("out", "", "output file (default stdout)")
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	if *format != "csv" && *format != "json" && *format != "pgn" {
		return usageError{fmt.Errorf("unknown format %q: want csv, json or pgn", *format)}
	}
	db, err := store.OpenReadOnly(*dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	d, err := export.Load(db)
	if err != nil {
		return err
	}
	write := func(w io.Writer) error {
		switch *format {
		case "json":
			return export.WriteJSON(w, d)
		case "pgn":
			return export.WritePGN(w, d)
		}
		return export.WriteCSV(w, d)
	}
	if *out == "" {
		return write(os.Stdout)
	}
	return writeFileAtomic(*out, write)
}

// writeFileAtomic writes path through write into a temporary file beside it, renamed over
// path only once written and closed: a failed export leaves no partial file.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("create output: %w", err)
	}
	err = f.Chmod(0o644) // CreateTemp's 0600 would hide an export from its readers
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close output: %w", cerr)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}
