package localleague

import (
	"fmt"
	"io"
	"net"
	"net/url"
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

// RegisteredPlayers lists the ids of the registered players that are among ours (mine
// true) or not (mine false), sorted.
func RegisteredPlayers(s league.Status, ours map[string]bool, mine bool) []string {
	var ids []string
	for _, a := range s.Agents {
		if a.Kind == "player" && ours[a.ID] == mine {
			ids = append(ids, a.ID)
		}
	}
	slices.Sort(ids)
	return ids
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
