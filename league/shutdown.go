package league

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
)

// Meta keys recording a graceful shutdown the league has not resumed from yet.
const (
	metaShutdownAt     = "shutdown_at"
	metaShutdownReason = "shutdown_reason"
)

// DefaultDrain is how long a graceful shutdown lets matches in flight finish.
const DefaultDrain = 5 * time.Second

// errShuttingDown refuses what a League Manager that is shutting down no longer takes.
func errShuttingDown() error {
	return protocol.Errorf(protocol.ReasonShuttingDown, "the League Manager is shutting down")
}

// ShutdownRequests delivers the reason of the first authenticated ADMIN_SHUTDOWN_REQUEST;
// whoever runs the Manager (league serve) then calls Shutdown.
func (m *Manager) ShutdownRequests() <-chan string { return m.shutdownReq }

func (m *Manager) adminShutdown(msg *protocol.Message) (*protocol.Message, error) {
	var p struct {
		Reason string `json:"reason"`
	}
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid shutdown payload")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.authenticateAdmin(&msg.Envelope); err != nil {
		return nil, err
	}
	if !m.shutdownAsked {
		m.shutdownAsked = true
		reason := p.Reason
		if reason == "" {
			reason = "shutdown requested by the admin"
		}
		m.shutdownReq <- reason // buffered, and sent once
		m.log.Info().Str("conversation_id", msg.Envelope.ConversationID).Str("reason", reason).Msg("shutdown requested")
	}
	return m.reply(msg, protocol.AdminShutdownResponse, map[string]string{
		"status": "shutting_down", "league_status": m.state, "message": "the League Manager is shutting down",
	})
}

// Shutdown ends the league gracefully, as the rules in faults.go say: no more
// assignments, LEAGUE_SHUTDOWN to every agent, matches in flight may finish within
// drain (or until ctx ends), then every unfinished match is CANCELLED and the shutdown
// recorded. The HTTP server keeps serving meanwhile; Close comes after.
func (m *Manager) Shutdown(ctx context.Context, reason string, drain time.Duration) error {
	m.mu.Lock()
	if m.stopping || m.closed {
		m.mu.Unlock()
		return errors.New("league manager is already shutting down")
	}
	m.stopping, m.shutdownAsked = true, true
	drained := make(chan struct{})
	m.drained = drained
	m.checkDrained()
	notices, err := m.shutdownNotices(reason)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	m.log.Info().Str("reason", reason).Dur("drain", drain).Int("agents", len(notices)).Msg("shutting down")

	var wg sync.WaitGroup
	for _, n := range notices {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.notify(n.endpoint, n.peer, n.msg)
		}()
	}
	over := make(chan struct{})
	t := m.opt.AfterFunc(drain, func() { close(over) })
	select {
	case <-drained:
	case <-over:
	case <-ctx.Done():
	case <-m.ctx.Done(): // closed meanwhile
	}
	t.Stop()

	m.mu.Lock()
	err = m.cancelUnfinished(reason)
	m.stopped = true
	m.mu.Unlock()
	// The event streams end, so the HTTP server's shutdown does not wait for them.
	m.hub.Close()
	wg.Wait()
	return err
}

type notice struct {
	endpoint, peer string
	msg            *protocol.Message
}

// shutdownNotices builds LEAGUE_SHUTDOWN for every registered agent, with its own
// token (our agents require it once signed_assignments was announced). Callers hold mu.
func (m *Manager) shutdownNotices(reason string) ([]notice, error) {
	var all []*agent
	for _, group := range []map[string]*agent{m.referees, m.players} {
		for _, a := range group {
			all = append(all, a)
		}
	}
	out := make([]notice, 0, len(all))
	for _, a := range sortedAgents(all) {
		msg, err := protocol.NewMessage(protocol.LeagueShutdown, protocol.SenderLeagueManager, map[string]string{"reason": reason, "league_id": m.leagueID})
		if err != nil {
			return nil, fmt.Errorf("build LEAGUE_SHUTDOWN: %w", err)
		}
		msg.Envelope.AuthToken, msg.Envelope.LeagueID = a.token, m.leagueID
		out = append(out, notice{endpoint: a.endpoint, peer: a.sender(), msg: msg})
	}
	return out, nil
}

// checkDrained closes the drain of a shutdown once no match is in flight. Callers hold
// mu.
func (m *Manager) checkDrained() {
	if m.drained == nil {
		return
	}
	if m.current >= 0 {
		for _, mt := range m.rounds[m.current].matches {
			if mt.inFlight() {
				return
			}
		}
	}
	close(m.drained)
	m.drained = nil
}

// cancelUnfinished marks every match without a result CANCELLED and records the
// shutdown in the meta table, unless the league is complete. Callers hold mu.
func (m *Manager) cancelUnfinished(reason string) error {
	if m.state == StateCompleted {
		return nil
	}
	var open []*match
	for _, r := range m.rounds {
		for _, mt := range r.matches {
			if mt.status != MatchCompleted && mt.status != MatchCancelled && mt.status != MatchAbandoned {
				open = append(open, mt)
			}
		}
	}
	now := m.now()
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		for _, mt := range open {
			if _, err := tx.Exec(`UPDATE matches SET status = ? WHERE match_id = ?`, MatchCancelled, mt.id); err != nil {
				return err
			}
		}
		for k, v := range map[string]string{metaShutdownAt: now, metaShutdownReason: reason} {
			if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, k, v); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("cancel unfinished matches: %w", err)
	}
	ids := make([]string, 0, len(open))
	for _, mt := range open {
		mt.status, mt.deadline = MatchCancelled, time.Time{}
		ids = append(ids, mt.id)
	}
	m.log.Info().Str("reason", reason).Int("cancelled", len(ids)).Str("league_status", m.state).Msg("league shut down before completion")
	m.auditNote(audit.EventLeagueShutdown, map[string]any{"reason": reason, "league_status": m.state, "cancelled": ids})
	return nil
}

// resumeAfterShutdown re-opens the matches a graceful shutdown cancelled and forgets the
// shutdown. Callers hold mu.
func (m *Manager) resumeAfterShutdown() error {
	var at, reason string
	err := m.opt.Store.db.QueryRow(`SELECT a.value, r.value FROM meta a, meta r WHERE a.key = ? AND r.key = ?`, metaShutdownAt, metaShutdownReason).Scan(&at, &reason)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("read shutdown record: %w", err)
	}
	var cancelled []*match
	for _, mt := range m.matches {
		if mt.status == MatchCancelled {
			cancelled = append(cancelled, mt)
		}
	}
	if at == "" && len(cancelled) == 0 {
		return nil
	}
	err = m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`UPDATE matches SET status = ? WHERE status = ?`, MatchPending, MatchCancelled); err != nil {
			return err
		}
		_, err := tx.Exec(`DELETE FROM meta WHERE key IN (?, ?)`, metaShutdownAt, metaShutdownReason)
		return err
	})
	if err != nil {
		return fmt.Errorf("resume after shutdown: %w", err)
	}
	for _, mt := range cancelled {
		mt.status = MatchPending
	}
	m.log.Info().Str("shutdown_at", at).Str("shutdown_reason", reason).Int("reopened", len(cancelled)).Msg("league resumed after a graceful shutdown")
	m.auditNote(audit.EventLeagueResumed, map[string]any{"shutdown_at": at, "shutdown_reason": reason, "reopened": len(cancelled)})
	return nil
}
