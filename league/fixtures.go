package league

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// fixtures are the schedule, the matches and the live standings in memory. They are part
// of the engine's state: only code holding engine.mu touches them. The standings tables
// are counted from the results (on load and after each result), never stored on their own.
type fixtures struct {
	rounds  []*round
	matches map[string]*match
	// current indexes the active round: the first one not completed (-1 before
	// scheduling). When rounds overlap, matches of later rounds may be in flight too.
	current int
	// table counts every result and bye; settled only those of the completed rounds, so
	// that a round's snapshot is exact even when later rounds have started.
	table, settled *standings.Table
	// byPlayer lists each player's matches in schedule order; next[p] indexes the first
	// of them not finished (the only one of p's matches that may be started).
	byPlayer map[string][]*match
	next     map[string]int
	// updatedAt is when the last result was stored.
	updatedAt string
	// openings gives each match its opening as it is added; nil without openings.
	// taken counts the openings given so far, lastOpening is each pairing's latest (the
	// second game of a game pair plays it again).
	openings    *openingBook
	taken       int
	lastOpening map[[2]string]*protocol.Opening
}

func newFixtures() fixtures {
	f := fixtures{matches: map[string]*match{}, current: -1, byPlayer: map[string][]*match{}, next: map[string]int{}}
	f.restart(nil, nil)
	return f
}

// restart empties the standings of players, ordered by tiebreaks.
func (f *fixtures) restart(players []string, tiebreaks []string) {
	f.table, f.settled = standings.New(players, tiebreaks...), standings.New(players, tiebreaks...)
	f.taken, f.lastOpening = 0, map[[2]string]*protocol.Opening{}
}

// load takes the schedule read from the database and counts the standings of players
// from its results and byes, ordered by tiebreaks. onResult, when not nil, sees each
// stored result with its game_metadata, read once for both.
func (f *fixtures) load(rounds []store.Round, players []string, leagueCompleted bool, tiebreaks []string, onResult func(*match, store.Match, protocol.GameMetadata)) error {
	f.restart(players, tiebreaks)
	if err := f.add(rounds, onResult); err != nil {
		return err
	}
	if f.current < 0 && leagueCompleted && len(f.rounds) > 0 {
		f.current = len(f.rounds) - 1
	}
	return nil
}

// add appends stored rounds, counting their results and byes into the standings;
// onResult (may be nil) sees each result, as in load.
func (f *fixtures) add(rounds []store.Round, onResult func(*match, store.Match, protocol.GameMetadata)) error {
	for _, sr := range rounds {
		r := &round{id: sr.ID, number: sr.Number, cycle: sr.Cycle, status: sr.Status, bye: sr.Bye, byePoints: sr.ByePoints}
		if sr.ByePoints > 0 {
			if err := f.table.Bye(sr.Bye, sr.ByePoints); err != nil {
				return fmt.Errorf("recount standings: %w", err)
			}
		}
		for _, sm := range sr.Matches {
			mt := &match{id: sm.ID, roundID: sm.RoundID, referee: sm.Referee, status: sm.Status, assignedAt: sm.AssignedAt, players: sm.Players,
				seed: sm.Seed, index: sm.Index, order: len(f.matches), failures: sm.Failures, previousReferees: map[string]bool{}}
			if err := f.open(mt); err != nil {
				return err
			}
			if sm.Result != nil {
				md := storedMetadata(sm.Result.Metadata)
				mt.result = newResultRecord(sm.Result.Outcome, sm.Result.Points, md)
				if err := f.table.Apply(mt.result.outcome, mt.result.points); err != nil {
					return fmt.Errorf("recount standings: %w", err)
				}
				if onResult != nil {
					onResult(mt, sm, md)
				}
			}
			r.matches = append(r.matches, mt)
			f.matches[mt.id] = mt
			for _, p := range mt.players {
				f.byPlayer[p] = append(f.byPlayer[p], mt)
			}
		}
		if r.status == store.RoundActive {
			f.current = len(f.rounds)
		}
		if r.status == store.RoundCompleted {
			if err := countRound(f.settled, r); err != nil {
				return fmt.Errorf("recount standings: %w", err)
			}
		}
		f.rounds = append(f.rounds, r)
	}
	return nil
}

// open gives mt, the next match in schedule order, its opening: the next one of the
// book, or with game pairs, for the second game of a pair (an odd count of its pairing's
// games so far), the one its pairing's first game played.
func (f *fixtures) open(mt *match) error {
	if f.openings == nil {
		return nil
	}
	pairing := mt.players
	slices.Sort(pairing[:])
	if f.openings.pairs && f.pairGames(mt.players)%2 == 1 {
		mt.opening = f.lastOpening[pairing]
		return nil
	}
	o, err := f.openings.opening(f.taken)
	if err != nil {
		return err
	}
	f.taken++
	mt.opening, f.lastOpening[pairing] = o, o
	return nil
}

// pairGames counts the games of the pairing of players scheduled so far, either player
// first.
func (f *fixtures) pairGames(players [2]string) int {
	n := 0
	for _, m := range f.byPlayer[players[0]] {
		if m.players[0] == players[1] || m.players[1] == players[1] {
			n++
		}
	}
	return n
}

// countRound counts a completed round's bye and results into t.
func countRound(t *standings.Table, r *round) error {
	if r.byePoints > 0 {
		if err := t.Bye(r.bye, r.byePoints); err != nil {
			return err
		}
	}
	for _, mt := range r.matches {
		if mt.result != nil {
			if err := t.Apply(mt.result.outcome, mt.result.points); err != nil {
				return err
			}
		}
	}
	return nil
}

// snapshot is the standings once round r, the active one, completes: the settled table
// with r counted in, to be kept once the round's completion is stored.
func (f *fixtures) snapshot(r *round) (*standings.Table, error) {
	t := f.settled.Clone()
	if err := countRound(t, r); err != nil {
		return nil, fmt.Errorf("snapshot of round %s: %w", r.id, err)
	}
	return t, nil
}

// ready lists the pending or failed matches that may start now, in schedule order. With
// a barrier these are the active round's; when rounds overlap, each match whose players
// have finished all their earlier matches, whatever its round.
func (f *fixtures) ready(overlap bool) []*match {
	waiting := func(mt *match) bool {
		return mt.status == protocol.MatchStatePending || mt.status == protocol.MatchStateFailed
	}
	var out []*match
	if !overlap {
		if r := f.active(); r != nil {
			for _, mt := range r.matches {
				if waiting(mt) {
					out = append(out, mt)
				}
			}
		}
		return out
	}
	seen := map[*match]bool{}
	for p := range f.byPlayer {
		mt := f.head(p)
		if mt == nil || seen[mt] || !waiting(mt) || f.head(mt.players[0]) != mt || f.head(mt.players[1]) != mt {
			continue
		}
		seen[mt] = true
		out = append(out, mt)
	}
	slices.SortFunc(out, func(a, b *match) int { return cmp.Compare(a.order, b.order) })
	return out
}

// head is player p's first unfinished match, nil when all are finished.
func (f *fixtures) head(p string) *match {
	ms, i := f.byPlayer[p], f.next[p]
	for i < len(ms) && ms[i].finished() {
		i++
	}
	f.next[p] = i
	if i == len(ms) {
		return nil
	}
	return ms[i]
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

// inFlight lists the matches assigned to a referee and not finished. They belong to the
// active round or, when rounds overlap, to later ones.
func (f *fixtures) inFlight() []*match {
	var out []*match
	for _, r := range f.rounds[max(f.current, 0):] {
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

// nextDeadline is the earliest deadline of a match in flight or end of a pause in
// offering a match, zero for none.
func (f *fixtures) nextDeadline() time.Time {
	var next time.Time
	for _, r := range f.rounds[max(f.current, 0):] {
		for _, mt := range r.matches {
			if mt.inFlight() {
				next = earliest(next, mt.deadline)
			}
			next = earliest(next, mt.offerAfter)
		}
	}
	return next
}

// pausesOver ends the pauses in offering matches that are over at now, and reports
// whether there were any.
func (f *fixtures) pausesOver(now time.Time) bool {
	over := false
	for _, r := range f.rounds[max(f.current, 0):] {
		for _, mt := range r.matches {
			if !mt.offerAfter.IsZero() && !now.Before(mt.offerAfter) {
				mt.offerAfter, over = time.Time{}, true
			}
		}
	}
	return over
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
