package league

import (
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// played is the history the formats pair from: every stored round with its results.
func (f *fixtures) played() []schedule.Played {
	out := make([]schedule.Played, 0, len(f.rounds))
	for _, r := range f.rounds {
		p := schedule.Played{Round: schedule.Round{Number: r.number, Cycle: r.cycle, ID: r.id, Bye: r.bye}, Results: map[string]schedule.Result{}}
		for _, mt := range r.matches {
			p.Round.Matches = append(p.Round.Matches, schedule.Match{ID: mt.id, Seed: mt.seed, Round: r.number, Cycle: r.cycle, Index: mt.index, Players: mt.players})
			if mt.result != nil {
				p.Results[mt.id] = schedule.Result{Outcome: mt.result.outcome, Points: mt.result.points, Ending: mt.result.ending}
			}
		}
		out = append(out, p)
	}
	return out
}

// storeRounds turns rounds a format decided into pending rounds to store, each bye with
// what it scores in f.
func storeRounds(f schedule.Format, rounds []schedule.Round) []store.Round {
	out := make([]store.Round, 0, len(rounds))
	for _, r := range rounds {
		sr := store.Round{ID: r.ID, Number: r.Number, Cycle: r.Cycle, Status: store.RoundPending, Bye: r.Bye}
		if r.Bye != "" {
			sr.ByePoints = f.ByeScore()
		}
		for _, mt := range r.Matches {
			sr.Matches = append(sr.Matches, store.Match{ID: mt.ID, RoundID: r.ID, Status: protocol.MatchStatePending, Players: mt.Players, Seed: mt.Seed, Index: mt.Index})
		}
		out = append(out, sr)
	}
	return out
}

// roundsNote is the audit body of rounds, which f holds: the SCHEDULE event's, and
// ROUND_PAIRED's. A match's opening is in it when the league has openings.
func (f *fixtures) roundsNote(rounds []store.Round) []map[string]any {
	out := make([]map[string]any, 0, len(rounds))
	for _, r := range rounds {
		ms := make([]map[string]any, 0, len(r.Matches))
		for _, mt := range r.Matches {
			m := map[string]any{"match_id": mt.ID, "players": mt.Players, "match_seed": mt.Seed}
			if lm := f.matches[mt.ID]; lm != nil && lm.opening != nil {
				m["opening"] = lm.opening
			}
			ms = append(ms, m)
		}
		note := map[string]any{"round_id": r.ID, "round_number": r.Number, "cycle": r.Cycle, "bye": r.Bye, "matches": ms}
		if r.ByePoints != 0 {
			note["bye_points"] = r.ByePoints
		}
		out = append(out, note)
	}
	return out
}
