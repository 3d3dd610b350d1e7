package league

import (
	"context"
	"errors"
	"slices"

	"github.com/agentleague/agentleague/internal/netsec"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

func (m *Manager) handle(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	env := &msg.Envelope
	if env.LeagueID != "" && env.LeagueID != m.leagueID {
		return nil, refuse(errWrongLeague, "this League Manager runs league %q", m.leagueID)
	}
	if env.MessageType != protocol.QueryStandings && env.MessageType != protocol.AdminShutdownRequest && m.hasStopped() {
		return nil, shuttingDown()
	}
	switch env.MessageType {
	case protocol.RegisterRefereeRequest, protocol.RegisterPlayerRequest:
		return m.register(msg)
	case protocol.AgentReadyRequest:
		return m.agentReady(msg)
	case protocol.MatchResultReport:
		return m.reportResult(msg)
	case protocol.QueryStandings:
		return m.queryStandings(msg)
	case protocol.AdminStartLeagueRequest:
		return m.adminStart(msg)
	case protocol.HeartbeatRequest:
		return m.heartbeat(msg)
	case protocol.AdminShutdownRequest:
		return m.adminShutdown(msg)
	case protocol.MoveEvent:
		return m.moveEvent(msg)
	case protocol.QueryMatch:
		return m.queryMatch(msg)
	}
	return nil, refuse(errNotAccepted, "the League Manager does not accept %s", env.MessageType)
}

// hasStopped reports whether a shutdown has cancelled the unfinished matches, after which
// only standings are served. Handlers that change the league check again under mu.
func (m *Manager) hasStopped() bool {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	return m.e.stop.stopped
}

// registration is what a registration asks, from either kind of request.
type registration struct {
	id, endpoint, displayName string
	games, features           []string
	maxMatches                int
	card                      *protocol.AgentCard
}

// decodeRegistration reads a registration of an agent of kind.
func decodeRegistration(msg *protocol.Message, kind string) (registration, error) {
	if kind == store.KindReferee {
		var p protocol.RefereeRegistration
		err := msg.Decode(&p)
		return registration{id: p.RefereeID, endpoint: p.EndpointURL, displayName: p.DisplayName, games: p.GameTypes, features: p.Features, maxMatches: p.MaxConcurrentMatches}, err
	}
	var p protocol.PlayerRegistration
	err := msg.Decode(&p)
	return registration{id: p.PlayerID, endpoint: p.EndpointURL, displayName: p.DisplayName, games: p.GameTypes, features: p.Features, card: p.AgentCard}, err
}

// register takes REGISTER_REFEREE_REQUEST and REGISTER_PLAYER_REQUEST. A retried
// registration (same conversation and endpoint) gets the original answer.
func (m *Manager) register(msg *protocol.Message) (*protocol.Message, error) {
	kind, answerType := store.KindPlayer, protocol.RegisterPlayerResponse
	if msg.Envelope.MessageType == protocol.RegisterRefereeRequest {
		kind, answerType = store.KindReferee, protocol.RegisterRefereeResponse
	}
	a, err := m.admit(msg, kind)
	result := "accepted"
	if err != nil {
		result = "refused"
	}
	m.metrics.registrations.WithLabelValues(kind, result).Inc()
	if err != nil {
		return nil, err
	}
	ans := protocol.RegistrationAnswer{Status: protocol.StatusRegistered, AuthToken: a.token, LeagueID: m.leagueID, Features: Features}
	if a.has(protocol.FeatureOutbound) {
		ans.EndpointURL = a.endpoint
	}
	if kind == store.KindReferee {
		lease := m.e.cfg.Timeouts.LeagueLevel
		ans.RefereeID, ans.HeartbeatIntervalMS, ans.LeaseMS = a.id, lease.HeartbeatIntervalMS, lease.LeaseMS
	} else {
		ans.PlayerID = a.id
	}
	return m.reply(msg, answerType, ans)
}

// admit checks a registration, stores a new agent and counts it in; it returns the
// agent, new or registered before by the same conversation.
func (m *Manager) admit(msg *protocol.Message, kind string) (*agent, error) {
	p, err := decodeRegistration(msg, kind)
	if err != nil {
		return nil, refuse(errMalformed, "invalid registration payload")
	}
	id, sender := p.id, protocol.PlayerSender(p.id)
	if kind == store.KindReferee {
		sender = protocol.RefereeSender(p.id)
	}
	if msg.Envelope.Sender != sender {
		return nil, refuse(errSenderMismatch, "sender %s does not match %s_id %q", msg.Envelope.Sender, kind, id)
	}
	if slices.Contains(p.features, protocol.FeatureOutbound) {
		// The schema let it come without an endpoint: its endpoint is on the relay.
		if p.endpoint, err = m.relayEndpoint(kind, id); err != nil {
			return nil, err
		}
	}
	if err := m.checkEndpoint(p.endpoint); err != nil {
		return nil, err
	}
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	if e.stop.stopping {
		return nil, shuttingDown()
	}
	// A registered sender repeating its registration has its own bucket; every other
	// sender shares one.
	if err := m.rateLimit(limitRegistration, msg.Envelope.Sender, e.agents.senders[msg.Envelope.Sender] != nil); err != nil {
		return nil, err
	}
	if err := e.storageReady(); err != nil {
		return nil, err
	}
	group := e.agents.players
	if kind == store.KindReferee {
		group = e.agents.referees
	}
	if a := group[id]; a != nil {
		if a.conversationID == msg.Envelope.ConversationID && a.endpoint == p.endpoint {
			return a, nil
		}
		if was, now := cardHash(a.card), cardHash(p.card); was != now {
			// A changed agent is another entry, never merged into the rating of this one.
			return nil, refuse(errAlreadyRegistered, "%s %q is registered with agent card %s, this registration has %s: a changed agent is a new entry, register it under another id", a.kind, a.id, was, now)
		}
		return nil, refuse(errAlreadyRegistered, "%s %q is already registered", a.kind, a.id)
	}
	a := &agent{id: id, kind: kind, token: uuid.NewString(), endpoint: p.endpoint, status: AgentRegistered,
		conversationID: msg.Envelope.ConversationID, features: features(p.features), registeredAt: e.now(), card: p.card}
	if err := m.admissible(a, &p); err != nil {
		return nil, err
	}
	first := kind == store.KindPlayer && e.window.firstPlayerAt.IsZero()
	rec := a.record()
	rec.DisplayName = p.displayName
	if err := e.store.AddAgent(m.leagueID, rec, first); err != nil {
		return nil, err
	}
	e.registered(a, first)
	m.log.Info().Str("conversation_id", msg.Envelope.ConversationID).Str(kind+"_id", a.id).Str("endpoint", a.endpoint).
		Int("players", len(e.agents.players)).Msg(kind + " registered")
	// The registration is committed: what follows from it is retried, never refused.
	if err := e.maybeCloseRegistration(kind + " registered"); err != nil {
		e.outage.retryLater("close registration", err)
	}
	if kind == store.KindReferee {
		if err := e.settle(); err != nil {
			e.outage.retryLater("settle after a registration", err)
		}
	}
	return a, nil
}

// checkEndpoint refuses an endpoint that would get tokens in clear over a network:
// plain http to a host that is not loopback, unless the League Manager is insecure.
func (m *Manager) checkEndpoint(endpoint string) error {
	if m.insecure {
		return nil
	}
	if err := netsec.CheckURL(endpoint); errors.Is(err, netsec.ErrPlainHTTP) {
		return refuse(errInsecureEndpoint,
			"endpoint_url %s is %v; serve it over https (--tls-cert, --tls-key) or run the League Manager with --insecure", endpoint, err)
	}
	return nil
}

// admissible applies the league's registration rules to a new agent, completing a
// referee's games and capacity.
func (m *Manager) admissible(a *agent, p *registration) error {
	e := m.e
	if a.kind == store.KindPlayer {
		if e.state != StateRegistration {
			return refuse(errRegistrationClosed, "registration is closed (league is %s)", e.state)
		}
		if len(e.agents.referees) == 0 {
			return refuse(errNoReferee, "no referee is registered yet; retry later")
		}
		if len(p.games) > 0 && !slices.Contains(p.games, e.gameType) {
			return refuse(errUnsupportedGame, "this league plays %s, which the player does not play", e.gameType)
		}
		return nil
	}
	if e.state == StateCompleted {
		return refuse(errRegistrationClosed, "the league is completed")
	}
	if len(e.agents.referees) >= e.cfg.Registration.MaxReferees {
		return refuse(errRegistrationClosed, "the league has its maximum of %d referees", e.cfg.Registration.MaxReferees)
	}
	a.games = p.games
	if len(a.games) == 0 {
		if e.external {
			// Only a referee that knows the game can play it: none is assumed to.
			return refuse(errUnsupportedGame, "this league plays %s, a game whose rules the League Manager does not have: a referee must list it in game_types", e.gameType)
		}
		a.games = []string{e.gameType}
	}
	if !slices.Contains(a.games, e.gameType) {
		return refuse(errUnsupportedGame, "this league plays %s, which the referee does not support", e.gameType)
	}
	if tc := e.cfg.Clock(); tc != nil && !slices.Contains(p.features, protocol.FeatureClocks) {
		// Every match of the league is played under the same clock.
		return refuse(errUnsupportedGame, "this league plays under a %s clock: a referee must announce feature %s", tc, protocol.FeatureClocks)
	}
	if e.fx.openings != nil && !slices.Contains(p.features, protocol.FeatureOpenings) {
		return refuse(errUnsupportedGame, "this league starts its matches from openings: a referee must announce feature %s", protocol.FeatureOpenings)
	}
	a.maxMatches = p.maxMatches
	if a.maxMatches == 0 {
		a.maxMatches = e.cfg.Referees.MaxConcurrentMatches
	}
	return nil
}

func (m *Manager) agentReady(msg *protocol.Message) (*protocol.Message, error) {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	if e.stop.stopped {
		return nil, shuttingDown()
	}
	a, err := e.agents.authenticate(&msg.Envelope)
	if err != nil {
		return nil, err
	}
	if a.status == AgentRegistered {
		if err := e.storageReady(); err != nil {
			return nil, err
		}
		if err := e.store.SetAgentStatus(a.kind, a.id, AgentActive); err != nil {
			return nil, err
		}
		a.status = AgentActive
	}
	if a.kind == store.KindReferee {
		if err := e.settle(); err != nil {
			e.outage.retryLater("settle after AGENT_READY", err)
		}
	}
	return m.reply(msg, protocol.AgentReadyResponse, protocol.AgentReadyAnswer{
		Status: protocol.StatusAcknowledged, AgentID: a.id, AgentType: a.kind, AgentState: a.status,
	})
}

func (m *Manager) queryStandings(msg *protocol.Message) (*protocol.Message, error) {
	var p protocol.StandingsQuery
	_ = msg.Decode(&p)
	roundID := p.RoundID
	if roundID == "" {
		roundID = msg.Envelope.RoundID
	}
	m.metrics.standings.Inc()
	m.e.mu.Lock()
	e := m.e
	if err := m.standingsGate(&msg.Envelope); err != nil {
		m.e.mu.Unlock()
		return nil, err
	}
	ans := protocol.Standings{UpdatedAt: e.fx.updatedAt, LeagueState: e.state, Final: e.state == StateCompleted}
	if role, id := protocol.ParseSender(msg.Envelope.Sender); role == store.KindPlayer {
		if left, known := matchesLeft(&e.fx, e.format, e.state, id); known {
			ans.MatchesLeft = &left
		}
	}
	if ans.UpdatedAt == "" {
		ans.UpdatedAt = e.now()
	}
	if roundID == "" {
		ans.Standings = []protocol.StandingsRow{} // no player yet: an empty list, never null
		for _, r := range e.fx.table.Rows() {
			r.Suspended = e.agents.players[r.PlayerID].status == AgentSuspended
			ans.Standings = append(ans.Standings, r)
		}
		if r := e.fx.active(); r != nil {
			id := r.id
			ans.RoundID = &id
		}
		m.e.mu.Unlock()
		return m.reply(msg, protocol.StandingsResponse, ans)
	}
	m.e.mu.Unlock()
	// A snapshot never changes once written: it is read outside the lock.
	rows, computed, found, err := e.store.Snapshot(roundID)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, refuse(errUnknownRound, "round %q has no standings snapshot (unknown or not completed)", roundID)
	}
	ans.Standings = rows
	ans.RoundID, ans.UpdatedAt, ans.Final = &roundID, computed, false
	return m.reply(msg, protocol.StandingsResponse, ans)
}

// standingsGate authenticates a standings query (the admin, or an agent) and applies
// its rate limit.
func (m *Manager) standingsGate(env *protocol.Envelope) error {
	var err error
	if env.Sender == protocol.SenderAdmin {
		err = m.e.agents.authenticateAdmin(env)
	} else {
		_, err = m.e.agents.authenticate(env)
	}
	if err != nil {
		return m.refusedAuth(limitStandings, env.Sender, err)
	}
	return m.rateLimit(limitStandings, env.Sender, true)
}

func (m *Manager) adminStart(msg *protocol.Message) (*protocol.Message, error) {
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	if err := e.agents.authenticateAdmin(&msg.Envelope); err != nil {
		return nil, err
	}
	if e.stop.stopping {
		return nil, shuttingDown()
	}
	if e.state == StateRegistration {
		if !e.agents.meets(e.cfg.Registration) {
			return nil, refuse(errNotActive, "cannot start: %d of %d players and %d of %d referees registered",
				len(e.agents.players), e.cfg.Registration.MinPlayers, len(e.agents.referees), e.cfg.Registration.MinReferees)
		}
		if err := e.schedulable(); err != nil {
			return nil, refuse(errNotActive, "cannot start: %v", err)
		}
		if err := e.storageReady(); err != nil {
			return nil, err
		}
		if err := e.closeRegistration("admin start"); err != nil {
			return nil, err
		}
	}
	return m.reply(msg, protocol.AdminStartLeagueResponse, map[string]string{
		"status": "started", "league_status": e.state, "message": "league started",
	})
}

// heartbeat renews a referee's lease and brings a lost referee back.
func (m *Manager) heartbeat(msg *protocol.Message) (*protocol.Message, error) {
	var p protocol.Heartbeat
	if err := msg.Decode(&p); err != nil {
		return nil, refuse(errMalformed, "invalid heartbeat payload")
	}
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	if e.stop.stopped {
		return nil, shuttingDown()
	}
	ref, err := e.agents.authenticateReferee(&msg.Envelope, "send heartbeats")
	if err != nil {
		return nil, err
	}
	ref.leaseUntil = e.opt.Now().Add(e.cfg.LeaseDuration())
	e.armDeadline(ref.leaseUntil)
	e.applyProgress(ref, p.MatchProgress)
	log := m.log.Debug()
	if ref.lost {
		ref.lost = false
		log = m.log.Info()
		e.trail.note(audit.EventRefereeBack, map[string]any{"referee_id": ref.id})
		if err := e.settle(); err != nil {
			e.outage.retryLater("settle after a referee came back", err)
		}
	}
	log.Str("conversation_id", msg.Envelope.ConversationID).Str("referee_id", ref.id).Int("active_matches", len(p.ActiveMatches)).Msg("heartbeat: lease renewed")
	return m.reply(msg, protocol.HeartbeatResponse, protocol.HeartbeatAnswer{Status: protocol.StatusAcknowledged, LeaseMS: e.cfg.Timeouts.LeagueLevel.LeaseMS})
}

// queryMatch answers QUERY_MATCH: a player confirms which referee holds one of its
// matches before it trusts an invitation that shows no match credential. Only the
// match's own players learn anything about it.
func (m *Manager) queryMatch(msg *protocol.Message) (*protocol.Message, error) {
	env := &msg.Envelope
	var p protocol.MatchQuery
	if err := msg.Decode(&p); err != nil {
		return nil, refuse(errMalformed, "invalid QUERY_MATCH payload")
	}
	if env.MatchID != "" && env.MatchID != p.MatchID {
		return nil, refuse(errMalformed, "envelope match_id %q differs from payload match_id %q", env.MatchID, p.MatchID)
	}
	m.e.mu.Lock()
	defer m.e.mu.Unlock()
	e := m.e
	// The schema admits only player senders, so the agent found is a player.
	pl, err := e.agents.authenticate(env)
	if err != nil {
		return nil, m.refusedAuth(limitMatchQueries, env.Sender, err)
	}
	if err := m.rateLimit(limitMatchQueries, env.Sender, true); err != nil {
		return nil, err
	}
	mt := e.fx.matches[p.MatchID]
	if mt == nil {
		return nil, refuse(errUnknownMatch, "match %q is not in the schedule", p.MatchID)
	}
	if mt.players[0] != pl.id && mt.players[1] != pl.id {
		return nil, refuse(errUnauthorized, "%s is not a player of match %s", env.Sender, mt.id)
	}
	info := protocol.MatchDetails{MatchID: mt.id, RoundID: mt.roundID, Players: mt.players[:], Status: mt.status}
	// A referee holds the match only while it is assigned: a match sent back to the pool
	// keeps its former referee in mt.referee.
	if mt.inFlight() {
		ref := mt.referee
		info.RefereeID = &ref
	}
	m.log.Debug().Str("conversation_id", env.ConversationID).Str("match_id", mt.id).Str("player_id", pl.id).
		Str("status", mt.status).Msg("match query answered")
	return m.matchReply(msg, protocol.MatchInfo, mt, info)
}

// cardHash names an agent card in a refusal: its hash, or "none".
func cardHash(c *protocol.AgentCard) string {
	if c == nil {
		return "none"
	}
	return c.Hash()
}
