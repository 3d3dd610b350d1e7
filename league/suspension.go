package league

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
)

// violationKinds are the kinds of game_metadata.violations entries that count against
// a player.
var violationKinds = map[string]bool{
	"timeout": true, "invalid_move": true, "malformed_move": true, "stale_answer": true,
	"unreachable": true, "malformed_answer": true, "refused": true, "no_join": true,
}

// agentUpdate is a change of an agent's violations and suspension: written in a
// transaction, then applied in memory.
type agentUpdate struct {
	a          *agent
	violations int
	status     string
	until      time.Time
}

// addViolations is the update that adds n violations to a, suspending it at the
// threshold. Callers hold mu.
func (m *Manager) addViolations(a *agent, n int, now time.Time) agentUpdate {
	u := agentUpdate{a: a, violations: a.violations + n, status: a.status, until: a.suspendedUntil}
	if a.status == AgentSuspended || u.violations < m.cfg.Timeouts.Enforcement.SuspendAfterViolations {
		return u
	}
	if m.cfg.SuspensionDuration() == 0 {
		// Suspensions are off: the count starts again.
		u.violations = 0
		return u
	}
	u.status, u.until = AgentSuspended, now.Add(m.cfg.SuspensionDuration())
	return u
}

func (u agentUpdate) write(tx *sql.Tx) error {
	var until any
	if !u.until.IsZero() {
		until = protocol.Now(u.until)
	}
	_, err := tx.Exec(`UPDATE `+u.a.kind+`s SET status = ?, violations = ?, suspended_until = ? WHERE `+u.a.kind+`_id = ?`,
		u.status, u.violations, until, u.a.id)
	return err
}

// apply applies a written update. A referee that becomes suspended loses its matches in
// flight. Callers hold mu; the caller dispatches.
func (m *Manager) apply(u agentUpdate) {
	a := u.a
	was := a.status
	a.violations, a.status, a.suspendedUntil = u.violations, u.status, u.until
	switch {
	case was != AgentSuspended && a.status == AgentSuspended:
		m.log.Warn().Str(a.kind+"_id", a.id).Int("violations", a.violations).Str("until", protocol.Now(a.suspendedUntil)).Msg("agent suspended")
		m.auditNote(audit.EventAgentSuspended, map[string]any{"agent": a.sender(), "violations": a.violations, "suspended_until": protocol.Now(a.suspendedUntil)})
		m.armDeadline(a.suspendedUntil)
		if a.kind == "referee" {
			m.failMatches(m.matchesOf(a.id), "referee "+a.id+" is suspended", true)
		}
	case was == AgentSuspended && a.status != AgentSuspended:
		m.log.Info().Str(a.kind+"_id", a.id).Msg("suspension over")
		m.auditNote(audit.EventAgentReinstated, map[string]any{"agent": a.sender()})
	}
}

// refereeViolation counts one violation of a referee. Callers hold mu.
func (m *Manager) refereeViolation(ref *agent, why string) {
	u := m.addViolations(ref, 1, m.opt.Now())
	if err := m.opt.Store.Tx(context.Background(), u.write); err != nil {
		m.log.Error().Err(err).Str("referee_id", ref.id).Msg("count violation")
		return
	}
	m.log.Warn().Str("referee_id", ref.id).Int("violations", u.violations).Str("why", why).Msg("referee violation")
	m.apply(u)
}

// reinstateDue ends the suspensions that are over and reports whether there was one.
// Callers hold mu.
func (m *Manager) reinstateDue(now time.Time) bool {
	var due []*agent
	for _, group := range []map[string]*agent{m.referees, m.players} {
		for _, a := range group {
			if a.status == AgentSuspended && !a.suspendedUntil.IsZero() && !now.Before(a.suspendedUntil) {
				due = append(due, a)
			}
		}
	}
	for _, a := range sortedAgents(due) {
		u := agentUpdate{a: a, status: AgentActive}
		if err := m.opt.Store.Tx(context.Background(), u.write); err != nil {
			m.log.Error().Err(err).Str(a.kind+"_id", a.id).Msg("end suspension")
			continue
		}
		m.apply(u)
	}
	return len(due) > 0
}

// forfeitSuspended records the result of every match of the active round that waits
// for a referee while one of its players is suspended, and reports whether it recorded
// one. Callers hold mu.
func (m *Manager) forfeitSuspended() bool {
	recorded := false
	for _, mt := range m.rounds[m.current].matches {
		if mt.status != MatchPending && mt.status != MatchFailed {
			continue
		}
		var suspended []string
		for _, id := range mt.players {
			if m.players[id].status == AgentSuspended {
				suspended = append(suspended, id)
			}
		}
		if len(suspended) == 0 {
			continue
		}
		p := m.forfeit(mt, suspended)
		if err := m.storeResult(mt, "", p); err != nil {
			m.log.Error().Err(err).Str("match_id", mt.id).Msg("record forfeit")
			continue
		}
		recorded = true
		m.log.Info().Str("match_id", mt.id).Strs("suspended", suspended).Msg("match forfeited: a player is suspended")
		m.auditNote(audit.EventResultRecorded, map[string]any{
			"match_id": mt.id, "game_type": p.GameType, "players": p.Players,
			"outcome": p.Outcome, "points": p.Points, "game_metadata": p.GameMetadata,
		})
	}
	return recorded
}

// forfeit is the result of a match some of whose players are suspended: they lose with
// 0 points, the other one wins.
func (m *Manager) forfeit(mt *match, suspended []string) *resultReport {
	p := &resultReport{
		GameType: m.cfg.League.GameType, Players: []string{mt.players[0], mt.players[1]},
		Outcome: map[string]string{}, Points: map[string]int{},
	}
	for _, id := range mt.players {
		if slices.Contains(suspended, id) {
			p.Outcome[id], p.Points[id] = "loss", 0
		} else {
			p.Outcome[id], p.Points[id] = "win", m.scoring.Win
		}
	}
	p.GameMetadata, _ = json.Marshal(map[string]any{"forfeit": "suspended", "suspended": suspended})
	return p
}

// sortedAgents orders agents by kind and id, so that work on several is repeatable.
func sortedAgents(as []*agent) []*agent {
	slices.SortFunc(as, func(a, b *agent) int { return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.id, b.id)) })
	return as
}
