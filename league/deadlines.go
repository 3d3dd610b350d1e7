package league

// Leases and deadlines (the rules are in faults.go and lifetime.go): one alarm wakes the
// engine at the earliest of the pending deadlines (ends of suspensions, referees' leases,
// matches' deadlines, ends of pauses in offering a match), and enforceDeadlines ends what
// is due.

import (
	"context"
	"fmt"
	"time"

	"github.com/agentleague/agentleague/league/audit"

	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// alarm is the engine's one deadline timer. It is part of the engine's state (guarded by
// engine.mu); fire runs on the timer's goroutine and takes the lock itself.
type alarm struct {
	afterFunc func(d time.Duration, f func()) Timer
	now       func() time.Time
	fire      func(gen int)

	timer Timer
	at    time.Time
	// gen tells a stale firing from the current one.
	gen int
}

// arm makes sure the alarm fires no later than at.
func (a *alarm) arm(at time.Time) {
	if at.IsZero() || (a.timer != nil && !a.at.After(at)) {
		return
	}
	a.stop()
	a.gen++
	gen := a.gen
	a.at = at
	a.timer = a.afterFunc(max(at.Sub(a.now()), 0), func() { a.fire(gen) })
}

func (a *alarm) stop() {
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}

// armDeadline makes sure enforceDeadlines runs no later than at.
func (e *engine) armDeadline(at time.Time) {
	if !e.closed {
		e.alarm.arm(at)
	}
}

// armNextDeadline arms the earliest pending deadline. Right after enforceDeadlines
// (afterEnforce), a deadline still due is one whose write failed (the error is logged):
// it is tried again a second later rather than at once.
func (e *engine) armNextDeadline(afterEnforce bool) {
	next := earliest(e.agents.nextDeadline(), e.fx.nextDeadline())
	if now := e.opt.Now(); afterEnforce && !next.IsZero() && !next.After(now) {
		next = now.Add(time.Second)
	}
	e.armDeadline(next)
}

// wake is the alarm firing: it ends what is due and arms the next deadline. While
// storage fails it only tries again (storageReady arms the next try): no agent loses a
// match or a lease to a deadline that passed while it could change nothing.
func (e *engine) wake(gen int) {
	if e.closed || gen != e.alarm.gen {
		return
	}
	e.alarm.timer = nil
	if e.storageReady() != nil {
		return
	}
	e.retryDecisions()
	e.enforceDeadlines()
	e.armNextDeadline(true)
}

// enforceDeadlines ends what is due: suspensions, pauses in offering a match, leases,
// and result deadlines.
func (e *engine) enforceDeadlines() {
	now := e.opt.Now()
	changed := e.discipline.reinstateDue(now)
	if e.fx.pausesOver(now) {
		changed = true
	}
	var lost []*agent
	for _, r := range e.agents.referees {
		if !r.lost && !r.leaseUntil.IsZero() && !now.Before(r.leaseUntil) {
			lost = append(lost, r)
		}
	}
	for _, r := range sortedAgents(lost) {
		r.lost = true
		changed = true
		e.metrics.timeouts.WithLabelValues("lease").Inc()
		e.log.Warn().Str("referee_id", r.id).Msg("referee lease expired: referee lost, its matches are assigned again")
		e.trail.note(audit.EventRefereeLost, map[string]any{"referee_id": r.id, "lease_until": protocol.Now(r.leaseUntil)})
		e.failMatches(e.fx.atReferee(r.id), "referee "+r.id+" lost its lease", true)
	}
	// A failure may abandon a match and so finish the round: the due matches are listed
	// first. Each is its own failure, so the audit log says why each match failed.
	var late []*match
	for _, mt := range e.fx.inFlight() {
		if !mt.deadline.IsZero() && !now.Before(mt.deadline) && e.matchDue(mt, now) {
			late = append(late, mt)
		}
	}
	for _, mt := range late {
		changed = true
		e.metrics.timeouts.WithLabelValues("match_deadline").Inc()
		e.failMatches([]*match{mt}, e.rules.dueReason(mt, e.agents.referees[mt.referee]), true)
	}
	if changed {
		if err := e.settle(); err != nil {
			e.outage.retryLater("settle after deadlines", err)
		}
	}
}

// setDeadline recomputes a match's deadline and arms it.
func (e *engine) setDeadline(mt *match) {
	mt.deadline = e.rules.deadline(mt, e.agents.referees[mt.referee])
	e.armDeadline(mt.deadline)
}

// applyProgress takes the match_progress of a heartbeat from ref. A match that ref no
// longer holds is cancelled at ref again.
func (e *engine) applyProgress(ref *agent, entries []protocol.MatchProgress) {
	now := e.opt.Now()
	for _, p := range entries {
		mt := e.fx.matches[p.MatchID]
		if mt == nil {
			continue
		}
		if mt.referee != ref.id || !(mt.inFlight() || mt.status == protocol.MatchStateCompleted) {
			// Taken from ref (or abandoned): the first MATCH_CANCELLED may have been lost.
			e.cancelAtReferee(mt, ref, "the match was taken from this referee", false)
			continue
		}
		if !mt.inFlight() || (mt.progress.phase == p.Phase && mt.progress.step == p.Step) {
			continue
		}
		if p.Phase == protocol.PhaseReporting && mt.progress.phase != protocol.PhaseReporting {
			mt.reminders = 0
		}
		mt.progress = progress{phase: p.Phase, step: p.Step, since: now}
		e.setDeadline(mt)
	}
}

// matchDue handles a match whose deadline passed: a reminder while reminders are left
// after play ended, else a failure. It reports whether the match is to fail.
func (e *engine) matchDue(mt *match, now time.Time) bool {
	ref := e.agents.referees[mt.referee]
	// Only a referee that reports progress can have said phase reporting.
	if mt.progress.phase != protocol.PhaseReporting || ref == nil || mt.reminders >= e.cfg.Retries.MaxAttempts {
		return true
	}
	mt.reminders++
	mt.progress.since = now
	e.setDeadline(mt)
	e.metrics.timeouts.WithLabelValues("result_report").Inc()
	if ref.has(protocol.FeatureResultReminders) && !e.closed {
		e.sendReminder(mt, ref)
	}
	e.log.Warn().Str("match_id", mt.id).Str("referee_id", ref.id).Int("reminder", mt.reminders).Msg("result late: reminder")
	return false
}

// sendReminder sends RESULT_REMINDER in the background. An answer saying the referee
// does not hold the match fails it at once.
func (e *engine) sendReminder(mt *match, ref *agent) {
	msg, err := e.notices.message(ref, mt, protocol.ResultReminder, protocol.Reminder{
		MatchID: mt.id, Attempt: mt.reminders, Reason: fmt.Sprintf("play ended and no result came within %v", e.cfg.ResultReportTimeout()),
	})
	if err != nil {
		e.log.Error().Err(err).Str("match_id", mt.id).Msg("build RESULT_REMINDER")
		return
	}
	assignedAt := mt.assignedAt
	e.notices.goCall(func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(ctx, e.opt.NotifyTimeout)
		defer cancel()
		ans, err := e.notices.call(ctx, ref, msg, protocol.CallOptions{Retry: protocol.RetryPolicy{Attempts: 1}})
		log := e.log.With().Str("conversation_id", msg.Envelope.ConversationID).Str("match_id", mt.id).Str("referee_id", ref.id).Logger()
		if err != nil {
			log.Info().Err(err).Msg("result reminder not answered")
			return
		}
		var ack protocol.ReminderAck
		_ = ans.Decode(&ack)
		log.Info().Str("phase", ack.Phase).Bool("resent", ack.Resent).Msg("result reminder answered")
		if ack.Phase != protocol.PhaseUnknown {
			return
		}
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.closed || mt.referee != ref.id || mt.assignedAt != assignedAt || !mt.inFlight() {
			return
		}
		e.failMatches([]*match{mt}, "referee "+ref.id+" no longer holds the match", true)
		if err := e.settle(); err != nil {
			e.outage.retryLater("settle after a reminder", err)
		}
	})
}

// failMatches takes matches in flight from their referees. A failure that counts (the
// referee's fault) may abandon the match; otherwise it is FAILED and assigned again
// under the same match_id, to another referee when one is free, once its former referee
// was told to stop. Players are told too. The caller settles.
func (e *engine) failMatches(list []*match, why string, counts bool) {
	if len(list) == 0 {
		return
	}
	status := func(mt *match) string {
		if counts && mt.failures+1 >= e.cfg.Retries.MaxMatchAttempts {
			return protocol.MatchStateAbandoned
		}
		return protocol.MatchStateFailed
	}
	if err := e.store.FailMatches(failures(list, status), counts); err != nil {
		// The deadline stays due: the alarm tries again.
		e.log.Error().Err(err).Str("why", why).Msg("fail matches")
		if storageFailure(err) {
			e.outage.failed(err)
		}
		return
	}
	for _, mt := range list {
		st := status(mt)
		if counts {
			mt.failures++
		}
		mt.status, mt.deadline = st, time.Time{}
		mt.takenFrom(mt.referee)
		note := map[string]any{"match_id": mt.id, "referee_id": mt.referee, "reason": why, "failures": mt.failures, "counted": counts}
		if mt.progress.phase == protocol.PhaseReporting {
			// Play ended but the result never came: an operator should look at it.
			note["manual_review"] = true
		}
		e.trail.note(audit.EventMatchFailed, note)
		notice := why + "; the match is assigned again"
		if st == protocol.MatchStateAbandoned {
			notice = why + "; the match is abandoned"
			e.log.Error().Str("match_id", mt.id).Str("referee_id", mt.referee).Int("failures", mt.failures).Str("why", why).Msg("match abandoned: it failed retries.max_match_attempts times")
			e.trail.note(audit.EventMatchAbandoned, map[string]any{"match_id": mt.id, "round_id": mt.roundID, "players": mt.players, "failures": mt.failures, "reason": why})
			e.hub.Publish(events.MatchAbandoned, mt.id, map[string]any{"match_id": mt.id, "round_id": mt.roundID, "players": mt.players, "failures": mt.failures, "reason": why})
		} else {
			e.log.Warn().Str("match_id", mt.id).Str("referee_id", mt.referee).Int("failures", mt.failures).Str("why", why).Msg("match failed; it is assigned again")
		}
		if ref := e.agents.referees[mt.referee]; ref != nil {
			e.cancelAtReferee(mt, ref, notice, st == protocol.MatchStateFailed)
		}
		for _, id := range mt.players {
			if pl := e.agents.players[id]; !e.closed && pl.has(protocol.FeatureMatchCancellation) {
				e.notices.cancelled(mt, pl, notice)
			}
		}
	}
}

// cancelAtReferee sends MATCH_CANCELLED to ref, if it announced match_cancellation. With
// hold, the match is not assigned again until the notice ends.
func (e *engine) cancelAtReferee(mt *match, ref *agent, why string, hold bool) {
	if e.closed || !ref.has(protocol.FeatureMatchCancellation) {
		return
	}
	msg, err := e.notices.message(ref, mt, protocol.MatchCancelled, protocol.Cancellation{MatchID: mt.id, Reason: why})
	if err != nil {
		e.log.Error().Err(err).Str("match_id", mt.id).Msg("build MATCH_CANCELLED")
		return
	}
	if !hold {
		e.notices.goSend(ref, msg, nil)
		return
	}
	mt.cancelling = true
	e.notices.goSend(ref, msg, func() {
		mt.cancelling = false
		if err := e.settle(); err != nil {
			e.outage.retryLater("settle after a cancellation", err)
		}
	})
}

// failures are the store's records of failing list, each with its new status.
func failures(list []*match, status func(*match) string) []store.Failure {
	out := make([]store.Failure, len(list))
	for i, mt := range list {
		out[i] = store.Failure{MatchID: mt.id, Status: status(mt)}
	}
	return out
}
