package league

import (
	"fmt"
	"time"

	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// fixtures are the schedule, the matches and the live standings in memory. They are part
// of the engine's state: only code holding Manager.mu touches them. The standings table
// is counted from the results (on load and after each result), never stored on its own.
type fixtures struct {
	rounds  []*round
	matches map[string]*match
	current int // index into rounds of the active round, -1 before scheduling
	table   *standings.Table
	// updatedAt is when the last result was stored.
	updatedAt string
}

func newFixtures() fixtures {
	return fixtures{matches: map[string]*match{}, current: -1, table: standings.New(nil)}
}

// load takes the schedule read from the database and counts the standings of players
// from its results and byes, ordered by tiebreaks.
func (f *fixtures) load(rounds []store.Round, players []string, leagueCompleted bool, tiebreaks []string) error {
	f.table = standings.New(players, tiebreaks...)
	if err := f.add(rounds); err != nil {
		return err
	}
	if f.current < 0 && leagueCompleted && len(f.rounds) > 0 {
		f.current = len(f.rounds) - 1
	}
	return nil
}

// add appends stored rounds, counting their results and byes into the standings.
func (f *fixtures) add(rounds []store.Round) error {
	for _, sr := range rounds {
		r := &round{id: sr.ID, number: sr.Number, cycle: sr.Cycle, status: sr.Status, bye: sr.Bye}
		if sr.ByePoints > 0 {
			if err := f.table.Bye(sr.Bye, sr.ByePoints); err != nil {
				return fmt.Errorf("recount standings: %w", err)
			}
		}
		for _, sm := range sr.Matches {
			mt := &match{id: sm.ID, roundID: sm.RoundID, referee: sm.Referee, status: sm.Status, assignedAt: sm.AssignedAt, players: sm.Players,
				seed: sm.Seed, index: sm.Index, failures: sm.Failures, previousReferees: map[string]bool{}}
			if sm.Result != nil {
				mt.result = newResultRecord(sm.Result.Outcome, sm.Result.Points, sm.Result.Metadata)
				if err := f.table.Apply(mt.result.outcome, mt.result.points); err != nil {
					return fmt.Errorf("recount standings: %w", err)
				}
			}
			r.matches = append(r.matches, mt)
			f.matches[mt.id] = mt
		}
		if r.status == store.RoundActive {
			f.current = len(f.rounds)
		}
		f.rounds = append(f.rounds, r)
	}
	return nil
}

// roundAt is round i of the schedule, counting added rounds after the stored ones.
func (f *fixtures) roundAt(i int, added []store.Round) store.Round {
	if i < len(f.rounds) {
		r := f.rounds[i]
		return store.Round{ID: r.id, Number: r.number}
	}
	return added[i-len(f.rounds)]
}

// active is the active round, nil before the first one.
func (f *fixtures) active() *round {
	if f.current < 0 {
		return nil
	}
	return f.rounds[f.current]
}

// activeNumber is the number of the active round, 0 before the first one.
func (f *fixtures) activeNumber() int {
	if r := f.active(); r != nil {
		return r.number
	}
	return 0
}

// inFlight lists the matches waiting for a referee. Only the active round has matches in
// flight: a round starts when the previous one is complete.
func (f *fixtures) inFlight() []*match {
	var out []*match
	if r := f.active(); r != nil {
		for _, mt := range r.matches {
			if mt.inFlight() {
				out = append(out, mt)
			}
		}
	}
	return out
}

// atReferee lists the matches in flight at a referee.
func (f *fixtures) atReferee(refereeID string) []*match {
	var out []*match
	for _, mt := range f.inFlight() {
		if mt.referee == refereeID {
			out = append(out, mt)
		}
	}
	return out
}

// nextDeadline is the earliest deadline of a match in flight, zero for none.
func (f *fixtures) nextDeadline() time.Time {
	var next time.Time
	for _, mt := range f.inFlight() {
		next = earliest(next, mt.deadline)
	}
	return next
}

// where lists the matches of every round that satisfy keep, in schedule order.
func (f *fixtures) where(keep func(*match) bool) []*match {
	var out []*match
	for _, r := range f.rounds {
		for _, mt := range r.matches {
			if keep(mt) {
				out = append(out, mt)
			}
		}
	}
	return out
}

// counts counts the matches by status, every status present.
func (f *fixtures) counts() map[string]int {
	out := map[string]int{}
	for _, st := range []string{protocol.MatchStatePending, protocol.MatchStateAssigned, protocol.MatchStateInProgress, protocol.MatchStateCompleted, protocol.MatchStateFailed, protocol.MatchStateCancelled, protocol.MatchStateAbandoned} {
		out[st] = 0
	}
	for _, mt := range f.matches {
		out[mt.status]++
	}
	return out
}

func roundDone(r *round) bool {
	for _, mt := range r.matches {
		if !mt.finished() {
			return false
		}
	}
	return true
}
