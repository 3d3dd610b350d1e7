package league

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/protocol"
)

// assignmentPayload is the MATCH_ASSIGNMENT payload.
type assignmentPayload struct {
	MatchID          string            `json:"match_id"`
	RoundID          string            `json:"round_id"`
	GameType         string            `json:"game_type"`
	Players          [2]string         `json:"players"`
	PlayerEndpoints  map[string]string `json:"player_endpoints"`
	MatchSeed        int64             `json:"match_seed"`
	MatchCredentials map[string]string `json:"match_credentials"`
	GameParams       map[string]any    `json:"game_params"`
	Scoring          map[string]int    `json:"scoring"`
	Deadlines        map[string]int    `json:"deadlines"`
	// IllegalMovePolicy and Penalties make the league's rules the referee's rules.
	IllegalMovePolicy string         `json:"illegal_move_policy"`
	Penalties         map[string]int `json:"penalties"`
}

// dispatch offers every pending or failed match of the active round to an idle referee
// that supports the game, least loaded first; a match one of whose players is suspended
// is forfeited instead. Callers hold mu.
func (m *Manager) dispatch() {
	if m.state != StateActive || m.current < 0 || m.closed || m.stopping {
		return
	}
	if m.forfeitSuspended() {
		// Forfeits may complete the round; advance dispatches what is left.
		if err := m.advance(); err != nil {
			m.log.Error().Err(err).Msg("advance after forfeits")
		}
		return
	}
	var refs []*agent
	for _, r := range m.referees {
		if r.status != AgentSuspended && r.status != AgentShutdown && !r.lost && slices.Contains(r.games, m.cfg.League.GameType) {
			refs = append(refs, r)
		}
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].id < refs[j].id })
	// Only the active round has matches in flight.
	loads := map[string]int{}
	for _, mt := range m.rounds[m.current].matches {
		if mt.inFlight() {
			loads[mt.referee]++
		}
	}
	for _, mt := range m.rounds[m.current].matches {
		if (mt.status != MatchPending && mt.status != MatchFailed) || mt.cancelling {
			continue
		}
		var best *agent
		for _, r := range refs {
			if loads[r.id] >= r.maxMatches {
				continue
			}
			// A referee that did not take this match (it refused, or could not be reached)
			// comes after the others, so that a referee that is down does not get the match
			// back forever while another one is idle.
			refused, bestRefused := mt.refusedBy[r.id], best != nil && mt.refusedBy[best.id]
			if best == nil || (bestRefused && !refused) || (refused == bestRefused && loads[r.id] < loads[best.id]) {
				best = r
			}
		}
		if best == nil {
			return
		}
		if err := m.assign(mt, best); err != nil {
			m.log.Error().Err(err).Str("match_id", mt.id).Msg("assign match")
			return
		}
		loads[best.id]++
	}
}

// assign records the assignment and sends it in the background. Callers hold mu.
func (m *Manager) assign(mt *match, ref *agent) error {
	now := m.now()
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE matches SET status = ?, referee_id = ?, assigned_at = ?, assignments = assignments + 1 WHERE match_id = ?`, MatchAssigned, ref.id, now, mt.id)
		return err
	})
	if err != nil {
		return err
	}
	if mt.referee != "" && mt.referee != ref.id {
		mt.previousReferees[mt.referee] = true
	}
	mt.status, mt.referee, mt.assignedAt = MatchAssigned, ref.id, now
	// The referee plays the match from its start: moves from an earlier run are gone.
	mt.live, mt.liveMoves = nil, 0
	mt.progress, mt.reminders = progress{since: m.opt.Now()}, 0
	m.setDeadline(mt)
	msg, err := m.assignmentMessage(mt, ref)
	if err != nil {
		return err
	}
	m.publish(events.MatchAssigned, mt.id, map[string]any{"match_id": mt.id, "round_id": mt.roundID, "players": mt.players, "referee_id": ref.id})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.sendAssignment(mt.id, now, ref, msg)
	}()
	return nil
}

func (m *Manager) assignmentMessage(mt *match, ref *agent) (*protocol.Message, error) {
	entry, _ := m.cfg.Game(m.cfg.League.GameType)
	p := assignmentPayload{
		MatchID: mt.id, RoundID: mt.roundID, GameType: m.cfg.League.GameType, Players: mt.players,
		PlayerEndpoints:  map[string]string{},
		MatchSeed:        mt.seed,
		MatchCredentials: map[string]string{},
		GameParams:       entry.Params,
		Scoring:          map[string]int{"win": m.scoring.Win, "draw": m.scoring.Draw, "loss": m.scoring.Loss},
		Deadlines: map[string]int{
			"join_ack_ms": m.cfg.Timeouts.MatchLevel.GameJoinAck,
			"move_ms":     m.cfg.Timeouts.MatchLevel.MoveResponse,
		},
		IllegalMovePolicy: m.cfg.IllegalMovePolicy,
		Penalties: map[string]int{
			"move_warnings": m.cfg.Timeouts.MatchLevel.MoveWarnings,
			"forced_moves":  m.cfg.Timeouts.MatchLevel.ForcedMoves,
		},
	}
	if p.GameParams == nil {
		p.GameParams = map[string]any{}
	}
	for _, id := range mt.players {
		pl := m.players[id]
		p.PlayerEndpoints[id] = pl.endpoint
		p.MatchCredentials[id] = protocol.MatchCredential(pl.token, mt.id)
	}
	msg, err := protocol.NewMessage(protocol.MatchAssignment, protocol.SenderLeagueManager, p)
	if err != nil {
		return nil, err
	}
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = ref.token, m.leagueID, mt.roundID, mt.id, m.cfg.League.GameType
	return msg, nil
}

// sendAssignment delivers one assignment; on refusal or failure the match goes back to
// the pool and is offered again after a pause. It ends when the call ends or ctx does.
func (m *Manager) sendAssignment(matchID, assignedAt string, ref *agent, msg *protocol.Message) {
	opt := protocol.CallOptions{
		Timeout: time.Duration(m.cfg.LeagueTimeouts.RegistrationResponseMS) * time.Millisecond,
		Retry: protocol.RetryPolicy{
			Attempts: m.cfg.Retries.MaxAttempts,
			Backoff:  time.Duration(m.cfg.Retries.BackoffMS) * time.Millisecond,
		},
		Peer: ref.sender(),
	}
	ans, err := m.opt.Client.Call(m.ctx, ref.endpoint, msg, opt)
	accepted := false
	if err == nil {
		var ack struct {
			Status string `json:"status"`
		}
		if ans.Decode(&ack) == nil && ack.Status == "acknowledged" {
			accepted = true
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mt := m.matches[matchID]
	// A later assignment of the match (even to the same referee) owns it now; this
	// call's outcome must not undo that one.
	if mt == nil || mt.referee != ref.id || mt.assignedAt != assignedAt || m.closed {
		return
	}
	if accepted {
		if mt.status == MatchAssigned {
			m.setMatchStatus(mt, MatchInProgress)
		}
		return
	}
	if !mt.inFlight() {
		return
	}
	m.log.Warn().Err(err).Str("conversation_id", msg.Envelope.ConversationID).Str("match_id", matchID).Str("referee_id", ref.id).Msg("assignment not accepted; match goes back to the pool")
	if mt.refusedBy == nil {
		mt.refusedBy = map[string]bool{}
	}
	mt.refusedBy[ref.id] = true
	m.setMatchStatus(mt, MatchPending)
	mt.deadline = time.Time{}
	if undelivered(err) {
		m.metrics.timeouts.WithLabelValues("assignment").Inc()
		m.metrics.violations.WithLabelValues("referee_undelivered").Inc()
		m.refereeViolation(ref, "assignment of "+matchID+" could not be delivered")
	}
	m.checkDrained()
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTimer(m.opt.RedispatchDelay)
		defer t.Stop()
		select {
		case <-m.ctx.Done():
		case <-t.C:
			m.mu.Lock()
			defer m.mu.Unlock()
			m.dispatch()
		}
	}()
}

// setMatchStatus persists a status change. Callers hold mu.
func (m *Manager) setMatchStatus(mt *match, status string) {
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE matches SET status = ? WHERE match_id = ?`, status, mt.id)
		return err
	})
	if err != nil {
		m.log.Error().Err(err).Str("match_id", mt.id).Msg("update match status")
		return
	}
	mt.status = status
}

// undelivered reports whether err means that an assignment never reached its referee
// (refused connection, timeout, HTTP error status), rather than an answer refusing it.
func undelivered(err error) bool {
	var pe *protocol.Error
	return err != nil && !errors.As(err, &pe) && !errors.Is(err, protocol.ErrBadResponse)
}
