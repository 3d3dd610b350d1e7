package replay

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/store"
)

// TornTailError is the outcome of VerifyLog or ReplayLog when the log's last line is torn
// (cut by a crash mid-write) and every other check passed: the League Manager cuts such a
// line when it starts.
type TornTailError struct{ *audit.LineError }

// dbDiffersError is a difference ReplayLog found between the log and the database.
type dbDiffersError struct{ error }

func (e dbDiffersError) Error() string { return "log and database differ: " + e.error.Error() }
func (e dbDiffersError) Unwrap() error { return e.error }

// ReplayOptions are what ReplayLog prints and checks besides the standings.
type ReplayOptions struct {
	Rounds     bool   // the standings after every round
	Ratings    bool   // the tie-break columns and the ratings
	Crosstable bool   // the crosstable
	CheckDB    string // a database to compare every round snapshot, the standings and the ratings with
}

// ReplayLog rebuilds the league from the audit log at path alone, writes its standings
// to w and checks that the format pairs every logged round as logged. A line the reading
// stops at is named on w and the lines before it are replayed; the error is then a
// TornTailError when only a torn last line is wrong, else an *audit.LineError or the
// first failed check.
func ReplayLog(w io.Writer, path string, o ReplayOptions) error {
	entries, stop, err := readLog(path)
	if err != nil {
		return err
	}
	if stop != nil {
		fmt.Fprintf(w, "the log stops at line %d; replaying %s\n\n", stop.Line, linesRead(entries, stop))
	}
	err = replayEntries(w, entries, o)
	var differ dbDiffersError
	if stop != nil && stop.Torn && errors.As(err, &differ) {
		err = fmt.Errorf("%w (the log's last line is torn: the database may hold what it recorded, which the League Manager writes to the log when it starts again; check again after that)", err)
	}
	return outcome(err, stop)
}

// VerifyLog checks the hash chain of the audit log at path (and, when dbPath is set, that
// it still holds the last line that database recorded), rebuilds the league from it and
// re-plays every match through the rules, writing what it found to w. Its errors are
// those of ReplayLog.
func VerifyLog(w io.Writer, path, dbPath string) error {
	entries, stop, err := readLog(path)
	if err != nil {
		return err
	}
	return outcome(verifyEntries(w, entries, stop, dbPath), stop)
}

// readLog reads the audit log at path: the entries before the line the reading stopped
// at, if one did, and that line's error (torn, or the log changed or damaged there). Any
// other error, such as a log that cannot be opened, is returned as err.
func readLog(path string) ([]audit.Entry, *audit.LineError, error) {
	entries, err := audit.Read(path)
	var stop *audit.LineError
	if errors.As(err, &stop) {
		return entries, stop, nil
	}
	return entries, nil, err
}

// outcome is the error of a check: err, the first check that failed on the lines read
// (nil if none), and stop, the line the reading stopped at (nil if none). Only a torn
// last line with nothing else wrong is a TornTailError.
func outcome(err error, stop *audit.LineError) error {
	switch {
	case err != nil && stop != nil:
		return fmt.Errorf("%w; and the log stops at %v", err, stop)
	case err != nil:
		return err
	case stop == nil:
		return nil
	case stop.Torn:
		return TornTailError{stop}
	}
	return stop
}

// linesRead describes the lines read: all of them, or those before the line the reading
// stopped at.
func linesRead(entries []audit.Entry, stop *audit.LineError) string {
	if stop == nil {
		return fmt.Sprintf("%d lines", len(entries))
	}
	return fmt.Sprintf("the %d lines before line %d", len(entries), stop.Line)
}

// replayEntries rebuilds the league from entries, writes it to w and checks it.
func replayEntries(w io.Writer, entries []audit.Entry, o ReplayOptions) error {
	l, err := Rebuild(entries)
	if err != nil {
		return err
	}
	if err := l.WriteReport(w, o.Rounds); err != nil {
		return err
	}
	n, err := l.CheckPairings()
	if err != nil {
		return fmt.Errorf("the log's rounds are not the format's: %w", err)
	}
	fmt.Fprintf(w, "\npairings: %d rounds of the %s rebuilt identically from the log's results\n", n, l.Format.Algorithm)
	if o.Ratings || o.Crosstable {
		table, err := l.Table()
		if err != nil {
			return err
		}
		if o.Ratings {
			rated, err := l.Ratings()
			if err != nil {
				return err
			}
			fmt.Fprintln(w, "\nratings:")
			standings.WriteRated(w, table.Detailed(), rated)
		}
		if o.Crosstable {
			fmt.Fprintln(w, "\ncrosstable:")
			standings.WriteCrosstable(w, table.Crosstable(nil))
		}
	}
	if o.CheckDB == "" {
		return nil
	}
	db, err := store.OpenReadOnly(o.CheckDB)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := l.CheckDB(db); err != nil {
		return dbDiffersError{err}
	}
	fmt.Fprintf(w, "check: every round snapshot, the final standings and the ratings match %s\n", o.CheckDB)
	return nil
}

// verifyEntries checks the chain of entries, the database's mark when dbPath is set,
// and every match; stop is the line the reading stopped at, for the report.
func verifyEntries(w io.Writer, entries []audit.Entry, stop *audit.LineError, dbPath string) error {
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
	l, err := Rebuild(entries)
	if err != nil {
		return err
	}
	reg := game.Default()
	problems := l.VerifyMatches(reg)
	for _, p := range problems {
		fmt.Fprintln(w, p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%d of %d matches do not follow the rules", len(problems), len(l.Results))
	}
	unrecorded, unknown := l.Unrecorded(), l.RulesUnknown(reg)
	fmt.Fprintf(w, "verified %s: hash chain intact, %d matches re-played through the rules, every outcome and score consistent\n", linesRead(entries, stop), len(l.Results)-len(unrecorded)-len(unknown))
	if len(unrecorded) > 0 {
		// Their referees keep no moves (game_metadata is opaque to the league).
		fmt.Fprintf(w, "%d matches record no moves and were not re-played (outcomes and points checked only): %s\n", len(unrecorded), strings.Join(unrecorded, " "))
	}
	if len(unknown) > 0 {
		fmt.Fprintf(w, "%d matches of %s were not re-played, rules unknown (outcomes and points checked only): %s\n", len(unknown), l.GameType, strings.Join(unknown, " "))
	}
	return nil
}
