// Command player runs one player agent: it serves its endpoint, registers with the League
// Manager and plays the matches referees invite it to until the league shuts down.
// "player serve-model" serves a strategy as an LBM Arena model server, and "player mcp" the
// MCP gateway, through which MCP clients take seats in a league. "player --seats FILE"
// hosts many players in one process.
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
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/logging"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/player/lbm"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/player/uci"
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
	if len(args) > 0 && args[0] == "serve-model" {
		return serveModel(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "mcp" {
		return serveMCP(ctx, args[1:], os.Stdin, stdout, stderr)
	}
	fset := flag.NewFlagSet("player", flag.ContinueOnError)
	fset.SetOutput(stderr)
	id := fset.String("id", "", "player id (required), e.g. p01")
	addr := fset.String("addr", "127.0.0.1:0", "address to listen on (port 0 picks a free port)")
	league := fset.String("league", "http://127.0.0.1:8000/mcp", "League Manager endpoint")
	strat := fset.String("strategy", "random", "strategy: "+strings.Join(strategy.Names(), ", ")+", lbm (a model server, --model-url), llm (a language model, --profile) or uci (a chess engine, --engine)")
	profile := fset.String("profile", "", "agent profile of strategy llm, e.g. config/agents/aggressive.yaml; its api_key_env names the variable that holds the API key")
	modelURL := fset.String("model-url", "", "model server of strategy lbm (LBM Arena model API); auth from "+lbm.EnvToken+" (Bearer) or "+lbm.EnvUser+"/"+lbm.EnvPassword+" (Basic)")
	var engine uci.Config
	fset.StringVar(&engine.Path, "engine", "", "UCI chess engine of strategy uci, e.g. /usr/games/stockfish")
	fset.Func("engine-option", `engine option "Name=Value" for strategy uci, e.g. "Skill Level=5" (repeatable)`, func(s string) error {
		o, err := uci.ParseOption(s)
		if err != nil {
			return err
		}
		engine.Options = append(engine.Options, o)
		return nil
	})
	fset.DurationVar(&engine.MoveTime, "movetime", 0, fmt.Sprintf("search time of each move of strategy uci (default %v; or --nodes, or --depth)", uci.DefaultMoveTime))
	fset.Int64Var(&engine.Nodes, "nodes", 0, "nodes searched for each move of strategy uci")
	fset.IntVar(&engine.Depth, "depth", 0, "search depth of each move of strategy uci")
	seed := fset.Int64("seed", 0, "seed of the strategy's random choices")
	logDir := fset.String("log-dir", "logs", "folder of the log file player_<id>.log (with --seats, player_seats_<FILE name>.log)")
	logLevel := fset.String("log-level", "INFO", "DEBUG (each match's start too), INFO, WARNING, ERROR or CRITICAL")
	displayName := fset.String("display-name", "", "name shown by the League Manager")
	registerFor := fset.Duration("register-for", player.DefaultRegisterFor,
		"how long to retry registration and AGENT_READY while the League Manager is unreachable or refuses with NO_REFEREE_REGISTERED, INTERNAL, STORAGE_UNAVAILABLE or RATE_LIMITED; unregistered then, the player exits 1")
	fault := fset.String("fault", "", "misbehave on purpose to test referees: "+player.FaultModes+
		fmt.Sprintf(" (crash-after exits with code %d)", player.CrashExitCode))
	think := fset.Duration("think", 0, "wait this long before choosing each move, as if thinking (e.g. 20ms; for benchmarks)")
	cpuProfile := fset.String("cpuprofile", "", cli.CPUProfileUsage)
	seatsFile := fset.String("seats", "", "YAML file of many players to host in this one process, instead of --id and the other options of one player (docs/strategies.md)")
	var netFlags cli.Net
	netFlags.AddFlags(fset)
	netFlags.AddOutbound(fset)
	rest, err := cli.Parse(fset, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2 // the flag package has printed the problem and the usage
	}
	if *seatsFile != "" {
		return runSeats(ctx, seatsRun{
			file: *seatsFile, addr: *addr, league: *league, logDir: *logDir, logLevel: *logLevel,
			cpuProfile: *cpuProfile, registerFor: *registerFor, net: netFlags,
		}, fset, rest, stdout, stderr)
	}
	cfg := player.Config{
		ID: *id, Addr: *addr, LeagueURL: *league, Strategy: *strat, Seed: *seed,
		DisplayName: *displayName, RegisterFor: *registerFor, Stdout: stdout, Fault: *fault, Think: *think,
		ModelURL: *modelURL, ModelAuth: lbm.AuthFromEnv(), Engine: engine,
		Advertise: netFlags.Advertise, Insecure: netFlags.Insecure, Outbound: netFlags.Outbound,
	}
	switch {
	case len(rest) > 0:
		fmt.Fprintf(stderr, "player: unexpected argument %q\n", rest[0])
		return 2
	case *id == "":
		fmt.Fprintln(stderr, "player: --id is required")
		return 2
	}
	if err := netFlags.Check(*addr, cli.Call{Flag: "league", URL: *league}); err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 2
	}
	if *strat == player.StrategyLLM {
		c, err := loadLLM(*profile)
		if err != nil {
			fmt.Fprintf(stderr, "player: %v\n", err)
			return 2
		}
		withLLM(&cfg, c)
	}
	// Checked before the log file is named after the id.
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 2
	}
	if cfg.TLS, cfg.ClientTLS, err = netFlags.Load(); err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 1
	}
	if _, err := logging.ParseLevel(*logLevel); err != nil {
		fmt.Fprintf(stderr, "player: --log-level: %v\n", err)
		return 2
	}
	log, logFile, err := logging.Open("player", filepath.Join(*logDir, "player_"+*id+".log"), *logLevel)
	if err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 1
	}
	defer logFile.Close()
	log = log.With().Str("player_id", *id).Logger()
	if cfg.LLM != nil {
		logLLM(log, cfg.LLM)
	}
	stopProfile, err := cli.StartCPUProfile(*cpuProfile)
	if err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 1
	}
	p, err := player.New(cfg, log)
	if err == nil {
		err = p.Run(ctx)
	}
	err = errors.Join(err, stopProfile())
	if err != nil {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return 1
	}
	return 0
}

// serveModel serves the LBM Arena model API with one of our strategies, so it can enter
// an arena that speaks it. With LBM_MODEL_TOKEN set, requests must carry that Bearer token.
func serveModel(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("player serve-model", flag.ContinueOnError)
	fset.SetOutput(stderr)
	addr := fset.String("addr", "127.0.0.1:9100", "address to listen on (port 0 picks a free port)")
	strat := fset.String("strategy", "random", "strategy: "+strings.Join(strategy.Names(), ", "))
	seed := fset.Int64("seed", 0, "seed of the strategy's random choices")
	if _, err := cli.Parse(fset, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if !slices.Contains(strategy.Names(), *strat) {
		fmt.Fprintf(stderr, "player serve-model: unknown strategy %q\n", *strat)
		return 2
	}
	s := &lbm.Server{Strategy: *strat, Seed: *seed, Registry: game.Default(), Version: "agent-league"}
	if t := os.Getenv(lbm.EnvToken); t != "" {
		s.Auth = "Bearer " + t
	}
	if len(s.Games()) == 0 {
		fmt.Fprintf(stderr, "player serve-model: strategy %s plays none of the arena's games\n", *strat)
		return 2
	}
	srv, err := httpserve.Start(*addr, s.Handler())
	if err != nil {
		fmt.Fprintf(stderr, "player serve-model: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "model server (%s, games %s) listening on %s\n", *strat, strings.Join(s.Games(), ","), "http://"+srv.Addr())
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(stderr, "player serve-model: %v\n", err)
		return 1
	}
	return 0
}
