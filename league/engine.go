package league

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/schedule"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// engine makes the league's decisions. Every method runs with mu held (the Manager's
// handlers, timer callbacks and answers of background calls take it first);
// each change is committed to the database, then applied in memory, then published.
type engine struct {
	// Set by newEngine, never changed.
	opt   Options
	cfg   *config.Config
	log   zerolog.Logger
	store Storage
	// hub never blocks; events are published under mu, so their order is the order of
	// the decisions and a view read under mu carries the id of the last event it reflects.
	hub     *events.Hub
	metrics *metrics
	trail   auditTrail
	live    liveView
	notices *notifier
	rules   lifetime
	// leagueID, gameType, params and scoring are the league's; games re-plays its moves.
	leagueID, gameType string
	params             map[string]any
	scoring            protocol.Scoring
	games              *game.Registry
	// external: the league's game has no compiled-in rules (config.RulesExternal); its
	// matches go only to referees that named it, and nothing is re-played.
	external bool

	// mu is the league's one lock: it guards the state below and the Manager's
	// limiters. Whoever calls into the engine (the Manager, the alarm, the
	// registration window, the notifier applying an answer) takes it as e.mu.
	mu     sync.Mutex
	state  string
	window window
	agents roster
	fx     fixtures
	// format is fixed when registration closes (read back on a restart).
	format     schedule.Format
	stats      statsBook
	discipline discipline
	alarm      alarm
	stop       shutdownState
	outage     outage
	// closed is set by Close: no timer is armed and no call started after it.
	closed bool
	// sprtNoted: this process wrote the SPRT's decision to the audit log, which a failed
	// completion, retried, must not write again.
	sprtNoted bool
}

func newEngine(opt Options, hub *events.Hub, mx *metrics) (*engine, error) {
	cfg := opt.Config
	entry, ok := cfg.Game(cfg.League.GameType)
	if !ok {
		return nil, fmt.Errorf("game %q is not in the game registry", cfg.League.GameType)
	}
	maxSteps := entry.Steps()
	var rules game.Game
	if !entry.External() {
		var err error
		if rules, err = opt.Games.New(cfg.League.GameType, entry.Params); err != nil {
			return nil, fmt.Errorf("rules of %s: %w", cfg.League.GameType, err)
		}
		maxSteps = rules.MaxSteps()
	}
	book, err := newOpeningBook(cfg, rules)
	if err != nil {
		return nil, err
	}
	e := &engine{
		opt: opt, cfg: cfg, log: opt.Log, store: opt.Store, hub: hub, metrics: mx, trail: auditTrail{audit: opt.Audit, log: opt.Log},
		rules:    lifetime{cfg: cfg, maxSteps: maxSteps},
		leagueID: cfg.League.LeagueID, gameType: cfg.League.GameType, params: entry.Params, scoring: entry.Scoring,
		games: opt.Games, external: entry.External(),
		agents: newRoster(opt.AdminToken), fx: newFixtures(), stats: statsBook{},
	}
	e.fx.openings = book
	e.stop = newShutdownState(opt.Store, opt.Log, e.trail)
	e.live = liveView{hub: hub, log: opt.Log, games: opt.Games, gameType: e.gameType, params: e.params, external: e.external}
	e.notices = newNotifier(opt, entry, &e.mu)
	e.outage = outage{log: opt.Log, hub: hub, now: opt.Now, arm: e.armDeadline}
	e.discipline = discipline{cfg: cfg, store: opt.Store, log: opt.Log, trail: e.trail, now: opt.Now, agents: &e.agents, suspended: func(a *agent) {
		e.armDeadline(a.suspendedUntil)
		if a.kind == store.KindReferee {
			e.failMatches(e.fx.atReferee(a.id), "referee "+a.id+" is suspended", true)
		}
	}}
	e.window = window{afterFunc: opt.AfterFunc, now: opt.Now, length: cfg.RegistrationWindow(), close: func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.closed {
			return
		}
		if err := e.maybeCloseRegistration("window"); err != nil {
			e.outage.retryLater("close registration", err)
		}
	}}
	e.alarm = alarm{afterFunc: opt.AfterFunc, now: opt.Now, fire: func(gen int) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.wake(gen)
	}}
	return e, nil
}

func (e *engine) now() string { return protocol.Now(e.opt.Now()) }

// load reads the whole league into memory, creating the league row if needed.
func (e *engine) load() error {
	l, found, err := e.store.LoadLeague(e.leagueID)
	if err != nil {
		return err
	}
	if !found {
		cfgJSON, err := json.Marshal(e.cfg)
		if err != nil {
			return fmt.Errorf("create league: %w", err)
		}
		l = store.League{ID: e.leagueID, Status: StateRegistration, GameType: e.gameType, Seed: e.cfg.League.Seed, Config: cfgJSON}
		if err := e.store.CreateLeague(l, e.now()); err != nil {
			return err
		}
		e.state = StateRegistration
		return nil
	}
	if l.GameType != e.gameType || l.Seed != e.cfg.League.Seed {
		return fmt.Errorf("database league %q plays %s with seed %d, config says %s with seed %d", e.leagueID, l.GameType, l.Seed, e.gameType, e.cfg.League.Seed)
	}
	// Each match's opening follows from the openings and the seed: a league keeps the
	// openings it started with, or matches would be played from others than the schedule
	// in the audit log names.
	var started struct{ Openings *config.Openings }
	if err := json.Unmarshal(l.Config, &started); err != nil {
		return fmt.Errorf("database league %q: read its configuration: %w", e.leagueID, err)
	}
	if !started.Openings.SameAs(e.cfg.Openings) {
		return fmt.Errorf("database league %q started with other openings than league.yaml's (book contents, plies, order or game_pairs): a league keeps its openings; use a new database for new ones", e.leagueID)
	}
	e.state = l.Status
	if l.FirstPlayerAt != "" {
		e.window.firstPlayerAt, _ = protocol.ParseTime(l.FirstPlayerAt)
	}
	agents, err := e.store.Agents()
	if err != nil {
		return err
	}
	for _, a := range agents {
		if err := e.agents.load(a); err != nil {
			return err
		}
	}
	rounds, err := e.store.Schedule()
	if err != nil {
		return err
	}
	f, err := e.loadFormat(len(rounds) > 0)
	if err != nil {
		return err
	}
	e.format = f
	// Statistics and the time of the last result are derived from the stored results.
	counted := func(mt *match, sm store.Match, md protocol.GameMetadata) {
		e.fx.updatedAt = max(e.fx.updatedAt, sm.Result.ReportedAt)
		e.stats.count(mt, readFacts(sm.Players, md))
	}
	if err := e.fx.load(rounds, e.agents.playerIDs(), e.state == StateCompleted, f.Tiebreaks, counted); err != nil {
		return err
	}
	if err := e.reconcileAudit(rounds); err != nil {
		// The next decision tries again (auditReady), before anything else is logged.
		e.log.Error().Err(err).Msg("audit log not brought level with the database")
		e.outage.auditSeen = -1
	}
	return nil
}

// loadFormat is the league's format: the stored one, which a configuration of another
// algorithm may not change, else the configured one for the players registered so far.
// What the store does not keep of a format (how rounds overlap) comes from the
// configuration. A database from before formats (scheduled without a stored format)
// holds a round robin ranked the seed's way.
func (e *engine) loadFormat(scheduled bool) (schedule.Format, error) {
	f, found, err := e.store.Format()
	if err != nil {
		return schedule.Format{}, err
	}
	if !found {
		f = e.cfg.Format().For(len(e.agents.players), e.scoring.Win)
		if scheduled {
			f.Algorithm, f.Tiebreaks = schedule.RoundRobin, nil
		}
		return f, nil
	}
	if f.Algorithm != e.cfg.Scheduling.Algorithm {
		return schedule.Format{}, fmt.Errorf("the league in the database is a %s, config says %s: a league keeps the format it started with", f.Algorithm, e.cfg.Scheduling.Algorithm)
	}
	f.OverlapRounds = e.cfg.Scheduling.OverlapRounds
	return f, nil
}

// start resumes the league (Manager.Start). A League Manager whose storage fails comes
// up degraded and resumes once writes succeed, rather than exiting: a supervisor
// restarting it would not free the disk.
func (e *engine) start() error {
	err := e.resume()
	if storageFailure(err) {
		e.outage.resuming = true
		e.outage.retryLater("resume the league", err)
		return nil
	}
	return err
}

// resume is start's work; it may run again after a storage failure.
func (e *engine) resume() error {
	if err := e.stop.resume(&e.fx); err != nil {
		return err
	}
	defer e.armNextDeadline(false)
	switch e.state {
	case StateRegistration:
		if !e.closed {
			e.window.arm()
		}
		return e.maybeCloseRegistration("resume")
	case StateScheduling:
		return e.activate()
	case StateActive:
		if err := e.failInFlight(); err != nil {
			return err
		}
		// The process may have stopped after the last result of a round was stored but
		// before the round was completed (or before round 1): settle completes it.
		return e.settle()
	}
	return nil
}

// failInFlight marks matches that were assigned before a restart FAILED so they are
// assigned again under the same match_id, to another referee when one is free.
func (e *engine) failInFlight() error {
	stale := e.fx.where((*match).inFlight)
	if len(stale) == 0 {
		return nil
	}
	ids := make([]string, len(stale))
	for i, mt := range stale {
		ids[i] = mt.id
	}
	if err := e.store.SetMatchStatus(protocol.MatchStateFailed, ids...); err != nil {
		return fmt.Errorf("fail in-flight matches: %w", err)
	}
	for _, mt := range stale {
		mt.status = protocol.MatchStateFailed
		if mt.referee != "" {
			mt.takenFrom(mt.referee)
		}
		e.log.Warn().Str("match_id", mt.id).Str("referee_id", mt.referee).Msg("match was in flight at restart: failed, to be assigned again")
	}
	return nil
}

// auditTrail records the League Manager's own decisions in the audit log, if there is
// one.
type auditTrail struct {
	audit Auditor
	log   zerolog.Logger
}

// note records one decision and reports whether it was written. A failure is logged:
// the event already happened in the database.
func (t auditTrail) note(kind audit.Event, body map[string]any) bool {
	if t.audit == nil {
		return false
	}
	if err := t.audit.Note(kind, body); err != nil {
		t.log.Error().Err(err).Str("event", string(kind)).Msg("audit note")
		return false
	}
	return true
}
