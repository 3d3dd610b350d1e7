package replay

import (
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/standings"
)

// ReadMark returns the audit mark the database recorded (line count and last hash, for
// audit.CheckMark; 0, "" when none was recorded).
func ReadMark(db *sql.DB) (int, string, error) {
	var lines, hash string
	err := db.QueryRow(`SELECT value FROM meta WHERE key = ?`, audit.MetaLines).Scan(&lines)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("read audit mark: %w", err)
	}
	if err := db.QueryRow(`SELECT value FROM meta WHERE key = ?`, audit.MetaLastHash).Scan(&hash); err != nil {
		return 0, "", fmt.Errorf("read audit mark: %w", err)
	}
	n, err := strconv.Atoi(lines)
	if err != nil {
		return 0, "", fmt.Errorf("read audit mark: %w", err)
	}
	return n, hash, nil
}

// CheckDB compares every round snapshot and the final standings of the database with
// the league rebuilt from the log, and returns the first difference.
func (l *League) CheckDB(db *sql.DB) error {
	for i, r := range l.Rounds {
		rows, found, err := snapshot(db, r.ID)
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
	final, err := liveStandings(db)
	if err != nil {
		return err
	}
	want, err := l.Final()
	if err != nil {
		return err
	}
	return compareRows("final standings", final, want)
}

func compareRows(what string, db, log []standings.Row) error {
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

func describe(r standings.Row) string {
	return fmt.Sprintf("%s (%d pts, %d-%d-%d, %d played)", r.PlayerID, r.Points, r.Wins, r.Draws, r.Losses, r.MatchesPlayed)
}

func snapshot(db *sql.DB, roundID string) ([]standings.Row, bool, error) {
	var snap string
	err := db.QueryRow(`SELECT snapshot_id FROM standings_snapshots WHERE round_id = ?`, roundID).Scan(&snap)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read snapshot of %s: %w", roundID, err)
	}
	rows, err := db.Query(`SELECT rank, player_id, points, wins, draws, losses, matches_played FROM player_rankings WHERE snapshot_id = ? ORDER BY rank`, snap)
	if err != nil {
		return nil, false, fmt.Errorf("read snapshot of %s: %w", roundID, err)
	}
	defer rows.Close()
	var out []standings.Row
	for rows.Next() {
		var r standings.Row
		if err := rows.Scan(&r.Rank, &r.PlayerID, &r.Points, &r.Wins, &r.Draws, &r.Losses, &r.MatchesPlayed); err != nil {
			return nil, false, err
		}
		out = append(out, r)
	}
	return out, true, rows.Err()
}

func liveStandings(db *sql.DB) ([]standings.Row, error) {
	rows, err := db.Query(`SELECT player_id, points, wins, draws, losses, matches_played FROM standings`)
	if err != nil {
		return nil, fmt.Errorf("read standings: %w", err)
	}
	defer rows.Close()
	var out []standings.Row
	for rows.Next() {
		var r standings.Row
		if err := rows.Scan(&r.PlayerID, &r.Points, &r.Wins, &r.Draws, &r.Losses, &r.MatchesPlayed); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	standings.Sort(out)
	return out, nil
}
