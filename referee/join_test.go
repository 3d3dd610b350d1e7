package referee

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/internal/rpccheck"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Registration, AGENT_READY and reports against a League Manager that cannot take them
// for a while (its disk is full, it fails, it rate limits), on fake time: the referee
// reaches a fakeLeagueCaller in memory, which retries as protocol.Client does.

const testEndpoint = "http://127.0.0.1:8001/mcp"

// unregisteredReferee is a referee as New leaves it, talking to league in memory. Build
// it inside the synctest bubble that uses it.
func unregisteredReferee(t *testing.T, league Caller, log zerolog.Logger, change func(*Config)) *Referee {
	t.Helper()
	cfg := Config{ID: "ref1", Addr: "127.0.0.1:0", LeagueURL: "http://league.test/mcp", Stdout: io.Discard}
	if change != nil {
		change(&cfg)
	}
	r, err := New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	r.league = league
	return r
}

// registered answers a REGISTER_REFEREE_REQUEST.
func registered(m *protocol.Message) (*protocol.Message, error) {
	return leagueReply(m, protocol.RegisterRefereeResponse, map[string]any{
		"status": "registered", "auth_token": "6f1c3b1e-7a55-4b8e-9a55-3c1d2e4f5a6b", "league_id": "league-1",
		"features": []string{protocol.FeatureHeartbeats}, "heartbeat_interval_ms": 2000, "lease_ms": 6000,
	})
}

// readyAck answers an AGENT_READY_REQUEST.
func readyAck(m *protocol.Message) (*protocol.Message, error) {
	return leagueReply(m, protocol.AgentReadyResponse, map[string]any{
		"status": "acknowledged", "agent_id": "ref1", "agent_type": "referee", "agent_state": "ACTIVE",
	})
}

// A League Manager that cannot write (a full disk), fails or rate limits: the referee
// sends the same registration again with a backoff capped at 2 s, as long as it takes
// within RegisterFor (here 89 s), and is registered once it is taken.
func TestRegistrationOutlastsTransientRefusals(t *testing.T) {
	for _, reason := range protocol.Transient() {
		t.Run(string(reason), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const refusals = 48
				fl := newFakeLeagueCaller(t, func(_ context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
					switch {
					case m.Envelope.MessageType == protocol.AgentReadyRequest:
						return readyAck(m)
					case n < refusals:
						return nil, protocol.Errorf(reason, "refused, for now")
					}
					return registered(m)
				})
				r := unregisteredReferee(t, fl, zerolog.Nop(), nil)
				jctx, stop := r.joinContext(context.Background())
				defer stop()
				start := time.Now()
				if err := r.register(jctx, testEndpoint); err != nil {
					t.Fatalf("register: %v", err)
				}
				// 100 ms doubling to 1.6 s, then 2 s each time: 3.1 s + 43 × 2 s.
				if got, want := time.Since(start), 89100*time.Millisecond; got != want {
					t.Errorf("registered after %v, want %v", got, want)
				}
				calls := fl.sent(protocol.RegisterRefereeRequest)
				if len(calls) != refusals+1 {
					t.Fatalf("%d registration attempts, want %d", len(calls), refusals+1)
				}
				rpccheck.SameMessage(t, calls)
				rpccheck.DoublingBackoff(t, calls, registerBackoff, registerMaxBackoff)
				for _, c := range calls {
					if c.Opt.Timeout != r.cfg.CallTimeout || !c.Deadline.Equal(start.Add(DefaultRegisterFor)) {
						t.Fatalf("attempt deadline %v, call deadline %v, want %v and RegisterFor", c.Opt.Timeout, c.Deadline.Sub(start), r.cfg.CallTimeout)
					}
				}
				r.ready(jctx)
				if st := r.Status(); st.State != "IDLE" || st.LeagueID != "league-1" || r.heartbeat != 2*time.Second {
					t.Errorf("status %+v, heartbeat %v after registration, want IDLE in league-1 with 2 s heartbeats", st, r.heartbeat)
				}
			})
		})
	}
}

// Refused for longer than RegisterFor, the referee gives up at that deadline, not at the
// first refusal, with an error that says so.
func TestRegistrationGivesUpAtRegisterFor(t *testing.T) {
	for _, registerFor := range []time.Duration{0, 45 * time.Second} {
		t.Run(registerFor.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fl := newFakeLeagueCaller(t, func(context.Context, *protocol.Message, int) (*protocol.Message, error) {
					return nil, protocol.Errorf(protocol.ReasonStorageUnavailable, "database: no space left on device")
				})
				r := unregisteredReferee(t, fl, zerolog.Nop(), func(c *Config) { c.RegisterFor = registerFor })
				want := r.cfg.RegisterFor
				jctx, stop := r.joinContext(context.Background())
				defer stop()
				start := time.Now()
				err := r.register(jctx, testEndpoint)
				if got := time.Since(start); got != want {
					t.Errorf("register returned after %v, want %v", got, want)
				}
				if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "register: gave up after "+want.String()) ||
					!strings.Contains(err.Error(), string(protocol.ReasonStorageUnavailable)) {
					t.Fatalf("register: %v, want an error saying it gave up after %v, refused with STORAGE_UNAVAILABLE", err, want)
				}
				calls := fl.sent(protocol.RegisterRefereeRequest)
				if len(calls) < 10 {
					t.Errorf("%d registration attempts, want retries until the deadline", len(calls))
				}
				rpccheck.SameMessage(t, calls)
			})
		})
	}
}

// AGENT_READY is retried on transient refusals until acknowledged, or until the
// registration deadline, or until LEAGUE_SHUTDOWN arrives; a referee it fails for stays
// usable.
func TestAgentReadyRetriesTransientRefusals(t *testing.T) {
	readyAfter := func(refusals int) func(context.Context, *protocol.Message, int) (*protocol.Message, error) {
		return func(_ context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			switch {
			case m.Envelope.MessageType == protocol.RegisterRefereeRequest:
				return registered(m)
			case refusals < 0 || n < refusals:
				return nil, protocol.Errorf(protocol.Transient()[n%len(protocol.Transient())], "refused, for now")
			}
			return readyAck(m)
		}
	}
	join := func(t *testing.T, r *Referee) (context.Context, context.CancelFunc) {
		t.Helper()
		jctx, stop := r.joinContext(context.Background())
		if err := r.register(jctx, testEndpoint); err != nil {
			t.Fatalf("register: %v", err)
		}
		return jctx, stop
	}
	t.Run("acknowledged", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fl := newFakeLeagueCaller(t, readyAfter(6))
			r := unregisteredReferee(t, fl, zerolog.Nop(), nil)
			jctx, stop := join(t, r)
			defer stop()
			r.ready(jctx)
			calls := fl.sent(protocol.AgentReadyRequest)
			if len(calls) != 7 {
				t.Fatalf("%d AGENT_READY attempts, want 7 (6 refusals, then acknowledged)", len(calls))
			}
			rpccheck.SameMessage(t, calls)
			rpccheck.DoublingBackoff(t, calls, registerBackoff, registerMaxBackoff)
			if st := r.Status().State; st != "IDLE" {
				t.Errorf("state %s, want IDLE", st)
			}
		})
	})
	t.Run("until the registration deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fl := newFakeLeagueCaller(t, readyAfter(-1))
			logs := &syncBuffer{}
			r := unregisteredReferee(t, fl, zerolog.New(logs), func(c *Config) { c.RegisterFor = time.Minute })
			start := time.Now()
			jctx, stop := join(t, r)
			defer stop()
			r.ready(jctx)
			if got := time.Since(start); got != time.Minute {
				t.Errorf("ready returned after %v, want the registration deadline, 1m0s", got)
			}
			if n := len(fl.sent(protocol.AgentReadyRequest)); n < 10 {
				t.Errorf("%d AGENT_READY attempts, want retries until the deadline", n)
			}
			if st := r.Status().State; st != "IDLE" {
				t.Errorf("state %s, want IDLE: a referee whose readiness was not acknowledged is usable", st)
			}
			if n := len(logs.entries(t, "warn", "agent ready not acknowledged")); n != 1 {
				t.Errorf("%d warnings about AGENT_READY, want 1", n)
			}
		})
	})
	t.Run("league shutdown", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fl := newFakeLeagueCaller(t, readyAfter(-1))
			r := unregisteredReferee(t, fl, zerolog.Nop(), nil)
			jctx, stop := join(t, r)
			defer stop()
			start := time.Now()
			var wg sync.WaitGroup
			defer wg.Wait()
			wg.Go(func() {
				time.Sleep(10 * time.Second)
				msg, err := protocol.NewMessage(protocol.LeagueShutdown, protocol.SenderLeagueManager, map[string]any{"reason": "league completed"})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := r.handle(context.Background(), t.Context(), msg); err != nil {
					t.Errorf("LEAGUE_SHUTDOWN: %v", err)
				}
			})
			r.ready(jctx)
			if got := time.Since(start); got != 10*time.Second {
				t.Errorf("ready returned %v after it started, want at LEAGUE_SHUTDOWN, 10s", got)
			}
		})
	})
}

// A result the League Manager cannot take for now (it cannot write, fails or rate limits)
// is sent again, the same message, until acknowledged.
func TestReportOutlastsTransientRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const refusals = 12
		fl := newFakeLeagueCaller(t, func(_ context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			if n < refusals {
				return nil, protocol.Errorf(protocol.Transient()[n%len(protocol.Transient())], "refused, for now")
			}
			return leagueReply(m, protocol.MatchResultAck, map[string]string{"status": "acknowledged", "match_id": m.Envelope.MatchID})
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		msg := testReport(t, r)
		if err := r.report(context.Background(), msg, nil); err != nil {
			t.Fatalf("report: %v", err)
		}
		calls := fl.sent(protocol.MatchResultReport)
		if len(calls) != refusals+1 {
			t.Fatalf("%d report attempts, want %d", len(calls), refusals+1)
		}
		for i, c := range calls {
			if c.Msg != msg {
				t.Fatalf("attempt %d sent another message than the report", i)
			}
			// Jittered waits: at most reportMaxBackoff.
			if gap := c.At.Sub(calls[max(i-1, 0)].At); gap > reportMaxBackoff {
				t.Errorf("attempt %d came %v after the one before, want at most %v", i, gap, reportMaxBackoff)
			}
		}
	})
}

func TestJudged(t *testing.T) {
	for _, reason := range protocol.Transient() {
		if judged(protocol.Errorf(reason, "for now")) {
			t.Errorf("a report refused with %s is judged, want it retried", reason)
		}
	}
	for _, reason := range []protocol.Reason{protocol.ReasonStaleAssignment, protocol.ReasonInvalidResult, protocol.ReasonDuplicateResult, protocol.ReasonUnauthorized} {
		if !judged(protocol.Errorf(reason, "no")) {
			t.Errorf("a report refused with %s is not judged, want it final", reason)
		}
	}
}
