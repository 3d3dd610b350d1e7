package league

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// Handle implements protocol.Handler: one validated inbound message.
func (m *Manager) Handle(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	env := &msg.Envelope
	if env.LeagueID != "" && env.LeagueID != m.leagueID {
		return nil, protocol.Errorf(protocol.ReasonWrongLeague, "this League Manager runs league %q", m.leagueID)
	}
	if env.MessageType != protocol.QueryStandings && env.MessageType != protocol.AdminShutdownRequest && m.hasStopped() {
		return nil, errShuttingDown()
	}
	switch env.MessageType {
	case protocol.RegisterRefereeRequest:
		ans, err := m.registerReferee(msg)
		m.countRegistration("referee", err)
		return ans, err
	case protocol.RegisterPlayerRequest:
		ans, err := m.registerPlayer(msg)
		m.countRegistration("player", err)
		return ans, err
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
	return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "the League Manager does not accept %s", env.MessageType)
}

// countRegistration counts a registration of an agent of kind in the metrics: accepted
// unless it was answered with err.
func (m *Manager) countRegistration(kind string, err error) {
	result := "accepted"
	if err != nil {
		result = "refused"
	}
	m.metrics.registrations.WithLabelValues(kind, result).Inc()
}

// hasStopped reports whether a shutdown has cancelled the unfinished matches, after which
// only standings are served. Handlers that change the league check m.stopped again
// under mu.
func (m *Manager) hasStopped() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stopped
}

// reply builds an answer carrying the league id.
func (m *Manager) reply(msg *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := msg.Reply(messageType, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.LeagueID = m.leagueID
	return out, nil
}

// authenticate checks that the envelope token belongs to its sender. Callers hold mu.
func (m *Manager) authenticate(env *protocol.Envelope) (*agent, error) {
	if env.AuthToken == "" {
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "auth_token is required for %s", env.MessageType)
	}
	a := m.senders[env.Sender]
	if a != nil && protocol.TokenEqual(a.token, env.AuthToken) {
		if a.status == AgentSuspended {
			return nil, protocol.Errorf(protocol.ReasonSuspended, "%s is suspended", env.Sender)
		}
		if a.status == AgentShutdown {
			return nil, protocol.Errorf(protocol.ReasonUnauthorized, "the token of %s is no longer valid", env.Sender)
		}
		return a, nil
	}
	if owner := m.tokens[env.AuthToken]; owner != nil {
		return nil, protocol.Errorf(protocol.ReasonSenderMismatch, "auth_token does not belong to sender %s", env.Sender)
	}
	return nil, protocol.Errorf(protocol.ReasonUnauthorized, "invalid auth_token for %s", env.Sender)
}

func (m *Manager) authenticateAdmin(env *protocol.Envelope) error {
	if env.Sender != protocol.SenderAdmin {
		return protocol.Errorf(protocol.ReasonUnauthorized, "%s needs sender admin", env.MessageType)
	}
	if m.opt.AdminToken == "" || !protocol.TokenEqual(m.opt.AdminToken, env.AuthToken) {
		return protocol.Errorf(protocol.ReasonUnauthorized, "invalid admin token")
	}
	return nil
}

type registration struct {
	RefereeID            string   `json:"referee_id"`
	PlayerID             string   `json:"player_id"`
	EndpointURL          string   `json:"endpoint_url"`
	GameTypes            []string `json:"game_types"`
	MaxConcurrentMatches int      `json:"max_concurrent_matches"`
	DisplayName          string   `json:"display_name"`
	Features             []string `json:"features"`
}

type registrationAnswer struct {
	Status              string   `json:"status"`
	AuthToken           string   `json:"auth_token"`
	LeagueID            string   `json:"league_id"`
	RefereeID           string   `json:"referee_id,omitempty"`
	PlayerID            string   `json:"player_id,omitempty"`
	Features            []string `json:"features"`
	HeartbeatIntervalMS int      `json:"heartbeat_interval_ms,omitempty"`
	LeaseMS             int      `json:"lease_ms,omitempty"`
}

// Features are the protections and extensions this League Manager applies, announced at
// registration (protocol/README.md, "Features").
var Features = []string{
	protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials, protocol.FeatureHeartbeats,
	protocol.FeatureMatchProgress, protocol.FeatureResultReminders, protocol.FeatureMoveEvents,
	protocol.FeatureMatchCancellation, protocol.FeatureMatchQuery,
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

// knownFeatures are the features an agent may announce that change what this League
// Manager sends it.
var knownFeatures = []string{
	protocol.FeatureMatchCredentials, protocol.FeatureHeartbeats, protocol.FeatureMatchProgress,
	protocol.FeatureResultReminders, protocol.FeatureMoveEvents, protocol.FeatureMatchCancellation,
}

func (m *Manager) registrationAnswer(msg *protocol.Message, a *agent) (*protocol.Message, error) {
	ans := registrationAnswer{Status: "registered", AuthToken: a.token, LeagueID: m.leagueID, Features: Features}
	typ := protocol.RegisterPlayerResponse
	if a.kind == "referee" {
		typ = protocol.RegisterRefereeResponse
		ans.RefereeID = a.id
		ans.HeartbeatIntervalMS = m.cfg.Timeouts.LeagueLevel.HeartbeatIntervalMS
		ans.LeaseMS = m.cfg.Timeouts.LeagueLevel.LeaseMS
	} else {
		ans.PlayerID = a.id
	}
	return m.reply(msg, typ, ans)
}

// existing answers a retried registration (same conversation and endpoint) with the
// original answer, and refuses any other registration of a taken id.
func (m *Manager) existing(msg *protocol.Message, a *agent, endpoint string) (*protocol.Message, error) {
	if a.conversationID == msg.Envelope.ConversationID && a.endpoint == endpoint {
		return m.registrationAnswer(msg, a)
	}
	return nil, protocol.Errorf(protocol.ReasonDuplicateRegistration, "%s %q is already registered", a.kind, a.id)
}

// registrationGate refuses registrations during a shutdown and over the rate limit: a
// registered sender (repeating its registration) has its own bucket, every other sender
// shares one. Callers hold mu.
func (m *Manager) registrationGate(env *protocol.Envelope) error {
	if m.stopping {
		return errShuttingDown()
	}
	return m.rateLimit(limitRegistration, env.Sender, m.senders[env.Sender] != nil)
}

func (m *Manager) registerReferee(msg *protocol.Message) (*protocol.Message, error) {
	var p registration
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid registration payload")
	}
	if msg.Envelope.Sender != protocol.RefereeSender(p.RefereeID) {
		return nil, protocol.Errorf(protocol.ReasonSenderMismatch, "sender %s does not match referee_id %q", msg.Envelope.Sender, p.RefereeID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.registrationGate(&msg.Envelope); err != nil {
		return nil, err
	}
	if a := m.referees[p.RefereeID]; a != nil {
		return m.existing(msg, a, p.EndpointURL)
	}
	if m.state == StateCompleted {
		return nil, protocol.Errorf(protocol.ReasonRegistrationClosed, "the league is completed")
	}
	if len(m.referees) >= m.cfg.Registration.MaxReferees {
		return nil, protocol.Errorf(protocol.ReasonRegistrationClosed, "the league has its maximum of %d referees", m.cfg.Registration.MaxReferees)
	}
	games := p.GameTypes
	if len(games) == 0 {
		if m.external {
			// Only a referee that knows the game can play it: none is assumed to.
			return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "this league plays %s, a game whose rules the League Manager does not have: a referee must list it in game_types", m.cfg.League.GameType)
		}
		games = []string{m.cfg.League.GameType}
	}
	if !slices.Contains(games, m.cfg.League.GameType) {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "this league plays %s, which the referee does not support", m.cfg.League.GameType)
	}
	maxMatches := p.MaxConcurrentMatches
	if maxMatches == 0 {
		maxMatches = m.cfg.Referees.MaxConcurrentMatches
	}
	a := &agent{id: p.RefereeID, kind: "referee", token: uuid.NewString(), endpoint: p.EndpointURL, status: AgentRegistered,
		conversationID: msg.Envelope.ConversationID, games: games, features: features(p.Features), maxMatches: maxMatches, registeredAt: m.now()}
	gamesJSON, _ := json.Marshal(games)
	featuresJSON, _ := json.Marshal(a.features)
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		_, err := tx.Exec(`INSERT INTO referees (referee_id, league_id, auth_token, status, registered_at, endpoint_url, game_types, features, max_concurrent_matches, conversation_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.id, m.leagueID, a.token, a.status, a.registeredAt, a.endpoint, string(gamesJSON), string(featuresJSON), a.maxMatches, a.conversationID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store referee: %w", err)
	}
	m.addAgent(a)
	m.log.Info().Str("conversation_id", msg.Envelope.ConversationID).Str("referee_id", a.id).Str("endpoint", a.endpoint).Msg("referee registered")
	m.publish(events.AgentRegistered, "", map[string]string{"id": a.id, "kind": a.kind})
	if err := m.maybeCloseRegistration("referee registered"); err != nil {
		return nil, err
	}
	m.dispatch()
	return m.registrationAnswer(msg, a)
}

func (m *Manager) registerPlayer(msg *protocol.Message) (*protocol.Message, error) {
	var p registration
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "invalid registration payload")
	}
	if msg.Envelope.Sender != protocol.PlayerSender(p.PlayerID) {
		return nil, protocol.Errorf(protocol.ReasonSenderMismatch, "sender %s does not match player_id %q", msg.Envelope.Sender, p.PlayerID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.registrationGate(&msg.Envelope); err != nil {
		return nil, err
	}
	if a := m.players[p.PlayerID]; a != nil {
		return m.existing(msg, a, p.EndpointURL)
	}
	if m.state != StateRegistration {
		return nil, protocol.Errorf(protocol.ReasonRegistrationClosed, "registration is closed (league is %s)", m.state)
	}
	if len(m.referees) == 0 {
		return nil, protocol.Errorf(protocol.ReasonNoRefereeRegistered, "no referee is registered yet; retry later")
	}
	if len(p.GameTypes) > 0 && !slices.Contains(p.GameTypes, m.cfg.League.GameType) {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "this league plays %s, which the player does not play", m.cfg.League.GameType)
	}
	a := &agent{id: p.PlayerID, kind: "player", token: uuid.NewString(), endpoint: p.EndpointURL, status: AgentRegistered,
		conversationID: msg.Envelope.ConversationID, features: features(p.Features), registeredAt: m.now()}
	first := m.firstPlayerAt.IsZero()
	featuresJSON, _ := json.Marshal(a.features)
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO players (player_id, league_id, auth_token, status, registered_at, endpoint_url, display_name, features, conversation_id)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, a.id, m.leagueID, a.token, a.status, a.registeredAt, a.endpoint, p.DisplayName, string(featuresJSON), a.conversationID); err != nil {
			return err
		}
		if first {
			_, err := tx.Exec(`UPDATE leagues SET first_player_at = ? WHERE league_id = ?`, a.registeredAt, m.leagueID)
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store player: %w", err)
	}
	m.addAgent(a)
	// Until the schedule is built the table lists every registered player, as a
	// restart (loadStandings) does.
	m.table = standings.New(slices.Sorted(maps.Keys(m.players)))
	if first {
		m.firstPlayerAt, _ = protocol.ParseTime(a.registeredAt)
		m.armWindow()
	}
	m.log.Info().Str("conversation_id", msg.Envelope.ConversationID).Str("player_id", a.id).Str("endpoint", a.endpoint).Int("players", len(m.players)).Msg("player registered")
	m.publish(events.AgentRegistered, "", map[string]string{"id": a.id, "kind": a.kind})
	ans, err := m.registrationAnswer(msg, a)
	if err != nil {
		return nil, err
	}
	if err := m.maybeCloseRegistration("player registered"); err != nil {
		return nil, err
	}
	return ans, nil
}

func (m *Manager) agentReady(msg *protocol.Message) (*protocol.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil, errShuttingDown()
	}
	a, err := m.authenticate(&msg.Envelope)
	if err != nil {
		return nil, err
	}
	if a.status == AgentRegistered {
		err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
			_, err := tx.Exec(`UPDATE `+a.kind+`s SET status = ? WHERE `+a.kind+`_id = ?`, AgentActive, a.id)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("mark agent ready: %w", err)
		}
		a.status = AgentActive
	}
	if a.kind == "referee" {
		m.dispatch()
	}
	return m.reply(msg, protocol.AgentReadyResponse, map[string]string{
		"status": "acknowledged", "agent_id": a.id, "agent_type": a.kind, "agent_state": a.status,
	})
}

type resultReport struct {
	GameType     string            `json:"game_type"`
	Players      []string          `json:"players"`
	Outcome      map[string]string `json:"outcome"`
	Points       map[string]int    `json:"points"`
	GameMetadata json.RawMessage   `json:"game_metadata"`
}

func (m *Manager) reportResult(msg *protocol.Message) (*protocol.Message, error) {
	start := time.Now()
	env := &msg.Envelope
	var p resultReport
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonInvalidResult, "result payload cannot be read")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil, errShuttingDown()
	}
	ref, err := m.authenticate(env)
	if err != nil {
		return nil, m.refusedAuth(limitResults, env.Sender, err)
	}
	if ref.kind != "referee" {
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "only referees report results")
	}
	if err := m.rateLimit(limitResults, ref.sender(), true); err != nil {
		return nil, err
	}
	mt := m.matches[env.MatchID]
	if mt == nil {
		return nil, protocol.Errorf(protocol.ReasonUnknownMatch, "match %q is not in the schedule", env.MatchID)
	}
	if mt.result != nil {
		if sameResult(mt.result, p.Outcome, p.Points) && mt.referee == ref.id {
			return m.resultAck(msg, mt)
		}
		return nil, protocol.Errorf(protocol.ReasonDuplicateResult, "match %s already has a different result", mt.id)
	}
	if mt.referee != ref.id {
		if mt.previousReferees[ref.id] {
			return nil, protocol.Errorf(protocol.ReasonStaleAssignment, "match %s was reassigned to another referee", mt.id)
		}
		return nil, protocol.Errorf(protocol.ReasonNotAssignedReferee, "match %s is not assigned to %s", mt.id, env.Sender)
	}
	if m.state != StateActive || (mt.status != MatchAssigned && mt.status != MatchInProgress) {
		if mt.status == MatchFailed || mt.status == MatchPending || mt.status == MatchAbandoned {
			return nil, protocol.Errorf(protocol.ReasonStaleAssignment, "match %s is no longer assigned to %s", mt.id, env.Sender)
		}
		return nil, protocol.Errorf(protocol.ReasonLeagueNotActive, "match %s cannot take a result now (league %s, match %s)", mt.id, m.state, mt.status)
	}
	if err := m.checkResult(env, mt, &p); err != nil {
		return nil, err
	}
	if err := m.storeResult(mt, ref.id, &p); err != nil {
		return nil, err
	}
	if err := m.advance(); err != nil {
		return nil, err
	}
	m.checkDrained()
	ans, err := m.resultAck(msg, mt)
	m.metrics.resultSeconds.Observe(time.Since(start).Seconds())
	return ans, err
}

func (m *Manager) resultAck(msg *protocol.Message, mt *match) (*protocol.Message, error) {
	out, err := m.reply(msg, protocol.MatchResultAck, map[string]string{"status": "acknowledged", "match_id": mt.id})
	if err != nil {
		return nil, err
	}
	out.Envelope.MatchID, out.Envelope.RoundID = mt.id, mt.roundID
	return out, nil
}

func sameResult(r *resultRecord, outcome map[string]string, points map[string]int) bool {
	return maps.Equal(r.outcome, outcome) && maps.Equal(r.points, points)
}

// checkResult validates a report against the match and the game's scoring.
func (m *Manager) checkResult(env *protocol.Envelope, mt *match, p *resultReport) error {
	invalid := func(format string, args ...any) error {
		return protocol.Errorf(protocol.ReasonInvalidResult, format, args...)
	}
	if env.RoundID != "" && env.RoundID != mt.roundID {
		return invalid("match %s belongs to round %s, not %s", mt.id, mt.roundID, env.RoundID)
	}
	if p.GameType != m.cfg.League.GameType || (env.GameType != "" && env.GameType != p.GameType) {
		return invalid("game_type must be %s", m.cfg.League.GameType)
	}
	want := []string{mt.players[0], mt.players[1]}
	got := slices.Clone(p.Players)
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(want, got) {
		return invalid("players must be %s and %s", mt.players[0], mt.players[1])
	}
	wins, draws, losses := 0, 0, 0
	for _, id := range mt.players {
		o, ok := p.Outcome[id]
		if !ok {
			return invalid("outcome of %s is missing", id)
		}
		pts, ok := p.Points[id]
		if !ok {
			return invalid("points of %s are missing", id)
		}
		var due int
		switch o {
		case "win":
			wins, due = wins+1, m.scoring.Win
		case "draw":
			draws, due = draws+1, m.scoring.Draw
		case "loss":
			losses, due = losses+1, m.scoring.Loss
		}
		if pts != due {
			return invalid("%s with outcome %s scores %d points, not %d", id, o, due, pts)
		}
	}
	if len(p.Outcome) != 2 || len(p.Points) != 2 {
		return invalid("outcome and points must name exactly the two players")
	}
	// A decided game, a draw, or a double forfeit (both lose).
	if !(wins == 1 && losses == 1) && draws != 2 && losses != 2 {
		return invalid("outcomes %s/%s are not consistent", p.Outcome[mt.players[0]], p.Outcome[mt.players[1]])
	}
	return nil
}

// storeResult writes the result, the match status, the standings and the players'
// violations in one transaction, then applies them in memory (with the players'
// statistics) and publishes match_finished and standings_changed. refereeID is "" for a
// result the League Manager decided itself. Callers hold mu.
func (m *Manager) storeResult(mt *match, refereeID string, p *resultReport) error {
	next := m.table.Clone()
	if err := next.Apply(p.Outcome, p.Points); err != nil {
		return protocol.Errorf(protocol.ReasonInvalidResult, "result does not fit the standings")
	}
	var updates []agentUpdate
	now := m.opt.Now()
	facts := readFacts(mt.players, p.GameMetadata)
	for _, id := range mt.players {
		if n := facts.count(id); n > 0 {
			updates = append(updates, m.addViolations(m.players[id], n, now))
		}
	}
	var referee any
	if refereeID != "" {
		referee = refereeID
	}
	outcome, _ := json.Marshal(p.Outcome)
	points, _ := json.Marshal(p.Points)
	meta := "{}"
	if len(p.GameMetadata) > 0 {
		meta = string(p.GameMetadata)
	}
	reportedAt := protocol.Now(now)
	err := m.opt.Store.Tx(context.Background(), func(tx *sql.Tx) error {
		if _, err := tx.Exec(`INSERT INTO match_results (result_id, match_id, outcome, points, game_metadata, reported_at, referee_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			"result-"+uuid.NewString(), mt.id, string(outcome), string(points), meta, reportedAt, referee); err != nil {
			return err
		}
		for _, u := range updates {
			if err := u.write(tx); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(`UPDATE matches SET status = ? WHERE match_id = ?`, MatchCompleted, mt.id); err != nil {
			return err
		}
		for _, id := range mt.players {
			var w, d, l int
			switch p.Outcome[id] {
			case "win":
				w = 1
			case "draw":
				d = 1
			default:
				l = 1
			}
			if _, err := tx.Exec(`UPDATE standings SET points = points + ?, wins = wins + ?, draws = draws + ?, losses = losses + ?, matches_played = matches_played + 1 WHERE player_id = ?`,
				p.Points[id], w, d, l, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store result: %w", err)
	}
	mt.status, mt.deadline = MatchCompleted, time.Time{}
	mt.result = &resultRecord{outcome: maps.Clone(p.Outcome), points: maps.Clone(p.Points)}
	// The match view re-plays the stored moves from now on.
	mt.live, mt.liveMoves = nil, 0
	m.table = next
	m.updatedAt = reportedAt
	m.countStats(mt, facts)
	for _, kinds := range facts.violations {
		for kind, n := range kinds {
			m.metrics.violations.WithLabelValues(kind).Add(float64(n))
		}
	}
	for _, u := range updates {
		m.apply(u)
	}
	m.publishResult(mt, p, resultTermination(p.GameMetadata))
	return nil
}

// resultTermination is how a match ended, as its game_metadata says ("forfeit" for a
// forfeit the League Manager decided).
func resultTermination(meta json.RawMessage) string {
	var md struct {
		Termination string `json:"termination"`
		Forfeit     string `json:"forfeit"`
	}
	_ = json.Unmarshal(meta, &md)
	if md.Forfeit != "" {
		return "forfeit"
	}
	return md.Termination
}

type standingsAnswer struct {
	RoundID     *string        `json:"round_id"`
	UpdatedAt   string         `json:"updated_at"`
	Standings   []standingsRow `json:"standings"`
	LeagueState string         `json:"league_state"`
	Final       bool           `json:"final"`
}

// standingsRow is a row of STANDINGS_RESPONSE; Suspended marks, in the live standings,
// a player serving a suspension.
type standingsRow struct {
	protocol.StandingsRow
	Suspended bool `json:"suspended,omitempty"`
}

func (m *Manager) queryStandings(msg *protocol.Message) (*protocol.Message, error) {
	var p struct {
		RoundID string `json:"round_id"`
	}
	_ = msg.Decode(&p)
	roundID := p.RoundID
	if roundID == "" {
		roundID = msg.Envelope.RoundID
	}
	m.metrics.standings.Inc()
	m.mu.Lock()
	if err := m.standingsGate(&msg.Envelope); err != nil {
		m.mu.Unlock()
		return nil, err
	}
	ans := standingsAnswer{UpdatedAt: m.updatedAt, LeagueState: m.state, Final: m.state == StateCompleted}
	if ans.UpdatedAt == "" {
		ans.UpdatedAt = m.now()
	}
	if roundID == "" {
		ans.Standings = []standingsRow{} // no player yet: an empty list, never null
		for _, r := range m.table.Rows() {
			ans.Standings = append(ans.Standings, standingsRow{StandingsRow: r, Suspended: m.players[r.PlayerID].status == AgentSuspended})
		}
		if m.current >= 0 {
			id := m.rounds[m.current].id
			ans.RoundID = &id
		}
		m.mu.Unlock()
		return m.reply(msg, protocol.StandingsResponse, ans)
	}
	m.mu.Unlock()
	rows, computed, err := m.snapshot(roundID)
	if err != nil {
		return nil, err
	}
	ans.Standings = make([]standingsRow, 0, len(rows))
	for _, r := range rows {
		ans.Standings = append(ans.Standings, standingsRow{StandingsRow: r})
	}
	ans.RoundID, ans.UpdatedAt, ans.Final = &roundID, computed, false
	return m.reply(msg, protocol.StandingsResponse, ans)
}

// standingsGate authenticates a standings query (the admin, or an agent) and applies
// its rate limit. Callers hold mu.
func (m *Manager) standingsGate(env *protocol.Envelope) error {
	var err error
	if env.Sender == protocol.SenderAdmin {
		err = m.authenticateAdmin(env)
	} else {
		_, err = m.authenticate(env)
	}
	if err != nil {
		return m.refusedAuth(limitStandings, env.Sender, err)
	}
	return m.rateLimit(limitStandings, env.Sender, true)
}

// snapshot reads the immutable standings of a completed round.
func (m *Manager) snapshot(roundID string) ([]protocol.StandingsRow, string, error) {
	db := m.opt.Store.db
	var snap, computed string
	err := db.QueryRow(`SELECT snapshot_id, computed_at FROM standings_snapshots WHERE round_id = ?`, roundID).Scan(&snap, &computed)
	if err == sql.ErrNoRows {
		return nil, "", protocol.Errorf(protocol.ReasonUnknownRound, "round %q has no standings snapshot (unknown or not completed)", roundID)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read snapshot: %w", err)
	}
	rows, err := db.Query(`SELECT rank, player_id, points, wins, draws, losses, matches_played FROM player_rankings WHERE snapshot_id = ? ORDER BY rank`, snap)
	if err != nil {
		return nil, "", fmt.Errorf("read rankings: %w", err)
	}
	defer rows.Close()
	out := []protocol.StandingsRow{}
	for rows.Next() {
		var r protocol.StandingsRow
		if err := rows.Scan(&r.Rank, &r.PlayerID, &r.Points, &r.Wins, &r.Draws, &r.Losses, &r.MatchesPlayed); err != nil {
			return nil, "", fmt.Errorf("read rankings: %w", err)
		}
		out = append(out, r)
	}
	return out, computed, rows.Err()
}

func (m *Manager) adminStart(msg *protocol.Message) (*protocol.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.authenticateAdmin(&msg.Envelope); err != nil {
		return nil, err
	}
	if m.stopping {
		return nil, errShuttingDown()
	}
	if m.state == StateRegistration {
		if !m.minimumsMet() {
			return nil, protocol.Errorf(protocol.ReasonLeagueNotActive, "cannot start: %d of %d players and %d of %d referees registered",
				len(m.players), m.cfg.Registration.MinPlayers, len(m.referees), m.cfg.Registration.MinReferees)
		}
		if err := m.closeRegistration("admin start"); err != nil {
			return nil, err
		}
	}
	return m.reply(msg, protocol.AdminStartLeagueResponse, map[string]string{
		"status": "started", "league_status": m.state, "message": "league started",
	})
}
