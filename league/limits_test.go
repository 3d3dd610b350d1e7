package league

import (
	"fmt"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// limited checks that msg is refused with RATE_LIMITED and changes nothing.
func (h *harness) limited(msg *protocol.Message) {
	h.t.Helper()
	h.unchanged("request over its rate limit", func() { h.refused(msg, protocol.ReasonRateLimited) })
}

// Requests over rate_limits are answered RATE_LIMITED and change nothing; buckets refill
// with time, every request of a kind counts (refused ones too), and one sender's flood
// does not limit another.
func TestRateLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits func(*config.Config)
		run    func(t *testing.T, h *harness, clock *fakeClock)
	}{
		{"standings per sender", func(c *config.Config) { c.RateLimits.StandingsPerMinute = 2 }, func(t *testing.T, h *harness, clock *fakeClock) {
			l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
			q := func(id string) *protocol.Message { return standingsQuery(t, "player:"+id, l.playerTokens[id], "") }
			h.ok(q("p1"))
			h.refused(standingsQuery(t, "player:p1", l.playerTokens["p1"], "round-9"), protocol.ReasonUnknownRound)
			h.limited(q("p1"))
			h.ok(q("p2"))
			h.ok(standingsQuery(t, protocol.SenderAdmin, testAdminToken, ""))
			clock.Advance(29 * time.Second)
			h.limited(q("p1"))
			clock.Advance(time.Second) // 2 a minute: one token every 30 s
			h.ok(q("p1"))
			h.limited(q("p1"))
		}},
		{"results per referee", func(c *config.Config) { c.RateLimits.ResultsPerSecond = 1 }, func(t *testing.T, h *harness, clock *fakeClock) {
			l := h.register([]string{"ref1", "ref2"}, map[string]any{"max_concurrent_matches": 2}, playerIDs(6))
			l.start()
			h.settle()
			_, ms := h.round()
			var at1 []liveMatch
			for _, mt := range ms {
				if mt.Referee == "ref1" {
					at1 = append(at1, mt)
				}
			}
			if len(at1) != 2 {
				t.Fatalf("ref1 holds %d matches, want 2", len(at1))
			}
			l.reportOK(at1[0], decided(at1[0], 0))
			// A result may start a later round's match: its assignment is delivered first.
			h.settle()
			h.limited(h.report("ref1", l.refTokens["ref1"], at1[1], decided(at1[1], 0)))
			// Another referee has its own bucket.
			for _, mt := range ms {
				if mt.Referee == "ref2" {
					l.reportOK(mt, drawn(mt))
					break
				}
			}
			h.settle()
			clock.Advance(time.Second)
			bad := decided(at1[1], 0)
			bad.Points[at1[1].Players[0]] = 2
			h.refused(h.report("ref1", l.refTokens["ref1"], at1[1], bad), protocol.ReasonInvalidResult)
			h.limited(h.report("ref1", l.refTokens["ref1"], at1[1], decided(at1[1], 0)))
			clock.Advance(time.Second)
			l.reportOK(at1[1], decided(at1[1], 0))
		}},
		{"registrations of new senders share one bucket", func(c *config.Config) {
			c.RateLimits.RegistrationPerSecond = 1
			c.Registration.MaxPlayers, c.Registration.MaxReferees = 3, 1 // a burst of 4
		}, func(t *testing.T, h *harness, clock *fakeClock) {
			f := newFakeReferee(t, "ref1")
			h.ok(refereeRegistration(t, "ref1", f.url(), nil))
			p1 := playerRegistration(t, "p1")
			h.ok(p1)
			h.ok(playerRegistration(t, "p2"))
			h.refused(refereeRegistration(t, "ref2", f.url(), nil), protocol.ReasonRegistrationClosed)
			h.limited(playerRegistration(t, "p3"))
			// A registered sender repeating its registration draws from its own bucket.
			h.ok(p1)
			clock.Advance(time.Second)
			h.ok(playerRegistration(t, "p3"))
			if got := h.m.State(); got != StateActive {
				t.Errorf("state %s, want %s once max_players registered", got, StateActive)
			}
		}},
		{"failed authentication shares one bucket", func(c *config.Config) { c.RateLimits.StandingsPerMinute = 2 }, func(t *testing.T, h *harness, clock *fakeClock) {
			l := h.register([]string{"ref1"}, nil, []string{"p1"})
			h.refused(standingsQuery(t, "player:x1", uuid.NewString(), ""), protocol.ReasonUnauthorized)
			h.refused(standingsQuery(t, "player:p1", uuid.NewString(), ""), protocol.ReasonUnauthorized)
			h.limited(standingsQuery(t, "player:x2", uuid.NewString(), ""))
			h.ok(standingsQuery(t, "player:p1", l.playerTokens["p1"], ""))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			h := newHarness(t, harnessOptions{clock: clock, cfg: tc.limits})
			tc.run(t, h, clock)
		})
	}
}

// Only registered senders (and the admin) get buckets of their own: a flood of
// unknown senders leaves the limiter map as it was.
func TestRateLimitBucketsAreBounded(t *testing.T) {
	h := newHarness(t, harnessOptions{clock: newFakeClock(), cfg: func(c *config.Config) { c.Registration.MaxReferees = 1 }})
	l := h.register([]string{"ref1"}, nil, []string{"p1"})
	h.ok(standingsQuery(t, "player:p1", l.playerTokens["p1"], ""))
	h.ok(standingsQuery(t, protocol.SenderAdmin, testAdminToken, ""))
	for i := range 100 {
		id := fmt.Sprintf("x%03d", i)
		_, _ = h.call(standingsQuery(t, "player:"+id, uuid.NewString(), ""))
		_, _ = h.call(refereeRegistration(t, id, "http://127.0.0.1:9/"+id, nil))
	}
	h.m.e.mu.Lock()
	defer h.m.e.mu.Unlock()
	for sender := range h.m.limits.bySender {
		if sender != protocol.SenderAdmin && h.m.e.agents.senders[sender] == nil {
			t.Errorf("unregistered sender %s has its own buckets", sender)
		}
	}
	if n := len(h.m.limits.bySender); n != 2 {
		t.Errorf("%d senders have buckets, want 2 (player:p1 and admin)", n)
	}
}
