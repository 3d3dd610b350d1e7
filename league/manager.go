// Package league is the League Manager. It is split by reason to change:
//
//   - Manager (manager.go, handlers.go, results.go, view.go): the protocol face. It
//     decodes, authenticates and rate-limits each message, asks the engine, and answers.
//     The league refuses in its own words (refusals.go); the edge (edge.go) alone maps
//     each refusal to its wire error.
//   - engine (engine.go, lifecycle.go, dispatch.go, deadlines.go, discipline.go,
//     shutdown.go): the league's decisions. One settle loop brings the league to rest
//     after every change: forfeits, round completion, then assignment, none of which
//     calls back into another.
//   - The parts the engine is made of, each owning its state: roster (agents and auth),
//     fixtures (schedule, matches, live standings), lifetime (how long a match may run),
//     discipline (violations and suspensions), window (the registration window), alarm
//     (the one deadline timer), outage (storage failures and the decisions kept for
//     later), shutdownState (a graceful shutdown), liveView (the moves shown live),
//     notifier (outbound calls and the messages they carry), auditTrail (the engine's
//     audit notes); limiters (rate limits) and metrics are the Manager's.
//   - Storage (league/store) holds all SQL; the audit log is its own package.
//
// Ownership: the league has one lock, engine.mu. It guards the engine's state (roster,
// fixtures, statistics, alarm, dispatch, discipline, shutdown and outage bookkeeping)
// and the Manager's limiters; every locker names it mu. Each inbound message runs on the
// HTTP server's goroutine and holds mu for its whole decision, commit included, so a
// change is written to the database and then applied in memory as one step. Timer
// callbacks (registration window, alarm) and the answers of background calls take mu
// the same way. Background calls (assignments, notices, reminders) are owned by
// the notifier: they end with Close, which waits for them.
package league

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/relay"
	"github.com/agentleague/agentleague/league/schedule"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Storage is the League Manager's database: named operations, each one transaction.
// league/store implements it.
type Storage interface {
	LoadLeague(id string) (store.League, bool, error)
	CreateLeague(l store.League, createdAt string) error
	SetLeagueStatus(leagueID, status string) error
	Agents() ([]store.Agent, error)
	AddAgent(leagueID string, a store.Agent, firstPlayer bool) error
	SetAgentStatus(kind, id, status string) error
	ChangeAgent(c store.AgentChange) error
	SaveSchedule(leagueID, status, gameType, at string, format schedule.Format, rounds []store.Round) error
	Format() (schedule.Format, bool, error)
	Schedule() ([]store.Round, error)
	AdvanceRound(a store.Advance) error
	Snapshot(roundID string) ([]protocol.StandingsRow, string, bool, error)
	AssignMatch(matchID, refereeID, status, at string) error
	SetMatchStatus(status string, matchIDs ...string) error
	FailMatches(fails []store.Failure, counted bool) error
	RecordResult(matchID, status string, r store.Result, changes []store.AgentChange) error
	GameMetadata(matchID string) (json.RawMessage, error)
	CancelUnfinished(status string, matchIDs []string, at, reason string) error
	ShutdownRecord() (at, reason string, err error)
	Resume(from, to string) error
	// Health is nil while the last transaction committed, else its storage failure;
	// Probe makes a write to learn whether writes succeed again; Failures counts the
	// transactions a storage failure rolled back.
	Health() error
	Probe() error
	Failures() int64
}

// Options wires a Manager.
type Options struct {
	Config     *config.Config
	Store      Storage
	Audit      Auditor
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
	// Insecure accepts agents whose endpoint is plain http on a host that is not
	// loopback (league serve --insecure); without it their registration is refused with
	// INSECURE_ENDPOINT, since their tokens would cross the network in clear.
	Insecure bool
	// PublicURL is the League Manager's /mcp endpoint as agents and referees reach it:
	// the relay endpoints of outbound agents are under it. Nil turns the relay off, and
	// an outbound registration is refused.
	PublicURL func() string
}

// Auditor records the League Manager's own decisions in the audit log; *audit.Log is
// one.
type Auditor interface {
	Note(kind audit.Event, body any) error
}

// Timer is a pending call of Options.AfterFunc; *time.Timer is one.
type Timer interface {
	Stop() bool
}

// Manager is the League Manager: it answers every message and owns the engine.
type Manager struct {
	leagueID string
	log      zerolog.Logger
	metrics  *metrics
	hub      *events.Hub
	insecure bool
	// relay holds the requests of outbound agents; publicURL is Options.PublicURL.
	relay     *relay.Hub
	publicURL func() string

	e *engine
	// limits is guarded by e.mu.
	limits *limiters
	// ratings caches the live view's ratings; it has a lock of its own, never taken
	// while e.mu is held.
	ratings ratingsCache
	// ratingsWithoutForfeits caches the ratings without the games decided by a technical
	// termination.
	ratingsWithoutForfeits ratingsCache
	// arena caches the state of an arena.
	arena arenaCache
	// auditCheck is set while a check after a failed audit append is armed.
	auditCheck atomic.Bool
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
	m := &Manager{leagueID: opt.Config.League.LeagueID, log: opt.Log, hub: events.NewHub(eventsKept), limits: newLimiters(opt.Config), insecure: opt.Insecure, publicURL: opt.PublicURL}
	m.metrics = newMetrics(m)
	e, err := newEngine(opt, m.hub, m.metrics)
	if err != nil {
		return nil, err
	}
	m.e = e
	m.relay = relay.NewHub(relayAgents{e}, m.metrics.labelled(), opt.Log)
	if lg, ok := opt.Audit.(auditHealth); ok {
		lg.OnFailure(m.auditFailed)
	}
	if err := e.load(); err != nil {
		e.notices.close()
		return nil, err
	}
	return m, nil
}

// Start resumes whatever the league was doing: arms the registration window, finishes
// scheduling, re-opens the matches a graceful shutdown cancelled, or re-offers matches
// that were in flight when the process stopped. It also arms the deadlines of stored
// suspensions.
func (m *Manager) Start() error {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	return m.e.start()
}

// Close stops background work, ends the event streams and waits for calls in flight. A
// ratings computation under way in the background is not waited for: it runs to its end
// and its result is dropped.
func (m *Manager) Close() {
	e := m.e
	e.mu.Lock()
	e.closed = true
	e.window.stop()
	e.alarm.stop()
	e.mu.Unlock()
	m.hub.Close()
	m.relay.Close()
	m.ratings.close()
	m.ratingsWithoutForfeits.close()
	// Without mu: the calls in flight take it to apply their answers.
	e.notices.close()
}

// State is the lifecycle state.
func (m *Manager) State() string {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	return m.e.state
}

// LeagueID is the league's id.
func (m *Manager) LeagueID() string { return m.leagueID }

// reply builds an answer carrying the league id.
func (m *Manager) reply(msg *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := msg.Reply(messageType, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, fmt.Errorf("answer %s: %w", msg.Envelope.MessageType, err)
	}
	out.Envelope.LeagueID = m.leagueID
	return out, nil
}

// matchReply is reply for an answer about a match, naming it in the envelope.
func (m *Manager) matchReply(msg *protocol.Message, messageType string, mt *match, payload any) (*protocol.Message, error) {
	out, err := m.reply(msg, messageType, payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.MatchID, out.Envelope.RoundID = mt.id, mt.roundID
	return out, nil
}
