package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/localleague"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/protocol"
)

// demo runs a complete local league with every role as its own OS process.
func demo(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("league demo", flag.ContinueOnError)
	players := fset.Int("players", 8, "number of player processes")
	referees := fset.Int("referees", 3, "number of referee processes")
	gameType := fset.String("game", "tic_tac_toe", "game to play")
	strategy := fset.String("strategy", "random", "strategy of every player")
	seed := fset.Int64("seed", 1, "league seed (same seed, same league)")
	cfgPath := fset.String("config", "config/league.yaml", "league.yaml")
	dataDir := fset.String("data", "data", "folder of league.db")
	logDir := fset.String("log-dir", "logs", "folder of audit.jsonl and the process logs")
	timeout := fset.Duration("timeout", 10*time.Minute, "give up after this long (not counting the wait for --extra players)")
	grace := fset.Duration("grace", 5*time.Second,
		"after the League Manager has shut down, how long agents may take to leave on its LEAGUE_SHUTDOWN before SIGTERM (and as long again before SIGKILL)")
	extra := fset.Int("extra", 0, "before starting the league, wait for this many more players, started by hand from another terminal with --league <the League Manager's URL> (the demo prints the command lines of the examples)")
	extraWait := fset.Duration("extra-wait", 5*time.Minute, "how long to wait for the --extra players")
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	if *players < 2 || *referees < 1 {
		return usageError{errors.New("need at least 2 players and 1 referee")}
	}
	if *grace <= 0 {
		return usageError{fmt.Errorf("--grace must be positive, got %s", *grace)}
	}
	if *extra < 0 || *extraWait <= 0 {
		return usageError{fmt.Errorf("--extra must not be negative and --extra-wait must be positive, got %d and %s", *extra, *extraWait)}
	}
	wait := time.Duration(0) // for the extra players, which --timeout does not count
	if *extra > 0 {
		wait = *extraWait
	}
	binDir, err := localleague.OwnBinDir()
	if err != nil {
		return err
	}
	if err := localleague.CheckBinDir(binDir); err != nil {
		return fmt.Errorf("demo needs the binaries beside its own (run make demo): %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout+wait)
	defer cancel()

	ll, err := localleague.Start(ctx, localleague.Setup{
		BinDir: binDir, CfgPath: *cfgPath, DataDir: *dataDir, LogDir: *logDir, GameType: *gameType, Strategy: *strategy,
		Players: *players, Referees: *referees, Seed: *seed, Window: wait, Out: os.Stdout,
		// The demo's usual ports, so its live view is always at the same address.
		Ports: [3]int{8000, 8001, 9001},
	})
	if ll != nil {
		defer ll.Procs.Stop(*grace, ll.AuditPath)
	}
	if err != nil {
		return err
	}
	if *extra > 0 {
		if err := waitExtra(ctx, ll.Procs, ll.Base, ll.LMURL, ll.Ours, *extra, *extraWait, *gameType); err != nil {
			return err
		}
	}
	started := time.Now()
	if _, err := adminCall(ctx, ll.LMURL, ll.AdminToken, protocol.AdminStartLeagueRequest, map[string]any{}); err != nil {
		return fmt.Errorf("start league: %w", err)
	}
	var last league.Status
	lastShown := -1
	err = localleague.WaitFor(ctx, ll.Procs, func() bool {
		s, err := localleague.Status(ll.Base)
		if err != nil {
			return false
		}
		last = s
		if done := s.MatchesByStatus[protocol.MatchStateCompleted]; done != lastShown {
			lastShown = done
			fmt.Printf("round %d/%d  matches %d/%d\n", s.CurrentRound, s.TotalRounds, done, s.MatchesTotal)
		}
		return s.State == league.StateCompleted
	})
	if err != nil {
		return fmt.Errorf("league did not complete (%d of %d matches): %w", last.MatchesByStatus[protocol.MatchStateCompleted], last.MatchesTotal, err)
	}
	wall := time.Since(started)
	ans, err := adminCall(ctx, ll.LMURL, ll.AdminToken, protocol.QueryStandings, map[string]any{})
	if err != nil {
		return fmt.Errorf("query standings: %w", err)
	}
	var p struct {
		Standings []protocol.StandingsRow `json:"standings"`
	}
	if err := ans.Decode(&p); err != nil {
		return err
	}
	fmt.Printf("\nFinal standings (%s, %d players, %d matches):\n", *gameType, len(p.Standings), last.MatchesTotal)
	PrintTable(os.Stdout, p.Standings)
	fmt.Printf("\nleague time %.3fs, %.1f matches/s\ndatabase %s, audit log %s\n", wall.Seconds(), float64(last.MatchesTotal)/wall.Seconds(), ll.DBPath, ll.AuditPath)
	return nil
}
