package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/localleague"
	"github.com/agentleague/agentleague/league/server"
	"github.com/agentleague/agentleague/protocol"
)

// adminNet are the flags of the commands that call a League Manager, or an agent, on
// another host: the admin commands and league conform.
type adminNet struct {
	tlsCA    string
	insecure bool
}

// options checks the calls' URLs against the loopback rule and loads --tls-ca.
func (a *adminNet) options(calls ...cli.Call) (protocol.ClientOptions, error) {
	n := cli.Net{TLSCA: a.tlsCA, Insecure: a.insecure}
	if err := n.Check("127.0.0.1:0", calls...); err != nil {
		return protocol.ClientOptions{}, cli.UsageError{Err: err}
	}
	_, tlsCfg, err := n.Load()
	if err != nil {
		return protocol.ClientOptions{}, err
	}
	return protocol.ClientOptions{TLS: tlsCfg, Insecure: a.insecure}, nil
}

// adminCmd is the command line every admin command shares.
type adminCmd struct {
	adminNet
	url, dbPath string
}

func (a *adminCmd) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&a.url, "league", "http://127.0.0.1:8000/mcp", "League Manager endpoint")
	fs.StringVar(&a.dbPath, "db", "data/league.db", "database of the League Manager (admin.token is read beside it)")
	fs.StringVar(&a.tlsCA, "tls-ca", "", "CA certificates (PEM) to trust for an https --league, besides the system's")
	fs.BoolVar(&a.insecure, "insecure", false, "allow a plain http --league that is not loopback: the admin token then crosses the network in clear")
}

// client returns the admin client and the admin token of the League Manager at --league.
func (a *adminCmd) client() (*localleague.Admin, string, error) {
	opt, err := a.options(cli.Call{Flag: "league", URL: a.url})
	if err != nil {
		return nil, "", err
	}
	token, err := server.AdminTokenFor(os.Getenv(server.AdminTokenEnv), a.dbPath)
	if err != nil {
		return nil, "", err
	}
	c, err := localleague.NewAdmin(opt)
	return c, token, err
}

func start(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("league start", flag.ContinueOnError)
	var a adminCmd
	a.addFlags(fset)
	if _, err := cli.Parse(fset, args); err != nil {
		return cli.UsageError{Err: err}
	}
	c, token, err := a.client()
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.StartLeague(ctx, a.url, token)
	if err != nil {
		return err
	}
	fmt.Printf("league %s: %s (state %s)\n", s.LeagueID, s.Status, s.LeagueStatus)
	return nil
}

func standingsCmd(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("league standings", flag.ContinueOnError)
	var a adminCmd
	a.addFlags(fset)
	asJSON := fset.Bool("json", false, "print the STANDINGS_RESPONSE payload as JSON")
	var q localleague.StandingsQuery
	fset.StringVar(&q.Round, "round", "", "standings snapshot of a completed round")
	fset.BoolVar(&q.Stats, "stats", false, "add each player's statistics (illegal moves, timeouts, thinking time) from GET /status of the same server")
	fset.BoolVar(&q.Ratings, "ratings", false, "add tie-break columns and each player's rating with its 95% interval and rank range, from GET /api/league of the same server")
	fset.BoolVar(&q.Crosstable, "crosstable", false, "print the crosstable after the standings, from GET /api/league of the same server")
	if _, err := cli.Parse(fset, args); err != nil {
		return cli.UsageError{Err: err}
	}
	if (q.Ratings || q.Crosstable) && (q.Round != "" || q.Stats) {
		return cli.UsageError{Err: errors.New("--ratings and --crosstable show the live league: not with --round or --stats")}
	}
	c, token, err := a.client()
	if err != nil {
		return err
	}
	defer c.Close()
	s, err := c.Standings(ctx, a.url, token, q)
	switch {
	case errors.Is(err, localleague.ErrNoLiveView):
		return cli.UsageError{Err: fmt.Errorf("--league %s: %w (--stats, --ratings and --crosstable read it)", a.url, err)}
	case err != nil:
		return err
	case *asJSON:
		return s.WriteJSON(os.Stdout)
	}
	return s.WriteText(os.Stdout)
}
