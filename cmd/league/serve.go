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

// adminTokenEnv names the environment variable holding the admin token.
const adminTokenEnv = "LEAGUE_ADMIN_TOKEN"

// errSecondSignal is why the drain was cut short, for the log.
var errSecondSignal = errors.New("second signal")

// serve runs the League Manager (league/server) until SIGTERM or SIGINT (ctx) or an
// authenticated ADMIN_SHUTDOWN_REQUEST, then shuts the league down gracefully
// (league/faults.go): a signal during the drain cuts it short.
func serve(ctx context.Context, args []string) (err error) {
	fset := flag.NewFlagSet("league serve", flag.ContinueOnError)
	cfgPath := fset.String("config", "config/league.yaml", "league.yaml (game_registry.yaml and timeout_policy.yaml are read beside it)")
	addr := fset.String("addr", server.DefaultAddr, "address to listen on (port 0 picks a free port)")
	dbPath := fset.String("db", "", "SQLite database (default: database.path of league.yaml)")
	auditPath := fset.String("audit", "", "audit log (default: logging.audit_log_path of league.yaml)")
	logPath := fset.String("log", "", "application log (default: logging.application_log_path of league.yaml)")
	gameType := fset.String("game", "", "game of this league (overrides league.game_type)")
	seed := fset.Int64("seed", 0, "league seed (overrides league.seed when not 0)")
	leagueID := fset.String("league-id", "", "league id (overrides league.league_id)")
	window := fset.Float64("window", -1, "registration window in seconds (overrides registration.window_seconds)")
	minPlayers := fset.Int("min-players", 0, "overrides registration.min_players when not 0")
	drain := fset.Duration("drain", league.DefaultDrain, "on shutdown, how long matches in flight may finish before they are cancelled")
	leaguesDir := fset.String("leagues", "", "folder of leagues: each folder in it holding a "+server.LeagueFile+" is a league, with its "+server.LeagueDBPath+" and "+server.LeagueAuditPath+" beside it, served at /leagues/<league_id>/mcp")
	cpuProfile := fset.String("cpuprofile", "", cli.CPUProfileUsage)
	var netFlags cli.Net
	netFlags.AddFlags(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return usageError{err}
	}
	if *leaguesDir != "" {
		var perLeague []string
		fset.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "config", "db", "audit", "log", "game", "seed", "league-id", "window", "min-players":
				perLeague = append(perLeague, "--"+f.Name)
			}
		})
		if len(perLeague) > 0 {
			return usageError{fmt.Errorf("--leagues: %s belong to one league; set them in each league's %s", strings.Join(perLeague, ", "), server.LeagueFile)}
		}
	}
	if err := netFlags.Check(*addr); err != nil {
		return usageError{err}
	}
	serverTLS, clientTLS, err := netFlags.Load()
	if err != nil {
		return err
	}
	stopProfile, err := cli.StartCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopProfile()) }()
	cutCtx, cutDrain := context.WithCancelCause(context.Background())
	defer cutDrain(nil)
	if *leaguesDir != "" {
		if *drain < 0 {
			return usageError{fmt.Errorf("--drain must not be negative, got %s", *drain)}
		}
		many, err := server.StartMany(ctx, server.ManyOptions{
			Dir: *leaguesDir, Addr: *addr, Drain: *drain, CutDrain: cutCtx,
			StopReason: "the League Manager was stopped by a signal", AdminToken: strings.TrimSpace(os.Getenv(adminTokenEnv)),
			TLS: serverTLS, ClientTLS: clientTLS, Insecure: netFlags.Insecure, Advertise: netFlags.Advertise,
		})
		if err != nil {
			return err
		}
		// Tools and tests read the address from this first stdout line.
		fmt.Printf("league manager listening on %s\n", many.URL())
		failed := 0
		for _, l := range many.Leagues() {
			if l.State == server.LeagueFailed {
				failed++
				fmt.Printf("league in %s failed: %s\n", l.Folder, l.Error)
			} else {
				fmt.Printf("league %s (%s) at %s%s\n", l.LeagueID, l.GameType, strings.TrimSuffix(many.URL(), "/"), l.Path+"mcp")
			}
		}
		err = waitServing(many.ShuttingDown(), many.Wait, cutDrain)
		if err == nil && failed > 0 {
			err = fmt.Errorf("%d of %d leagues failed to start", failed, len(many.Leagues()))
		}
		return err
	}
	opts := server.Options{
		ConfigPath: *cfgPath, Addr: *addr, DBPath: *dbPath, AuditPath: *auditPath, LogPath: *logPath,
		Overrides: server.Overrides{GameType: *gameType, Seed: *seed, LeagueID: *leagueID, MinPlayers: *minPlayers},
		Drain:     *drain, CutDrain: cutCtx, StopReason: "the League Manager was stopped by a signal",
		AdminToken: strings.TrimSpace(os.Getenv(adminTokenEnv)),
		TLS:        serverTLS, ClientTLS: clientTLS, Insecure: netFlags.Insecure, Advertise: netFlags.Advertise,
	}
	if *window >= 0 {
		opts.Overrides.WindowSeconds = window
	}
	srv, err := server.Start(ctx, opts)
	if errors.Is(err, server.ErrNegativeDrain) {
		return usageError{fmt.Errorf("--drain must not be negative, got %s", *drain)}
	}
	if err != nil {
		return err
	}
	// Tools and tests read the endpoint from this first stdout line.
	fmt.Printf("league manager listening on %s\n", srv.URL())
	return waitServing(srv.ShuttingDown(), srv.Wait, cutDrain)
}

// waitServing waits for the end of a League Manager (wait); once its shutdown has begun
// (shuttingDown), a signal cuts the drain short: the second signal when a signal began
// it, the first when ADMIN_SHUTDOWN_REQUEST did.
func waitServing(shuttingDown <-chan struct{}, wait func() error, cutDrain context.CancelCauseFunc) error {
	ended := make(chan struct{})
	var watch sync.WaitGroup
	// A signal once the shutdown has begun cuts its drain short: the second signal when a
	// signal began it, the first when ADMIN_SHUTDOWN_REQUEST did. Ends with serve.
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

// adminTokenFor returns the admin token of the admin commands: LEAGUE_ADMIN_TOKEN, else
// the admin.token league serve keeps beside the database.
func adminTokenFor(dbPath string) (string, error) {
	if t := strings.TrimSpace(os.Getenv(adminTokenEnv)); t != "" {
		return t, nil
	}
	tok, err := server.LoadAdminToken(dbPath, false)
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", fmt.Errorf("no admin token: set %s or run league serve with the same database folder (%s)", adminTokenEnv, server.TokenPath(dbPath))
	}
	return tok, nil
}
