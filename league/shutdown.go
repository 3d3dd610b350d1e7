package league

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/rs/zerolog"

	"github.com/agentleague/agentleague/protocol"
)

// DefaultDrain is how long a graceful shutdown lets matches in flight finish.
const DefaultDrain = 5 * time.Second

// shutdownState owns the progress of a graceful shutdown: asked once (asked feeds req),
// then stopping (no more assignments), then stopped (unfinished matches cancelled).
// drained is closed once no match is in flight while stopping. It also cancels the
// matches a shutdown leaves unfinished and re-opens them on the next start. Part of the
// engine's state, guarded by engine.mu.
type shutdownState struct {
	store Storage
	log   zerolog.Logger
	trail auditTrail

	asked    bool
	req      chan string
	stopping bool
	stopped  bool
	drained  chan struct{}
}

func newShutdownState(st Storage, log zerolog.Logger, trail auditTrail) shutdownState {
	return shutdownState{store: st, log: log, trail: trail, req: make(chan string, 1)}
}

// ShutdownRequests delivers the reason of the first authenticated ADMIN_SHUTDOWN_REQUEST;
// whoever runs the Manager (league serve) then calls Shutdown.
func (m *Manager) ShutdownRequests() <-chan string { return m.e.stop.req }

func (m *Manager) adminShutdown(msg *protocol.Message) (*protocol.Message, error) {
	var p struct {
		Reason string `json:"reason"`
	}
	if err := msg.Decode(&p); err != nil {
		return nil, refuse(errMalformed, "invalid shutdown payload")
	}
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	if err := e.agents.authenticateAdmin(&msg.Envelope); err != nil {
		return nil, err
	}
	if !e.stop.asked {
		e.stop.asked = true
		reason := p.Reason
		if reason == "" {
			reason = "shutdown requested by the admin"
		}
		e.stop.req <- reason // buffered, and sent once
		m.log.Info().Str("conversation_id", msg.Envelope.ConversationID).Str("reason", reason).Msg("shutdown requested")
	}
	return m.reply(msg, protocol.AdminShutdownResponse, map[string]string{
		"status": "shutting_down", "league_status": e.state, "message": "the League Manager is shutting down",
	})
}

// Shutdown ends the league gracefully, as the rules in faults.go say: no more
// assignments, LEAGUE_SHUTDOWN to every agent, matches in flight may finish within
// drain (or until ctx ends), then every unfinished match is CANCELLED and the shutdown
// recorded. The HTTP server keeps serving meanwhile; Close comes after.
func (m *Manager) Shutdown(ctx context.Context, reason string, drain time.Duration) error {
	m.e.mu.Lock()
	e := m.e
	if e.stop.stopping || e.closed {
		m.e.mu.Unlock()
		return errors.New("league manager is already shutting down")
	}
	e.stop.stopping, e.stop.asked = true, true
	drained := make(chan struct{})
	e.stop.drained = drained
	e.stop.checkDrained(&e.fx)
	type notice struct {
		to  *agent
		msg *protocol.Message
	}
	var notices []notice
	// Every registered agent gets LEAGUE_SHUTDOWN with its own token (our agents require
	// it once signed_assignments was announced).
	for _, a := range e.agents.all() {
		msg, err := e.notices.message(a, nil, protocol.LeagueShutdown, protocol.Shutdown{LeagueID: m.leagueID, Reason: reason})
		if err != nil {
			m.e.mu.Unlock()
			return err
		}
		notices = append(notices, notice{a, msg})
	}
	m.e.mu.Unlock()
	m.log.Info().Str("reason", reason).Dur("drain", drain).Int("agents", len(notices)).Msg("shutting down")

	var wg sync.WaitGroup
	for _, n := range notices {
		wg.Go(func() { e.notices.send(n.to, n.msg) })
	}
	over := make(chan struct{})
	t := e.opt.AfterFunc(drain, func() { close(over) })
	select {
	case <-drained:
	case <-over:
	case <-ctx.Done():
	case <-e.notices.ctx.Done(): // closed meanwhile
	}
	t.Stop()

	m.e.mu.Lock()
	err := e.stop.cancelUnfinished(&e.fx, e.state, reason, e.now())
	e.stop.stopped = true
	m.e.mu.Unlock()
	// The event streams end, so the HTTP server's shutdown does not wait for them.
	m.hub.Close()
	wg.Wait()
	// Every notice is out, through the relay too: its polls end now, so the HTTP
	// server's shutdown does not wait for them.
	m.relay.Close()
	return err
}

// checkDrained closes the drain of a shutdown once no match of fx is in flight.
func (s *shutdownState) checkDrained(fx *fixtures) {
	if s.drained == nil || len(fx.inFlight()) > 0 {
		return
	}
	close(s.drained)
	s.drained = nil
}

// cancelUnfinished marks every match of fx without a result CANCELLED and records the
// shutdown in the database at now, unless the league (in state) is complete.
func (s *shutdownState) cancelUnfinished(fx *fixtures, state, reason, now string) error {
	if state == StateCompleted {
		return nil
	}
	open := fx.where(func(mt *match) bool { return !mt.finished() })
	ids := make([]string, 0, len(open))
	for _, mt := range open {
		ids = append(ids, mt.id)
	}
	if err := s.store.CancelUnfinished(protocol.MatchStateCancelled, ids, now, reason); err != nil {
		return err
	}
	for _, mt := range open {
		mt.status, mt.deadline = protocol.MatchStateCancelled, time.Time{}
	}
	s.log.Info().Str("reason", reason).Int("cancelled", len(ids)).Str("league_status", state).Msg("league shut down before completion")
	s.trail.note(audit.EventLeagueShutdown, map[string]any{"reason": reason, "league_status": state, "cancelled": ids})
	return nil
}

// resume re-opens the matches of fx a graceful shutdown cancelled and forgets the
// shutdown.
func (s *shutdownState) resume(fx *fixtures) error {
	at, reason, err := s.store.ShutdownRecord()
	if err != nil {
		return err
	}
	cancelled := fx.where(func(mt *match) bool { return mt.status == protocol.MatchStateCancelled })
	if at == "" && len(cancelled) == 0 {
		return nil
	}
	if err := s.store.Resume(protocol.MatchStateCancelled, protocol.MatchStatePending); err != nil {
		return err
	}
	for _, mt := range cancelled {
		mt.status = protocol.MatchStatePending
	}
	s.log.Info().Str("shutdown_at", at).Str("shutdown_reason", reason).Int("reopened", len(cancelled)).Msg("league resumed after a graceful shutdown")
	s.trail.note(audit.EventLeagueResumed, map[string]any{"shutdown_at": at, "shutdown_reason": reason, "reopened": len(cancelled)})
	return nil
}
