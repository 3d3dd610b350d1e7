// Command referee runs a referee process: it registers with the League Manager and
// runs the matches assigned to it.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/logging"
	"github.com/agentleague/agentleague/protocol"
	"github.com/agentleague/agentleague/referee"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	fset := flag.NewFlagSet("referee", flag.ContinueOnError)
	id := fset.String("id", "", "referee id (required)")
	addr := fset.String("addr", "127.0.0.1:8001", "address to listen on (port 0 picks a free port)")
	leagueURL := fset.String("league", "http://127.0.0.1:8000/mcp", "League Manager endpoint")
	games := fset.String("games", "", "comma-separated games to offer (default: every game)")
	maxMatches := fset.Int("max-matches", 1, fmt.Sprintf("matches run at once (1 to %d)", referee.MaxMatchesLimit))
	maxQueued := fset.Int("max-queued", referee.DefaultMaxQueued,
		fmt.Sprintf("assignments accepted beyond --max-matches, run in arrival order as slots free (1 to %d); BUSY beyond", referee.MaxQueuedLimit))
	logDir := fset.String("log-dir", "logs", "folder of referee_<id>.log")
	logLevel := fset.String("log-level", "INFO", "DEBUG (each match's start too), INFO, WARNING, ERROR or CRITICAL")
	policy := fset.String("illegal-move-policy", "", "loss or forced, when the League Manager does not say")
	moveMS := fset.Int("move-timeout-ms", 30000, "move deadline when the League Manager does not say")
	joinMS := fset.Int("join-timeout-ms", 10000, "join deadline when the League Manager does not say")
	reportMS := fset.Int("report-timeout-ms", int(referee.DefaultReportTimeout.Milliseconds()),
		"deadline of each MATCH_RESULT_REPORT attempt; reports are retried until acknowledged or refused for good (INTERNAL, STORAGE_UNAVAILABLE and RATE_LIMITED are retried)")
	registerFor := fset.Duration("register-for", referee.DefaultRegisterFor,
		"how long to retry registration and AGENT_READY while the League Manager is unreachable or refuses with INTERNAL, STORAGE_UNAVAILABLE or RATE_LIMITED; unregistered then, the referee exits 1")
	drainMS := fset.Int("drain-timeout-ms", int(referee.DefaultDrainTimeout.Milliseconds()),
		"after LEAGUE_SHUTDOWN, how long matches in progress may run before they are abandoned")
	cpuProfile := fset.String("cpuprofile", "", cli.CPUProfileUsage)
	var netFlags cli.Net
	netFlags.AddFlags(fset)
	netFlags.AddOutbound(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return 2
	}
	if *id == "" {
		fmt.Fprintln(os.Stderr, "referee: --id is required")
		return 2
	}
	if err := netFlags.Check(*addr, cli.Call{Flag: "league", URL: *leagueURL}); err != nil {
		fmt.Fprintf(os.Stderr, "referee: %v\n", err)
		return 2
	}
	serverTLS, clientTLS, err := netFlags.Load()
	if err != nil {
		fmt.Fprintf(os.Stderr, "referee: %v\n", err)
		return 1
	}
	for _, f := range []struct {
		name    string
		v, most int
	}{
		{"move-timeout-ms", *moveMS, math.MaxInt}, {"join-timeout-ms", *joinMS, math.MaxInt},
		{"report-timeout-ms", *reportMS, math.MaxInt}, {"drain-timeout-ms", *drainMS, math.MaxInt},
		{"max-matches", *maxMatches, referee.MaxMatchesLimit}, {"max-queued", *maxQueued, referee.MaxQueuedLimit},
	} {
		if f.v <= 0 || f.v > f.most {
			fmt.Fprintf(os.Stderr, "referee: --%s must be between 1 and %d\n", f.name, f.most)
			return 2
		}
	}
	if *registerFor <= 0 {
		fmt.Fprintln(os.Stderr, "referee: --register-for must be positive")
		return 2
	}
	var gameList []string
	if *games != "" {
		gameList = strings.Split(*games, ",")
	}
	if _, err := logging.ParseLevel(*logLevel); err != nil {
		fmt.Fprintf(os.Stderr, "referee: --log-level: %v\n", err)
		return 2
	}
	log, f, err := logging.Open("referee", filepath.Join(*logDir, "referee_"+*id+".log"), *logLevel)
	if err != nil {
		fmt.Fprintf(os.Stderr, "referee: %v\n", err)
		return 1
	}
	defer f.Close()
	log = log.With().Str("referee_id", *id).Logger()
	ref, err := referee.New(referee.Config{
		ID: *id, Addr: *addr, LeagueURL: *leagueURL, Games: gameList, MaxMatches: *maxMatches, MaxQueued: *maxQueued,
		Policy: *policy, MoveTimeout: time.Duration(*moveMS) * time.Millisecond, JoinTimeout: time.Duration(*joinMS) * time.Millisecond,
		ReportTimeout: time.Duration(*reportMS) * time.Millisecond, DrainTimeout: time.Duration(*drainMS) * time.Millisecond,
		RegisterFor: *registerFor, Penalties: protocol.Penalties{MoveWarnings: 1, ForcedMoves: 1},
		Advertise: netFlags.Advertise, TLS: serverTLS, ClientTLS: clientTLS, Insecure: netFlags.Insecure, Outbound: netFlags.Outbound,
	}, log)
	if err != nil {
		fmt.Fprintf(os.Stderr, "referee: %v\n", err)
		return 2
	}
	stopProfile, err := cli.StartCPUProfile(*cpuProfile)
	if err != nil {
		fmt.Fprintf(os.Stderr, "referee: %v\n", err)
		return 1
	}
	code := 0
	if err := ref.Run(ctx); err != nil {
		log.Error().Err(err).Msg("referee failed")
		code = 1
	}
	if err := stopProfile(); err != nil {
		fmt.Fprintf(os.Stderr, "referee: %v\n", err)
		code = 1
	}
	return code
}
