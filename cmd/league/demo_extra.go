package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentleague/agentleague/league"
)

// extraAgent is a player the demo did not start: someone started it by hand and it
// registered with the demo's League Manager (league demo --extra).
type extraAgent struct {
	id, endpoint string
}

// registeredPlayers lists the ids of the registered players that are among ours (mine
// true) or not (mine false), sorted.
func registeredPlayers(s league.Status, ours map[string]bool, mine bool) []string {
	var ids []string
	for _, a := range s.Agents {
		if a.Kind == "player" && ours[a.ID] == mine {
			ids = append(ids, a.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// waitExtra prints how to start the example players and waits up to wait for n players
// besides ours to register. Those that did are handed to procs, which reports how they
// left; it cannot stop them, as it did not start them.
func waitExtra(ctx context.Context, procs *procSet, base, lmURL string, ours map[string]bool, n int, wait time.Duration, gameType string) error {
	fmt.Printf("\nwaiting up to %s for %d more %s to register; start %s from another terminal:\n", wait, n, pick(n == 1, "player", "players"), pick(n == 1, "it", "them"))
	if gameType == "tic_tac_toe" {
		for i := 1; i <= n; i++ {
			fmt.Println("  " + exampleCommand(i, lmURL))
		}
		fmt.Printf("  (or any agent of yours, with --league %s; README: \"Write your own agent\")\n", lmURL)
	} else {
		fmt.Printf("  the example players play tic_tac_toe only: start players of your own for %s with --league %s\n", gameType, lmURL)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var seen []string
	endpoints := map[string]string{}
	err := waitFor(wctx, procs, func() bool {
		s, err := getStatus(base)
		if err != nil {
			return false
		}
		for _, a := range s.Agents {
			endpoints[a.ID] = a.Endpoint
		}
		for _, id := range registeredPlayers(s, ours, false) {
			if !slices.Contains(seen, id) {
				seen = append(seen, id)
				fmt.Printf("extra player %s registered (%d of %d)\n", id, len(seen), n)
			}
		}
		return len(seen) >= n
	})
	for _, id := range seen {
		procs.extras = append(procs.extras, extraAgent{id: id, endpoint: endpoints[id]})
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return fmt.Errorf("%d of %d extra players registered within --extra-wait %s: start them with the commands above while the demo waits, or wait longer with --extra-wait", len(seen), n, wait)
	}
	return fmt.Errorf("waiting for extra players: %w", err)
}

// exampleCommand is the command line that starts the i-th extra player: the examples
// take turns, Python first.
func exampleCommand(i int, lmURL string) string {
	if i%2 == 1 {
		return fmt.Sprintf("python3 %s --id py%d --league %s", examplePath("python/tic_tac_toe_player.py"), i, lmURL)
	}
	return fmt.Sprintf("node %s --id js%d --league %s", examplePath("node/tic_tac_toe_player.js"), i, lmURL)
}

// examplePath is where an example is: relative to the working folder when run from the
// repository's root (as make demo does), else beside the folder of the binary (bin/..).
func examplePath(rel string) string {
	local := filepath.Join("examples", rel)
	if _, err := os.Stat(local); err == nil {
		return local
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "..", "examples", rel); fileExists(p) {
			return filepath.Clean(p)
		}
	}
	return local
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// waitClosed waits up to d for the endpoint of every extra agent to refuse connections
// (its process has left) and returns those still listening then.
func waitClosed(extras []extraAgent, d time.Duration) []extraAgent {
	deadline := time.Now().Add(d)
	open := extras
	for {
		var still []extraAgent
		for _, a := range open {
			if listening(a.endpoint) {
				still = append(still, a)
			}
		}
		open = still
		if len(open) == 0 || time.Now().After(deadline) {
			return open
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// listening says whether something accepts connections at the endpoint's address.
func listening(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return false
	}
	c, err := net.DialTimeout("tcp", u.Host, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// reportExtras says how each extra player left. It left on LEAGUE_SHUTDOWN when it
// acknowledged the notice and its endpoint then closed; the demo can do nothing about
// one that did not, since it did not start it.
func reportExtras(out io.Writer, extras, open []extraAgent, notices *shutdownNotices, grace time.Duration) {
	if len(extras) == 0 {
		return
	}
	ids := make([]string, len(extras))
	for i, a := range extras {
		ids[i] = a.id
	}
	fmt.Fprintf(out, "extra players (started by hand, not by the demo, which cannot stop them): %s\n", strings.Join(ids, " "))
	var left []string
	for _, a := range extras {
		sender := "player:" + a.id
		ack := "it never acknowledged LEAGUE_SHUTDOWN"
		switch {
		case notices == nil:
			ack = "unknown whether it acknowledged LEAGUE_SHUTDOWN"
		case !notices.sent[sender]:
			ack = "the League Manager sent it no LEAGUE_SHUTDOWN"
		case notices.acked[sender]:
			ack = "it acknowledged LEAGUE_SHUTDOWN"
		}
		stillOpen := slices.Contains(open, a)
		switch {
		case stillOpen:
			fmt.Fprintf(out, "extra player %s still listens on %s %s after the League Manager stopped (%s): stop it yourself\n", a.id, a.endpoint, grace, ack)
		case notices != nil && notices.acked[sender]:
			left = append(left, a.id)
		default:
			fmt.Fprintf(out, "extra player %s closed its endpoint; %s\n", a.id, ack)
		}
	}
	if len(left) > 0 {
		fmt.Fprintf(out, "left on LEAGUE_SHUTDOWN: %s\n", strings.Join(left, " "))
	}
	fmt.Fprintf(out, "extra players: %d of %d left on LEAGUE_SHUTDOWN, %d still listening\n", len(left), len(extras), len(open))
}
