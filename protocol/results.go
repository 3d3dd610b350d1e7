package protocol

import (
	"fmt"
	"slices"
)

// CheckResult is the one check of "is this a valid result of this match", used by the
// League Manager when a report comes, by league verify on the audit log and by league
// conform on a referee's reports. It returns nil when r is a valid result of a match
// between players, else an error saying, in words fit for the referee, the first thing
// wrong:
//   - r.Players are the match's two players, in either order;
//   - r.Outcome and r.Points name both of them and no one else;
//   - the outcomes are win, loss or draw and fit together (Consistent: a decided game,
//     a draw, or both losing);
//   - each player's points are what scoring gives its outcome; a nil scoring (not known
//     to the caller) leaves the points unchecked.
//
// What the match's context adds (round, game type, what the rules give on re-play) is
// the caller's to check.
func CheckResult(r *ResultReport, players [2]string, scoring *Scoring) error {
	want := []string{players[0], players[1]}
	got := slices.Clone(r.Players)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		return fmt.Errorf("players must be %s and %s", players[0], players[1])
	}
	for _, id := range players {
		if _, ok := r.Outcome[id]; !ok {
			return fmt.Errorf("no outcome for %s", id)
		}
		if _, ok := r.Points[id]; !ok {
			return fmt.Errorf("no points for %s", id)
		}
	}
	if len(r.Outcome) != 2 || len(r.Points) != 2 {
		return fmt.Errorf("outcome and points name %d and %d players, not the match's two", len(r.Outcome), len(r.Points))
	}
	a, b := Outcome(r.Outcome[players[0]]), Outcome(r.Outcome[players[1]])
	if !a.Valid() || !b.Valid() || !Consistent(a, b) {
		return fmt.Errorf("outcomes %s/%s do not fit together", a, b)
	}
	if scoring == nil {
		return nil
	}
	for _, id := range players {
		o := Outcome(r.Outcome[id])
		if pts, due := r.Points[id], scoring.Points(o); pts != due {
			return fmt.Errorf("reported %d points for %s, a %s scores %d", pts, id, o, due)
		}
	}
	return nil
}
