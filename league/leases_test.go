package league

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// getStatus is GET /status as a client reads it, decoded, and its body.
func (h *harness) getStatus() (Status, string) {
	h.t.Helper()
	rec := httptest.NewRecorder()
	Routes(h.m, h.srv).ServeHTTP(rec, httptest.NewRequest("GET", "/status", nil))
	var st Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		h.t.Fatal(err)
	}
	return st, rec.Body.String()
}

// agentStatus finds one agent in GET /status.
func (h *harness) agentStatus(kind, id string) AgentStatus {
	h.t.Helper()
	for _, a := range h.m.Status().Agents {
		if a.Kind == kind && a.ID == id {
			return a
		}
	}
	h.t.Fatalf("no %s %s in /status", kind, id)
	return AgentStatus{}
}

// waitCancelled waits until both players of mt were told that it was cancelled, each
// with its own token.
func (l *testLeague) waitCancelled(mt liveMatch) {
	l.t.Helper()
	for _, id := range mt.Players {
		fp := l.playerSrv[id]
		var got []*protocol.Message
		waitFor(l.t, "MATCH_CANCELLED at "+id, func() bool {
			got = fp.messages(protocol.MatchCancelled)
			return len(got) > 0
		})
		env := got[len(got)-1].Envelope
		var p struct {
			MatchID string `json:"match_id"`
			Reason  string `json:"reason"`
		}
		if err := got[len(got)-1].Decode(&p); err != nil {
			l.t.Fatal(err)
		}
		if env.AuthToken != l.playerTokens[id] || env.MatchID != mt.ID || p.MatchID != mt.ID || p.Reason == "" {
			l.t.Errorf("MATCH_CANCELLED to %s: envelope %+v payload %+v, want its own token, match %s and a reason", id, env, p, mt.ID)
		}
	}
}

func TestHeartbeatAnswers(t *testing.T) {
	h := newHarness(t, harnessOptions{clock: newFakeClock()})
	l := h.register([]string{"ref1", "ref2"}, nil, []string{"p1"})
	tests := []struct {
		name string
		msg  *protocol.Message
		want protocol.Reason // "" for an answer
	}{
		{"own token", heartbeatMsg(t, "ref1", l.refTokens["ref1"], "r01-m01-x"), ""},
		{"unknown token", heartbeatMsg(t, "ref1", uuid.NewString()), protocol.ReasonUnauthorized},
		{"another referee's token", heartbeatMsg(t, "ref1", l.refTokens["ref2"]), protocol.ReasonSenderMismatch},
		{"a player's token", withToken(newMsg(t, protocol.HeartbeatRequest, "referee:p1", map[string]any{}), l.playerTokens["p1"]), protocol.ReasonSenderMismatch},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			if tc.want != "" {
				h.unchanged(tc.name, func() { h.refused(tc.msg, tc.want) })
				return
			}
			ans := h.ok(tc.msg)
			var p struct {
				Status  string `json:"status"`
				LeaseMS int    `json:"lease_ms"`
			}
			if err := ans.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if ans.Envelope.MessageType != protocol.HeartbeatResponse || p.Status != "acknowledged" || p.LeaseMS != h.cfg.Timeouts.LeagueLevel.LeaseMS || ans.Envelope.LeagueID != h.cfg.League.LeagueID {
				t.Errorf("answer %s %s, want HEARTBEAT_RESPONSE acknowledged with lease_ms %d", ans.Envelope.MessageType, ans.Payload, h.cfg.Timeouts.LeagueLevel.LeaseMS)
			}
			if got, want := h.agentStatus("referee", "ref1").LeaseExpiresAt, protocol.Now(h.opt.clock.Now().Add(6*time.Second)); got != want {
				t.Errorf("lease_expires_at %q, want %q", got, want)
			}
		})
	}
}

// A referee whose lease runs out is lost: its match fails, its players are told, the
// match goes to another referee under the same match_id, the lost referee's late report
// is stale, and it gets no match until it heartbeats again.
func TestLeaseExpiryReassignsMatches(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock})
	l := h.registerLive([]string{"ref1", "ref2"}, nil, []string{"p1", "p2", "p3"})
	l.playerSrv["p2"].set(true, false) // does not know MATCH_CANCELLED
	h.ok(heartbeatMsg(t, "ref1", l.refTokens["ref1"]))
	l.start()
	h.settle()
	_, ms := h.round()
	first := ms[0]
	if first.Referee != "ref1" {
		t.Fatalf("round 1 went to %s, want ref1", first.Referee)
	}

	clock.Advance(5 * time.Second)
	h.ok(heartbeatMsg(t, "ref1", l.refTokens["ref1"], first.ID))
	clock.Advance(5 * time.Second)
	if mt := h.match(first.ID); mt.Referee != "ref1" || mt.Status != protocol.MatchStateInProgress || h.agentStatus("referee", "ref1").Lost {
		t.Fatalf("10 s after the first heartbeat, 5 s after the second: %+v, want it still at ref1", mt)
	}

	clock.Advance(time.Second) // 6 s after the last heartbeat
	if !h.agentStatus("referee", "ref1").Lost {
		t.Error("ref1 is not shown lost after its lease ran out")
	}
	h.settle()
	moved := h.match(first.ID)
	if moved.Referee != "ref2" || moved.Status != protocol.MatchStateInProgress {
		t.Fatalf("after the lease: %+v, want the match in progress at ref2", moved)
	}
	l.refs["ref2"].assignment(t, first.ID)
	l.waitCancelled(first)
	h.unchanged("report of the lost referee", func() {
		h.refused(h.report("ref1", l.refTokens["ref1"], moved, decided(moved, 0)), protocol.ReasonStaleAssignment)
	})
	l.reportOK(moved, decided(moved, 1))

	// Round 2: ref1 is idle but lost, so the match goes to ref2.
	h.settle()
	_, ms = h.round()
	if ms[0].Referee != "ref2" {
		t.Fatalf("round 2 went to %s while ref1 is lost, want ref2", ms[0].Referee)
	}
	h.ok(heartbeatMsg(t, "ref1", l.refTokens["ref1"]))
	if h.agentStatus("referee", "ref1").Lost {
		t.Error("ref1 still lost after a heartbeat")
	}
	l.reportOK(ms[0], drawn(ms[0]))
	// Round 3: both idle, ref1 is back and comes first.
	h.settle()
	_, ms = h.round()
	if ms[0].Referee != "ref1" {
		t.Fatalf("round 3 went to %s, want ref1 back", ms[0].Referee)
	}
	l.reportOK(ms[0], drawn(ms[0]))
	if got := h.m.State(); got != StateCompleted {
		t.Errorf("state %s, want %s", got, StateCompleted)
	}
}

// A referee that announced no match_progress (a foreign one) holds no lease; a match
// still without a result after the longest legal match (join, 9 tic-tac-toe steps each
// with the whole timeout ladder, GAME_OVER, margin) fails and is assigned again.
func TestResultDeadlineReassignsMatches(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock})
	l := h.registerLive([]string{"ref1", "ref2"}, nil, []string{"p1", "p2"})
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	ml := h.cfg.Timeouts.MatchLevel
	join, move := time.Duration(ml.GameJoinAck)*time.Millisecond, time.Duration(ml.MoveResponse)*time.Millisecond
	longest := join + 9*move*time.Duration(ml.MoveWarnings+ml.ForcedMoves+1) + join + h.cfg.LeaseDuration() + 2*time.Second
	deadline := max(h.cfg.ResultReportTimeout(), longest)
	if deadline <= h.cfg.ResultReportTimeout() {
		t.Fatalf("the longest tic-tac-toe match (%s) should exceed result_report_ms here", longest)
	}

	clock.Advance(deadline - time.Millisecond)
	if got := h.match(mt.ID); got.Status != protocol.MatchStateInProgress || got.Referee != "ref1" || h.agentStatus("referee", "ref1").Lost {
		t.Fatalf("just before result_report_ms: %+v, want it still in progress at ref1", got)
	}
	clock.Advance(time.Millisecond)
	h.settle()
	moved := h.match(mt.ID)
	if moved.Referee != "ref2" || moved.Status != protocol.MatchStateInProgress {
		t.Fatalf("after result_report_ms: %+v, want it in progress at ref2", moved)
	}
	if h.agentStatus("referee", "ref1").Lost {
		t.Error("a referee without a lease is shown lost")
	}
	l.waitCancelled(mt)
	h.unchanged("late report", func() {
		h.refused(h.report("ref1", l.refTokens["ref1"], moved, decided(moved, 0)), protocol.ReasonStaleAssignment)
	})
	l.reportOK(moved, decided(moved, 0))
}
