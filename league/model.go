package league

import (
	"maps"
	"slices"
	"time"

	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
)

// League lifecycle states.
const (
	StateRegistration = "REGISTRATION"
	StateScheduling   = "SCHEDULING"
	StateActive       = "ACTIVE"
	StateCompleted    = "COMPLETED"
)

// Match states are the protocol's MatchState* values (MATCH_INFO reports them).

// Agent states.
const (
	AgentRegistered = "REGISTERED"
	AgentActive     = "ACTIVE"
	AgentSuspended  = "SUSPENDED"
	AgentShutdown   = "SHUTDOWN"
)

// agent is a registered referee or player as the League Manager keeps it in memory.
type agent struct {
	id, kind, token, endpoint, status, conversationID string
	games                                             []string
	features                                          []string // extensions it announced at registration
	maxMatches                                        int
	registeredAt                                      string
	violations                                        int
	suspendedUntil                                    time.Time           // zero: not suspended, or until an operator lifts it
	leaseUntil                                        time.Time           // zero: the referee never sent a heartbeat
	lost                                              bool                // its lease ran out; no matches until it heartbeats again
	card                                              *protocol.AgentCard // a player's agent card, nil if none
}

func (a *agent) sender() string { return a.kind + ":" + a.id }

// has reports whether the agent announced feature at registration.
func (a *agent) has(feature string) bool { return slices.Contains(a.features, feature) }

// record is the agent as the database stores it.
func (a *agent) record() store.Agent {
	return store.Agent{Kind: a.kind, ID: a.id, Token: a.token, Status: a.status, Endpoint: a.endpoint, ConversationID: a.conversationID,
		RegisteredAt: a.registeredAt, Games: a.games, Features: a.features, MaxMatches: a.maxMatches, Violations: a.violations, AgentCard: a.card}
}

type round struct {
	id, status    string
	number, cycle int
	matches       []*match
	bye           string
	byePoints     int // what the bye scores
}

type match struct {
	id, roundID, referee, status, assignedAt string
	players                                  [2]string
	seed                                     int64
	// opening is where the match starts (league.yaml openings); nil: the game's start.
	opening          *protocol.Opening
	index            int
	order            int // position in the whole schedule
	result           *resultRecord
	previousReferees map[string]bool
	refusedBy        map[string]bool // referees that did not take it
	deadline         time.Time       // of its result while ASSIGNED or IN_PROGRESS
	// failures counts the failures that count toward retries.max_match_attempts.
	failures int
	// progress is what its referee last said of it; reminders counts the RESULT_REMINDERs
	// sent since play ended.
	progress  progress
	reminders int
	// cancelling is set while MATCH_CANCELLED is on its way to the referee that lost the
	// match: it is not assigned again before, so it is never played twice at once.
	cancelling bool
	// offerAfter: a match its referee did not take is not offered again to a referee
	// that did not take it (refusedBy) before then (Options.RedispatchDelay later); an
	// idle other referee may take it at once. The alarm ends the pause.
	offerAfter time.Time
	// notTaken is the refusal (or failed delivery) of its assignment while going back to
	// the pool could not be stored: retryDecisions applies it.
	notTaken *notTaken
	// live holds the steps received in MOVE_EVENTs while the match runs at its current
	// referee; liveMoves counts their moves (at most maxLiveMoves).
	live      []web.Step
	liveMoves int
}

// inFlight reports whether a match waits for its referee.
func (mt *match) inFlight() bool {
	return mt.status == protocol.MatchStateAssigned || mt.status == protocol.MatchStateInProgress
}

// finished reports whether a match needs nothing more for its round to complete.
func (mt *match) finished() bool {
	return mt.status == protocol.MatchStateCompleted || mt.status == protocol.MatchStateCancelled || mt.status == protocol.MatchStateAbandoned
}

// takenFrom records that mt's referee no longer holds it: the match prefers another
// referee from now on.
func (mt *match) takenFrom(refereeID string) {
	mt.previousReferees[refereeID] = true
	if mt.refusedBy == nil {
		mt.refusedBy = map[string]bool{}
	}
	mt.refusedBy[refereeID] = true
}

type resultRecord struct {
	outcome map[string]string
	points  map[string]int
	// game is what the result counts for in the ratings; rated is false for a result
	// that rates nobody (a forfeit, a no-show). technical marks a game decided by a
	// technical termination (an illegal move, a timeout), which the ratings without
	// forfeits leave out.
	game      ratings.Game
	rated     bool
	technical bool
	ending    protocol.Termination
}

func newResultRecord(outcome map[string]string, points map[string]int, md protocol.GameMetadata) *resultRecord {
	g, ok := ratings.FromOutcome(outcome, md.Ending())
	return &resultRecord{outcome: maps.Clone(outcome), points: maps.Clone(points), game: g, rated: ok, technical: md.Ending().Technical(), ending: md.Ending()}
}

// progress is what a match's referee last reported of it.
type progress struct {
	phase string    // "" until a heartbeat lists the match
	step  int       // steps played
	since time.Time // when phase or step last changed (the assignment at first), or the last reminder
}
