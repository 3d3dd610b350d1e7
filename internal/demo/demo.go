// Package demo is league demo: a whole local league (internal/localleague) with every
// role its own process, its progress, the final standings and how every process left.
package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/localleague"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
)

// Run is league demo: it parses args, runs the league to its end and prints to out. A
// bad command line is a cli.UsageError.
func Run(ctx context.Context, args []string, out io.Writer) error {
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
	think := fset.Duration("think", 0, "every player waits this long before each move, so that the live view can be watched (e.g. 500ms)")
	if _, err := cli.Parse(fset, args); err != nil {
		return cli.UsageError{Err: err}
	}
	switch {
	case *players < 2 || *referees < 1:
		return cli.UsageError{Err: errors.New("need at least 2 players and 1 referee")}
	case *grace <= 0:
		return cli.UsageError{Err: fmt.Errorf("--grace must be positive, got %s", *grace)}
	case *extra < 0 || *extraWait <= 0:
		return cli.UsageError{Err: fmt.Errorf("--extra must not be negative and --extra-wait must be positive, got %d and %s", *extra, *extraWait)}
	case *think < 0:
		return cli.UsageError{Err: fmt.Errorf("--think must not be negative, got %s", *think)}
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
		Players: *players, Referees: *referees, Seed: *seed, Window: wait, Think: *think, Out: out,
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
		if err := waitExtra(ctx, out, ll, *extra, *extraWait, *gameType); err != nil {
			return err
		}
	}
	return play(ctx, out, ll, *gameType)
}

// play starts the league, shows its progress until it completes and prints the final
// standings.
func play(ctx context.Context, out io.Writer, ll *localleague.League, gameType string) error {
	admin, err := localleague.NewAdmin(protocol.ClientOptions{})
	if err != nil {
		return err
	}
	defer admin.Close()
	started := time.Now()
	if _, err := admin.StartLeague(ctx, ll.LMURL, ll.AdminToken); err != nil {
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
			fmt.Fprintf(out, "round %d/%d  matches %d/%d\n", s.CurrentRound, s.TotalRounds, done, s.MatchesTotal)
		}
		return s.State == league.StateCompleted
	})
	if err != nil {
		return fmt.Errorf("league did not complete (%d of %d matches): %w", last.MatchesByStatus[protocol.MatchStateCompleted], last.MatchesTotal, err)
	}
	wall := time.Since(started)
	ans, err := admin.Call(ctx, ll.LMURL, ll.AdminToken, protocol.QueryStandings, map[string]any{})
	if err != nil {
		return fmt.Errorf("query standings: %w", err)
	}
	var p struct {
		Standings []protocol.StandingsRow `json:"standings"`
	}
	if err := ans.Decode(&p); err != nil {
		return fmt.Errorf("read standings: %w", err)
	}
	fmt.Fprintf(out, "\nFinal standings (%s, %d players, %d matches):\n", gameType, len(p.Standings), last.MatchesTotal)
	standings.WriteTable(out, p.Standings)
	fmt.Fprintf(out, "\nleague time %.3fs, %.1f matches/s\ndatabase %s, audit log %s\n", wall.Seconds(), float64(last.MatchesTotal)/wall.Seconds(), ll.DBPath, ll.AuditPath)
	return nil
}

// fileExists reports whether p names something that exists.
func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
