package player

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/rpccheck"
	"github.com/agentleague/agentleague/protocol"
)

// The calls to the League Manager on fake time: the player reaches a fakeLeague in memory
// (memCaller, which retries as protocol.Client does), inside a synctest bubble.

// memPlayer is a player that talks to a fakeLeague in memory, served (Serve) by a test in
// its synctest bubble.
type memPlayer struct {
	*Player
	league *memCaller
	cancel context.CancelFunc
	done   chan error
}

const memEndpoint = "http://127.0.0.1:9001/mcp"

// newMemPlayer builds a player that reaches lg in memory. Build it inside the bubble.
func newMemPlayer(t *testing.T, lg *fakeLeague, cfg Config) (*Player, *memCaller) {
	t.Helper()
	cfg.ID, cfg.Addr, cfg.LeagueURL, cfg.Strategy = "p01", "127.0.0.1:0", "http://league.test/mcp", "random"
	p, err := New(cfg, testLogger(t).With().Str("component", "player").Logger())
	if err != nil {
		t.Fatal(err)
	}
	c := lg.caller(t)
	p.link.caller = c
	return p, c
}

// serveInMemory starts Serve of a player that reaches lg in memory; the test's end stops
// it and checks it stopped cleanly.
func serveInMemory(t *testing.T, lg *fakeLeague, cfg Config) *memPlayer {
	t.Helper()
	p, c := newMemPlayer(t, lg, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	m := &memPlayer{Player: p, league: c, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- p.Serve(ctx, memEndpoint) }()
	t.Cleanup(func() {
		cancel()
		if err := <-m.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return m
}

// waitRegistered waits (on the bubble's clock) until the player is registered.
func (m *memPlayer) waitRegistered(t *testing.T) {
	t.Helper()
	select {
	case <-m.Registered():
	case err := <-m.done:
		m.done <- err // for the cleanup
		t.Fatalf("Serve returned before the player registered: %v", err)
	}
}

// running says whether Serve is still running once every goroutine of the bubble waits.
func (m *memPlayer) running(t *testing.T) bool {
	t.Helper()
	synctest.Wait()
	select {
	case err := <-m.done:
		m.done <- err // for the cleanup
		return false
	default:
		return true
	}
}

// A League Manager that cannot write (its disk is full) or fails answers STORAGE_UNAVAILABLE
// or INTERNAL: the player sends the same registration again, with a backoff capped at 2 s,
// for as long as it takes within RegisterFor (here 90 s of refusals), and plays on once
// it is registered.
func TestRegistrationOutlastsTransientRefusals(t *testing.T) {
	for _, reason := range protocol.Transient() {
		t.Run(string(reason), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const refusals = 48
				lg := newFakeLeague(&fakeLeague{refusals: refusals, refusalReason: reason})
				start := time.Now()
				m := serveInMemory(t, lg, Config{})
				m.waitRegistered(t)
				// 100 ms doubling to 1.6 s, then 2 s each time: 3.1 s + 43 × 2 s.
				if got, want := time.Since(start), 89100*time.Millisecond; got != want {
					t.Errorf("registered after %v, want %v", got, want)
				}
				calls := m.league.sent(protocol.RegisterPlayerRequest)
				if len(calls) != refusals+1 {
					t.Fatalf("%d registration attempts, want %d (%d refusals, then success)", len(calls), refusals+1, refusals)
				}
				rpccheck.SameMessage(t, calls)
				rpccheck.DoublingBackoff(t, calls, registerBackoff, registerMaxBackoff)
				if !m.running(t) {
					t.Fatal("Serve returned after the registration succeeded")
				}
				if st := m.Status(); st.State != StateActive || st.LeagueID != testLeagueID {
					t.Errorf("status %+v, want ACTIVE in %s", st, testLeagueID)
				}
			})
		})
	}
}

// Refused for longer than RegisterFor, the player gives up at that deadline, not before
// and not at the first refusal, with an error that says so.
func TestRegistrationGivesUpAtRegisterFor(t *testing.T) {
	tests := []struct {
		name        string
		registerFor time.Duration
		reason      protocol.Reason
	}{
		{"default deadline, storage unavailable", 0, protocol.ReasonStorageUnavailable},
		{"30 s, internal", 30 * time.Second, protocol.ReasonInternal},
		{"1 min, no referee yet", time.Minute, protocol.ReasonNoRefereeRegistered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lg := newFakeLeague(&fakeLeague{refusals: 1 << 20, refusalReason: tt.reason})
				p, c := newMemPlayer(t, lg, Config{RegisterFor: tt.registerFor})
				start := time.Now()
				err := p.Serve(context.Background(), memEndpoint)
				want := p.cfg.RegisterFor
				if got := time.Since(start); got != want {
					t.Errorf("Serve returned after %v, want %v", got, want)
				}
				if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "gave up after "+want.String()) ||
					!strings.Contains(err.Error(), string(tt.reason)) {
					t.Fatalf("Serve: %v, want an error saying it gave up after %v, refused with %s", err, want, tt.reason)
				}
				calls := c.sent(protocol.RegisterPlayerRequest)
				if len(calls) < 10 {
					t.Errorf("%d registration attempts, want retries until the deadline", len(calls))
				}
				rpccheck.SameMessage(t, calls)
				if st := p.Status().State; st != StateStopped {
					t.Errorf("state %s, want %s", st, StateStopped)
				}
			})
		})
	}
}

// AGENT_READY refused with a transient reason is sent again until acknowledged.
func TestAgentReadyOutlastsTransientRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lg := newFakeLeague(&fakeLeague{refuseLater: protocol.ReasonStorageUnavailable, laterRefusals: 6})
		m := serveInMemory(t, lg, Config{})
		// Well inside RegisterFor (2 min): 6 refusals take 5.1 s.
		time.Sleep(time.Minute)
		synctest.Wait()
		if st := m.Status().State; st != StateActive {
			t.Fatalf("state %s, want %s", st, StateActive)
		}
		calls := m.league.sent(protocol.AgentReadyRequest)
		if len(calls) != 7 || lg.readyCount("p01") != 1 {
			t.Fatalf("%d AGENT_READY attempts, %d acknowledged; want 7, the last one acknowledged", len(calls), lg.readyCount("p01"))
		}
		rpccheck.SameMessage(t, calls)
		rpccheck.DoublingBackoff(t, calls, registerBackoff, registerMaxBackoff)
		if !m.running(t) {
			t.Fatal("Serve returned")
		}
	})
}

// AGENT_READY refused until the registration deadline leaves the player registered and
// playing; LEAGUE_SHUTDOWN while AGENT_READY is retried ends the player at once.
func TestAgentReadyRefusedUntilTheDeadline(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lg := newFakeLeague(&fakeLeague{refuseLater: protocol.ReasonInternal})
			start := time.Now()
			m := serveInMemory(t, lg, Config{RegisterFor: time.Minute})
			time.Sleep(2 * time.Minute)
			if !m.running(t) {
				t.Fatal("Serve returned: a refused AGENT_READY must leave the player playing")
			}
			if st := m.Status().State; st != StateRegistered {
				t.Errorf("state %s, want %s", st, StateRegistered)
			}
			calls := m.league.sent(protocol.AgentReadyRequest)
			if len(calls) < 10 {
				t.Errorf("%d AGENT_READY attempts, want retries until the deadline", len(calls))
			}
			for _, c := range calls {
				if !c.Deadline.Equal(start.Add(time.Minute)) {
					t.Fatalf("AGENT_READY retried until %v, want the registration deadline %v", c.Deadline.Sub(start), time.Minute)
				}
			}
		})
	})
	t.Run("league shutdown", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lg := newFakeLeague(&fakeLeague{refuseLater: protocol.ReasonInternal})
			m := serveInMemory(t, lg, Config{})
			time.Sleep(10 * time.Second)
			msg, err := protocol.NewMessage(protocol.LeagueShutdown, protocol.SenderLeagueManager, map[string]any{"reason": "league completed"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Handle(context.Background(), msg); err != nil {
				t.Fatalf("LEAGUE_SHUTDOWN: %v", err)
			}
			if m.running(t) {
				t.Fatal("Serve still runs after LEAGUE_SHUTDOWN")
			}
		})
	})
}

// QUERY_STANDINGS retries the transient refusals until leagueQueryFor.
func TestStandingsRetriesTransientRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lg := newFakeLeague(&fakeLeague{})
		m := serveInMemory(t, lg, Config{})
		m.waitRegistered(t)
		synctest.Wait() // AGENT_READY is acknowledged
		lg.refuseNext(protocol.ReasonStorageUnavailable, 3)
		if _, err := m.Standings(context.Background()); err != nil {
			t.Fatalf("Standings: %v", err)
		}
		calls := m.league.sent(protocol.QueryStandings)
		if len(calls) != 4 {
			t.Fatalf("%d QUERY_STANDINGS attempts, want 4 (3 refusals, then the standings)", len(calls))
		}
		rpccheck.SameMessage(t, calls)

		lg.refuseNext(protocol.ReasonInternal, 0)
		start := time.Now()
		_, err := m.Standings(context.Background())
		if got := time.Since(start); got != leagueQueryFor {
			t.Errorf("Standings gave up after %v, want %v", got, leagueQueryFor)
		}
		if !errors.Is(err, context.DeadlineExceeded) || protocol.ReasonOf(err) != protocol.ReasonInternal {
			t.Errorf("Standings: %v, want the deadline after INTERNAL", err)
		}
	})
}

// An invitation without credential is confirmed with QUERY_MATCH, retried on transient
// refusals until matchQueryFor; then the invitation is answered BUSY.
func TestMatchQueryRetriesTransientRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lg := newFakeLeague(&fakeLeague{features: allFeatures})
		lg.setMatch("R1M1", fakeMatch{players: [2]string{"p01", "p99"}, refereeID: "ref1", status: "IN_PROGRESS"})
		lg.setMatch("R1M2", fakeMatch{players: [2]string{"p01", "p99"}, refereeID: "ref1", status: "IN_PROGRESS"})
		m := serveInMemory(t, lg, Config{})
		m.waitRegistered(t)
		synctest.Wait() // AGENT_READY is acknowledged
		invite := func(matchID string) error {
			msg, err := protocol.NewMessage(protocol.GameInvitation, protocol.RefereeSender("ref1"),
				map[string]any{"match_id": matchID, "game_type": game.TypeTicTacToe, "opponents": []string{"p99"}})
			if err != nil {
				t.Fatal(err)
			}
			msg.Envelope.MatchID, msg.Envelope.GameType = matchID, game.TypeTicTacToe
			_, err = m.Handle(context.Background(), msg)
			return err
		}

		lg.refuseNext(protocol.ReasonStorageUnavailable, 3)
		if err := invite("R1M1"); err != nil {
			t.Fatalf("invitation confirmed after 3 transient refusals: %v", err)
		}
		calls := m.league.sent(protocol.QueryMatch)
		if len(calls) != 4 {
			t.Fatalf("%d QUERY_MATCH attempts, want 4 (3 refusals, then the answer)", len(calls))
		}
		rpccheck.SameMessage(t, calls)

		lg.refuseNext(protocol.ReasonInternal, 0)
		start := time.Now()
		err := invite("R1M2")
		if got := time.Since(start); got != matchQueryFor {
			t.Errorf("the invitation was answered after %v, want %v", got, matchQueryFor)
		}
		wantReason(t, err, protocol.ReasonBusy)
		if n := len(m.league.sent(protocol.QueryMatch)) - len(calls); n < 5 {
			t.Errorf("%d QUERY_MATCH attempts, want retries until the deadline", n)
		}
	})
}
