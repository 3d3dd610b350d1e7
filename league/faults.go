package league

// Fault tolerance: what the League Manager does when agents flood it, fail, go away or
// misbehave, and when it is itself stopped or crashes. These are the league's rules.
//
// Rate limits (rate_limits of league.yaml; token buckets keyed by the envelope sender,
// since every agent may share one IP):
//   - Registrations: senders that are not registered share one bucket refilled at
//     registration_per_second with a burst of max_players + max_referees; a registered
//     sender repeating its registration has its own bucket of registration_per_second.
//   - Result reports: results_per_second per referee.
//   - Standings queries: standings_per_minute per sender (player, referee or admin), with
//     a burst of one minute's worth.
//   - Every request of these kinds counts, refused or not. Requests that fail
//     authentication draw from one bucket per kind shared by all such senders: only
//     registered agents get buckets of their own, so the limiters stay bounded.
//   - A request over its limit is answered RATE_LIMITED and changes nothing.
//   - HEARTBEAT_REQUEST and MOVE_EVENT (live.go) are not rate limited: they come only from
//     authenticated referees, at the pace of their leases and of the moves played.
//
// Referee leases and result deadlines:
//   - HEARTBEAT_REQUEST (with the referee's own token) is answered HEARTBEAT_RESPONSE
//     {status: acknowledged, lease_ms}; each heartbeat grants a lease of lease_ms from its
//     arrival. A referee that never sent one holds no lease and is never lost.
//   - When a lease runs out the referee is lost (GET /status: lost): it gets no match
//     until its next heartbeat, and each of its ASSIGNED or IN_PROGRESS matches fails.
//   - How long a match may run, reminders, failures and abandonment: lifetime.go.
//   - MATCH_CANCELLED {match_id, reason} goes to the players and the referee of a failed
//     match that announced match_cancellation (best effort: one attempt, short deadline).
//   - A report from a referee that no longer holds the match is refused with
//     STALE_ASSIGNMENT.
//   - Leases live in memory: after a restart no referee holds one until it heartbeats.
//
// Violations and suspension (timeout_policy.yaml enforcement):
//   - Each entry of game_metadata.violations of an accepted result that names one of the
//     match's two players with a known kind (timeout, invalid_move, malformed_move,
//     stale_answer, unreachable, malformed_answer, refused, no_join) is one violation of
//     that player; other entries are ignored.
//   - An assignment that cannot be delivered to a referee (no answer at all after the
//     retries) is one violation of that referee; a refusal is not.
//   - At suspend_after_violations the agent is SUSPENDED for suspension_duration_seconds
//     (status, suspended_until and violations are stored); then it is ACTIVE again with
//     no violations. Violations while suspended are counted but do not extend the
//     suspension. With suspension_duration_seconds 0 nobody is suspended and the count
//     starts again. SUSPENDED without suspended_until (set by an operator) lasts until
//     the operator lifts it.
//   - A suspended agent's token is refused with SUSPENDED. A suspended referee gets no
//     match, and its ASSIGNED or IN_PROGRESS matches are failed and assigned again.
//   - Forfeit: when a match is to be assigned while one of its players is suspended, the
//     League Manager records its result itself, without a referee: the suspended player
//     loses with 0 points and the opponent wins with the win points; both suspended, both
//     lose with 0 points. game_metadata is {"forfeit": "suspended", "suspended": [ids]},
//     match_results.referee_id is NULL, the audit log gets a RESULT_RECORDED event, and
//     the result counts like a reported one (standings, snapshots, round completion).
//   - Live standings rows carry "suspended": true for suspended players; GET /status
//     shows every agent's status, violations and suspended_until.
//
// Graceful shutdown (SIGTERM or SIGINT of league serve, or ADMIN_SHUTDOWN_REQUEST with
// the admin token, which is answered ADMIN_SHUTDOWN_RESPONSE first):
//  1. No match is assigned or forfeited any more; registrations and
//     ADMIN_START_LEAGUE_REQUEST are refused with SHUTTING_DOWN.
//  2. LEAGUE_SHUTDOWN {reason, league_id} goes to every registered referee and player,
//     with that agent's own token, concurrently, one attempt each, short deadline.
//  3. Matches in flight may finish until the drain deadline (league serve --drain,
//     default 5 s; over as soon as no match is in flight; a second signal cuts it
//     short): their results, heartbeats and standings queries are answered as usual.
//  4. Every match still PENDING, FAILED, ASSIGNED or IN_PROGRESS becomes CANCELLED. The
//     league keeps its status (a league cut short is not COMPLETED); the meta table
//     records shutdown_at and shutdown_reason (a completed league has nothing to cancel
//     and records nothing). From then on everything but QUERY_STANDINGS is refused with
//     SHUTTING_DOWN.
//  5. The database and the audit log are closed and league serve exits 0.
//
// Restart after a graceful shutdown: the league resumes. CANCELLED matches are PENDING
// again under their match_id, shutdown_at and shutdown_reason leave the meta table (the
// audit log keeps a LEAGUE_RESUMED event), agents keep their tokens, and the league goes
// on once referees are back.
//
// Crash recovery (no graceful path): every change is one transaction, committed before it
// is applied in memory or answered, so a restart reloads exactly what was acknowledged.
// ASSIGNED or IN_PROGRESS matches are FAILED and assigned again under the same match_id
// (another referee preferred); a round whose last result was stored but not yet counted
// is completed then; a result stored whose audit line was lost is acknowledged again when
// the referee retries it.
//
// Slow clients: the HTTP server closes a connection whose request headers take longer
// than 5 s, whose request takes longer than 10 s, whose answer is not taken within 30 s,
// or that stays idle between requests for 60 s (DefaultHTTPTimeouts).
//
// The audit log records these decisions as events beside the message exchanges:
// RESULT_RECORDED (a forfeit), MATCH_FAILED, MATCH_ABANDONED, REFEREE_LOST, REFEREE_BACK,
// AGENT_SUSPENDED, AGENT_REINSTATED, LEAGUE_SHUTDOWN and LEAGUE_RESUMED.

import (
	"context"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
)

// inFlight reports whether a match waits for its referee.
func (mt *match) inFlight() bool { return mt.status == MatchAssigned || mt.status == MatchInProgress }

// armDeadline makes sure enforceDeadlines runs no later than at. Callers hold mu.
func (m *Manager) armDeadline(at time.Time) {
	if m.closed || at.IsZero() || (m.wakeTimer != nil && !m.wakeAt.After(at)) {
		return
	}
	if m.wakeTimer != nil {
		m.wakeTimer.Stop()
	}
	m.wakeGen++
	gen := m.wakeGen
	m.wakeAt = at
	m.wakeTimer = m.opt.AfterFunc(max(at.Sub(m.opt.Now()), 0), func() { m.wake(gen) })
}

// armNextDeadline arms the earliest pending deadline. Right after enforceDeadlines
// (afterEnforce), a deadline still due is one whose write failed (the error is logged):
// it is tried again a second later rather than at once. Callers hold mu.
func (m *Manager) armNextDeadline(afterEnforce bool) {
	var next time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, group := range []map[string]*agent{m.referees, m.players} {
		for _, a := range group {
			if a.status == AgentSuspended {
				earliest(a.suspendedUntil)
			}
			if !a.lost {
				earliest(a.leaseUntil)
			}
		}
	}
	// Only the active round has matches in flight: a round starts when the previous
	// one is complete.
	if m.current >= 0 {
		for _, mt := range m.rounds[m.current].matches {
			if mt.inFlight() {
				earliest(mt.deadline)
			}
		}
	}
	if now := m.opt.Now(); afterEnforce && !next.IsZero() && !next.After(now) {
		next = now.Add(time.Second)
	}
	m.armDeadline(next)
}

func (m *Manager) wake(gen int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || gen != m.wakeGen {
		return
	}
	m.wakeTimer = nil
	m.enforceDeadlines()
	m.armNextDeadline(true)
}

// enforceDeadlines ends what is due: suspensions, leases, and result deadlines.
// Callers hold mu.
func (m *Manager) enforceDeadlines() {
	now := m.opt.Now()
	changed := m.reinstateDue(now)
	var lost []*agent
	for _, r := range m.referees {
		if !r.lost && !r.leaseUntil.IsZero() && !now.Before(r.leaseUntil) {
			lost = append(lost, r)
		}
	}
	for _, r := range sortedAgents(lost) {
		r.lost = true
		changed = true
		m.metrics.timeouts.WithLabelValues("lease").Inc()
		m.log.Warn().Str("referee_id", r.id).Msg("referee lease expired: referee lost, its matches are assigned again")
		m.auditNote(audit.EventRefereeLost, map[string]any{"referee_id": r.id, "lease_until": protocol.Now(r.leaseUntil)})
		m.failMatches(m.matchesOf(r.id), "referee "+r.id+" lost its lease", true)
	}
	if m.current >= 0 {
		// A failure may abandon a match and so complete the round: the round's matches
		// are read before.
		var late []*match
		for _, mt := range m.rounds[m.current].matches {
			if mt.inFlight() && !mt.deadline.IsZero() && !now.Before(mt.deadline) && m.matchDue(mt, now) {
				late = append(late, mt)
			}
		}
		// Each reason is its own failure, so the audit log says why each match failed.
		for _, mt := range late {
			changed = true
			m.metrics.timeouts.WithLabelValues("match_deadline").Inc()
			m.failMatches([]*match{mt}, m.dueReason(mt), true)
		}
	}
	if changed {
		m.dispatch()
		m.checkDrained()
	}
}

// matchesOf lists the matches in flight at a referee. Callers hold mu.
func (m *Manager) matchesOf(refereeID string) []*match {
	if m.current < 0 {
		return nil
	}
	var out []*match
	for _, mt := range m.rounds[m.current].matches {
		if mt.referee == refereeID && mt.inFlight() {
			out = append(out, mt)
		}
	}
	return out
}

// notifyCancelled sends MATCH_CANCELLED to a player that announced match_cancellation,
// in the background: one attempt, a short deadline, any answer accepted. Callers hold mu.
func (m *Manager) notifyCancelled(mt *match, pl *agent, why string) {
	if m.closed || !pl.has(protocol.FeatureMatchCancellation) {
		return
	}
	msg, err := protocol.NewMessage(protocol.MatchCancelled, protocol.SenderLeagueManager, map[string]string{
		"match_id": mt.id, "reason": why,
	})
	if err != nil {
		m.log.Error().Err(err).Str("match_id", mt.id).Msg("build MATCH_CANCELLED")
		return
	}
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = pl.token, m.leagueID, mt.roundID, mt.id, m.cfg.League.GameType
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.notify(pl.endpoint, pl.sender(), msg)
	}()
}

// notify sends a best-effort notice: one attempt bounded by NotifyTimeout and by the
// Manager's life. The answer does not matter (an agent that does not know the notice
// answers UNSUPPORTED_MESSAGE); it is logged.
func (m *Manager) notify(endpoint, peer string, msg *protocol.Message) {
	ctx, cancel := context.WithTimeout(m.ctx, m.opt.NotifyTimeout)
	defer cancel()
	_, err := m.opt.Client.Call(ctx, endpoint, msg, protocol.CallOptions{Retry: protocol.RetryPolicy{Attempts: 1}, Peer: peer})
	ev := m.log.Debug()
	if err != nil && protocol.ReasonOf(err) != protocol.ReasonUnsupportedMessage {
		ev = m.log.Info()
	}
	ev.Err(err).Str("conversation_id", msg.Envelope.ConversationID).Str("to", peer).Str("message_type", msg.Envelope.MessageType).Msg("notice sent")
}

// auditNote records a League Manager event in the audit log, if there is one. A failure
// is logged: the event already happened in the database. Callers hold mu.
func (m *Manager) auditNote(kind audit.Event, body map[string]any) {
	if m.opt.Audit == nil {
		return
	}
	if err := m.opt.Audit.Note(kind, body); err != nil {
		m.log.Error().Err(err).Str("event", string(kind)).Msg("audit note")
	}
}

type heartbeat struct {
	ActiveMatches []string                 `json:"active_matches"`
	MatchProgress []protocol.MatchProgress `json:"match_progress"`
}

// heartbeat renews a referee's lease and brings a lost referee back.
func (m *Manager) heartbeat(msg *protocol.Message) (*protocol.Message, error) {
	var p heartbeat
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid heartbeat payload")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil, errShuttingDown()
	}
	ref, err := m.authenticate(&msg.Envelope)
	if err != nil {
		return nil, err
	}
	if ref.kind != "referee" {
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "only referees send heartbeats")
	}
	ref.leaseUntil = m.opt.Now().Add(m.cfg.LeaseDuration())
	m.armDeadline(ref.leaseUntil)
	m.applyProgress(ref, p.MatchProgress)
	log := m.log.Debug()
	if ref.lost {
		ref.lost = false
		log = m.log.Info()
		m.auditNote(audit.EventRefereeBack, map[string]any{"referee_id": ref.id})
		m.dispatch()
	}
	log.Str("conversation_id", msg.Envelope.ConversationID).Str("referee_id", ref.id).Int("active_matches", len(p.ActiveMatches)).Msg("heartbeat: lease renewed")
	return m.reply(msg, protocol.HeartbeatResponse, map[string]any{"status": "acknowledged", "lease_ms": m.cfg.Timeouts.LeagueLevel.LeaseMS})
}
