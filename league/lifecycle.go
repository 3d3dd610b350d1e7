package league

// The lifecycle: REGISTRATION until the window is over with the minimums met (or the
// player cap is reached, or the admin starts the league), then the schedule is built
// (SCHEDULING) and stored, and the league is ACTIVE until its last round completes
// (COMPLETED). While it is active, settle brings it to rest after every change.

import (
	"fmt"
	"time"

	"github.com/agentleague/agentleague/league/audit"

	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// window owns the registration window: when the first player came in, and the timer
// that tries to close registration once the window is over. It is guarded by engine.mu.
type window struct {
	afterFunc func(d time.Duration, f func()) Timer
	now       func() time.Time
	length    time.Duration
	// close runs on the timer's goroutine once the window is over; it takes engine.mu
	// itself.
	close func()

	firstPlayerAt time.Time
	timer         Timer
}

// arm starts the timer once the first player is in. The engine does not arm it after
// Close.
func (w *window) arm() {
	if w.firstPlayerAt.IsZero() || w.timer != nil {
		return
	}
	wait := w.firstPlayerAt.Add(w.length).Sub(w.now())
	w.timer = w.afterFunc(max(wait, 0), w.close)
}

// over reports whether the window opened and is over at now.
func (w *window) over(now time.Time) bool {
	return !w.firstPlayerAt.IsZero() && !now.Before(w.firstPlayerAt.Add(w.length))
}

// stop stops the timer, if it runs.
func (w *window) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// extend moves an open window on by lost (the length of a storage outage); the caller
// arms it again.
func (w *window) extend(lost time.Duration) {
	if w.firstPlayerAt.IsZero() {
		return
	}
	w.firstPlayerAt = w.firstPlayerAt.Add(lost)
	w.stop()
	w.timer = nil
}

// maybeCloseRegistration closes registration when the rules say so: the window is over
// and the minimums are met, or the player cap is reached.
func (e *engine) maybeCloseRegistration(why string) error {
	if e.state != StateRegistration || e.stop.stopping || !e.agents.meets(e.cfg.Registration) {
		return nil
	}
	full := len(e.agents.players) >= e.cfg.Registration.MaxPlayers
	windowOver := e.window.over(e.opt.Now())
	if !full && !windowOver {
		return nil
	}
	if full {
		why = "max_players reached"
	}
	if err := e.schedulable(); err != nil {
		// A gauntlet waits for its candidates; the next registration tries again.
		e.log.Warn().Err(err).Str("why", why).Msg("registration stays open: the format cannot be scheduled yet")
		return nil
	}
	return e.closeRegistration(why)
}

// schedulable reports why the configured format cannot be scheduled for the players
// registered so far (a gauntlet candidate who has not registered), or nil.
func (e *engine) schedulable() error {
	ids := e.agents.playerIDs()
	return e.cfg.Format().For(len(ids), e.scoring.Win).Schedulable(ids)
}

// closeRegistration fixes the format, stores the rounds it decides at once (all of a
// round robin or gauntlet, the first of a Swiss or knockout), then activates round 1.
func (e *engine) closeRegistration(why string) error {
	ids := e.agents.playerIDs()
	f := e.cfg.Format().For(len(ids), e.scoring.Win)
	next, err := schedule.Next(f, ids, e.cfg.League.Seed, nil)
	if err != nil {
		return fmt.Errorf("build schedule: %w", err)
	}
	rounds := storeRounds(f, next)
	if err := e.store.SaveSchedule(e.leagueID, StateScheduling, e.gameType, e.now(), f, rounds); err != nil {
		return err
	}
	e.state = StateScheduling
	e.format = f
	e.window.stop()
	if err := e.fx.load(rounds, ids, false, f.Tiebreaks, nil); err != nil {
		return err
	}
	e.log.Info().Str("why", why).Str("format", f.Algorithm).Int("players", len(ids)).Int("rounds", len(rounds)).Int("matches", len(e.fx.matches)).Msg("registration closed, schedule built")
	// The schedule is committed: a failed note must not stall the league until a
	// restart. The league goes on; replay will name the missing schedule.
	e.trail.note(audit.EventSchedule, scheduleNote(e, ids, rounds, false))
	if err := e.activate(); err != nil {
		e.outage.retryLater("activate league", err)
	}
	return nil
}

// activate moves SCHEDULING to ACTIVE and settles, which starts the first unfinished
// round. Once ACTIVE is stored, a failed settle is retried, not returned.
func (e *engine) activate() error {
	if err := e.store.SetLeagueStatus(e.leagueID, StateActive); err != nil {
		return fmt.Errorf("activate league: %w", err)
	}
	e.state = StateActive
	if err := e.settle(); err != nil {
		e.outage.retryLater("settle the activated league", err)
	}
	return nil
}

// settle brings an active league to rest after any change, in this order, until nothing
// moves: rounds whose matches are all finished complete (the next one starts, or the
// league completes); the waiting matches of a suspended player are forfeited (which may
// finish the round). Then the waiting matches are offered to referees, and a shutdown
// learns whether its drain is over. It is the only caller of each step, and no step calls
// back into settle.
func (e *engine) settle() error {
	defer e.stop.checkDrained(&e.fx)
	if e.state != StateActive || e.closed {
		return nil
	}
	for {
		if err := e.completeRounds(); err != nil {
			return err
		}
		if e.state != StateActive || e.stop.stopping || !e.forfeitSuspended() {
			break
		}
	}
	e.dispatch()
	return nil
}

// completeRounds completes the active round while all its matches are finished (with its
// standings snapshot, which counts it and the rounds before, even when later rounds have
// started) and starts the next one, or completes the league. When no stored
// round is left, the format decides the next from the results so far (a Swiss or
// knockout round); it is stored in the same transaction that starts it, then announced.
func (e *engine) completeRounds() error {
	for e.state == StateActive {
		done := e.fx.active()
		if done != nil && !roundDone(done) {
			return nil
		}
		next := e.fx.current + 1
		adv := store.Advance{LeagueID: e.leagueID, At: e.now(), Completed: StateCompleted, GameType: e.gameType}
		var settled *standings.Table
		if done != nil {
			var err error
			if settled, err = e.fx.snapshot(done); err != nil {
				return err
			}
			adv.Done = &store.Snapshot{RoundID: done.id, Rows: settled.Rows()}
		}
		if next == len(e.fx.rounds) && done != nil {
			more, err := schedule.Next(e.format, e.agents.playerIDs(), e.cfg.League.Seed, e.fx.played())
			if err != nil {
				return fmt.Errorf("pair round %d: %w", next+1, err)
			}
			adv.Add = storeRounds(e.format, more)
		}
		adv.Rounds = len(e.fx.rounds) + len(adv.Add)
		if next < adv.Rounds {
			r := e.fx.roundAt(next, adv.Add)
			adv.Next = &store.Round{ID: r.ID, Number: r.Number}
		}
		if adv.Next == nil && !e.sprtNoted {
			// Noted before the league completes in the store: a crash between the two
			// notes it again at the restart rather than never.
			if st, ok := schedule.SPRTOf(e.format, e.fx.played()); ok && st.Decision != "" {
				e.sprtNoted = e.trail.note(audit.EventSPRTDecided, map[string]any{"sprt": st, "games": len(e.fx.matches)})
				e.log.Info().Str("decision", st.Decision).Float64("llr", st.LLR).Int("pairs", st.Pairs).Msg("sprt decided")
			}
		}
		if err := e.store.AdvanceRound(adv); err != nil {
			return fmt.Errorf("advance round: %w", err)
		}
		if done != nil {
			done.status, e.fx.settled = store.RoundCompleted, settled
		}
		if err := e.fx.add(adv.Add, nil); err != nil {
			return err
		}
		for _, r := range e.fx.roundsNote(adv.Add) {
			e.trail.note(audit.EventRoundPaired, r)
		}
		if adv.Next == nil {
			e.state = StateCompleted
			e.log.Info().Int("rounds", len(e.fx.rounds)).Msg("league completed")
			e.hub.Publish(events.LeagueCompleted, "", map[string]any{"rounds": len(e.fx.rounds), "standings": e.fx.table.Rows()})
			e.notices.completed(e.agents.all(), e.fx.table.Rows(), len(e.fx.rounds), adv.At)
			return nil
		}
		e.fx.current = next
		r := e.fx.rounds[next]
		r.status = store.RoundActive
		e.log.Info().Str("round_id", r.id).Int("matches", len(r.matches)).Msg("round started")
		e.hub.Publish(events.RoundStarted, "", map[string]any{"round_id": r.id, "round_number": r.number, "matches": len(r.matches), "bye": r.bye})
	}
	return nil
}

// registered counts a new agent in: a new player restarts the standings of everyone
// registered (as a restart counts them) and may start the registration window.
func (e *engine) registered(a *agent, first bool) {
	e.agents.add(a)
	if a.kind == store.KindPlayer {
		e.fx.restart(e.agents.playerIDs(), e.cfg.Ranking.Tiebreaks)
		if first {
			e.window.firstPlayerAt, _ = protocol.ParseTime(a.registeredAt)
			if !e.closed {
				e.window.arm()
			}
		}
	}
	e.hub.Publish(events.AgentRegistered, "", map[string]string{"id": a.id, "kind": a.kind})
}
