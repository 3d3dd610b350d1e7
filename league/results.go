package league

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/agentleague/agentleague/league/audit"

	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// reportResult takes a referee's MATCH_RESULT_REPORT: checked against the match and the
// scoring, stored exactly once, acknowledged again when repeated.
func (m *Manager) reportResult(msg *protocol.Message) (*protocol.Message, error) {
	start := time.Now()
	env := &msg.Envelope
	var p protocol.ResultReport
	if err := msg.Decode(&p); err != nil {
		return nil, refuse(errInvalidResult, "result payload cannot be read")
	}
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	if e.stop.stopped {
		return nil, shuttingDown()
	}
	ref, err := e.agents.authenticate(env)
	if err != nil {
		return nil, m.refusedAuth(limitResults, env.Sender, err)
	}
	if ref.kind != store.KindReferee {
		return nil, refuse(errUnauthorized, "only referees report results")
	}
	if err := m.rateLimit(limitResults, ref.sender(), true); err != nil {
		return nil, err
	}
	mt := e.fx.matches[env.MatchID]
	if mt == nil {
		return nil, refuse(errUnknownMatch, "match %q is not in the schedule", env.MatchID)
	}
	ack := protocol.MatchAck{MatchID: mt.id, Status: protocol.StatusAcknowledged}
	if mt.result != nil {
		if maps.Equal(mt.result.outcome, p.Outcome) && maps.Equal(mt.result.points, p.Points) && mt.referee == ref.id {
			return m.matchReply(msg, protocol.MatchResultAck, mt, ack)
		}
		return nil, refuse(errDuplicateResult, "match %s already has a different result", mt.id)
	}
	if mt.referee != ref.id {
		if mt.previousReferees[ref.id] {
			return nil, refuse(errStaleAssignment, "match %s was reassigned to another referee", mt.id)
		}
		return nil, refuse(errNotAssigned, "match %s is not assigned to %s", mt.id, env.Sender)
	}
	if e.state != StateActive || !mt.inFlight() {
		if mt.status == protocol.MatchStateFailed || mt.status == protocol.MatchStatePending || mt.status == protocol.MatchStateAbandoned {
			return nil, refuse(errStaleAssignment, "match %s is no longer assigned to %s", mt.id, env.Sender)
		}
		return nil, refuse(errNotActive, "match %s cannot take a result now (league %s, match %s)", mt.id, e.state, mt.status)
	}
	if err := checkResult(env, mt, &p, e.gameType, e.scoring); err != nil {
		return nil, err
	}
	if err := e.storageReady(); err != nil {
		return nil, err
	}
	if err := e.recordResult(mt, ref.id, &p); err != nil {
		return nil, err
	}
	if err := e.settle(); err != nil {
		e.outage.retryLater("settle after a result", err)
	}
	ans, err := m.matchReply(msg, protocol.MatchResultAck, mt, ack)
	m.metrics.resultSeconds.Observe(time.Since(start).Seconds())
	return ans, err
}

// checkResult validates a report against the match (round and game) and, through
// protocol.CheckResult, its players and the game's scoring.
func checkResult(env *protocol.Envelope, mt *match, p *protocol.ResultReport, gameType string, scoring protocol.Scoring) error {
	invalid := func(format string, args ...any) error {
		return refuse(errInvalidResult, format, args...)
	}
	if env.RoundID != "" && env.RoundID != mt.roundID {
		return invalid("match %s belongs to round %s, not %s", mt.id, mt.roundID, env.RoundID)
	}
	if p.GameType != gameType || (env.GameType != "" && env.GameType != p.GameType) {
		return invalid("game_type must be %s", gameType)
	}
	if err := protocol.CheckResult(p, mt.players, &scoring); err != nil {
		return invalid("%v", err)
	}
	return nil
}

// recordResult is the one route by which a match gets its result: a referee's report
// (refereeID set) or a forfeit the League Manager decided ("" referee). A game_metadata
// that violates schemas/game_metadata.json is refused (SCHEMA_VIOLATION, each violation
// with its path) and nothing is stored. Else it writes the result, the match status and
// the players' violations in one transaction, then applies them in memory (standings,
// statistics, suspensions) and publishes move_made for the moves the live view missed,
// match_finished and standings_changed. The caller settles.
func (e *engine) recordResult(mt *match, refereeID string, p *protocol.ResultReport) error {
	md, vs := protocol.ReadGameMetadata(p.GameMetadata) // read once: facts, ratings, live view
	if vs != nil {
		// Taken, it would be read in part ever after: refused, saying where it is wrong.
		r := refuse(errMalformed, "game_metadata violates schemas/game_metadata.json: %s", vs[0])
		for _, v := range vs {
			r.violations = append(r.violations, v.String())
		}
		return r
	}
	if err := e.fx.table.Check(p.Outcome, p.Points); err != nil {
		return refuse(errInvalidResult, "result does not fit the standings")
	}
	if refereeID != "" && !protocol.SameOpening(md.Opening, mt.opening) {
		return refuse(errInvalidResult, "match %s was assigned opening %s, the result was played from %s",
			mt.id, protocol.OpeningName(mt.opening), protocol.OpeningName(md.Opening))
	}
	now := e.opt.Now()
	facts := readFacts(mt.players, md)
	var changes []agentChange
	var records []store.AgentChange
	for _, id := range mt.players {
		if n := facts.count(id); n > 0 {
			c := addViolations(e.cfg, e.agents.players[id], n, now)
			changes, records = append(changes, c), append(records, c.record())
		}
	}
	reportedAt := protocol.Now(now)
	res := store.Result{Outcome: p.Outcome, Points: p.Points, Metadata: p.GameMetadata, Referee: refereeID, ReportedAt: reportedAt}
	if err := e.store.RecordResult(mt.id, protocol.MatchStateCompleted, res, records); err != nil {
		return fmt.Errorf("store result: %w", err)
	}
	mt.status, mt.deadline = protocol.MatchStateCompleted, time.Time{}
	mt.result = newResultRecord(p.Outcome, p.Points, md)
	// The live view gets the moves it missed before match_finished; the match view
	// re-plays the stored moves from now on.
	e.live.unseenMoves(mt, md)
	mt.live, mt.liveMoves = nil, 0
	// Checked above, so it cannot fail.
	_ = e.fx.table.Apply(p.Outcome, p.Points)
	e.fx.updatedAt = reportedAt
	e.stats.count(mt, facts)
	for _, kinds := range facts.violations {
		for kind, n := range kinds {
			e.metrics.violations.WithLabelValues(kind).Add(float64(n))
		}
	}
	for _, c := range changes {
		e.discipline.apply(c)
	}
	if refereeID == "" {
		e.trail.note(audit.EventResultRecorded, resultNote(p.GameType, mt.id, mt.players, &res, false))
	}
	e.hub.Publish(events.MatchFinished, mt.id, map[string]any{
		"match_id": mt.id, "round_id": mt.roundID, "players": mt.players,
		"outcome": p.Outcome, "points": p.Points, "termination": md.Ending(),
	})
	// The rows of the two players, not the whole table: at thousands of players that is a
	// megabyte an event. A client that shows more reloads its page of /api/league.
	var changed []protocol.StandingsRow
	for _, r := range e.fx.table.Rows() {
		if slices.Contains(mt.players[:], r.PlayerID) {
			changed = append(changed, r)
		}
	}
	e.hub.Publish(events.StandingsChanged, "", map[string]any{"standings": changed})
	return nil
}
