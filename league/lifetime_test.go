package league

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
)

// refereeFeatures is what our referees announce.
var refereeFeatures = map[string]any{"features": []string{
	protocol.FeatureMatchCredentials, protocol.FeatureHeartbeats, protocol.FeatureMatchProgress,
	protocol.FeatureResultReminders, protocol.FeatureMoveEvents, protocol.FeatureMatchCancellation, protocol.FeatureClocks,
}}

// progressBeat is a HEARTBEAT_REQUEST of referee id listing one match's progress.
func progressBeat(tb testing.TB, id, token, matchID string, step int, phase string) *protocol.Message {
	return withToken(newMsg(tb, protocol.HeartbeatRequest, protocol.RefereeSender(id), map[string]any{
		"active_matches": []string{matchID},
		"match_progress": []map[string]any{{"match_id": matchID, "step": step, "phase": phase}},
	}), token)
}

// chessLeague is a two-referee, two-player chess league on the fake clock whose referees
// announce every feature; each heartbeat renews a lease of a minute.
func chessLeague(t *testing.T, edit func(*config.Config)) (*fakeClock, *testLeague) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock, cfg: func(c *config.Config) {
		c.League.GameType = "chess"
		c.Timeouts.LeagueLevel.HeartbeatIntervalMS, c.Timeouts.LeagueLevel.LeaseMS = 20000, 60000
		if edit != nil {
			edit(c)
		}
	}})
	l := h.registerLive([]string{"ref1", "ref2"}, refereeFeatures, []string{"p1", "p2"})
	l.start()
	h.settle()
	return clock, l
}

// beatFor advances the clock by d in steps of at most 20 s, the referee reporting the
// same progress after each, so its lease never runs out.
func (l *testLeague) beatFor(clock *fakeClock, d time.Duration, ref, matchID string, step int, phase string) {
	l.t.Helper()
	for d > 0 {
		s := min(d, 20*time.Second)
		clock.Advance(s)
		d -= s
		l.ok(progressBeat(l.t, ref, l.refTokens[ref], matchID, step, phase))
	}
}

// onlyMatch is the single match of a two-player league.
func (l *testLeague) onlyMatch() liveMatch {
	l.t.Helper()
	_, ms := l.round()
	if len(ms) != 1 {
		l.t.Fatalf("round has %d matches, want 1", len(ms))
	}
	return ms[0]
}

// A match whose referee keeps its lease and whose step keeps changing is never failed,
// however long it runs: here two hours of chess at 80 s a ply (each within the 90 s a
// player may take with its warning and forced move). When the step stops changing, the
// match fails after the longest legal gap; its referee is told to stop before the match
// goes to the other referee, and of the two referees only the new one's result counts.
func TestLongMatchWithProgressNeverFails(t *testing.T) {
	clock, l := chessLeague(t, nil)
	mt := l.onlyMatch()
	ref, other := mt.Referee, "ref2"
	if ref == "ref2" {
		other = "ref1"
	}
	token := l.refTokens[ref]
	start := clock.Now()
	step := 0
	l.ok(progressBeat(t, ref, token, mt.ID, step, protocol.PhaseJoining))
	for clock.Now().Sub(start) < 2*time.Hour {
		for range 4 { // a heartbeat every 20 s, a ply every 80 s
			clock.Advance(20 * time.Second)
			l.ok(progressBeat(t, ref, token, mt.ID, step, protocol.PhasePlaying))
		}
		step++
		l.ok(progressBeat(t, ref, token, mt.ID, step, protocol.PhasePlaying))
	}
	if got := l.match(mt.ID); got.Referee != ref || got.Status != protocol.MatchStateInProgress {
		t.Fatalf("after two hours of steady progress: %+v, want it still in progress at %s", got, ref)
	}
	if n := auditEvents(t, l.harness, "MATCH_FAILED"); n != 0 {
		t.Fatalf("%d MATCH_FAILED events during a match that made progress", n)
	}

	// The step stops changing; heartbeats go on. The longest legal gap is 90 s of
	// moves, 10 s of GAME_OVER and a 62 s margin (lease + 2 s).
	gap := 90*time.Second + 10*time.Second + 62*time.Second
	stalled := clock.Now()
	for clock.Now().Sub(stalled)+20*time.Second < gap {
		clock.Advance(20 * time.Second)
		l.ok(progressBeat(t, ref, token, mt.ID, step, protocol.PhasePlaying))
	}
	if got := l.match(mt.ID); got.Referee != ref || got.Status != protocol.MatchStateInProgress {
		t.Fatalf("%s after the last step: %+v, want it still at %s", clock.Now().Sub(stalled), got, ref)
	}
	clock.Advance(stalled.Add(gap).Sub(clock.Now()))
	waitFor(t, "the match at "+other, func() bool {
		m := l.match(mt.ID)
		return m.Referee == other && m.Status == protocol.MatchStateInProgress
	})
	cancels := l.refs[ref].received(protocol.MatchCancelled)
	if len(cancels) != 1 || cancels[0].Envelope.AuthToken != token || cancels[0].Envelope.MatchID != mt.ID {
		t.Fatalf("MATCH_CANCELLED at %s: %d, want one with its own token", ref, len(cancels))
	}
	l.refs[other].assignment(t, mt.ID)
	l.waitCancelled(mt)

	// The stalled referee learns late that the match was taken: its report is refused,
	// and a heartbeat still listing the match is answered with another MATCH_CANCELLED.
	moved := l.match(mt.ID)
	l.unchanged("report of the former referee", func() {
		l.refused(l.report(ref, token, moved, decided(moved, 0)), protocol.ReasonStaleAssignment)
	})
	l.ok(progressBeat(t, ref, token, mt.ID, step, protocol.PhasePlaying))
	waitFor(t, "a second MATCH_CANCELLED at "+ref, func() bool { return len(l.refs[ref].received(protocol.MatchCancelled)) == 2 })
	l.reportOK(moved, decided(moved, 1))
	if got := l.m.State(); got != StateCompleted {
		t.Errorf("state %s, want %s", got, StateCompleted)
	}
}

// Play is over (phase reporting) but the result never comes: the referee is reminded
// retries.max_attempts times, result_report_ms apart, then the match fails and the audit
// log asks for manual review. A reminder answered "unknown" fails the match at once, and
// a result that comes after a reminder is taken.
func TestResultRemindersThenFailed(t *testing.T) {
	t.Run("reminders, then failed", func(t *testing.T) {
		clock, l := chessLeague(t, nil)
		mt := l.onlyMatch()
		ref, token := mt.Referee, l.refTokens[mt.Referee]
		report := l.cfg.ResultReportTimeout()
		l.ok(progressBeat(t, ref, token, mt.ID, 40, protocol.PhaseReporting))
		for i := 1; i <= l.cfg.Retries.MaxAttempts; i++ {
			l.beatFor(clock, report-time.Second, ref, mt.ID, 40, protocol.PhaseReporting)
			if n := len(l.refs[ref].received(protocol.ResultReminder)); n != i-1 {
				t.Fatalf("%d reminders before deadline %d, want %d", n, i, i-1)
			}
			clock.Advance(time.Second)
			waitFor(t, "reminder", func() bool { return len(l.refs[ref].received(protocol.ResultReminder)) == i })
			r := l.refs[ref].received(protocol.ResultReminder)[i-1]
			var p struct {
				MatchID string `json:"match_id"`
				Attempt int    `json:"attempt"`
			}
			if err := r.Decode(&p); err != nil || p.MatchID != mt.ID || p.Attempt != i || r.Envelope.AuthToken != token {
				t.Fatalf("reminder %d: %s (token ok %v), want match %s attempt %d", i, r.Payload, r.Envelope.AuthToken == token, mt.ID, i)
			}
			if got := l.match(mt.ID); got.Status != protocol.MatchStateInProgress || got.Referee != ref {
				t.Fatalf("after reminder %d: %+v, want it still at %s", i, got, ref)
			}
		}
		l.beatFor(clock, report, ref, mt.ID, 40, protocol.PhaseReporting)
		waitFor(t, "the match failed", func() bool { return l.match(mt.ID).Referee != ref })
		if n := len(l.refs[ref].received(protocol.ResultReminder)); n != l.cfg.Retries.MaxAttempts {
			t.Errorf("%d reminders, want %d", n, l.cfg.Retries.MaxAttempts)
		}
		var failed []string
		for _, line := range readAudit(t, l.auditPath()) {
			var note struct {
				Type string `json:"type"`
				Body struct {
					Reason       string `json:"reason"`
					ManualReview bool   `json:"manual_review"`
				} `json:"body"`
			}
			if line.entry.Direction != "event" || json.Unmarshal(line.entry.Message, &note) != nil || note.Type != "MATCH_FAILED" {
				continue
			}
			failed = append(failed, note.Body.Reason)
			if !note.Body.ManualReview {
				t.Errorf("MATCH_FAILED %q without manual_review", note.Body.Reason)
			}
		}
		if len(failed) != 1 {
			t.Errorf("MATCH_FAILED events %q, want one", failed)
		}
	})
	t.Run("unknown at the referee", func(t *testing.T) {
		clock, l := chessLeague(t, nil)
		mt := l.onlyMatch()
		ref, token := mt.Referee, l.refTokens[mt.Referee]
		l.refs[ref].setReminderPhase(protocol.PhaseUnknown)
		l.ok(progressBeat(t, ref, token, mt.ID, 12, protocol.PhaseReporting))
		l.beatFor(clock, l.cfg.ResultReportTimeout(), ref, mt.ID, 12, protocol.PhaseReporting)
		waitFor(t, "the match taken from "+ref, func() bool { return l.match(mt.ID).Referee != ref })
		if n := len(l.refs[ref].received(protocol.ResultReminder)); n != 1 {
			t.Errorf("%d reminders, want 1", n)
		}
	})
	t.Run("result after a reminder", func(t *testing.T) {
		clock, l := chessLeague(t, nil)
		mt := l.onlyMatch()
		ref, token := mt.Referee, l.refTokens[mt.Referee]
		l.ok(progressBeat(t, ref, token, mt.ID, 12, protocol.PhaseReporting))
		l.beatFor(clock, l.cfg.ResultReportTimeout(), ref, mt.ID, 12, protocol.PhaseReporting)
		waitFor(t, "reminder", func() bool { return len(l.refs[ref].received(protocol.ResultReminder)) == 1 })
		l.reportOK(mt, drawn(mt))
		if got := l.m.State(); got != StateCompleted {
			t.Errorf("state %s, want %s", got, StateCompleted)
		}
	})
}

// A match that fails retries.max_match_attempts times is abandoned: no result, no
// points, its round completes, the league completes, /status counts it, and the audit
// log (replayed) agrees with the database. A failure caused by a League Manager restart
// does not count.
func TestAbandonedAfterMaxMatchAttempts(t *testing.T) {
	clock, l := chessLeague(t, func(c *config.Config) { c.Retries.MaxMatchAttempts = 2 })
	mt := l.onlyMatch()
	lease := l.cfg.LeaseDuration()

	// Failure 1: the referee's lease runs out.
	first := mt.Referee
	l.ok(progressBeat(t, first, l.refTokens[first], mt.ID, 3, protocol.PhasePlaying))
	clock.Advance(lease)
	waitFor(t, "the match at the other referee", func() bool {
		m := l.match(mt.ID)
		return m.Referee != first && m.Status == protocol.MatchStateInProgress
	})

	// A restart fails the match in flight without counting it.
	l.crash(nil)
	l.waitReassigned()
	second := l.match(mt.ID).Referee
	if got := l.failures(mt.ID); got != 1 {
		t.Fatalf("failures after a restart %d, want 1 (the restart does not count)", got)
	}

	// Failure 2: no progress at all from the referee that has it now.
	l.ok(progressBeat(t, second, l.refTokens[second], mt.ID, 0, protocol.PhaseJoining))
	clock.Advance(lease)
	waitFor(t, "the match abandoned", func() bool { return l.match(mt.ID).Status == protocol.MatchStateAbandoned })
	if got := l.m.State(); got != StateCompleted {
		t.Fatalf("state %s, want %s: the abandoned match completes its round", got, StateCompleted)
	}
	if st := l.m.Status(); st.MatchesByStatus[protocol.MatchStateAbandoned] != 1 || len(st.Abandoned) != 1 || st.Abandoned[0].MatchID != mt.ID || st.Abandoned[0].Failures != 2 {
		t.Errorf("/status: %d abandoned, list %+v, want match %s with 2 failures", st.MatchesByStatus[protocol.MatchStateAbandoned], st.Abandoned, mt.ID)
	}
	if v, err := l.m.LeagueView(web.Page{}); err != nil || len(v.Abandoned) != 1 || v.Abandoned[0].MatchID != mt.ID {
		t.Errorf("dashboard view: %+v (%v), want the abandoned match listed", v.Abandoned, err)
	}
	for _, row := range l.m.e.fx.table.Rows() {
		if row.Points != 0 || row.MatchesPlayed != 0 {
			t.Errorf("standings row %+v, want no points and no match played", row)
		}
	}
	if n := auditEvents(t, l.harness, audit.EventMatchAbandoned); n != 1 {
		t.Errorf("%d MATCH_ABANDONED events, want 1", n)
	}
	l.unchanged("a report for the abandoned match", func() {
		l.refused(l.report(second, l.refTokens[second], l.match(mt.ID), decided(mt, 0)), protocol.ReasonStaleAssignment)
	})
	rebuilt := l.rebuild()
	if !rebuilt.RoundComplete(0) || len(rebuilt.Abandoned) != 1 {
		t.Errorf("replay: round complete %v, abandoned %v", rebuilt.RoundComplete(0), rebuilt.Abandoned)
	}
	if err := rebuilt.CheckDB(l.store); err != nil {
		t.Errorf("replay --check: %v", err)
	}
}

// failures reads a match's counted failures from the database.
func (h *harness) failures(matchID string) int {
	h.t.Helper()
	var n int
	if err := h.store.DB().QueryRow(`SELECT failures FROM matches WHERE match_id = ?`, matchID).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// waitReassigned waits, after a restart, until the Manager has assigned the match again.
func (l *testLeague) waitReassigned() {
	l.t.Helper()
	l.settle()
	waitFor(l.t, "the match assigned again after the restart", func() bool {
		return l.m.Status().MatchesByStatus[protocol.MatchStateInProgress] == 1
	})
}

// Under a clock the League Manager follows the clock, not move_response_ms: a chess
// player that thinks four minutes over one move of a 5+0 game with a 60 s bank is within
// its clock, and the match is not failed (the fixed ladder allows 90 s); the assignment
// carries the time control. A step that stalls past the whole clock still fails.
func TestClockedMatchFollowsTheClock(t *testing.T) {
	clock, l := chessLeague(t, func(c *config.Config) {
		c.TimeControl = &config.TimeControl{Clock: "300+0", BankMS: 60000}
	})
	// A referee that does not play clocks is refused: every match has the same clock.
	l.refused(refereeRegistration(t, "ref9", "http://127.0.0.1:1/mcp", map[string]any{"features": []string{protocol.FeatureHeartbeats}}), protocol.ReasonUnsupportedGame)
	mt := l.onlyMatch()
	ref := mt.Referee
	as := l.refs[ref].assignment(t, mt.ID)
	var p protocol.Assignment
	if err := as.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.TimeControl == nil || *p.TimeControl != (protocol.TimeControl{BaseMS: 300000, BankMS: 60000}) {
		t.Fatalf("assignment time_control %+v, want 300 s and a 60 s bank", p.TimeControl)
	}
	l.ok(progressBeat(t, ref, l.refTokens[ref], mt.ID, 1, protocol.PhasePlaying))
	l.beatFor(clock, 4*time.Minute, ref, mt.ID, 1, protocol.PhasePlaying)
	if got := l.match(mt.ID); got.Referee != ref || got.Status != protocol.MatchStateInProgress {
		t.Fatalf("after a four-minute move under 5+0: %+v, want it in progress at %s", got, ref)
	}
	if n := auditEvents(t, l.harness, "MATCH_FAILED"); n != 0 {
		t.Fatalf("%d MATCH_FAILED events for a move within the clock", n)
	}
	// Both clocks, the bank and the network credit are 660 s a player: a step stalled
	// past that, the join deadline and the margin fails.
	l.beatFor(clock, 12*time.Minute, ref, mt.ID, 1, protocol.PhasePlaying)
	waitFor(t, "the stalled match failed", func() bool { return auditEvents(t, l.harness, "MATCH_FAILED") == 1 })
}
