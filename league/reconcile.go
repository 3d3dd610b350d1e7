package league

import (
	"fmt"
	"maps"
	"slices"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/replay"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// auditReader is an Auditor that can read back its lines; *audit.Log is one.
type auditReader interface {
	Entries() ([]audit.Entry, error)
}

// reconcileAudit brings the audit log level with the database when a stored league is
// loaded. The League Manager writes the database first and the log after it (a result
// is committed before its exchange is recorded; a schedule, a paired round or an
// abandoned match before its note), so a process killed in between leaves the database
// ahead of the log. A referee usually sends such a result again, but nothing makes it
// do so before the league ends, and a replay would then find a round the log cannot
// complete. So what the database holds and the log lacks is written to the log now, as
// the League Manager's own notes, marked "recovered"; so are registrations, which a
// player may give up repeating.
//
// It runs again while the league goes on, after the log failed to take a line (a full
// disk): the exchanges it lost are facts of the database by then. It returns the error
// of a note it could not write (the notes after it wait for the next try); a log that
// cannot be read or rebuilt is logged, and the league goes on from its database.
func (e *engine) reconcileAudit(rounds []store.Round) error {
	r, ok := e.opt.Audit.(auditReader)
	if !ok {
		return nil
	}
	entries, err := r.Entries()
	if err != nil {
		e.log.Error().Err(err).Msg("audit log not compared with the database")
		return nil
	}
	logged, err := replay.Logged(entries)
	if err != nil {
		// verify and replay name the line; the league itself goes on from its database.
		e.log.Error().Err(err).Msg("audit log cannot be rebuilt, so it is not compared with the database")
		return nil
	}
	var failed error
	note := func(kind audit.Event, body map[string]any) {
		if failed == nil {
			if failed = e.opt.Audit.Note(kind, body); failed != nil {
				failed = fmt.Errorf("recover %s in the audit log: %w", kind, failed)
			}
		}
	}
	var added struct{ agents, schedule, rounds, results, abandoned int }
	for _, group := range []struct {
		agents map[string]*agent
		logged []string
	}{{e.agents.referees, logged.Referees}, {e.agents.players, logged.Players}} {
		for _, id := range slices.Sorted(maps.Keys(group.agents)) {
			if !slices.Contains(group.logged, id) {
				note(audit.EventAgentRecovered, map[string]any{"kind": group.agents[id].kind, "id": id, "recovered": true})
				added.agents++
			}
		}
	}
	have := len(logged.Rounds)
	if have == 0 && len(rounds) > 0 {
		ids := e.agents.playerIDs()
		first, err := schedule.Next(e.format, ids, e.cfg.League.Seed, nil)
		if err != nil || len(first) > len(rounds) {
			e.log.Error().Err(err).Msg("the schedule missing from the audit log cannot be rebuilt")
			return nil
		}
		note(audit.EventSchedule, scheduleNote(e, ids, rounds[:len(first)], true))
		have, added.schedule = len(first), 1
	}
	for _, n := range e.fx.roundsNote(rounds[min(have, len(rounds)):]) {
		n["recovered"] = true
		note(audit.EventRoundPaired, n)
		added.rounds++
	}
	for _, rd := range rounds {
		for _, sm := range rd.Matches {
			switch {
			case sm.Result != nil && logged.Results[sm.ID] == nil:
				note(audit.EventResultRecorded, resultNote(e.gameType, sm.ID, sm.Players, sm.Result, true))
				added.results++
			case sm.Status == protocol.MatchStateAbandoned && !abandoned(logged, sm.ID):
				note(audit.EventMatchAbandoned, map[string]any{"match_id": sm.ID, "round_id": sm.RoundID, "players": sm.Players, "failures": sm.Failures, "recovered": true})
				added.abandoned++
			}
		}
	}
	if failed != nil {
		return failed
	}
	if added != (struct{ agents, schedule, rounds, results, abandoned int }{}) {
		e.log.Warn().Int("agents", added.agents).Int("schedule", added.schedule).Int("rounds", added.rounds).Int("results", added.results).Int("abandoned", added.abandoned).
			Msg("the database was ahead of the audit log (a crash or a failed write between the two): the missing facts are logged as recovered")
	}
	return nil
}

// abandoned reports whether the log abandons the match.
func abandoned(l *replay.League, matchID string) bool {
	_, ok := l.Abandoned[matchID]
	return ok
}

// scheduleNote is the body of a SCHEDULE event: the league, its players and the rounds
// the format decided when registration closed.
func scheduleNote(e *engine, ids []string, rounds []store.Round, recovered bool) map[string]any {
	n := map[string]any{"league_id": e.leagueID, "game_type": e.gameType, "seed": e.cfg.League.Seed,
		"players": ids, "format": e.format, "rounds": e.fx.roundsNote(rounds)}
	if recovered {
		n["recovered"] = true
	}
	return n
}

// resultNote is the body of a RESULT_RECORDED event: a result the League Manager decided
// (refereeless forfeits), or one recovered from the database, which names its referee.
func resultNote(gameType, matchID string, players [2]string, r *store.Result, recovered bool) map[string]any {
	n := map[string]any{
		"match_id": matchID, "game_type": gameType, "players": players,
		"outcome": r.Outcome, "points": r.Points, "game_metadata": r.Metadata,
	}
	if recovered {
		n["recovered"] = true
		if r.Referee != "" {
			n["referee_id"] = r.Referee
		}
	}
	return n
}
