package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/conform"
	"github.com/agentleague/agentleague/internal/netsec"
	"github.com/rs/zerolog"
)

// errNotConforming makes `league conform` exit 1 once the report is printed.
var errNotConforming = errors.New("a required check failed")

// conformCmd certifies a player, referee or League Manager written by anyone.
func conformCmd(ctx context.Context, args []string) error {
	subjects := slices.Sorted(func(yield func(string) bool) {
		for k := range conform.Subjects {
			if !yield(k) {
				return
			}
		}
	})
	if len(args) == 0 || !slices.Contains(subjects, args[0]) {
		return cli.UsageError{Err: fmt.Errorf("usage: league conform %s [flags]", strings.Join(subjects, "|"))}
	}
	subject := args[0]
	fset := flag.NewFlagSet("league conform "+subject, flag.ContinueOnError)
	listen := fset.String("listen", "127.0.0.1:8900", "address to serve as League Manager; start the agent with --league http://ADDR/mcp (player, referee); where the tool's referees and players listen (league-manager)")
	url := fset.String("url", "", "JSON-RPC URL of the League Manager under test, e.g. http://127.0.0.1:8000/mcp (league-manager)")
	gameType := fset.String("game", "tic_tac_toe", "game_type to play")
	wait := fset.Duration("wait", 60*time.Second, "how long to wait for the agent to register")
	move := fset.Duration("move-timeout", 30*time.Second, "deadline of each move")
	result := fset.Duration("result-timeout", conform.DefaultResultTimeout, "how long a referee may take to report a result once its match is over (referee)")
	grace := fset.Duration("grace", conform.DefaultGrace, "how long an agent may take to stop listening after LEAGUE_SHUTDOWN (player, referee)")
	reminder := fset.Duration("reminder-wait", 0, "league-manager: hold one result back this long to see a RESULT_REMINDER (0: do not check; set it above the League Manager's result_report_ms)")
	jsonOut := fset.Bool("json", false, "write the report as JSON")
	verbose := fset.Bool("verbose", false, "log what the tool sends and receives to stderr")
	var an adminNet
	fset.StringVar(&an.tlsCA, "tls-ca", "", "CA certificates (PEM) to trust for https calls (the League Manager at --url, the agent's endpoint), besides the system's")
	fset.BoolVar(&an.insecure, "insecure", false, "allow plain HTTP off loopback: a --url to another host, a --listen on an address that is not loopback; tokens then cross the network in clear")
	if _, err := cli.Parse(fset, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return cli.UsageError{Err: err}
	}
	if subject == "league-manager" && *url == "" {
		return cli.UsageError{Err: errors.New("league conform league-manager needs --url")}
	}
	// The tool plays the game by its own rules: it knows the built-in games only.
	if _, ok := game.Default().ParamSchema(*gameType); !ok {
		return cli.UsageError{Err: fmt.Errorf("--game %q: the tool plays only %s", *gameType, strings.Join(game.Default().Types(), ", "))}
	}
	if *wait <= 0 || *move <= 0 || *result <= 0 || *grace <= 0 || *reminder < 0 {
		return cli.UsageError{Err: errors.New("--wait, --move-timeout, --result-timeout and --grace must be positive, --reminder-wait not negative")}
	}
	// The tool serves plain HTTP only.
	if err := netsec.CheckListen(*listen, false); errors.Is(err, netsec.ErrPlainHTTP) && !an.insecure {
		return cli.UsageError{Err: fmt.Errorf("--listen %s serves %w; listen on loopback, or pass --insecure", *listen, err)}
	}
	var calls []cli.Call
	if *url != "" {
		calls = append(calls, cli.Call{Flag: "url", URL: *url})
	}
	copt, err := an.options(calls...)
	if err != nil {
		return err
	}
	log := zerolog.Nop()
	if *verbose {
		log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger()
	}
	opt := conform.Options{Listen: *listen, URL: *url, Game: *gameType, Wait: *wait, MoveTimeout: *move,
		AdminToken: os.Getenv("LEAGUE_ADMIN_TOKEN"), Log: log, ResultTimeout: *result, Grace: *grace, ReminderWait: *reminder,
		ClientTLS: copt.TLS, Insecure: copt.Insecure,
		// Tests and scripts read the URL from this line; the report goes to stdout.
		Ready: func(leagueURL string) {
			fmt.Fprintf(os.Stderr, "league conform %s: League Manager listening on %s; start the %s with --league %s (waiting %s); "+
				"one that accepts no connections registers outbound, with no endpoint_url (ours: add --outbound), and takes its requests from the tool's relay\n",
				subject, leagueURL, subject, leagueURL, *wait)
		}}
	rep := conform.NewReport(subject, *gameType)
	runErr := conform.Subjects[subject](ctx, opt, rep)
	write := rep.WriteText
	if *jsonOut {
		write = rep.WriteJSON
	}
	if err := write(os.Stdout); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	switch {
	case runErr != nil:
		return runErr
	case rep.Failed():
		return errNotConforming
	}
	return nil
}
