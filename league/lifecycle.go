package league

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/google/uuid"
)

// armWindow starts the registration window timer once the first player is in.
// Callers hold mu.
func (m *Manager) armWindow() {
	if m.firstPlayerAt.IsZero() || m.windowTimer != nil || m.closed {
		return
	}
	window := time.Duration(m.cfg.Registration.WindowSeconds * float64(time.Second))
	wait := m.firstPlayerAt.Add(window).Sub(m.opt.Now())
	m.windowTimer = m.opt.AfterFunc(max(wait, 0), func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.closed {
			return
		}
		if err := m.maybeCloseRegistration("window"); err != nil {
			m.log.Error().Err(err).Msg("close registration")
		}
	})
}

// windowOver reports whether the registration window has elapsed. Callers hold mu.
func (m *Manager) windowOver() bool {
	if m.firstPlayerAt.IsZero() {
		return false
	}
	window := time.Duration(m.cfg.Registration.WindowSeconds * float64(time.Second))
	return !m.opt.Now().Before(m.firstPlayerAt.Add(window))
}

func (m *Manager) minimumsMet() bool {
	return len(m.players) >= m.cfg.Registration.MinPlayers && len(m.referees) >= m.cfg.Registration.MinReferees
}

// maybeCloseRegistration closes registration when the rules say so: the window is over
// and the minimums are met, or the player cap is reached. Callers hold mu.
func (m *Manager) maybeCloseRegistration(why string) error {
	if m.state != StateRegistration || m.stopping {
		return nil
	}
	full := len(m.players) >= m.cfg.Registration.MaxPlayers
	if !(full || (m.windowOver() && m.minimumsMet())) || !m.minimumsMet() {
		return nil
	}
	if full {
		why = "max_players reached"
	}
	return m.closeRegistration(why)
}

// closeRegistration builds and stores the schedule, then activates round 1.
// Callers hold mu.
func (m *Manager) closeRegistration(why string) error {
	ids := make([]string, 0, len(m.players))
	for id := range m.players {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	sched, err := schedule.Build(ids, m.cfg.Scheduling.Cycles, m.cfg.League.Seed)
	if err != nil {
		return fmt.Errorf("build schedule: %w", err)
	}
	now := m.now()
	gameType := m.cfg.League.GameType
	err = m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE leagues SET status = ?, registration_closed_at = ? WHERE league_id = ?`, StateScheduling, now, m.leagueID); err != nil {
			return err
		}
		for _, r := range sched.Rounds {
			if _, err := tx.Exec(`INSERT INTO rounds (round_id, league_id, round_number, scheduled_at, status, cycle) VALUES (?, ?, ?, ?, 'PENDING', ?)`,
				r.ID, m.leagueID, r.Number, now, r.Cycle); err != nil {
				return err
			}
			for _, mt := range r.Matches {
				players, _ := json.Marshal(mt.Players)
				if _, err := tx.Exec(`INSERT INTO matches (match_id, round_id, game_type, players, status, match_seed, match_index) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					mt.ID, r.ID, gameType, string(players), MatchPending, mt.Seed, mt.Index); err != nil {
					return err
				}
			}
			if r.Bye != "" {
				if _, err := tx.Exec(`INSERT INTO byes (round_id, player_id) VALUES (?, ?)`, r.ID, r.Bye); err != nil {
					return err
				}
			}
		}
		for _, id := range ids {
			if _, err := tx.Exec(`INSERT INTO standings (player_id) VALUES (?)`, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store schedule: %w", err)
	}
	m.state = StateScheduling
	if m.windowTimer != nil {
		m.windowTimer.Stop()
	}
	m.table = standings.New(ids)
	for _, r := range sched.Rounds {
		rr := &round{id: r.ID, number: r.Number, cycle: r.Cycle, status: "PENDING", bye: r.Bye}
		for _, mt := range r.Matches {
			x := &match{id: mt.ID, roundID: r.ID, status: MatchPending, players: mt.Players, seed: mt.Seed, index: mt.Index, previousReferees: map[string]bool{}}
			rr.matches = append(rr.matches, x)
			m.matches[x.id] = x
		}
		m.rounds = append(m.rounds, rr)
	}
	m.log.Info().Str("why", why).Int("players", len(ids)).Int("rounds", len(sched.Rounds)).Int("matches", sched.TotalMatches()).Msg("registration closed, schedule built")
	if m.opt.Audit != nil {
		if err := m.opt.Audit.Note(audit.EventSchedule, scheduleNote(m.leagueID, gameType, m.cfg.League.Seed, ids, sched)); err != nil {
			// The schedule is committed: stopping here would stall the league until a
			// restart. The league goes on; replay will name the missing schedule.
			m.log.Error().Err(err).Msg("audit schedule")
		}
	}
	return m.activate()
}

func scheduleNote(leagueID, gameType string, seed int64, players []string, s schedule.Schedule) map[string]any {
	rounds := make([]map[string]any, 0, len(s.Rounds))
	for _, r := range s.Rounds {
		ms := make([]map[string]any, 0, len(r.Matches))
		for _, mt := range r.Matches {
			ms = append(ms, map[string]any{"match_id": mt.ID, "players": mt.Players, "match_seed": mt.Seed})
		}
		rounds = append(rounds, map[string]any{"round_id": r.ID, "round_number": r.Number, "cycle": r.Cycle, "bye": r.Bye, "matches": ms})
	}
	return map[string]any{"league_id": leagueID, "game_type": gameType, "seed": seed, "players": players, "rounds": rounds}
}

// activate moves SCHEDULING to ACTIVE with the first unfinished round. Callers hold mu.
func (m *Manager) activate() error {
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`UPDATE leagues SET status = ? WHERE league_id = ?`, StateActive, m.leagueID)
		return err
	})
	if err != nil {
		return fmt.Errorf("activate league: %w", err)
	}
	m.state = StateActive
	return m.advance()
}

// advance completes finished rounds (snapshot) and starts the next one, or completes
// the league, then offers pending matches to referees. Callers hold mu.
func (m *Manager) advance() error {
	for {
		if m.current >= 0 && !m.roundDone(m.rounds[m.current]) {
			break
		}
		next := m.current + 1
		err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
			if m.current >= 0 {
				if err := m.completeRound(tx, m.rounds[m.current]); err != nil {
					return err
				}
			}
			if next >= len(m.rounds) {
				_, err := tx.Exec(`UPDATE leagues SET status = ?, completed_at = ?, current_round = ? WHERE league_id = ?`, StateCompleted, m.now(), len(m.rounds), m.leagueID)
				return err
			}
			if _, err := tx.Exec(`UPDATE rounds SET status = 'ACTIVE', started_at = ? WHERE round_id = ?`, m.now(), m.rounds[next].id); err != nil {
				return err
			}
			_, err := tx.Exec(`UPDATE leagues SET current_round = ? WHERE league_id = ?`, m.rounds[next].number, m.leagueID)
			return err
		})
		if err != nil {
			return fmt.Errorf("advance round: %w", err)
		}
		if m.current >= 0 {
			m.rounds[m.current].status = "COMPLETED"
		}
		if next >= len(m.rounds) {
			m.state = StateCompleted
			m.log.Info().Int("rounds", len(m.rounds)).Msg("league completed")
			m.publish(events.LeagueCompleted, "", map[string]any{"rounds": len(m.rounds), "standings": m.table.Rows()})
			return nil
		}
		m.current = next
		r := m.rounds[next]
		r.status = "ACTIVE"
		m.log.Info().Str("round_id", r.id).Int("matches", len(r.matches)).Msg("round started")
		m.publish(events.RoundStarted, "", map[string]any{"round_id": r.id, "round_number": r.number, "matches": len(r.matches), "bye": r.bye})
	}
	m.dispatch()
	return nil
}

func (m *Manager) roundDone(r *round) bool {
	for _, mt := range r.matches {
		if mt.status != MatchCompleted && mt.status != MatchCancelled && mt.status != MatchAbandoned {
			return false
		}
	}
	return true
}

// completeRound stores the immutable standings snapshot of a finished round.
func (m *Manager) completeRound(tx *sql.Tx, r *round) error {
	snap := "snapshot-" + uuid.NewString()
	now := m.now()
	if _, err := tx.Exec(`UPDATE rounds SET status = 'COMPLETED', completed_at = ? WHERE round_id = ?`, now, r.id); err != nil {
		return err
	}
	if _, err := tx.Exec(`INSERT INTO standings_snapshots (snapshot_id, league_id, round_id, computed_at) VALUES (?, ?, ?, ?)`, snap, m.leagueID, r.id, now); err != nil {
		return err
	}
	stmt, err := tx.Prepare(`INSERT INTO player_rankings (snapshot_id, player_id, rank, points, wins, draws, losses, matches_played) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, row := range m.table.Rows() {
		if _, err := stmt.Exec(snap, row.PlayerID, row.Rank, row.Points, row.Wins, row.Draws, row.Losses, row.MatchesPlayed); err != nil {
			return err
		}
	}
	return nil
}
