package replay

import (
	"fmt"

	"github.com/agentleague/agentleague/league/export"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// CheckDB compares every round snapshot and the final standings of the database with
// the league rebuilt from the log, and returns the first difference. Rounds complete in
// order: when rounds overlap, a round whose matches are all over still has no snapshot
// while an earlier one is being played.
func (l *League) CheckDB(db *store.Store) error {
	complete := true
	for i, r := range l.Rounds {
		rows, _, found, err := db.Snapshot(r.ID)
		if err != nil {
			return err
		}
		complete = complete && l.RoundComplete(i)
		if found != complete {
			if found {
				return fmt.Errorf("round %s: the database has a snapshot but the log lacks results of this round", r.ID)
			}
			return fmt.Errorf("round %s: the log completes the round but the database has no snapshot", r.ID)
		}
		if !found {
			continue
		}
		want, err := l.StandingsAfter(i)
		if err != nil {
			return err
		}
		if err := compareRows("round "+r.ID, rows, want); err != nil {
			return err
		}
	}
	final, err := db.Standings()
	if err != nil {
		return err
	}
	want, err := l.Final()
	if err != nil {
		return err
	}
	if err := compareRows("final standings", final, want); err != nil {
		return err
	}
	return l.checkRatings(db)
}

// checkRatings compares the ratings of the database's results with the log's: the
// same results must give the same numbers, bit for bit.
func (l *League) checkRatings(db *store.Store) error {
	d, err := export.Load(db)
	if err != nil {
		return err
	}
	want, err := l.Ratings()
	if err != nil {
		return err
	}
	if len(d.Ratings) != len(want) {
		return fmt.Errorf("ratings: the database rates %d players, the log %d", len(d.Ratings), len(want))
	}
	for i := range want {
		if d.Ratings[i] != want[i] {
			return fmt.Errorf("ratings: rank %d is %+v from the database, %+v from the log", i+1, d.Ratings[i], want[i])
		}
	}
	return nil
}

func compareRows(what string, db, log []protocol.StandingsRow) error {
	if len(db) != len(log) {
		return fmt.Errorf("%s: the database ranks %d players, the log %d", what, len(db), len(log))
	}
	for i := range db {
		if db[i] != log[i] {
			return fmt.Errorf("%s: rank %d is %s in the database, %s in the log", what, i+1, describe(db[i]), describe(log[i]))
		}
	}
	return nil
}

func describe(r protocol.StandingsRow) string {
	return fmt.Sprintf("%s (%d pts, %d-%d-%d, %d played)", r.PlayerID, r.Points, r.Wins, r.Draws, r.Losses, r.MatchesPlayed)
}
