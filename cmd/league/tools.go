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

// replayCmd rebuilds the league from the audit log alone and prints its standings.
func replayCmd(args []string) error {
	fset := flag.NewFlagSet("league replay", flag.ContinueOnError)
	rounds := fset.Bool("rounds", false, "print the standings after every round")
	check := fset.String("check", "", "compare every round snapshot, the final standings and the ratings with this database")
	withRatings := fset.Bool("ratings", false, "print the tie-break columns and the ratings (with 95% intervals and rank ranges) computed from the log")
	withCross := fset.Bool("crosstable", false, "print the crosstable")
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) != 1 {
		return usageError{errors.New("usage: league replay AUDIT [--rounds] [--ratings] [--crosstable] [--check DB]")}
	}
	entries, err := audit.Read(pos[0])
	if err != nil {
		return err
	}
	l, err := replay.Rebuild(entries)
	if err != nil {
		return err
	}
	if err := l.WriteReport(os.Stdout, *rounds); err != nil {
		return err
	}
	n, err := l.CheckPairings()
	if err != nil {
		return fmt.Errorf("the log's rounds are not the format's: %w", err)
	}
	fmt.Printf("\npairings: %d rounds of the %s rebuilt identically from the log's results\n", n, l.Format.Algorithm)
	if *withRatings || *withCross {
		table, err := l.Table()
		if err != nil {
			return err
		}
		if *withRatings {
			rated, err := l.Ratings()
			if err != nil {
				return err
			}
			fmt.Println("\nratings:")
			standings.WriteRated(os.Stdout, table.Detailed(), rated)
		}
		if *withCross {
			fmt.Println("\ncrosstable:")
			standings.WriteCrosstable(os.Stdout, table.Crosstable())
		}
	}
	if *check == "" {
		return nil
	}
	db, err := store.OpenReadOnly(*check)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := l.CheckDB(db); err != nil {
		return fmt.Errorf("log and database differ: %w", err)
	}
	fmt.Printf("check: every round snapshot, the final standings and the ratings match %s\n", *check)
	return nil
}

// verifyCmd checks the hash chain and re-plays every match through the rules.
func verifyCmd(args []string) error {
	fset := flag.NewFlagSet("league verify", flag.ContinueOnError)
	dbPath := fset.String("db", "", "also check the log still holds the last line the database recorded")
	pos, err := cli.Parse(fset, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) != 1 {
		return usageError{errors.New("usage: league verify AUDIT [--db DB]")}
	}
	entries, err := audit.Read(pos[0])
	if err != nil {
		return err
	}
	if err := audit.CheckChain(entries); err != nil {
		return fmt.Errorf("hash chain broken: %w", err)
	}
	if *dbPath != "" {
		db, err := store.OpenReadOnly(*dbPath)
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
	fmt.Printf("verified %d lines: hash chain intact, %d matches re-played through the rules, every outcome and score consistent\n", len(entries), len(l.Results)-len(unrecorded)-len(unknown))
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
