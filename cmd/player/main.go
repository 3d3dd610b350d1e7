// Command player runs one player agent: it serves its endpoint, registers with the League
// Manager and plays the matches referees invite it to until the league shuts down.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/logging"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/player/strategy"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command: exit code 0 after a clean stop (signal or LEAGUE_SHUTDOWN),
// 1 when the player fails (e.g. registration), 2 for a bad command line (an unknown
// --fault too), 3 when --fault crash-after:N ends the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("player", flag.ContinueOnError)
	fset.SetOutput(stderr)
	id := fset.String("id", "", "player id (required), e.g. p01")
	addr := fset.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	league := fset.String("league", "http://127.0.0.1:8000/mcp", "League Manager endpoint")
	strat := fset.String("strategy", "random", "strategy: "+strings.Join(strategy.Names(), ", "))
	seed := fset.Int64("seed", 0, "seed of the strategy's random choices")
	logDir := fset.String("log-dir", "logs", "folder of the log file player_<id>.log")
	displayName := fset.String("display-name", "", "name shown by the League Manager")
	registerFor := fset.Duration("register-for", player.DefaultRegisterFor, "how long to retry registration")
	fault := fset.String("fault", "", "misbehave on purpose to test referees: "+player.FaultModes+
		fmt.Sprintf(" (crash-after exits with code %d)", player.CrashExitCode))
	rest, err := cli.Parse(fset, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2 // the flag package has printed the problem and the usage
	}
	cfg := player.Config{
		ID: *id, Addr: *addr, LeagueURL: *league, Strategy: *strat, Seed: *seed,
		DisplayName: *displayName, RegisterFor: *registerFor, Stdout: stdout, Fault: *fault,
	}
	switch {
	case len(rest) > 0:
		fmt.Fprintf(stderr, "player: unexpected argument %q\n", rest[0])
		return 2
	case *id == "":
		fmt.Fprintln(stderr, "player: --id is required")
		return 2
	}
	// Checked before the log file is named after the id.
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 2
	}
	log, logFile, err := logging.Open("player", filepath.Join(*logDir, "player_"+*id+".log"), "INFO")
	if err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 1
	}
	defer logFile.Close()
	log = log.With().Str("player_id", *id).Logger()
	p, err := player.New(cfg, log)
	if err == nil {
		err = p.Run(ctx)
	}
	if err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 1
	}
	return 0
}
