package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/agentleague/agentleague/internal/localleague"
)

// waitExtra prints how to start the example players and waits up to wait for n players
// besides ours to register. Those that did are handed to ll.Procs, which reports how
// they left; it cannot stop them, as it did not start them.
func waitExtra(ctx context.Context, out io.Writer, ll *localleague.League, n int, wait time.Duration, gameType string) error {
	fmt.Fprintf(out, "\nwaiting up to %s for %d more %s to register; start %s from another terminal:\n", wait, n, pick(n == 1, "player", "players"), pick(n == 1, "it", "them"))
	if gameType == "tic_tac_toe" {
		for i := 1; i <= n; i++ {
			fmt.Fprintln(out, "  "+exampleCommand(i, ll.LMURL))
		}
		fmt.Fprintf(out, "  (or any agent of yours, with --league %s; docs/agents.md)\n", ll.LMURL)
	} else {
		fmt.Fprintf(out, "  the example players play tic_tac_toe only: start players of your own for %s with --league %s\n", gameType, ll.LMURL)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var seen []string
	endpoints := map[string]string{}
	err := localleague.WaitFor(wctx, ll.Procs, func() bool {
		s, err := localleague.Status(ll.Base)
		if err != nil {
			return false
		}
		for _, a := range s.Agents {
			endpoints[a.ID] = a.Endpoint
		}
		for _, id := range localleague.RegisteredPlayers(s, ll.Ours, false) {
			if !slices.Contains(seen, id) {
				seen = append(seen, id)
				fmt.Fprintf(out, "extra player %s registered (%d of %d)\n", id, len(seen), n)
			}
		}
		return len(seen) >= n
	})
	ll.Procs.AddExtras(endpoints, seen...)
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
	if fileExists(local) {
		return local
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "..", "examples", rel); fileExists(p) {
			return filepath.Clean(p)
		}
	}
	return local
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}
