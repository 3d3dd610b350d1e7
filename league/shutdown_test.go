package league

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// shutdownGuard bounds how long a test waits for Shutdown to return once nothing holds
// it: a guard against a hang (a drain of an hour, an agent that never answers), not a
// measure of how long it takes.
const shutdownGuard = 10 * time.Second

// shutdownSoon runs Manager.Shutdown in the background; wait returns its error, failing
// the test if it takes longer than shutdownGuard from the call of wait.
func (h *harness) shutdownSoon(reason string, drain time.Duration) (wait func() error) {
	done := make(chan error, 1)
	go func() { done <- h.m.Shutdown(context.Background(), reason, drain) }()
	return func() error {
		h.t.Helper()
		select {
		case err := <-done:
			return err
		case <-time.After(shutdownGuard):
			h.t.Fatalf("Shutdown did not return within %v", shutdownGuard)
			return nil
		}
	}
}

// metaValue reads a key of the meta table ("" when absent).
func metaValue(t *testing.T, h *harness, key string) string {
	t.Helper()
	got := queryStrings(t, h.store.DB(), `SELECT value FROM meta WHERE key = ?`, key)
	if len(got) == 0 {
		return ""
	}
	return got[0]
}

// checkShutdownNotices checks that every agent got LEAGUE_SHUTDOWN once, with its own
// token, the reason and the league id.
func (l *testLeague) checkShutdownNotices(reason string) {
	l.t.Helper()
	got := map[string][]*protocol.Message{}
	tokens := map[string]string{}
	for id, f := range l.refs {
		got["referee:"+id], tokens["referee:"+id] = f.shutdownNotices(), l.refTokens[id]
	}
	for id, f := range l.playerSrv {
		got["player:"+id], tokens["player:"+id] = f.messages(protocol.LeagueShutdown), l.playerTokens[id]
	}
	for agent, msgs := range got {
		if len(msgs) != 1 {
			l.t.Errorf("%s got %d LEAGUE_SHUTDOWN notices, want 1", agent, len(msgs))
			continue
		}
		var p struct {
			Reason   string `json:"reason"`
			LeagueID string `json:"league_id"`
		}
		if err := msgs[0].Decode(&p); err != nil {
			l.t.Fatal(err)
		}
		if msgs[0].Envelope.AuthToken != tokens[agent] || p.Reason != reason || p.LeagueID != l.cfg.League.LeagueID {
			l.t.Errorf("LEAGUE_SHUTDOWN to %s: %+v %s, want its own token, reason %q and the league id", agent, msgs[0].Envelope, msgs[0].Payload, reason)
		}
	}
}

func matchesByStatus(t *testing.T, h *harness) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, s := range queryStrings(t, h.store.DB(), `SELECT status FROM matches`) {
		out[s]++
	}
	return out
}

// A graceful shutdown tells every agent, assigns nothing more, lets the matches in flight
// finish (their results are accepted), then cancels the rest and keeps the league ACTIVE;
// after it only standings are served.
func TestGracefulShutdownDrainsMatchesInFlight(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.registerLive([]string{"ref1"}, map[string]any{"max_concurrent_matches": 2}, playerIDs(4))
	h.ok(heartbeatMsg(t, "ref1", l.refTokens["ref1"]))
	l.start()
	h.settle()
	_, ms := h.round()
	l.reportOK(ms[0], decided(ms[0], 0))

	wait := h.shutdownSoon("maintenance", time.Hour)
	waitFor(t, "the shutdown to begin", func() bool { return h.m.Status().ShuttingDown })
	waitFor(t, "every agent to be told", func() bool {
		n := len(l.refs["ref1"].shutdownNotices())
		for _, f := range l.playerSrv {
			n += len(f.messages(protocol.LeagueShutdown))
		}
		return n == 5
	})
	l.checkShutdownNotices("maintenance")
	h.unchanged("refused during the drain", func() {
		h.refused(playerRegistration(t, "p09"), protocol.ReasonShuttingDown)
		h.refused(refereeRegistration(t, "ref9", "http://127.0.0.1:9/ref9", nil), protocol.ReasonShuttingDown)
		h.refused(adminStart(t, testAdminToken), protocol.ReasonShuttingDown)
		h.ok(standingsQuery(t, "player:p01", l.playerTokens["p01"], ""))
	})
	h.ok(heartbeatMsg(t, "ref1", l.refTokens["ref1"]))
	// The last match of round 1 finishes: round 2 starts but nothing is assigned, and
	// with no match in flight the drain is over.
	l.reportOK(ms[1], drawn(ms[1]))
	if err := wait(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got, want := matchesByStatus(t, h), map[string]int{protocol.MatchStateCompleted: 2, protocol.MatchStateCancelled: 4}; !maps.Equal(got, want) {
		t.Errorf("matches %v, want %v", got, want)
	}
	if got := h.m.State(); got != StateActive {
		t.Errorf("league %s, want %s: a league cut short is not completed", got, StateActive)
	}
	if metaValue(t, h, "shutdown_at") == "" || metaValue(t, h, "shutdown_reason") != "maintenance" {
		t.Errorf("meta shutdown_at %q reason %q, want a time and maintenance", metaValue(t, h, "shutdown_at"), metaValue(t, h, "shutdown_reason"))
	}
	if n := auditEvents(t, h, "LEAGUE_SHUTDOWN"); n != 1 {
		t.Errorf("%d LEAGUE_SHUTDOWN events in the audit log, want 1", n)
	}
	_, r2 := h.round()
	h.unchanged("after the shutdown", func() {
		h.refused(h.report("ref1", l.refTokens["ref1"], r2[0], decided(r2[0], 0)), protocol.ReasonShuttingDown)
		h.refused(heartbeatMsg(t, "ref1", l.refTokens["ref1"]), protocol.ReasonShuttingDown)
		h.refused(withToken(newMsg(t, protocol.AgentReadyRequest, "player:p01", map[string]any{}), l.playerTokens["p01"]), protocol.ReasonShuttingDown)
		h.ok(standingsQuery(t, "player:p01", l.playerTokens["p01"], ""))
	})
}

// At the drain deadline, matches still in flight are cancelled and their late report is
// refused. A restart on the same database resumes: the cancelled matches are played under
// their match_id and the league completes with every pair once.
func TestShutdownDeadlineThenRestartResumes(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2", "p3"})
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]

	wait := h.shutdownSoon("the director went home", 20*time.Millisecond)
	if err := wait(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if got := h.match(mt.ID).Status; got != protocol.MatchStateCancelled {
		t.Errorf("match in flight at the deadline is %s, want %s", got, protocol.MatchStateCancelled)
	}
	h.unchanged("late report", func() {
		h.refused(h.report("ref1", l.refTokens["ref1"], mt, decided(mt, 0)), protocol.ReasonShuttingDown)
	})

	h.restart()
	if got, want := matchesByStatus(t, h)[protocol.MatchStateCancelled], 0; got != want {
		t.Errorf("%d matches CANCELLED after restart, want %d", got, want)
	}
	if metaValue(t, h, "shutdown_at") != "" || metaValue(t, h, "shutdown_reason") != "" {
		t.Error("the shutdown record is still in meta after the league resumed")
	}
	if n := auditEvents(t, h, "LEAGUE_RESUMED"); n != 1 {
		t.Errorf("%d LEAGUE_RESUMED events, want 1", n)
	}
	h.settle()
	if got := h.match(mt.ID); got.Status != protocol.MatchStateInProgress || got.Referee != "ref1" {
		t.Fatalf("after restart %+v, want the same match in progress at ref1", got)
	}
	l.playOut()
	checkEveryPairOnce(t, h, l.players)
}

func TestAdminShutdownRequest(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1"})
	req := func(token string, payload map[string]any) *protocol.Message {
		return withToken(newMsg(t, protocol.AdminShutdownRequest, protocol.SenderAdmin, payload), token)
	}
	tests := []struct {
		name string
		msg  *protocol.Message
		want protocol.Reason
	}{
		{"no token", req("", map[string]any{}), protocol.ReasonUnauthorized},
		{"wrong token", req(uuid.NewString(), map[string]any{}), protocol.ReasonUnauthorized},
		{"a referee's token", req(l.refTokens["ref1"], map[string]any{}), protocol.ReasonUnauthorized},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			h.unchanged(tc.name, func() { h.refused(tc.msg, tc.want) })
		})
	}
	select {
	case r := <-h.m.ShutdownRequests():
		t.Fatalf("refused requests asked for a shutdown (%q)", r)
	default:
	}
	for i := range 2 {
		ans := h.ok(req(testAdminToken, map[string]any{"reason": "end of the season"}))
		var p map[string]string
		if err := ans.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if ans.Envelope.MessageType != protocol.AdminShutdownResponse || p["status"] != "shutting_down" || p["league_status"] != StateRegistration {
			t.Errorf("answer %d: %s %v, want ADMIN_SHUTDOWN_RESPONSE shutting_down / REGISTRATION", i+1, ans.Envelope.MessageType, p)
		}
	}
	select {
	case r := <-h.m.ShutdownRequests():
		if r != "end of the season" {
			t.Errorf("reason %q, want the request's", r)
		}
	default:
		t.Fatal("no shutdown request delivered")
	}
	select {
	case r := <-h.m.ShutdownRequests():
		t.Errorf("a second request was delivered (%q)", r)
	default:
	}
}

// LEAGUE_SHUTDOWN is best effort: an agent that never answers delays the shutdown by
// NotifyTimeout at most, and one that is down not at all.
//
// The bound is not measured on the wall clock, where a loaded machine stretches it:
// Shutdown returns although p1 never answers (within shutdownGuard, a hang guard), not
// before NotifyTimeout has passed, and the notices run with the NotifyTimeout given.
func TestShutdownNoticesDoNotWaitForAgents(t *testing.T) {
	// Long enough that a loaded machine still delivers the notice to the agent that
	// hangs before the League Manager stops waiting for its answer.
	const notify = 2 * time.Second
	h := newHarness(t, harnessOptions{notifyTimeout: notify})
	if got := h.m.e.notices.timeout; got != notify {
		t.Fatalf("notices are bounded by %v, want the NotifyTimeout given (%v)", got, notify)
	}
	l := h.registerLive([]string{"ref1"}, nil, []string{"p1", "p2", "p3"})
	l.playerSrv["p1"].set(false, true)
	l.playerSrv["p2"].srv.Close()
	start := time.Now()
	if err := h.shutdownSoon("now", time.Hour)(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if d := time.Since(start); d < notify {
		t.Errorf("Shutdown returned after %v, before the hanging agent's NotifyTimeout", d)
	}
	if len(l.playerSrv["p1"].messages(protocol.LeagueShutdown)) != 1 {
		t.Error("the agent that never answers was not told: nothing held the shutdown")
	}
	if len(l.playerSrv["p3"].messages(protocol.LeagueShutdown)) != 1 || len(l.refs["ref1"].shutdownNotices()) != 1 {
		t.Error("the agents that answer were not told")
	}
	if got := h.m.State(); got != StateRegistration {
		t.Errorf("state %s, want %s", got, StateRegistration)
	}
}
