package league

// Violations, suspensions and forfeits (the rules are in faults.go).

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/rs/zerolog"

	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// agentChange is a change of an agent's violations and suspension: written in a
// transaction, then applied in memory.
type agentChange struct {
	a          *agent
	violations int
	status     string
	until      time.Time
}

func (c agentChange) record() store.AgentChange {
	r := store.AgentChange{Kind: c.a.kind, ID: c.a.id, Status: c.status, Violations: c.violations}
	if !c.until.IsZero() {
		r.SuspendedUntil = protocol.Now(c.until)
	}
	return r
}

// addViolations is the change that adds n violations to a, suspending it at the
// threshold of cfg.
func addViolations(cfg *config.Config, a *agent, n int, now time.Time) agentChange {
	c := agentChange{a: a, violations: a.violations + n, status: a.status, until: a.suspendedUntil}
	if a.status == AgentSuspended || c.violations < cfg.Timeouts.Enforcement.SuspendAfterViolations {
		return c
	}
	if cfg.SuspensionDuration() == 0 {
		// Suspensions are off: the count starts again.
		c.violations = 0
		return c
	}
	c.status, c.until = AgentSuspended, now.Add(cfg.SuspensionDuration())
	return c
}

// discipline owns the rules of violations and suspensions: it counts an agent's
// violations, suspends it at the threshold and reinstates it once the suspension is
// over, writing each change before applying it to the agent. It runs under engine.mu.
type discipline struct {
	cfg    *config.Config
	store  Storage
	log    zerolog.Logger
	trail  auditTrail
	now    func() time.Time
	agents *roster
	// suspended runs once a change suspended a: it arms the end of the suspension and
	// takes a referee's matches in flight from it.
	suspended func(a *agent)
}

// apply applies a written change. A referee that becomes suspended loses its matches in
// flight. The caller settles.
func (d discipline) apply(c agentChange) {
	a := c.a
	was := a.status
	a.violations, a.status, a.suspendedUntil = c.violations, c.status, c.until
	switch {
	case was != AgentSuspended && a.status == AgentSuspended:
		d.log.Warn().Str(a.kind+"_id", a.id).Int("violations", a.violations).Str("until", protocol.Now(a.suspendedUntil)).Msg("agent suspended")
		d.trail.note(audit.EventAgentSuspended, map[string]any{"agent": a.sender(), "violations": a.violations, "suspended_until": protocol.Now(a.suspendedUntil)})
		d.suspended(a)
	case was == AgentSuspended && a.status != AgentSuspended:
		d.log.Info().Str(a.kind+"_id", a.id).Msg("suspension over")
		d.trail.note(audit.EventAgentReinstated, map[string]any{"agent": a.sender()})
	}
}

// refereeViolation counts one violation of a referee.
func (d discipline) refereeViolation(ref *agent, why string) {
	c := addViolations(d.cfg, ref, 1, d.now())
	if err := d.store.ChangeAgent(c.record()); err != nil {
		d.log.Error().Err(err).Str("referee_id", ref.id).Msg("count violation")
		return
	}
	d.log.Warn().Str("referee_id", ref.id).Int("violations", c.violations).Str("why", why).Msg("referee violation")
	d.apply(c)
}

// reinstateDue ends the suspensions that are over and reports whether there was one.
func (d discipline) reinstateDue(now time.Time) bool {
	due := false
	for _, a := range d.agents.all() {
		if a.status != AgentSuspended || a.suspendedUntil.IsZero() || now.Before(a.suspendedUntil) {
			continue
		}
		due = true
		c := agentChange{a: a, status: AgentActive}
		if err := d.store.ChangeAgent(c.record()); err != nil {
			d.log.Error().Err(err).Str(a.kind+"_id", a.id).Msg("end suspension")
			continue
		}
		d.apply(c)
	}
	return due
}

// forfeitSuspended records the result of every match that may start (fixtures.ready)
// while one of its players is suspended, and reports whether it recorded one. Only
// settle calls it.
func (e *engine) forfeitSuspended() bool {
	recorded := false
	for _, mt := range e.fx.ready(e.format.Overlap()) {
		var suspended []string
		for _, id := range mt.players {
			if e.agents.players[id].status == AgentSuspended {
				suspended = append(suspended, id)
			}
		}
		if len(suspended) == 0 {
			continue
		}
		if err := e.recordResult(mt, "", forfeit(mt, suspended, e.gameType, e.scoring.Win)); err != nil {
			e.outage.retryLater("record forfeit of "+mt.id, err)
			continue
		}
		recorded = true
		e.log.Info().Str("match_id", mt.id).Strs("suspended", suspended).Msg("match forfeited: a player is suspended")
	}
	return recorded
}

// forfeit is the result of a match of gameType some of whose players are suspended: they
// lose with 0 points, the other one wins with win points.
func forfeit(mt *match, suspended []string, gameType string, win int) *protocol.ResultReport {
	p := &protocol.ResultReport{
		GameType: gameType, Players: []string{mt.players[0], mt.players[1]},
		Outcome: map[string]string{}, Points: map[string]int{},
	}
	for _, id := range mt.players {
		if slices.Contains(suspended, id) {
			p.Outcome[id], p.Points[id] = string(protocol.Loss), 0
		} else {
			p.Outcome[id], p.Points[id] = string(protocol.Win), win
		}
	}
	p.GameMetadata, _ = json.Marshal(protocol.ForfeitMetadata{Forfeit: protocol.ForfeitSuspended, Suspended: suspended})
	return p
}
