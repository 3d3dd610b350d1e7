package replay

import (
	"fmt"
	"maps"
	"math"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
)

// CheckPairings re-runs the league's format over the log's own results and checks that
// it decides every logged round exactly as logged: the rounds of the schedule, then
// each round paired later (Swiss, knockout) from the results of the rounds before it.
// It returns how many rounds it rebuilt.
func (l *League) CheckPairings() (int, error) {
	if len(l.Rounds) == 0 {
		return 0, nil
	}
	for k := 0; k < len(l.Rounds); {
		if k > 0 && !l.RoundComplete(k-1) {
			return k, &audit.LineError{Line: l.Rounds[k].Line, Msg: fmt.Sprintf("round %s was paired before round %s was complete", l.Rounds[k].ID, l.Rounds[k-1].ID)}
		}
		next, err := schedule.Next(l.Format, l.SchedulePlayers, l.Seed, l.played(k))
		if err != nil {
			return k, &audit.LineError{Line: l.Rounds[k].Line, Msg: fmt.Sprintf("round %s cannot be paired again: %v", l.Rounds[k].ID, err)}
		}
		if len(next) == 0 {
			return k, &audit.LineError{Line: l.Rounds[k].Line, Msg: fmt.Sprintf("round %s is logged, but the %s is over after %d rounds", l.Rounds[k].ID, l.Format.Algorithm, k)}
		}
		for _, want := range next {
			if k == len(l.Rounds) {
				break // not logged yet: the league is still going
			}
			if err := l.sameRound(l.Rounds[k], want); err != nil {
				return k, &audit.LineError{Line: l.Rounds[k].Line, Msg: err.Error()}
			}
			k++
		}
	}
	return len(l.Rounds), l.checkSPRT()
}

// checkSPRT checks a logged SPRT decision against the test re-run on the log's results:
// the same decision after the same pairs, with the same LLR.
func (l *League) checkSPRT() error {
	if l.SPRT == nil {
		return nil
	}
	got, ok := schedule.SPRTOf(l.Format, l.played(len(l.Rounds)))
	switch {
	case !ok:
		return &audit.LineError{Line: l.SPRTLine, Msg: "an SPRT decision is logged, but the format has no SPRT"}
	case got.Decision != l.SPRT.Decision || got.Pairs != l.SPRT.Pairs || got.Penta != l.SPRT.Penta || math.Abs(got.LLR-l.SPRT.LLR) > 1e-9:
		return &audit.LineError{Line: l.SPRTLine, Msg: fmt.Sprintf("the SPRT decision logged is %s after %d pairs (LLR %.4f), the results give %q after %d pairs (LLR %.4f)",
			l.SPRT.Decision, l.SPRT.Pairs, l.SPRT.LLR, got.Decision, got.Pairs, got.LLR)}
	}
	return nil
}

// sameRound compares a logged round with the round the format decides.
func (l *League) sameRound(got Round, want schedule.Round) error {
	if got.ID != want.ID || got.Number != want.Number || got.Cycle != want.Cycle {
		return fmt.Errorf("round %s (number %d, cycle %d) is logged where the format decides %s (number %d, cycle %d)", got.ID, got.Number, got.Cycle, want.ID, want.Number, want.Cycle)
	}
	if got.Bye != want.Bye {
		return fmt.Errorf("round %s: bye %q is logged, the format gives it to %q", got.ID, got.Bye, want.Bye)
	}
	wantPoints := 0
	if want.Bye != "" {
		wantPoints = l.Format.ByeScore()
	}
	if got.ByePoints != wantPoints {
		return fmt.Errorf("round %s: the bye scores %d in the log, %d by the format", got.ID, got.ByePoints, wantPoints)
	}
	if len(got.Matches) != len(want.Matches) {
		return fmt.Errorf("round %s: %d matches are logged, the format pairs %d", got.ID, len(got.Matches), len(want.Matches))
	}
	for i, m := range got.Matches {
		w := want.Matches[i]
		if m.ID != w.ID || m.Players != w.Players || m.Seed != w.Seed {
			return fmt.Errorf("round %s board %d: %s %s v %s (seed %d) is logged, the format pairs %s %s v %s (seed %d)",
				got.ID, i+1, m.ID, m.Players[0], m.Players[1], m.Seed, w.ID, w.Players[0], w.Players[1], w.Seed)
		}
	}
	return nil
}

// played is rounds 0..k-1 with the log's results, as the formats pair from them.
func (l *League) played(k int) []schedule.Played {
	out := make([]schedule.Played, 0, k)
	for _, r := range l.Rounds[:k] {
		p := schedule.Played{Round: schedule.Round{Number: r.Number, Cycle: r.Cycle, ID: r.ID, Bye: r.Bye}, Results: map[string]schedule.Result{}}
		for i, m := range r.Matches {
			p.Round.Matches = append(p.Round.Matches, schedule.Match{ID: m.ID, Seed: m.Seed, Round: r.Number, Cycle: r.Cycle, Index: i + 1, Players: m.Players})
			if res := l.Results[m.ID]; res != nil {
				md, _ := protocol.ReadGameMetadata(res.GameMetadata) // what cannot be read ends as a game played
				p.Results[m.ID] = schedule.Result{Outcome: maps.Clone(res.Outcome), Points: maps.Clone(res.Points), Ending: md.Ending()}
			}
		}
		out = append(out, p)
	}
	return out
}
