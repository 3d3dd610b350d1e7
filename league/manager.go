// Package league is the League Manager: registration and auth, the lifecycle state
// machine, scheduling, match assignment, results, standings, persistence and audit.
package league

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
	"github.com/agentleague/agentleague/game"
	"github.com/rs/zerolog"
)

// League lifecycle states.
const (
	StateInit         = "INIT"
	StateRegistration = "REGISTRATION"
	StateScheduling   = "SCHEDULING"
	StateActive       = "ACTIVE"
	StateCompleted    = "COMPLETED"
)

// Match states.
const (
	MatchPending    = "PENDING"
	MatchAssigned   = "ASSIGNED"
	MatchInProgress = "IN_PROGRESS"
	MatchCompleted  = "COMPLETED"
	MatchFailed     = "FAILED"
	MatchCancelled  = "CANCELLED"
	// MatchAbandoned: the match failed retries.max_match_attempts times and is not played
	// again; it has no result and gives no points, and its round completes without it.
	MatchAbandoned = "ABANDONED"
)

// Agent states.
const (
	AgentRegistered = "REGISTERED"
	AgentActive     = "ACTIVE"
	AgentSuspended  = "SUSPENDED"
	AgentShutdown   = "SHUTDOWN"
)

// Options wires a Manager.
type Options struct {
	Config     *config.Config
	Store      *Store
	Audit      *audit.Log
	Client     *protocol.Client
	AdminToken string
	Log        zerolog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// AfterFunc runs f once d has passed on the clock of Now; nil means time.AfterFunc.
	// Every deadline of the League Manager (registration window, leases, result reports,
	// suspensions, the drain of a shutdown) goes through it, so tests drive them with a
	// fake clock.
	AfterFunc func(d time.Duration, f func()) Timer
	// RedispatchDelay is how long a refused assignment waits before it is offered again.
	RedispatchDelay time.Duration
	// NotifyTimeout bounds each best-effort notice (MATCH_CANCELLED, LEAGUE_SHUTDOWN);
	// 0 means 2 s.
	NotifyTimeout time.Duration
	// Games holds the rules the match views re-play moves with; nil means game.Default().
	Games *game.Registry
}

// Timer is a pending call of Options.AfterFunc; *time.Timer is one.
type Timer interface {
	Stop() bool
}

type agent struct {
	id, kind, token, endpoint, status, conversationID string
	games                                             []string
	features                                          []string // extensions it announced at registration
	maxMatches                                        int
	registeredAt                                      string
	violations                                        int
	suspendedUntil                                    time.Time // zero: not suspended, or until an operator lifts it
	leaseUntil                                        time.Time // zero: the referee never sent a heartbeat
	lost                                              bool      // its lease ran out; no matches until it heartbeats again
}

func (a *agent) sender() string { return a.kind + ":" + a.id }

// has reports whether the agent announced feature at registration.
func (a *agent) has(feature string) bool { return slices.Contains(a.features, feature) }

type round struct {
	id, status    string
	number, cycle int
	matches       []*match
	bye           string
}

type match struct {
	id, roundID, referee, status, assignedAt string
	players                                  [2]string
	seed                                     int64
	index                                    int
	result                                   *resultRecord
	previousReferees                         map[string]bool
	refusedBy                                map[string]bool // referees that did not take it
	deadline                                 time.Time       // of its result while ASSIGNED or IN_PROGRESS
	// failures counts the failures that count toward retries.max_match_attempts.
	failures int
	// progress is what its referee last said of it; reminders counts the RESULT_REMINDERs
	// sent since play ended.
	progress  progress
	reminders int
	// cancelling is set while MATCH_CANCELLED is on its way to the referee that lost the
	// match: it is not assigned again before, so it is never played twice at once.
	cancelling bool
	// live holds the steps received in MOVE_EVENTs while the match runs at its current
	// referee; liveMoves counts their moves (at most maxLiveMoves).
	live      []web.Step
	liveMoves int
}

type resultRecord struct {
	outcome map[string]string
	points  map[string]int
}

// Manager is the League Manager's state. Every change is written to the database in one
// transaction and then applied in memory, under mu.
type Manager struct {
	opt      Options
	cfg      *config.Config
	log      zerolog.Logger
	scoring  config.Scoring
	leagueID string

	mu            sync.Mutex
	state         string
	firstPlayerAt time.Time
	referees      map[string]*agent
	players       map[string]*agent
	senders       map[string]*agent // by sender identity
	tokens        map[string]*agent
	rounds        []*round
	matches       map[string]*match
	current       int // index into rounds of the active round, -1 before scheduling
	table         *standings.Table
	updatedAt     string
	windowTimer   Timer
	closed        bool
	limits        *limiters
	stats         map[string]*PlayerStats // by player id

	// wakeTimer calls enforceDeadlines at wakeAt; wakeGen tells a stale call from the
	// current one.
	wakeTimer Timer
	wakeAt    time.Time
	wakeGen   int

	// Graceful shutdown: asked once (shutdownAsked feeds shutdownReq), then stopping (no
	// more assignments), then stopped (unfinished matches cancelled). drained is closed
	// once no match is in flight while stopping.
	shutdownAsked bool
	shutdownReq   chan string
	stopping      bool
	stopped       bool
	drained       chan struct{}

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // outbound calls and timers in flight; each ends with ctx

	games    *game.Registry
	maxSteps int // of the league's game: bounds a legal match's duration
	// external: the league's game has no compiled-in rules (config.RulesExternal); its
	// matches go only to referees that named it, and nothing is re-played.
	external bool
	hub      *events.Hub
	metrics  *metrics
}

// NewManager loads the league from the database, creating it on first start.
func NewManager(opt Options) (*Manager, error) {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.AfterFunc == nil {
		opt.AfterFunc = func(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
	}
	if opt.RedispatchDelay == 0 {
		opt.RedispatchDelay = 500 * time.Millisecond
	}
	if opt.NotifyTimeout == 0 {
		opt.NotifyTimeout = 2 * time.Second
	}
	if opt.Games == nil {
		opt.Games = game.Default()
	}
	cfg := opt.Config
	entry, ok := cfg.Game(cfg.League.GameType)
	if !ok {
		return nil, fmt.Errorf("game %q is not in the game registry", cfg.League.GameType)
	}
	maxSteps := entry.Steps()
	if !entry.External() {
		rules, err := opt.Games.New(cfg.League.GameType, entry.Params)
		if err != nil {
			return nil, fmt.Errorf("rules of %s: %w", cfg.League.GameType, err)
		}
		maxSteps = rules.MaxSteps()
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{
		opt: opt, cfg: cfg, log: opt.Log, scoring: entry.Scoring, leagueID: cfg.League.LeagueID,
		referees: map[string]*agent{}, players: map[string]*agent{}, senders: map[string]*agent{},
		tokens: map[string]*agent{}, matches: map[string]*match{}, current: -1,
		limits: newLimiters(cfg), shutdownReq: make(chan string, 1), stats: map[string]*PlayerStats{},
		ctx: ctx, cancel: cancel, games: opt.Games, maxSteps: maxSteps, external: entry.External(), hub: events.NewHub(eventsKept),
	}
	m.metrics = newMetrics(m)
	if err := m.load(); err != nil {
		cancel()
		return nil, err
	}
	return m, nil
}

func (m *Manager) now() string { return protocol.Now(m.opt.Now()) }

// load reads the whole league into memory, creating the league row if needed.
func (m *Manager) load() error {
	ctx := context.Background()
	db := m.opt.Store.db
	var status, gameType, firstPlayer sql.NullString
	var seed int64
	err := db.QueryRow(`SELECT status, game_type, seed, first_player_at FROM leagues WHERE league_id = ?`, m.leagueID).Scan(&status, &gameType, &seed, &firstPlayer)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		var other int
		if err := db.QueryRow(`SELECT count(*) FROM leagues`).Scan(&other); err != nil {
			return fmt.Errorf("load league: %w", err)
		}
		if other > 0 {
			return fmt.Errorf("database already holds another league; use a new database for %q", m.leagueID)
		}
		cfgJSON, _ := json.Marshal(m.cfg)
		err := m.opt.Store.Tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.Exec(`INSERT INTO leagues (league_id, status, created_at, config, game_type, seed) VALUES (?, ?, ?, ?, ?, ?)`,
				m.leagueID, StateRegistration, m.now(), string(cfgJSON), m.cfg.League.GameType, m.cfg.League.Seed)
			return err
		})
		if err != nil {
			return fmt.Errorf("create league: %w", err)
		}
		m.state = StateRegistration
		m.table = standings.New(nil)
		return nil
	case err != nil:
		return fmt.Errorf("load league: %w", err)
	}
	if gameType.String != m.cfg.League.GameType || seed != m.cfg.League.Seed {
		return fmt.Errorf("database league %q plays %s with seed %d, config says %s with seed %d", m.leagueID, gameType.String, seed, m.cfg.League.GameType, m.cfg.League.Seed)
	}
	m.state = status.String
	if firstPlayer.Valid {
		m.firstPlayerAt, _ = protocol.ParseTime(firstPlayer.String)
	}
	if err := m.loadAgents(db); err != nil {
		return err
	}
	if err := m.loadSchedule(db); err != nil {
		return err
	}
	return m.loadStats(db)
}

func (m *Manager) loadAgents(db *sql.DB) error {
	rows, err := db.Query(`SELECT referee_id, auth_token, status, endpoint_url, game_types, features, max_concurrent_matches, conversation_id, registered_at,
		violations, coalesce(suspended_until, '') FROM referees`)
	if err != nil {
		return fmt.Errorf("load referees: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		a := &agent{kind: "referee"}
		var games, features, until string
		if err := rows.Scan(&a.id, &a.token, &a.status, &a.endpoint, &games, &features, &a.maxMatches, &a.conversationID, &a.registeredAt, &a.violations, &until); err != nil {
			return fmt.Errorf("load referees: %w", err)
		}
		if err := json.Unmarshal([]byte(games), &a.games); err != nil {
			return fmt.Errorf("load referee %s games: %w", a.id, err)
		}
		if err := json.Unmarshal([]byte(features), &a.features); err != nil {
			return fmt.Errorf("load referee %s features: %w", a.id, err)
		}
		if err := a.setSuspendedUntil(until); err != nil {
			return err
		}
		m.addAgent(a)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load referees: %w", err)
	}
	prow, err := db.Query(`SELECT player_id, auth_token, status, endpoint_url, features, conversation_id, registered_at, violations, coalesce(suspended_until, '') FROM players`)
	if err != nil {
		return fmt.Errorf("load players: %w", err)
	}
	defer prow.Close()
	for prow.Next() {
		a := &agent{kind: "player"}
		var features, until string
		if err := prow.Scan(&a.id, &a.token, &a.status, &a.endpoint, &features, &a.conversationID, &a.registeredAt, &a.violations, &until); err != nil {
			return fmt.Errorf("load players: %w", err)
		}
		if err := json.Unmarshal([]byte(features), &a.features); err != nil {
			return fmt.Errorf("load player %s features: %w", a.id, err)
		}
		if err := a.setSuspendedUntil(until); err != nil {
			return err
		}
		m.addAgent(a)
	}
	return prow.Err()
}

// setSuspendedUntil reads a stored suspended_until ("" for none).
func (a *agent) setSuspendedUntil(s string) error {
	if s == "" {
		return nil
	}
	t, err := protocol.ParseTime(s)
	if err != nil {
		return fmt.Errorf("load %s %s: suspended_until: %w", a.kind, a.id, err)
	}
	a.suspendedUntil = t
	return nil
}

func (m *Manager) addAgent(a *agent) {
	if a.kind == "referee" {
		m.referees[a.id] = a
	} else {
		m.players[a.id] = a
	}
	m.senders[a.sender()] = a
	m.tokens[a.token] = a
}

func (m *Manager) loadSchedule(db *sql.DB) error {
	rrows, err := db.Query(`SELECT round_id, round_number, cycle, status FROM rounds ORDER BY round_number`)
	if err != nil {
		return fmt.Errorf("load rounds: %w", err)
	}
	defer rrows.Close()
	byID := map[string]*round{}
	for rrows.Next() {
		r := &round{}
		if err := rrows.Scan(&r.id, &r.number, &r.cycle, &r.status); err != nil {
			return fmt.Errorf("load rounds: %w", err)
		}
		m.rounds = append(m.rounds, r)
		byID[r.id] = r
	}
	if err := rrows.Err(); err != nil {
		return fmt.Errorf("load rounds: %w", err)
	}
	mrows, err := db.Query(`SELECT m.match_id, m.round_id, coalesce(m.referee_id, ''), m.players, m.status, coalesce(m.assigned_at, ''), m.match_seed, m.match_index,
		m.failures, r.outcome, r.points FROM matches m LEFT JOIN match_results r ON r.match_id = m.match_id ORDER BY m.match_index`)
	if err != nil {
		return fmt.Errorf("load matches: %w", err)
	}
	defer mrows.Close()
	for mrows.Next() {
		mt := &match{previousReferees: map[string]bool{}}
		var players string
		var outcome, points sql.NullString
		if err := mrows.Scan(&mt.id, &mt.roundID, &mt.referee, &players, &mt.status, &mt.assignedAt, &mt.seed, &mt.index, &mt.failures, &outcome, &points); err != nil {
			return fmt.Errorf("load matches: %w", err)
		}
		var ps []string
		if err := json.Unmarshal([]byte(players), &ps); err != nil || len(ps) != 2 {
			return fmt.Errorf("load match %s: bad players %q", mt.id, players)
		}
		mt.players = [2]string{ps[0], ps[1]}
		if outcome.Valid {
			rec := &resultRecord{}
			if err := json.Unmarshal([]byte(outcome.String), &rec.outcome); err != nil {
				return fmt.Errorf("load result of %s: %w", mt.id, err)
			}
			if err := json.Unmarshal([]byte(points.String), &rec.points); err != nil {
				return fmt.Errorf("load result of %s: %w", mt.id, err)
			}
			mt.result = rec
		}
		r := byID[mt.roundID]
		if r == nil {
			return fmt.Errorf("load match %s: unknown round %s", mt.id, mt.roundID)
		}
		r.matches = append(r.matches, mt)
		m.matches[mt.id] = mt
	}
	if err := mrows.Err(); err != nil {
		return fmt.Errorf("load matches: %w", err)
	}
	brows, err := db.Query(`SELECT round_id, player_id FROM byes`)
	if err != nil {
		return fmt.Errorf("load byes: %w", err)
	}
	defer brows.Close()
	for brows.Next() {
		var rid, pid string
		if err := brows.Scan(&rid, &pid); err != nil {
			return fmt.Errorf("load byes: %w", err)
		}
		if r := byID[rid]; r != nil {
			r.bye = pid
		}
	}
	for i, r := range m.rounds {
		if r.status == "ACTIVE" {
			m.current = i
		}
	}
	if m.current < 0 && m.state == StateCompleted && len(m.rounds) > 0 {
		m.current = len(m.rounds) - 1
	}
	return m.loadStandings(db)
}

func (m *Manager) loadStandings(db *sql.DB) error {
	ids := make([]string, 0, len(m.players))
	for id := range m.players {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	m.table = standings.New(ids)
	// Rebuild from the results: the live standings table must agree, and a recount
	// is the one source no partial write can corrupt.
	for _, r := range m.rounds {
		for _, mt := range r.matches {
			if mt.result != nil {
				if err := m.table.Apply(mt.result.outcome, mt.result.points); err != nil {
					return fmt.Errorf("recount standings: %w", err)
				}
			}
		}
	}
	var updated sql.NullString
	_ = db.QueryRow(`SELECT max(reported_at) FROM match_results`).Scan(&updated)
	m.updatedAt = updated.String
	return nil
}

// Start resumes whatever the league was doing: arms the registration window, finishes
// scheduling, re-opens the matches a graceful shutdown cancelled, or re-offers matches
// that were in flight when the process stopped. It also arms the deadlines of stored
// suspensions.
func (m *Manager) Start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.resumeAfterShutdown(); err != nil {
		return err
	}
	defer m.armNextDeadline(false)
	switch m.state {
	case StateRegistration:
		m.armWindow()
		return m.maybeCloseRegistration("resume")
	case StateScheduling:
		return m.activate()
	case StateActive:
		if err := m.failInFlight(); err != nil {
			return err
		}
		// advance, not dispatch: the process may have stopped after the last result of
		// a round was stored but before the round was completed (or before round 1).
		return m.advance()
	}
	return nil
}

// failInFlight marks matches that were assigned before a restart FAILED so they are
// assigned again under the same match_id, to another referee when one is free.
func (m *Manager) failInFlight() error {
	var stale []*match
	for _, mt := range m.matches {
		if mt.status == MatchAssigned || mt.status == MatchInProgress {
			stale = append(stale, mt)
		}
	}
	if len(stale) == 0 {
		return nil
	}
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		for _, mt := range stale {
			if _, err := tx.Exec(`UPDATE matches SET status = ? WHERE match_id = ?`, MatchFailed, mt.id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("fail in-flight matches: %w", err)
	}
	for _, mt := range stale {
		mt.status = MatchFailed
		if mt.referee != "" {
			mt.previousReferees[mt.referee] = true
			mt.refusedBy = map[string]bool{mt.referee: true}
		}
		m.log.Warn().Str("match_id", mt.id).Str("referee_id", mt.referee).Msg("match was in flight at restart: failed, to be assigned again")
	}
	return nil
}

// Close stops background work, ends the event streams and waits for calls in flight.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for _, t := range []Timer{m.windowTimer, m.wakeTimer} {
		if t != nil {
			t.Stop()
		}
	}
	m.mu.Unlock()
	m.hub.Close()
	m.cancel()
	m.wg.Wait()
}

// State is the lifecycle state.
func (m *Manager) State() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

// LeagueID is the league's id.
func (m *Manager) LeagueID() string { return m.leagueID }
