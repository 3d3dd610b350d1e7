package league

// Match lifetime: how long the League Manager lets a match run before it takes the match
// from its referee (seed 004 §10.2, issue "Long and slow matches finish exactly once").
//
//   - A referee that announced match_progress lists in every heartbeat the progress of
//     each match it holds: {match_id, step, phase}, phase one of queued, joining, playing,
//     reporting. Heartbeats are the source of progress; move events may be dropped.
//   - queued: the match waits for a free slot at its referee. It has no deadline: the
//     referee's lease covers a referee that dies.
//   - joining (or not yet listed): it may take the join deadline plus the longest legal
//     gap between two steps (below), plus a margin.
//   - playing: the step must change within the longest legal gap plus the join deadline
//     (GAME_OVER goes out before the report), plus a margin. However long the game, a
//     match whose step keeps changing is never failed.
//   - reporting (play is over): the result must come within result_report_ms. Then a
//     RESULT_REMINDER goes to the referee (if it announced result_reminders) and it gets
//     result_report_ms again, up to retries.max_attempts reminders; then the match is
//     FAILED and the audit log records MATCH_FAILED with manual_review for an operator.
//     A reminder answered with phase unknown (the referee does not hold the match) fails
//     it at once.
//   - The longest legal gap between two steps is move_response x (move_warnings +
//     forced_moves + 1): every player to move may use its whole timeout ladder. The
//     margin is lease_ms plus 2 s, since progress is only seen at heartbeats.
//   - A referee that did not announce match_progress (a foreign one) gets one deadline
//     counted from the assignment: the longest legal match (join, MaxSteps of the game x
//     the longest gap, GAME_OVER, margin) when that exceeds result_report_ms, else
//     result_report_ms.
//   - A failed match is assigned again under the same match_id. Failures caused by the
//     referee (lost lease, no progress, no result) count; after retries.max_match_attempts
//     of them the match is ABANDONED: no result, no points, its round completes without
//     it, GET /status and the dashboard list it, and the audit log records
//     MATCH_ABANDONED. Failures caused by a League Manager restart or shutdown do not
//     count.
//   - Before a failed match goes to another referee, the referee that had it is told to
//     stop (MATCH_CANCELLED, if it announced match_cancellation); the match is assigned
//     again once that notice is answered or has failed. A heartbeat that lists a match
//     the referee no longer holds is answered the same way.

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/protocol"
)

// progress is what a match's referee last reported of it.
type progress struct {
	phase string    // "" until a heartbeat lists the match
	step  int       // steps played
	since time.Time // when phase or step last changed (the assignment at first), or the last reminder
}

// stepGap is the longest legal time between two steps: every player to move may use its
// whole timeout ladder.
func (m *Manager) stepGap() time.Duration {
	ml := m.cfg.Timeouts.MatchLevel
	return m.cfg.MoveTimeout() * time.Duration(ml.MoveWarnings+ml.ForcedMoves+1)
}

// margin covers what the League Manager cannot see between two heartbeats.
func (m *Manager) margin() time.Duration { return m.cfg.LeaseDuration() + 2*time.Second }

// longestMatch is the longest a legal match of the league's game may last at a referee.
func (m *Manager) longestMatch() time.Duration {
	join := m.cfg.MatchJoinAckTimeout()
	return join + time.Duration(m.maxSteps)*m.stepGap() + join + m.margin()
}

// matchDeadline is when a match in flight is due, from what its referee said of it; zero
// for a queued match. Callers hold mu.
func (m *Manager) matchDeadline(mt *match) time.Time {
	report := m.cfg.ResultReportTimeout()
	ref := m.referees[mt.referee]
	if ref == nil || !ref.has(protocol.FeatureMatchProgress) {
		return mt.progress.since.Add(max(report, m.longestMatch()))
	}
	join := m.cfg.MatchJoinAckTimeout()
	switch mt.progress.phase {
	case protocol.PhaseQueued:
		return time.Time{}
	case protocol.PhaseReporting:
		return mt.progress.since.Add(report)
	case protocol.PhasePlaying:
		return mt.progress.since.Add(m.stepGap() + join + m.margin())
	}
	return mt.progress.since.Add(join + m.stepGap() + m.margin())
}

// setDeadline recomputes a match's deadline and arms it. Callers hold mu.
func (m *Manager) setDeadline(mt *match) {
	mt.deadline = m.matchDeadline(mt)
	m.armDeadline(mt.deadline)
}

// applyProgress takes the match_progress of a heartbeat from ref. A match that ref no
// longer holds is cancelled at ref again. Callers hold mu.
func (m *Manager) applyProgress(ref *agent, entries []protocol.MatchProgress) {
	now := m.opt.Now()
	for _, e := range entries {
		mt := m.matches[e.MatchID]
		if mt == nil {
			continue
		}
		if mt.referee != ref.id || !(mt.inFlight() || mt.status == MatchCompleted) {
			// Taken from ref (or abandoned): the first MATCH_CANCELLED may have been lost.
			m.cancelAtReferee(mt, ref, "the match was taken from this referee", false)
			continue
		}
		if !mt.inFlight() || (mt.progress.phase == e.Phase && mt.progress.step == e.Step) {
			continue
		}
		if e.Phase == protocol.PhaseReporting && mt.progress.phase != protocol.PhaseReporting {
			mt.reminders = 0
		}
		mt.progress = progress{phase: e.Phase, step: e.Step, since: now}
		m.setDeadline(mt)
	}
}

// matchDue handles a match whose deadline passed: a reminder while reminders are left
// after play ended, else a failure. It reports whether the match is to fail. Callers
// hold mu.
func (m *Manager) matchDue(mt *match, now time.Time) bool {
	ref := m.referees[mt.referee]
	// Only a referee that reports progress can have said phase reporting.
	if mt.progress.phase == protocol.PhaseReporting && ref != nil && mt.reminders < m.cfg.Retries.MaxAttempts {
		mt.reminders++
		mt.progress.since = now
		m.setDeadline(mt)
		m.metrics.timeouts.WithLabelValues("result_report").Inc()
		if ref.has(protocol.FeatureResultReminders) {
			m.sendReminder(mt, ref)
		}
		m.log.Warn().Str("match_id", mt.id).Str("referee_id", ref.id).Int("reminder", mt.reminders).Msg("result late: reminder")
		return false
	}
	return true
}

// dueReason says why a match whose deadline passed is failed. Callers hold mu.
func (m *Manager) dueReason(mt *match) string {
	ref := m.referees[mt.referee]
	switch {
	case ref == nil || !ref.has(protocol.FeatureMatchProgress):
		return fmt.Sprintf("no result within %s of the assignment (the longest legal match, or result_report_ms)", max(m.cfg.ResultReportTimeout(), m.longestMatch()))
	case mt.progress.phase == protocol.PhaseReporting:
		return fmt.Sprintf("no result %d reminder(s) after play ended", mt.reminders)
	}
	return fmt.Sprintf("no progress since step %d (%s)", mt.progress.step, phaseOr(mt.progress.phase))
}

func phaseOr(phase string) string {
	if phase == "" {
		return "assigned"
	}
	return phase
}

// sendReminder sends RESULT_REMINDER in the background. An answer saying the referee
// does not hold the match fails it at once. Callers hold mu.
func (m *Manager) sendReminder(mt *match, ref *agent) {
	if m.closed {
		return
	}
	msg, err := m.refereeNotice(mt, ref, protocol.ResultReminder, map[string]any{
		"match_id": mt.id, "attempt": mt.reminders, "reason": fmt.Sprintf("play ended and no result came within %d ms", m.cfg.Timeouts.LeagueLevel.ResultReport),
	})
	if err != nil {
		m.log.Error().Err(err).Str("match_id", mt.id).Msg("build RESULT_REMINDER")
		return
	}
	assignedAt := mt.assignedAt
	m.wg.Go(func() {
		ctx, cancel := context.WithTimeout(m.ctx, m.opt.NotifyTimeout)
		defer cancel()
		ans, err := m.opt.Client.Call(ctx, ref.endpoint, msg, protocol.CallOptions{Retry: protocol.RetryPolicy{Attempts: 1}, Peer: ref.sender()})
		log := m.log.With().Str("conversation_id", msg.Envelope.ConversationID).Str("match_id", mt.id).Str("referee_id", ref.id).Logger()
		if err != nil {
			log.Info().Err(err).Msg("result reminder not answered")
			return
		}
		var ack struct {
			Phase  string `json:"phase"`
			Resent bool   `json:"resent"`
		}
		_ = ans.Decode(&ack)
		log.Info().Str("phase", ack.Phase).Bool("resent", ack.Resent).Msg("result reminder answered")
		if ack.Phase != protocol.PhaseUnknown {
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.closed || mt.referee != ref.id || mt.assignedAt != assignedAt || !mt.inFlight() {
			return
		}
		m.failMatches([]*match{mt}, "referee "+ref.id+" no longer holds the match", true)
		m.dispatch()
		m.checkDrained()
	})
}

// refereeNotice builds a League Manager message about mt to its referee ref, signed with
// ref's token.
func (m *Manager) refereeNotice(mt *match, ref *agent, messageType string, payload any) (*protocol.Message, error) {
	msg, err := protocol.NewMessage(messageType, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, err
	}
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = ref.token, m.leagueID, mt.roundID, mt.id, m.cfg.League.GameType
	return msg, nil
}

// failMatches takes matches in flight from their referees. A failure that counts (the
// referee's fault) may abandon the match; otherwise it is FAILED and assigned again
// under the same match_id, to another referee when one is free, once its former referee
// was told to stop. Players are told too. Callers hold mu; the caller dispatches.
func (m *Manager) failMatches(list []*match, why string, counts bool) {
	if len(list) == 0 {
		return
	}
	status := func(mt *match) string {
		if counts && mt.failures+1 >= m.cfg.Retries.MaxMatchAttempts {
			return MatchAbandoned
		}
		return MatchFailed
	}
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		inc := 0
		if counts {
			inc = 1
		}
		for _, mt := range list {
			if _, err := tx.Exec(`UPDATE matches SET status = ?, failures = failures + ? WHERE match_id = ?`, status(mt), inc, mt.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		m.log.Error().Err(err).Str("why", why).Msg("fail matches")
		return
	}
	abandoned := false
	for _, mt := range list {
		st := status(mt)
		if counts {
			mt.failures++
		}
		mt.status, mt.deadline = st, time.Time{}
		mt.previousReferees[mt.referee] = true
		if mt.refusedBy == nil {
			mt.refusedBy = map[string]bool{}
		}
		mt.refusedBy[mt.referee] = true
		note := map[string]any{"match_id": mt.id, "referee_id": mt.referee, "reason": why, "failures": mt.failures, "counted": counts}
		if mt.progress.phase == protocol.PhaseReporting {
			// Play ended but the result never came: an operator should look at it.
			note["manual_review"] = true
		}
		m.auditNote(audit.EventMatchFailed, note)
		notice := why + "; the match is assigned again"
		if st == MatchAbandoned {
			abandoned = true
			notice = why + "; the match is abandoned"
			m.log.Error().Str("match_id", mt.id).Str("referee_id", mt.referee).Int("failures", mt.failures).Str("why", why).Msg("match abandoned: it failed retries.max_match_attempts times")
			m.auditNote(audit.EventMatchAbandoned, map[string]any{"match_id": mt.id, "round_id": mt.roundID, "players": mt.players, "failures": mt.failures, "reason": why})
			m.publish(events.MatchAbandoned, mt.id, map[string]any{"match_id": mt.id, "round_id": mt.roundID, "players": mt.players, "failures": mt.failures, "reason": why})
		} else {
			m.log.Warn().Str("match_id", mt.id).Str("referee_id", mt.referee).Int("failures", mt.failures).Str("why", why).Msg("match failed; it is assigned again")
		}
		if ref := m.referees[mt.referee]; ref != nil {
			m.cancelAtReferee(mt, ref, notice, st == MatchFailed)
		}
		for _, id := range mt.players {
			m.notifyCancelled(mt, m.players[id], notice)
		}
	}
	if abandoned {
		// The round may be complete without the abandoned matches.
		if err := m.advance(); err != nil {
			m.log.Error().Err(err).Msg("advance after an abandoned match")
		}
	}
}

// cancelAtReferee sends MATCH_CANCELLED to ref, if it announced match_cancellation. With
// hold, the match is not assigned again until the notice ends. Callers hold mu.
func (m *Manager) cancelAtReferee(mt *match, ref *agent, why string, hold bool) {
	if m.closed || !ref.has(protocol.FeatureMatchCancellation) {
		return
	}
	msg, err := m.refereeNotice(mt, ref, protocol.MatchCancelled, map[string]string{"match_id": mt.id, "reason": why})
	if err != nil {
		m.log.Error().Err(err).Str("match_id", mt.id).Msg("build MATCH_CANCELLED")
		return
	}
	mt.cancelling = mt.cancelling || hold
	m.wg.Go(func() {
		m.notify(ref.endpoint, ref.sender(), msg)
		if !hold {
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		mt.cancelling = false
		m.dispatch()
	})
}
