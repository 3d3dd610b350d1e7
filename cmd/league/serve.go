package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/league/server"
)

// errSecondSignal is why the drain was cut short, for the log.
var errSecondSignal = errors.New("second signal")

// serve runs the League Manager (league/server) until SIGTERM or SIGINT (ctx) or an
// authenticated ADMIN_SHUTDOWN_REQUEST, then shuts the league down gracefully
// (league/faults.go): a signal during the drain cuts it short.
func serve(ctx context.Context, args []string) (err error) {
	fset := flag.NewFlagSet("league serve", flag.ContinueOnError)
	o := server.Options{StopReason: "the League Manager was stopped by a signal", AdminToken: strings.TrimSpace(os.Getenv(server.AdminTokenEnv))}
	fset.StringVar(&o.ConfigPath, "config", "config/league.yaml", "league.yaml (game_registry.yaml and timeout_policy.yaml are read beside it)")
	fset.StringVar(&o.Addr, "addr", server.DefaultAddr, "address to listen on (port 0 picks a free port)")
	fset.StringVar(&o.DBPath, "db", "", "SQLite database (default: database.path of league.yaml)")
	fset.StringVar(&o.AuditPath, "audit", "", "audit log (default: logging.audit_log_path of league.yaml)")
	fset.StringVar(&o.LogPath, "log", "", "application log (default: logging.application_log_path of league.yaml)")
	fset.StringVar(&o.Overrides.GameType, "game", "", "game of this league (overrides league.game_type)")
	fset.Int64Var(&o.Overrides.Seed, "seed", 0, "league seed (overrides league.seed when not 0)")
	fset.StringVar(&o.Overrides.LeagueID, "league-id", "", "league id (overrides league.league_id)")
	window := fset.Float64("window", -1, "registration window in seconds (overrides registration.window_seconds)")
	fset.IntVar(&o.Overrides.MinPlayers, "min-players", 0, "overrides registration.min_players when not 0")
	fset.DurationVar(&o.Drain, "drain", league.DefaultDrain, "on shutdown, how long matches in flight may finish before they are cancelled")
	leaguesDir := fset.String("leagues", "", "folder of leagues: each folder in it holding a "+server.LeagueFile+" is a league, with its "+server.LeagueDBPath+" and "+server.LeagueAuditPath+" beside it, served at /leagues/<league_id>/mcp")
	cpuProfile := fset.String("cpuprofile", "", cli.CPUProfileUsage)
	var netFlags cli.Net
	netFlags.AddFlags(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return cli.UsageError{Err: err}
	}
	var perLeague []string
	fset.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "config", "db", "audit", "log", "game", "seed", "league-id", "window", "min-players":
			perLeague = append(perLeague, "--"+f.Name)
		}
	})
	switch {
	case *leaguesDir != "" && len(perLeague) > 0:
		return cli.UsageError{Err: fmt.Errorf("--leagues: %s belong to one league; set them in each league's %s", strings.Join(perLeague, ", "), server.LeagueFile)}
	case o.Drain < 0:
		return cli.UsageError{Err: fmt.Errorf("--drain must not be negative, got %s", o.Drain)}
	}
	if *window >= 0 {
		o.Overrides.WindowSeconds = window
	}
	if err := netFlags.Check(o.Addr); err != nil {
		return cli.UsageError{Err: err}
	}
	if o.TLS, o.ClientTLS, err = netFlags.Load(); err != nil {
		return err
	}
	o.Insecure, o.Advertise = netFlags.Insecure, netFlags.Advertise
	stopProfile, err := cli.StartCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopProfile()) }()
	var cutDrain context.CancelCauseFunc
	o.CutDrain, cutDrain = context.WithCancelCause(context.Background())
	defer cutDrain(nil)
	if *leaguesDir == "" {
		srv, err := server.Start(ctx, o)
		if err != nil {
			return err
		}
		// Tools and tests read the endpoint from this first stdout line.
		fmt.Printf("league manager listening on %s\n", srv.URL())
		return waitServing(srv.ShuttingDown(), srv.Wait, cutDrain)
	}
	many, err := server.StartMany(ctx, server.ManyOptions{Dir: *leaguesDir, Addr: o.Addr, Drain: o.Drain, CutDrain: o.CutDrain,
		StopReason: o.StopReason, AdminToken: o.AdminToken, TLS: o.TLS, ClientTLS: o.ClientTLS, Insecure: o.Insecure, Advertise: o.Advertise})
	if err != nil {
		return err
	}
	// Tools and tests read the address from this first stdout line.
	fmt.Printf("league manager listening on %s\n", many.URL())
	failed := many.WriteLeagues(os.Stdout)
	if err := waitServing(many.ShuttingDown(), many.Wait, cutDrain); err != nil {
		return err
	}
	return failed
}

// waitServing waits for the end of a League Manager (wait); once its shutdown has begun
// (shuttingDown), a signal cuts the drain short: the second signal when a signal began
// it, the first when ADMIN_SHUTDOWN_REQUEST did.
func waitServing(shuttingDown <-chan struct{}, wait func() error, cutDrain context.CancelCauseFunc) error {
	ended := make(chan struct{})
	var watch sync.WaitGroup
	// Ends with serve.
	watch.Go(func() {
		select {
		case <-shuttingDown:
		case <-ended:
			return
		}
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(again)
		select {
		case <-again:
			cutDrain(errSecondSignal)
		case <-ended:
		}
	})
	err := wait()
	close(ended)
	watch.Wait()
	return err
}
