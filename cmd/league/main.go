// Command league runs the League Manager (serve) and talks to a running one (start,
// standings, demo, bench).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentleague/agentleague/internal/bench"
	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/demo"
	"github.com/agentleague/agentleague/league/replay"
)

const usage = `usage: league <command> [flags]

commands:
  serve      run the League Manager
  start      close registration and start the league (admin)
  standings  print the standings of a running league
  demo       run a whole local league: League Manager, referees and players as processes
  bench      run local leagues like demo and print their throughput (optionally against another build)
  replay     rebuild a league from its audit log and print the standings
  verify     check an audit log's hash chain and re-play every match through the rules
  export     write results and standings from a database as CSV, JSON or PGN
  conform    certify a player, referee or League Manager: play the other roles against it
  certs      make a small CA and certificates for named hosts, to try TLS out

run "league <command> -h" for the flags of a command`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:])
	case "start":
		err = start(ctx, args[1:])
	case "standings":
		err = standingsCmd(ctx, args[1:])
	case "demo":
		err = demo.Run(ctx, args[1:], os.Stdout)
	case "bench":
		err = bench.Run(ctx, args[1:])
	case "replay":
		err = replayCmd(args[1:])
	case "verify":
		err = verifyCmd(args[1:])
	case "export":
		err = exportCmd(args[1:])
	case "conform":
		err = conformCmd(ctx, args[1:])
	case "certs":
		err = certsCmd(args[1:])
	case bench.EchoCommand:
		err = bench.Echo(ctx, args[1:], os.Stdin, os.Stdout)
	case "-h", "--help", "help":
		fmt.Println(usage)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "league: unknown command %q\n%s\n", args[0], usage)
		return 2
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(os.Stderr, "league %s: %v\n", args[0], err)
	var usageErr cli.UsageError
	var torn replay.TornTailError
	switch {
	case errors.As(err, &usageErr):
		return 2
	case errors.As(err, &torn):
		return 3 // see logExitCodes
	}
	return 1
}
