package replay

import (
	"fmt"

	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// CheckDB compares every round snapshot and the final standings of the database with
// the league rebuilt from the log, and returns the first difference.
func (l *League) CheckDB(db *store.Store) error {
	for i, r := range l.Rounds {
		rows, _, found, err := db.Snapshot(r.ID)
		if err != nil {
			return err
		}
		complete := l.RoundComplete(i)
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
	return compareRows("final standings", final, want)
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
