package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/logging"
	"github.com/agentleague/agentleague/player/mcpgw"
)

// serveMCP runs the MCP gateway: MCP clients take seats in the league through its tools,
// over Streamable HTTP at /mcp or, with --stdio, over stdin and stdout. Seats are
// outbound by default: they take their requests from the League Manager's relay, so no
// one needs to reach the gateway (with --stdio it listens on no port at all). With
// --inbound, seats are served over HTTP(S) at --addr, for the referees, and registered
// under --advertise when set. stdin is the stdio transport's input.
func serveMCP(ctx context.Context, args []string, stdin io.ReadCloser, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("player mcp", flag.ContinueOnError)
	fset.SetOutput(stderr)
	cfg := mcpgw.Config{Version: "league.v2"}
	fset.StringVar(&cfg.Addr, "addr", "127.0.0.1:9400", "address to listen on: MCP at /mcp unless --stdio, and the seats' endpoints with --inbound (port 0 picks a free port)")
	fset.BoolVar(&cfg.Inbound, "inbound", false, "serve each seat at /seats/<player_id> on --addr and register that endpoint: the League Manager and its referees must reach this gateway. "+
		"Default: seats connect out to the League Manager's relay (it must announce the relay feature) and need no inbound port")
	fset.StringVar(&cfg.LeagueURL, "league", "http://127.0.0.1:8000/mcp", "League Manager endpoint")
	fset.BoolVar(&cfg.Stdio, "stdio", false, "serve MCP over stdin and stdout, for clients that start servers as subprocesses")
	fset.DurationVar(&cfg.RegisterFor, "register-for", mcpgw.DefaultRegisterFor, "how long join_league retries registration")
	fset.DurationVar(&cfg.SessionTimeout, "session-timeout", mcpgw.DefaultSessionTimeout, "close an HTTP session idle this long (its seat then times out)")
	logDir := fset.String("log-dir", "logs", "folder of the log file mcp_gateway.log")
	var netFlags cli.Net
	netFlags.AddFlags(fset)
	fset.Lookup("advertise").Usage = "MCP endpoint others call this gateway at, e.g. https://host:9400/mcp; with --inbound, seats register the URL beside it, https://host:9400/seats/<player_id> (default: derived from --addr, https with --tls-cert)"
	rest, err := cli.Parse(fset, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "player mcp: unexpected argument %q\n", rest[0])
		return 2
	}
	// Over stdio with outbound seats nothing listens: only the calls are checked.
	netFlags.Outbound = cfg.Stdio && !cfg.Inbound
	if netFlags.Outbound && (netFlags.Advertise != "" || netFlags.TLSCert != "") {
		fmt.Fprintln(stderr, "player mcp: with --stdio and outbound seats the gateway listens on nothing: --advertise, --tls-cert and --tls-key go with --inbound only")
		return 2
	}
	if err := netFlags.Check(cfg.Addr, cli.Call{Flag: "league", URL: cfg.LeagueURL}); err != nil {
		fmt.Fprintf(stderr, "player mcp: %v\n", err)
		return 2
	}
	cfg.Advertise, cfg.Insecure = netFlags.Advertise, netFlags.Insecure
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "player mcp: %v\n", err)
		return 2
	}
	if cfg.TLS, cfg.ClientTLS, err = netFlags.Load(); err != nil {
		fmt.Fprintf(stderr, "player mcp: %v\n", err)
		return 1
	}
	log, logFile, err := logging.Open("mcp_gateway", filepath.Join(*logDir, "mcp_gateway.log"), "INFO")
	if err != nil {
		fmt.Fprintf(stderr, "player mcp: %v\n", err)
		return 1
	}
	defer logFile.Close()
	g, err := mcpgw.Start(cfg, log)
	if err != nil {
		fmt.Fprintf(stderr, "player mcp: %v\n", err)
		return 1
	}
	if cfg.Stdio {
		// stdout is the MCP transport: nothing else may be written there.
		err = g.ServeStdio(ctx, stdin, nopCloser{stdout})
	} else {
		// Tools and tests read the endpoint from this one stdout line.
		fmt.Fprintf(stdout, "mcp gateway listening on %s\n", g.URL())
		<-ctx.Done()
	}
	err = errors.Join(err, g.Close(context.Background()))
	if err != nil {
		fmt.Fprintf(stderr, "player mcp: %v\n", err)
		return 1
	}
	return 0
}

// nopCloser leaves stdout open when the stdio transport closes.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
