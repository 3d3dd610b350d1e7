package referee

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/rpccheck"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// fakeLeagueCaller is a League Manager reached in memory: answer decides each attempt (n
// counts the attempts of that message type from 0). It keeps every attempt. It retries as
// protocol.Client does: every attempt has opt.Timeout, and a failed attempt is tried
// again as opt.Retry says (transport failures, the reasons it lists, errors without a
// reason when Unexplained), after the longest backoff the client may draw,
// min(Backoff·2^(n-1), MaxBackoff), until ctx ends or the attempts run out.
type fakeLeagueCaller struct {
	t      *testing.T
	v      *protocol.Validator
	answer func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error)

	mu    sync.Mutex
	calls []rpccheck.Call
}

func newFakeLeagueCaller(t *testing.T, answer func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error)) *fakeLeagueCaller {
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeLeagueCaller{t: t, v: v, answer: answer}
}

func (f *fakeLeagueCaller) Call(ctx context.Context, url string, m *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error) {
	if err := f.v.ValidateMessage(m); err != nil {
		f.t.Errorf("referee sent an invalid %s: %v", m.Envelope.MessageType, err)
	}
	return rpccheck.Retrying(ctx, url, m, opt, func() (*protocol.Message, error) { return f.attempt(ctx, m, opt) })
}

// attempt is one try of a call: answer decides it.
func (f *fakeLeagueCaller) attempt(ctx context.Context, m *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error) {
	deadline, _ := ctx.Deadline()
	f.mu.Lock()
	n := 0
	for _, c := range f.calls {
		if c.Msg.Envelope.MessageType == m.Envelope.MessageType {
			n++
		}
	}
	f.calls = append(f.calls, rpccheck.Call{Msg: m, Opt: opt, At: time.Now(), Deadline: deadline})
	f.mu.Unlock()
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	ans, err := f.answer(ctx, m, n)
	if err == nil && ans != nil {
		if verr := f.v.ValidateMessage(ans); verr != nil {
			f.t.Errorf("fake league answered an invalid %s: %v", ans.Envelope.MessageType, verr)
		}
	}
	return ans, err
}

func (f *fakeLeagueCaller) sent(messageType string) []rpccheck.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []rpccheck.Call
	for _, c := range f.calls {
		if c.Msg.Envelope.MessageType == messageType {
			out = append(out, c)
		}
	}
	return out
}

func leagueReply(m *protocol.Message, typ string, payload any) (*protocol.Message, error) {
	out, err := m.Reply(typ, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.LeagueID = "league-1"
	return out, nil
}

// hang waits for the caller's deadline, like a League Manager that never answers.
func hang(ctx context.Context) error {
	<-ctx.Done()
	return fmt.Errorf("post: %w", ctx.Err())
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// entries returns the log lines at level whose message contains text.
func (b *syncBuffer) entries(t *testing.T, level, text string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(b.buf.String()), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if msg, _ := e["message"].(string); e["level"] == level && strings.Contains(msg, text) {
			out = append(out, e)
		}
	}
	return out
}

// registeredReferee is a referee as register leaves it, talking to league in memory. Build
// it inside the synctest bubble that uses it.
func registeredReferee(t *testing.T, league Caller, log zerolog.Logger, change func(*Config)) *Referee {
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
	r.token, r.leagueID, r.state = "6f1c3b1e-7a55-4b8e-9a55-3c1d2e4f5a6b", "league-1", "IDLE"
	close(r.registered)
	return r
}

// Heartbeats go every interval until stopped. Within its interval, a heartbeat that gets
// no connection or a transient refusal (INTERNAL, STORAGE_UNAVAILABLE, RATE_LIMITED) is
// sent again, the same message, with a backoff; no attempt and no retry outlasts the
// interval, and no failure or refusal ends the heartbeats.
func TestHeartbeatsEveryIntervalUntilStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fl := newFakeLeagueCaller(t, func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			switch n {
			case 1, 2, 3, 4: // the heartbeat at 2 s, and its retries until 3 s
				return nil, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
			case 5:
				return nil, protocol.Errorf(protocol.ReasonSuspended, "referee ref1 is suspended")
			case 6:
				return nil, hang(ctx)
			case 7:
				return nil, protocol.Errorf(protocol.ReasonInternal, "internal error")
			case 8:
				return nil, protocol.Errorf(protocol.ReasonStorageUnavailable, "audit log: no space left on device")
			}
			return leagueReply(m, protocol.HeartbeatResponse, map[string]any{"status": "acknowledged", "lease_ms": 3000})
		})
		logs := &syncBuffer{}
		r := registeredReferee(t, fl, zerolog.New(logs), nil)
		hold(r, "m-2", protocol.PhasePlaying, 3)
		hold(r, "m-1", protocol.PhaseJoining, 0)

		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { r.heartbeats(ctx, time.Second) })
		start := time.Now()
		time.Sleep(2500 * time.Millisecond)
		r.mu.Lock()
		delete(r.held, "m-2")
		r.mu.Unlock()
		time.Sleep(3 * time.Second) // 5.5 s: five ticks
		stop()
		wg.Wait()
		time.Sleep(10 * time.Second)

		beats := fl.sent(protocol.HeartbeatRequest)
		// Ticks at 1 to 5 s. At 2 s: no connection, retried after 100, 200 and 400 ms, the
		// next wait (500 ms, half the interval) cut by the interval's end. At 3 s:
		// SUSPENDED, not retried. At 4 s: no answer within the interval. At 5 s: INTERNAL
		// and STORAGE_UNAVAILABLE, retried after 100 and 200 ms, then acknowledged.
		at := []time.Duration{1000, 2000, 2100, 2300, 2700, 3000, 4000, 5000, 5100, 5300}
		tick := []time.Duration{1000, 2000, 2000, 2000, 2000, 3000, 4000, 5000, 5000, 5000}
		if len(beats) != len(at) {
			t.Fatalf("got %d heartbeat attempts over 5.5 s and 10 s after stopping, want %d", len(beats), len(at))
		}
		for i, b := range beats {
			if want := start.Add(at[i] * time.Millisecond); !b.At.Equal(want) {
				t.Errorf("heartbeat attempt %d at %v, want %v", i, b.At.Sub(start), want.Sub(start))
			}
			e := b.Msg.Envelope
			if e.Sender != "referee:ref1" || e.AuthToken != r.token || e.LeagueID != "league-1" {
				t.Errorf("heartbeat %d envelope %+v, want the referee's sender, token and league", i, e)
			}
			// A heartbeat never outlasts the interval, even against a silent League
			// Manager, retries included.
			if end := start.Add(tick[i]*time.Millisecond + time.Second); b.Opt.Timeout != time.Second || !b.Deadline.Equal(end) {
				t.Errorf("heartbeat attempt %d: attempt deadline %v, call deadline %v, want 1s and %v", i, b.Opt.Timeout, b.Deadline.Sub(start), end.Sub(start))
			}
			if i > 0 && tick[i] == tick[i-1] && b.Msg != beats[i-1].Msg {
				t.Errorf("heartbeat attempt %d sent another message than the attempt before, in the same interval", i)
			}
			if i > 0 && tick[i] != tick[i-1] && b.Msg.Envelope.ConversationID == beats[i-1].Msg.Envelope.ConversationID {
				t.Errorf("heartbeat attempt %d, at a new tick, repeats the conversation of the heartbeat before", i)
			}
			var p map[string]any
			if err := b.Msg.Decode(&p); err != nil {
				t.Fatal(err)
			}
			want := []any{"m-1", "m-2"}
			if tick[i] >= 3000 {
				want = []any{"m-1"}
			}
			if !slices.Equal(p["active_matches"].([]any), want) {
				t.Errorf("heartbeat attempt %d active_matches %v, want %v", i, p["active_matches"], want)
			}
			// The League Manager did not announce match_progress.
			if _, ok := p["match_progress"]; ok {
				t.Errorf("heartbeat %d carries match_progress %v, want none", i, p["match_progress"])
			}
		}
		if n := len(logs.entries(t, "warn", "suspended")); n != 1 {
			t.Errorf("got %d warnings about the suspension, want 1", n)
		}
		if n := len(logs.entries(t, "warn", "heartbeat failed")); n != 2 {
			t.Errorf("got %d warnings about failed heartbeats (refused connections, no answer), want 2", n)
		}
	})
}

// hold makes r hold a match in phase at step, as if it had been assigned.
func hold(r *Referee, id, phase string, step int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held[id] = &heldMatch{a: protocol.Assignment{MatchID: id}, phase: phase, step: step}
}

// A heartbeat to a League Manager that announced match_progress lists every held match
// with its phase and step, matches holding a slot first, within the schema's bounds.
func TestHeartbeatListsAtMostTheSchemaLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fl := newFakeLeagueCaller(t, func(_ context.Context, m *protocol.Message, _ int) (*protocol.Message, error) {
			return leagueReply(m, protocol.HeartbeatResponse, map[string]any{"status": "acknowledged", "lease_ms": 3000})
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		r.leagueFeatures = []string{protocol.FeatureHeartbeats, protocol.FeatureMatchProgress}
		for i := range 70 {
			hold(r, fmt.Sprintf("m-%02d", i), protocol.PhasePlaying, i)
		}
		for i := range 250 {
			hold(r, fmt.Sprintf("q-%03d", i), protocol.PhaseQueued, 0)
		}
		hold(r, "z-reported", protocol.PhaseReporting, 9)
		r.sendHeartbeat(context.Background(), time.Second)
		var p struct {
			Active   []string                 `json:"active_matches"`
			Progress []protocol.MatchProgress `json:"match_progress"`
		}
		if err := fl.sent(protocol.HeartbeatRequest)[0].Msg.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if len(p.Active) != maxHeartbeatMatches || p.Active[0] != "m-00" {
			t.Errorf("got %d active matches starting %v, want %d", len(p.Active), p.Active[:1], maxHeartbeatMatches)
		}
		if len(p.Progress) != maxHeartbeatProgress {
			t.Fatalf("got %d match_progress entries, want %d", len(p.Progress), maxHeartbeatProgress)
		}
		want := []protocol.MatchProgress{
			{MatchID: "m-00", Step: 0, Phase: protocol.PhasePlaying},
			{MatchID: "m-69", Step: 69, Phase: protocol.PhasePlaying},
			{MatchID: "z-reported", Step: 9, Phase: protocol.PhaseReporting},
			{MatchID: "q-000", Step: 0, Phase: protocol.PhaseQueued},
		}
		got := []protocol.MatchProgress{p.Progress[0], p.Progress[69], p.Progress[70], p.Progress[71]}
		if !slices.Equal(got, want) {
			t.Errorf("got match_progress entries %v at 0, 69, 70, 71, want %v", got, want)
		}
	})
}

func TestRunSendsHeartbeatsUntilItReturns(t *testing.T) {
	a := startAgents(t, agents{features: []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials, protocol.FeatureHeartbeats}, heartbeatMS: 10})
	f := a.league
	for range 3 {
		select {
		case <-f.beat:
		case <-time.After(5 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
	f.shutdown(t)
	if err := a.waitRun(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	f.mu.Lock()
	n := len(f.heartbeats)
	first := f.heartbeats[0]
	f.mu.Unlock()
	// Run waited for the heartbeat goroutine: nothing more is sent, though one sent just
	// before may still reach the league. (TestHeartbeatsEveryIntervalUntilStopped checks
	// the stop exactly, on fake time.)
	time.Sleep(50 * time.Millisecond)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.heartbeats) > n+1 {
		t.Errorf("got %d heartbeats after Run returned", len(f.heartbeats)-n)
	}
	var p map[string]any
	if err := first.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if act, ok := p["active_matches"].([]any); !ok || len(act) != 0 {
		t.Errorf("idle referee's heartbeat payload %v, want active_matches []", p)
	}
}

// testReport is the MATCH_RESULT_REPORT every report test sends.
func testReport(t *testing.T, r *Referee) *protocol.Message {
	t.Helper()
	a := protocol.Assignment{MatchID: "r01-m01", RoundID: "round-1", GameType: game.TypeTicTacToe, Players: []string{"p1", "p2"}}
	msg, err := r.resultMessage(a, &Report{
		Outcome: map[string]string{"p1": "win", "p2": "loss"}, Points: map[string]int{"p1": 3, "p2": 0},
		Metadata: protocol.GameMetadata{Termination: protocol.TerminationNormal, Moves: []protocol.MoveRecord{}, Violations: []protocol.MatchViolation{}, GameParams: map[string]any{}, FinalState: json.RawMessage(`{}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

func TestReportRetriesWithBackoffUntilAcknowledged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fl := newFakeLeagueCaller(t, func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			switch n {
			case 0:
				return nil, hang(ctx) // the attempt's deadline ends it
			case 1:
				return nil, protocol.Errorf(protocol.ReasonInternal, "database busy")
			}
			return leagueReply(m, protocol.MatchResultAck, map[string]string{"status": "acknowledged", "match_id": m.Envelope.MatchID})
		})
		r := registeredReferee(t, fl, zerolog.Nop(), func(c *Config) { c.ReportTimeout = 300 * time.Millisecond })
		msg := testReport(t, r)
		start := time.Now()
		if err := r.report(context.Background(), msg, nil); err != nil {
			t.Fatalf("report: %v", err)
		}
		calls := fl.sent(protocol.MatchResultReport)
		if len(calls) != 3 {
			t.Fatalf("got %d report attempts, want 3 (no answer, INTERNAL, acknowledged)", len(calls))
		}
		for i, c := range calls {
			if c.Opt.Timeout != 300*time.Millisecond {
				t.Errorf("attempt %d deadline %v, want the report timeout 300ms", i, c.Opt.Timeout)
			}
			if c.Msg != msg || c.Msg.Envelope.AuthToken != r.token {
				t.Errorf("attempt %d envelope %+v, want the one report message with the referee's token", i, c.Msg.Envelope)
			}
		}
		// Backoffs with jitter: [125, 250] ms, then [250, 500] ms.
		gap1, gap2 := calls[1].At.Sub(calls[0].At)-300*time.Millisecond, calls[2].At.Sub(calls[1].At)
		if gap1 < 125*time.Millisecond || gap1 > 250*time.Millisecond || gap2 < 250*time.Millisecond || gap2 > 500*time.Millisecond {
			t.Errorf("backoffs %v and %v, want [125ms, 250ms] then [250ms, 500ms]", gap1, gap2)
		}
		if got := time.Since(start); got != calls[2].At.Sub(start) {
			t.Errorf("report returned %v after the acknowledgement", got-calls[2].At.Sub(start))
		}
	})
}

func TestReportStopsWhenRefusedOrStopped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fl := newFakeLeagueCaller(t, func(context.Context, *protocol.Message, int) (*protocol.Message, error) {
			return nil, protocol.Errorf(protocol.ReasonStaleAssignment, "match r01-m01 was reassigned")
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		start := time.Now()
		err := r.report(context.Background(), testReport(t, r), nil)
		if protocol.ReasonOf(err) != protocol.ReasonStaleAssignment {
			t.Fatalf("report: %v, want STALE_ASSIGNMENT", err)
		}
		if n := len(fl.sent(protocol.MatchResultReport)); n != 1 || time.Since(start) != 0 {
			t.Errorf("got %d attempts over %v, want 1 at once", n, time.Since(start))
		}
	})
	// A League Manager written from the seeds refuses with errors of its own, without
	// data.reason: final, unless it is the JSON-RPC internal error.
	for _, tc := range []struct {
		code         int
		wantAttempts int
	}{{-32000, 1}, {-32602, 1}, {protocol.CodeInternalError, 3}} {
		synctest.Test(t, func(t *testing.T) {
			fl := newFakeLeagueCaller(t, func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
				if n == 2 {
					return leagueReply(m, protocol.MatchResultAck, map[string]string{"status": "acknowledged", "match_id": m.Envelope.MatchID})
				}
				return nil, fmt.Errorf("report: %w", &protocol.Error{Code: tc.code, Message: "Authentication failed", Data: &protocol.ErrorData{}})
			})
			r := registeredReferee(t, fl, zerolog.Nop(), nil)
			_ = r.report(context.Background(), testReport(t, r), nil)
			if n := len(fl.sent(protocol.MatchResultReport)); n != tc.wantAttempts {
				t.Errorf("error %d without a reason: got %d attempts, want %d", tc.code, n, tc.wantAttempts)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		// A report too large for the League Manager (413) would be refused again.
		fl := newFakeLeagueCaller(t, func(context.Context, *protocol.Message, int) (*protocol.Message, error) {
			return nil, fmt.Errorf("report: %w", &protocol.StatusError{Code: http.StatusRequestEntityTooLarge})
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		if err := r.report(context.Background(), testReport(t, r), nil); err == nil {
			t.Fatal("report refused with 413: got nil error")
		}
		if n := len(fl.sent(protocol.MatchResultReport)); n != 1 {
			t.Errorf("got %d attempts after a 413, want 1", n)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		fl := newFakeLeagueCaller(t, func(context.Context, *protocol.Message, int) (*protocol.Message, error) {
			return nil, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := r.report(ctx, testReport(t, r), nil); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("report: %v, want the last failure", err)
		}
		// Waits of 250 ms doubling to 5 s, each with up to half off: 10 to 16 attempts in 30 s.
		if n := len(fl.sent(protocol.MatchResultReport)); n < 10 || n > 16 {
			t.Errorf("got %d attempts in 30 s", n)
		}
	})
}

func TestAssignmentDeadlinesAndPenaltiesTakePrecedence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		fc := newFakeCaller(t, map[string]fakePlayer{
			"http://p1": scripted(g, "p1", silent),
			"http://p2": scripted(g, "p2", firstLegal(g)),
		})
		r := newRunner(t, game.TypeTicTacToe, fc)
		// The referee's own defaults: 200 ms moves, one warning, one forced move.
		r.A.Deadlines = &protocol.Deadlines{JoinAckMS: 40, MoveMS: 50}
		r.A.Penalties = &protocol.Penalties{}
		start := time.Now()
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 50*time.Millisecond {
			t.Errorf("match took %v, want one 50 ms move deadline", got)
		}
		if len(rep.Metadata.Violations) != 1 || rep.Metadata.Violations[0].Action != "technical_loss" || rep.Outcome["p1"] != "loss" {
			t.Errorf("got %v %+v, want a technical loss at the first timeout", rep.Outcome, rep.Metadata.Violations)
		}
		var inv, mv struct {
			Deadlines  map[string]int `json:"deadlines"`
			DeadlineMS int            `json:"deadline_ms"`
		}
		_ = fc.sent(protocol.GameInvitation, "c1")[0].Decode(&inv)
		_ = fc.sent(protocol.RequestMove, "c1")[0].Decode(&mv)
		if inv.Deadlines["join_ack_ms"] != 40 || inv.Deadlines["move_ms"] != 50 || mv.DeadlineMS != 50 {
			t.Errorf("announced deadlines %v and %d, want the assignment's", inv.Deadlines, mv.DeadlineMS)
		}
	})
}

func TestMatchFinishingAfterLeagueShutdownIsReported(t *testing.T) {
	// p1 answers each move after 100 ms, so the match outlasts the LEAGUE_SHUTDOWN sent
	// right after the assignment.
	a := startAgents(t, agents{
		features: []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials},
		player: func(c *player.Config) {
			if c.ID == "p1" {
				c.Fault = "slow:100ms"
			}
		},
	})
	f := a.league
	if _, err := f.send(t, f.assignment("m-late", true, true)); err != nil {
		t.Fatal(err)
	}
	f.shutdown(t)
	// No new match once the League Manager said the league is over.
	if _, err := f.send(t, f.assignment("m-after", true, true)); protocol.ReasonOf(err) != protocol.ReasonShuttingDown {
		t.Errorf("assignment after LEAGUE_SHUTDOWN: %v, want SHUTTING_DOWN", err)
	}
	if err := a.waitRun(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.results) != 1 || f.results[0].Envelope.MatchID != "m-late" {
		t.Fatalf("got %d results when Run returned, want the result of m-late", len(f.results))
	}
	var p struct {
		Metadata protocol.GameMetadata `json:"game_metadata"`
	}
	if err := f.results[0].Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.Metadata.Termination != protocol.TerminationNormal || len(p.Metadata.Violations) != 0 {
		t.Errorf("got termination %s, violations %+v; want a normal match", p.Metadata.Termination, p.Metadata.Violations)
	}
	if st := a.ref.Status(); st.ResultsReported != 1 || len(st.ActiveMatches) != 0 {
		t.Errorf("got status %+v", st)
	}
}

func TestDrainDeadlineBoundsRunWhenAPlayerHangs(t *testing.T) {
	a := startAgents(t, agents{
		features: []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials},
		referee:  func(c *Config) { c.DrainTimeout = 200 * time.Millisecond },
		player: func(c *player.Config) {
			if c.ID == "p1" {
				c.Fault = "slow:1h"
			}
		},
	})
	f := a.league
	m := f.assignment("m-hung", true, true)
	var p map[string]any
	_ = json.Unmarshal(m.Payload, &p)
	// Ten minutes per move, three times over on the ladder: only the drain deadline ends it.
	p["deadlines"] = map[string]int{"join_ack_ms": int(agentDeadline.Milliseconds()), "move_ms": 600000}
	m.Payload, _ = json.Marshal(p)
	if _, err := f.send(t, m); err != nil {
		t.Fatal(err)
	}
	for len(a.ref.Status().ActiveMatches) == 0 {
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	f.shutdown(t)
	if err := a.waitRun(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Not before the drain deadline; the upper bound is a hang guard far below the
	// match's 30 minutes.
	if d := time.Since(start); d < 200*time.Millisecond || d > agentDeadline {
		t.Errorf("Run returned %v after LEAGUE_SHUTDOWN, want the 200 ms drain deadline and little more", d)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.results) != 0 {
		t.Errorf("got %d results of an abandoned match", len(f.results))
	}
}
