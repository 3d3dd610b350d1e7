package league

import (
	"context"
	"errors"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/protocol"
)

// dispatch offers every pending or failed match that may start (fixtures.ready) to an
// available referee that supports the game, least loaded first; until its offerAfter, a
// match is not offered to a referee that did not take it. Only settle calls it.
func (e *engine) dispatch() {
	if e.state != StateActive || e.fx.active() == nil || e.closed || e.stop.stopping {
		return
	}
	now := e.opt.Now()
	refs := e.agents.available(e.gameType)
	loads := map[string]int{}
	for _, mt := range e.fx.inFlight() {
		loads[mt.referee]++
	}
	for _, mt := range e.fx.ready(e.format.Overlap()) {
		if mt.cancelling {
			continue
		}
		paused := now.Before(mt.offerAfter)
		var best *agent
		for _, ref := range refs {
			if loads[ref.id] >= ref.maxMatches || (paused && mt.refusedBy[ref.id]) {
				continue
			}
			// A referee that did not take this match (it refused, or could not be reached)
			// comes after the others, so that a referee that is down does not get the match
			// back forever while another one is idle.
			refused, bestRefused := mt.refusedBy[ref.id], best != nil && mt.refusedBy[best.id]
			if best == nil || (bestRefused && !refused) || (refused == bestRefused && loads[ref.id] < loads[best.id]) {
				best = ref
			}
		}
		if best == nil && paused {
			continue
		}
		if best == nil {
			return
		}
		if err := e.assign(mt, best); err != nil {
			e.outage.retryLater("assign match "+mt.id, err)
			return
		}
		loads[best.id]++
	}
}

// assign records the assignment and sends it in the background.
func (e *engine) assign(mt *match, ref *agent) error {
	now := e.now()
	msg, err := e.notices.assignment(mt, ref, e.agents.players)
	if err != nil {
		return err
	}
	if err := e.store.AssignMatch(mt.id, ref.id, protocol.MatchStateAssigned, now); err != nil {
		return err
	}
	if mt.referee != "" && mt.referee != ref.id {
		mt.previousReferees[mt.referee] = true
	}
	mt.status, mt.referee, mt.assignedAt, mt.offerAfter = protocol.MatchStateAssigned, ref.id, now, time.Time{}
	// The referee plays the match from its start: moves from an earlier run are gone.
	mt.live, mt.liveMoves = nil, 0
	mt.progress, mt.reminders = progress{since: e.opt.Now()}, 0
	e.setDeadline(mt)
	e.hub.Publish(events.MatchAssigned, mt.id, map[string]any{"match_id": mt.id, "round_id": mt.roundID, "players": mt.players, "referee_id": ref.id})
	opt := assignmentCall(e.cfg)
	e.notices.goCall(func(ctx context.Context) {
		ans, err := e.notices.call(ctx, ref, msg, opt)
		e.mu.Lock()
		defer e.mu.Unlock()
		e.assignmentAnswered(mt, now, ref, msg, ans, err)
	})
	return nil
}

// assignmentCall is how MATCH_ASSIGNMENT is sent: each attempt has the assignment's own
// deadline, and retries.max_attempts attempts are made.
func assignmentCall(cfg *config.Config) protocol.CallOptions {
	return protocol.CallOptions{
		Timeout: cfg.MatchAssignmentTimeout(),
		Retry:   protocol.RetryPolicy{Attempts: cfg.Retries.MaxAttempts, Backoff: cfg.RetryBackoff()},
	}
}

// assignmentAnswered applies the outcome of delivering an assignment: accepted, the match
// is in progress; refused or undelivered, it goes back to the pool (putBack).
func (e *engine) assignmentAnswered(mt *match, assignedAt string, ref *agent, msg *protocol.Message, ans *protocol.Message, err error) {
	// A later assignment of the match (even to the same referee) owns it now; this
	// call's outcome must not undo that one.
	if mt.referee != ref.id || mt.assignedAt != assignedAt || e.closed {
		return
	}
	if err == nil {
		var ack protocol.MatchAck
		if ans.Decode(&ack) == nil && ack.Status == protocol.StatusAcknowledged {
			if mt.status == protocol.MatchStateAssigned {
				// A write that fails leaves the match ASSIGNED, which the League Manager
				// (and a restart) treats as IN_PROGRESS.
				e.setMatchStatus(mt, protocol.MatchStateInProgress)
			}
			return
		}
	}
	if !mt.inFlight() {
		return
	}
	e.log.Warn().Err(err).Str("conversation_id", msg.Envelope.ConversationID).Str("match_id", mt.id).Str("referee_id", ref.id).Msg("assignment not accepted; match goes back to the pool")
	mt.notTaken = &notTaken{referee: ref, assignedAt: assignedAt, undelivered: undelivered(err)}
	e.putBack(mt)
}

// notTaken is an assignment its referee refused or that never reached it.
type notTaken struct {
	referee     *agent
	assignedAt  string
	undelivered bool
}

// putBack returns to the pool a match its referee did not take (mt.notTaken), not to be
// offered again before Options.RedispatchDelay has passed. Nothing of it is applied until
// it is stored: a write that fails keeps it for retryDecisions.
func (e *engine) putBack(mt *match) {
	nt, ref := mt.notTaken, mt.notTaken.referee
	if mt.referee != ref.id || mt.assignedAt != nt.assignedAt || !mt.inFlight() {
		// The match moved on meanwhile (failed, or finished by a result).
		mt.notTaken = nil
		return
	}
	if err := e.store.SetMatchStatus(protocol.MatchStatePending, mt.id); err != nil {
		e.outage.retryLater("return match "+mt.id+" to the pool", err)
		return
	}
	mt.status, mt.notTaken, mt.deadline = protocol.MatchStatePending, nil, time.Time{}
	if mt.refusedBy == nil {
		mt.refusedBy = map[string]bool{}
	}
	mt.refusedBy[ref.id] = true
	if nt.undelivered {
		e.metrics.timeouts.WithLabelValues("assignment").Inc()
		e.metrics.violations.WithLabelValues("referee_undelivered").Inc()
		e.discipline.refereeViolation(ref, "assignment of "+mt.id+" could not be delivered")
	}
	e.stop.checkDrained(&e.fx)
	mt.offerAfter = e.opt.Now().Add(e.opt.RedispatchDelay)
	e.armDeadline(mt.offerAfter)
}

// setMatchStatus persists a status change and reports whether it was made.
func (e *engine) setMatchStatus(mt *match, status string) bool {
	if err := e.store.SetMatchStatus(status, mt.id); err != nil {
		e.log.Error().Err(err).Str("match_id", mt.id).Msg("update match status")
		if storageFailure(err) {
			e.outage.failed(err)
		}
		return false
	}
	mt.status = status
	return true
}

// undelivered reports whether err means that an assignment never reached its referee
// (refused connection, timeout, HTTP error status), rather than an answer refusing it.
func undelivered(err error) bool {
	var pe *protocol.Error
	return err != nil && !errors.As(err, &pe) && !errors.Is(err, protocol.ErrBadResponse)
}
