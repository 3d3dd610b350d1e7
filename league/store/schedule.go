package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// Round statuses.
const (
	RoundPending   = "PENDING"
	RoundActive    = "ACTIVE"
	RoundCompleted = "COMPLETED"
)

// SaveSchedule stores the rounds known when registration closes (every round of a round
// robin, the first of a Swiss) and the league's format, with the league in status
// scheduling.
func (s *Store) SaveSchedule(leagueID, status, gameType, at string, format schedule.Format, rounds []Round) error {
	raw, err := json.Marshal(format)
	if err != nil {
		return fmt.Errorf("store the format: %w", err)
	}
	return s.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE leagues SET status = ?, registration_closed_at = ? WHERE league_id = ?`, status, at, leagueID); err != nil {
			return fmt.Errorf("store schedule: %w", err)
		}
		if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?)`, metaFormat, string(raw)); err != nil {
			return fmt.Errorf("store the format: %w", err)
		}
		return insertRounds(tx, leagueID, gameType, at, rounds)
	})
}

// insertRounds stores new rounds with their matches and byes.
func insertRounds(tx *sql.Tx, leagueID, gameType, at string, rounds []Round) error {
	for _, r := range rounds {
		if _, err := tx.Exec(`INSERT INTO rounds (round_id, league_id, round_number, scheduled_at, status, cycle) VALUES (?, ?, ?, ?, ?, ?)`,
			r.ID, leagueID, r.Number, at, r.Status, r.Cycle); err != nil {
			return fmt.Errorf("store round %s: %w", r.ID, err)
		}
		for _, m := range r.Matches {
			players, _ := json.Marshal(m.Players)
			if _, err := tx.Exec(`INSERT INTO matches (match_id, round_id, game_type, players, status, match_seed, match_index) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				m.ID, r.ID, gameType, string(players), m.Status, m.Seed, m.Index); err != nil {
				return fmt.Errorf("store match %s: %w", m.ID, err)
			}
		}
		if r.Bye != "" {
			if _, err := tx.Exec(`INSERT INTO byes (round_id, player_id, points) VALUES (?, ?, ?)`, r.ID, r.Bye, r.ByePoints); err != nil {
				return fmt.Errorf("store bye of %s: %w", r.ID, err)
			}
		}
	}
	return nil
}

// Schedule reads every round in order with its matches, their results and its bye.
func (s *Store) Schedule() ([]Round, error) {
	rrows, err := s.db.Query(`SELECT round_id, round_number, cycle, status FROM rounds ORDER BY round_number`)
	if err != nil {
		return nil, fmt.Errorf("load rounds: %w", err)
	}
	defer rrows.Close()
	var rounds []Round
	byID := map[string]int{}
	for rrows.Next() {
		var r Round
		if err := rrows.Scan(&r.ID, &r.Number, &r.Cycle, &r.Status); err != nil {
			return nil, fmt.Errorf("load rounds: %w", err)
		}
		byID[r.ID] = len(rounds)
		rounds = append(rounds, r)
	}
	if err := rrows.Err(); err != nil {
		return nil, fmt.Errorf("load rounds: %w", err)
	}
	mrows, err := s.db.Query(`SELECT m.match_id, m.round_id, coalesce(m.referee_id, ''), m.players, m.status, coalesce(m.assigned_at, ''), m.match_seed, m.match_index,
		m.failures, r.outcome, r.points, coalesce(r.game_metadata, ''), coalesce(r.referee_id, ''), coalesce(r.reported_at, '')
		FROM matches m LEFT JOIN match_results r ON r.match_id = m.match_id ORDER BY m.match_index`)
	if err != nil {
		return nil, fmt.Errorf("load matches: %w", err)
	}
	defer mrows.Close()
	for mrows.Next() {
		var m Match
		var players, meta, referee, reportedAt string
		var outcome, points sql.NullString
		if err := mrows.Scan(&m.ID, &m.RoundID, &m.Referee, &players, &m.Status, &m.AssignedAt, &m.Seed, &m.Index, &m.Failures,
			&outcome, &points, &meta, &referee, &reportedAt); err != nil {
			return nil, fmt.Errorf("load matches: %w", err)
		}
		var ps []string
		if err := json.Unmarshal([]byte(players), &ps); err != nil || len(ps) != 2 {
			return nil, fmt.Errorf("load match %s: bad players %q", m.ID, players)
		}
		m.Players = [2]string{ps[0], ps[1]}
		if outcome.Valid {
			res := &Result{Referee: referee, ReportedAt: reportedAt}
			if meta != "" {
				res.Metadata = json.RawMessage(meta)
			}
			if err := json.Unmarshal([]byte(outcome.String), &res.Outcome); err != nil {
				return nil, fmt.Errorf("load result of %s: %w", m.ID, err)
			}
			if err := json.Unmarshal([]byte(points.String), &res.Points); err != nil {
				return nil, fmt.Errorf("load result of %s: %w", m.ID, err)
			}
			m.Result = res
		}
		i, ok := byID[m.RoundID]
		if !ok {
			return nil, fmt.Errorf("load match %s: unknown round %s", m.ID, m.RoundID)
		}
		rounds[i].Matches = append(rounds[i].Matches, m)
	}
	if err := mrows.Err(); err != nil {
		return nil, fmt.Errorf("load matches: %w", err)
	}
	brows, err := s.db.Query(`SELECT round_id, player_id, points FROM byes`)
	if err != nil {
		return nil, fmt.Errorf("load byes: %w", err)
	}
	defer brows.Close()
	for brows.Next() {
		var rid, pid string
		var points int
		if err := brows.Scan(&rid, &pid, &points); err != nil {
			return nil, fmt.Errorf("load byes: %w", err)
		}
		if i, ok := byID[rid]; ok {
			rounds[i].Bye, rounds[i].ByePoints = pid, points
		}
	}
	if err := brows.Err(); err != nil {
		return nil, fmt.Errorf("load byes: %w", err)
	}
	return rounds, nil
}

// Advance is one step of the schedule: the active round completes with its standings
// snapshot, rounds decided only now are added, and the next round starts or, without
// one, the league completes.
type Advance struct {
	LeagueID, At string
	// Done is the round that completes, nil before the first round.
	Done *Snapshot
	// Add are new rounds (of GameType) stored before Next starts: a Swiss or knockout
	// round paired from the results so far.
	Add      []Round
	GameType string
	// Next is the round that starts; nil completes the league with status Completed
	// after Rounds rounds.
	Next      *Round
	Completed string
	Rounds    int
}

// Snapshot is the immutable standings of a completed round.
type Snapshot struct {
	RoundID string
	Rows    []protocol.StandingsRow
}

// AdvanceRound stores one step of the schedule.
func (s *Store) AdvanceRound(a Advance) error {
	return s.tx(func(tx *sql.Tx) error {
		if a.Done != nil {
			if err := completeRound(tx, a.LeagueID, a.At, a.Done); err != nil {
				return fmt.Errorf("complete round %s: %w", a.Done.RoundID, err)
			}
		}
		if err := insertRounds(tx, a.LeagueID, a.GameType, a.At, a.Add); err != nil {
			return err
		}
		if a.Next == nil {
			if _, err := tx.Exec(`UPDATE leagues SET status = ?, completed_at = ?, current_round = ? WHERE league_id = ?`, a.Completed, a.At, a.Rounds, a.LeagueID); err != nil {
				return fmt.Errorf("complete league: %w", err)
			}
			return nil
		}
		if _, err := tx.Exec(`UPDATE rounds SET status = ?, started_at = ? WHERE round_id = ?`, RoundActive, a.At, a.Next.ID); err != nil {
			return fmt.Errorf("start round %s: %w", a.Next.ID, err)
		}
		if _, err := tx.Exec(`UPDATE leagues SET current_round = ? WHERE league_id = ?`, a.Next.Number, a.LeagueID); err != nil {
			return fmt.Errorf("start round %s: %w", a.Next.ID, err)
		}
		return nil
	})
}

func completeRound(tx *sql.Tx, leagueID, at string, snap *Snapshot) error {
	id := "snapshot-" + uuid.NewString()
	if _, err := tx.Exec(`UPDATE rounds SET status = ?, completed_at = ? WHERE round_id = ?`, RoundCompleted, at, snap.RoundID); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO standings_snapshots (snapshot_id, league_id, round_id, computed_at) VALUES (?, ?, ?, ?)`, id, leagueID, snap.RoundID, at); err != nil {
		return err
	}
	stmt, err := tx.Prepare(`INSERT INTO player_rankings (snapshot_id, player_id, rank, points, wins, draws, losses, matches_played) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, row := range snap.Rows {
		if _, err := stmt.Exec(id, row.PlayerID, row.Rank, row.Points, row.Wins, row.Draws, row.Losses, row.MatchesPlayed); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot reads the standings snapshot of a completed round; found is false when the
// round has none (unknown or not completed).
func (s *Store) Snapshot(roundID string) (rows []protocol.StandingsRow, computedAt string, found bool, err error) {
	var snap string
	err = s.db.QueryRow(`SELECT snapshot_id, computed_at FROM standings_snapshots WHERE round_id = ?`, roundID).Scan(&snap, &computedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("read snapshot of %s: %w", roundID, err)
	}
	q, err := s.db.Query(`SELECT rank, player_id, points, wins, draws, losses, matches_played FROM player_rankings WHERE snapshot_id = ? ORDER BY rank`, snap)
	if err != nil {
		return nil, "", false, fmt.Errorf("read rankings of %s: %w", roundID, err)
	}
	defer q.Close()
	rows = []protocol.StandingsRow{}
	for q.Next() {
		var r protocol.StandingsRow
		if err := q.Scan(&r.Rank, &r.PlayerID, &r.Points, &r.Wins, &r.Draws, &r.Losses, &r.MatchesPlayed); err != nil {
			return nil, "", false, fmt.Errorf("read rankings of %s: %w", roundID, err)
		}
		rows = append(rows, r)
	}
	if err := q.Err(); err != nil {
		return nil, "", false, fmt.Errorf("read rankings of %s: %w", roundID, err)
	}
	return rows, computedAt, true, nil
}

// AssignMatch records that a match goes to a referee.
func (s *Store) AssignMatch(matchID, refereeID, status, at string) error {
	return s.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE matches SET status = ?, referee_id = ?, assigned_at = ?, assignments = assignments + 1 WHERE match_id = ?`, status, refereeID, at, matchID); err != nil {
			return fmt.Errorf("assign %s: %w", matchID, err)
		}
		return nil
	})
}

// SetMatchStatus changes the status of matches.
func (s *Store) SetMatchStatus(status string, matchIDs ...string) error {
	return s.tx(func(tx *sql.Tx) error { return setMatchStatus(tx, status, matchIDs) })
}

func setMatchStatus(tx *sql.Tx, status string, matchIDs []string) error {
	for _, id := range matchIDs {
		if _, err := tx.Exec(`UPDATE matches SET status = ? WHERE match_id = ?`, status, id); err != nil {
			return fmt.Errorf("set status of %s: %w", id, err)
		}
	}
	return nil
}

// Failure is a match taken from its referee, with its new status.
type Failure struct {
	MatchID, Status string
}

// FailMatches stores failures; counted ones add to the match's failures.
func (s *Store) FailMatches(fails []Failure, counted bool) error {
	inc := 0
	if counted {
		inc = 1
	}
	return s.tx(func(tx *sql.Tx) error {
		for _, f := range fails {
			if _, err := tx.Exec(`UPDATE matches SET status = ?, failures = failures + ? WHERE match_id = ?`, f.Status, inc, f.MatchID); err != nil {
				return fmt.Errorf("fail %s: %w", f.MatchID, err)
			}
		}
		return nil
	})
}

// RecordResult stores a match's result, its new status and the changes of its players'
// violations together.
func (s *Store) RecordResult(matchID, status string, r Result, changes []AgentChange) error {
	outcome, err := json.Marshal(r.Outcome)
	if err != nil {
		return fmt.Errorf("store result of %s: %w", matchID, err)
	}
	points, err := json.Marshal(r.Points)
	if err != nil {
		return fmt.Errorf("store result of %s: %w", matchID, err)
	}
	meta := "{}"
	if len(r.Metadata) > 0 {
		meta = string(r.Metadata)
	}
	var referee any
	if r.Referee != "" {
		referee = r.Referee
	}
	return s.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO match_results (result_id, match_id, outcome, points, game_metadata, reported_at, referee_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			"result-"+uuid.NewString(), matchID, string(outcome), string(points), meta, r.ReportedAt, referee); err != nil {
			return fmt.Errorf("store result of %s: %w", matchID, err)
		}
		for _, c := range changes {
			if err := changeAgent(tx, c); err != nil {
				return err
			}
		}
		return setMatchStatus(tx, status, []string{matchID})
	})
}

// GameMetadata reads the game_metadata of a match's stored result.
func (s *Store) GameMetadata(matchID string) (json.RawMessage, error) {
	var meta sql.NullString
	if err := s.db.QueryRow(`SELECT game_metadata FROM match_results WHERE match_id = ?`, matchID).Scan(&meta); err != nil {
		return nil, fmt.Errorf("read result of %s: %w", matchID, err)
	}
	if !meta.Valid || meta.String == "" {
		return nil, nil
	}
	return json.RawMessage(meta.String), nil
}

// CancelUnfinished marks matches cancelled and records a graceful shutdown at at with
// reason.
func (s *Store) CancelUnfinished(status string, matchIDs []string, at, reason string) error {
	return s.tx(func(tx *sql.Tx) error {
		if err := setMatchStatus(tx, status, matchIDs); err != nil {
			return err
		}
		for _, kv := range [][2]string{{metaShutdownAt, at}, {metaShutdownReason, reason}} {
			if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, kv[0], kv[1]); err != nil {
				return fmt.Errorf("record shutdown: %w", err)
			}
		}
		return nil
	})
}

// Resume sets the matches of status from back to status to and forgets the shutdown
// record.
func (s *Store) Resume(from, to string) error {
	return s.tx(func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE matches SET status = ? WHERE status = ?`, to, from); err != nil {
			return fmt.Errorf("resume matches: %w", err)
		}
		if _, err := tx.Exec(`DELETE FROM meta WHERE key IN (?, ?)`, metaShutdownAt, metaShutdownReason); err != nil {
			return fmt.Errorf("forget shutdown: %w", err)
		}
		return nil
	})
}
