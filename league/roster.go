package league

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/agentleague/agentleague/config"

	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// roster holds the registered agents and decides who a message comes from. It is part of
// the engine's state: only code holding engine.mu touches it.
type roster struct {
	referees map[string]*agent
	players  map[string]*agent
	senders  map[string]*agent // by sender identity
	tokens   map[string]*agent
	// adminToken authenticates the operator; "" refuses every admin request.
	adminToken string
}

func newRoster(adminToken string) roster {
	return roster{referees: map[string]*agent{}, players: map[string]*agent{}, senders: map[string]*agent{}, tokens: map[string]*agent{}, adminToken: adminToken}
}

func (r *roster) add(a *agent) {
	if a.kind == store.KindReferee {
		r.referees[a.id] = a
	} else {
		r.players[a.id] = a
	}
	r.senders[a.sender()] = a
	r.tokens[a.token] = a
}

// load adds an agent read from the database.
func (r *roster) load(s store.Agent) error {
	a := &agent{id: s.ID, kind: s.Kind, token: s.Token, status: s.Status, endpoint: s.Endpoint, conversationID: s.ConversationID,
		games: s.Games, features: s.Features, maxMatches: s.MaxMatches, registeredAt: s.RegisteredAt, violations: s.Violations, card: s.AgentCard}
	if s.SuspendedUntil != "" {
		t, err := protocol.ParseTime(s.SuspendedUntil)
		if err != nil {
			return fmt.Errorf("load %s %s: suspended_until: %w", s.Kind, s.ID, err)
		}
		a.suspendedUntil = t
	}
	r.add(a)
	return nil
}

// authenticate checks that the envelope token belongs to its sender.
func (r *roster) authenticate(env *protocol.Envelope) (*agent, error) {
	if env.AuthToken == "" {
		return nil, refuse(errUnauthorized, "auth_token is required for %s", env.MessageType)
	}
	a := r.senders[env.Sender]
	if a != nil && protocol.TokenEqual(a.token, env.AuthToken) {
		if a.status == AgentSuspended {
			return nil, refuse(errSuspended, "%s is suspended", env.Sender)
		}
		if a.status == AgentShutdown {
			return nil, refuse(errUnauthorized, "the token of %s is no longer valid", env.Sender)
		}
		return a, nil
	}
	if owner := r.tokens[env.AuthToken]; owner != nil {
		return nil, refuse(errSenderMismatch, "auth_token does not belong to sender %s", env.Sender)
	}
	return nil, refuse(errUnauthorized, "invalid auth_token for %s", env.Sender)
}

// authenticateReferee is authenticate for a message only referees send.
func (r *roster) authenticateReferee(env *protocol.Envelope, what string) (*agent, error) {
	a, err := r.authenticate(env)
	if err != nil {
		return nil, err
	}
	if a.kind != store.KindReferee {
		return nil, refuse(errUnauthorized, "only referees %s", what)
	}
	return a, nil
}

func (r *roster) authenticateAdmin(env *protocol.Envelope) error {
	if env.Sender != protocol.SenderAdmin {
		return refuse(errUnauthorized, "%s needs sender admin", env.MessageType)
	}
	if r.adminToken == "" || !protocol.TokenEqual(r.adminToken, env.AuthToken) {
		return refuse(errUnauthorized, "invalid admin token")
	}
	return nil
}

// all lists every agent, referees first, each kind by id, so that work on several is
// repeatable.
func (r *roster) all() []*agent {
	out := make([]*agent, 0, len(r.referees)+len(r.players))
	for _, group := range []map[string]*agent{r.referees, r.players} {
		for _, a := range group {
			out = append(out, a)
		}
	}
	return sortedAgents(out)
}

// meets reports whether the registration minimums of reg are met.
func (r *roster) meets(reg config.Registration) bool {
	return len(r.players) >= reg.MinPlayers && len(r.referees) >= reg.MinReferees
}

// playerIDs lists the players' ids, sorted.
func (r *roster) playerIDs() []string {
	ids := make([]string, 0, len(r.players))
	for id := range r.players {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// available lists, by id, the referees that may take a match of gameType now.
func (r *roster) available(gameType string) []*agent {
	var out []*agent
	for _, a := range r.referees {
		if a.status != AgentSuspended && a.status != AgentShutdown && !a.lost && slices.Contains(a.games, gameType) {
			out = append(out, a)
		}
	}
	return sortedAgents(out)
}

// nextDeadline is the earliest end of a suspension or a lease, zero for none.
func (r *roster) nextDeadline() time.Time {
	var next time.Time
	for _, a := range r.all() {
		if a.status == AgentSuspended {
			next = earliest(next, a.suspendedUntil)
		}
		if !a.lost {
			next = earliest(next, a.leaseUntil)
		}
	}
	return next
}

// earliest is the earlier of two times, zero standing for none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// sortedAgents orders agents by kind and id, so that work on several is repeatable.
func sortedAgents(as []*agent) []*agent {
	slices.SortFunc(as, func(a, b *agent) int { return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.id, b.id)) })
	return as
}

// Features are the protections and extensions this League Manager applies, announced at
// registration (protocol/README.md, "Features").
var Features = []string{
	protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials, protocol.FeatureHeartbeats,
	protocol.FeatureMatchProgress, protocol.FeatureResultReminders, protocol.FeatureMoveEvents,
	protocol.FeatureMoveBatches, protocol.FeatureResultMoves, protocol.FeatureMatchCancellation, protocol.FeatureMatchQuery,
	protocol.FeatureRelay, protocol.FeatureLeagueCompleted,
}

// knownFeatures are the features an agent may announce that change what this League
// Manager sends it.
var knownFeatures = []string{
	protocol.FeatureMatchCredentials, protocol.FeatureHeartbeats, protocol.FeatureMatchProgress,
	protocol.FeatureResultReminders, protocol.FeatureMoveEvents, protocol.FeatureMatchCancellation,
	protocol.FeatureOutbound, protocol.FeatureLeagueCompleted,
}

// features keeps the announced features this League Manager knows, sorted: others mean
// nothing here, and the stored list stays small.
func features(announced []string) []string {
	out := []string{}
	for _, f := range announced {
		if slices.Contains(knownFeatures, f) && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}
