package conform

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/league/relay"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
)

// leagueID is the league_id of every run of the tool.
const leagueID = "conform"

// Heartbeat settings the tool hands a referee that announced heartbeats: short, so
// that a run of a few seconds sees one.
const (
	heartbeatMS = 1000
	leaseMS     = 5000
)

// board is the state the tool's servers and its run share: one lock, and a channel
// closed at every change so the run can wait for what it expects.
type board struct {
	mu      sync.Mutex
	changed chan struct{}
}

func newBoard() *board { return &board{changed: make(chan struct{})} }

// notify wakes every waiter; callers hold mu.
func (b *board) notify() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// await waits until cond (called with mu held) holds, ctx ends, or d passes without it;
// with idle set, every change starts d anew. It reports whether cond held.
func (b *board) await(ctx context.Context, d time.Duration, idle bool, cond func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		b.mu.Lock()
		held, ch := cond(), b.changed
		b.mu.Unlock()
		if held {
			return true
		}
		select {
		case <-ch:
			if idle {
				timer.Reset(d)
			}
		case <-timer.C:
			b.mu.Lock()
			defer b.mu.Unlock()
			return cond()
		case <-ctx.Done():
			return false
		}
	}
}

// registrationRequest is what the tool reads of a registration request.
type registrationRequest struct {
	id, endpoint        string
	features, gameTypes []string
}

// outbound reports whether the agent accepts no connections: its endpoint is on the
// tool's relay.
func (r registrationRequest) outbound() bool {
	return slices.Contains(r.features, protocol.FeatureOutbound)
}

// relayQuiet is how long an outbound agent must not poll to count as gone; our agents
// poll again at once.
const relayQuiet = time.Second

// outboundHint says how an outbound agent takes its requests.
const outboundHint = `announce "outbound" and leave out endpoint_url, then poll GET <League Manager base>/relay/poll with your auth_token as a Bearer token and answer with POST /relay/answer (protocol/README.md, "Outbound agents")`

// readRegistration reads what it can of a registration request of either role.
func readRegistration(m *protocol.Message) registrationRequest {
	if m.Envelope.MessageType == protocol.RegisterRefereeRequest {
		var p protocol.RefereeRegistration
		decode(m.Payload, &p)
		return registrationRequest{id: p.RefereeID, endpoint: p.EndpointURL, features: p.Features, gameTypes: p.GameTypes}
	}
	var p protocol.PlayerRegistration
	decode(m.Payload, &p)
	return registrationRequest{id: p.PlayerID, endpoint: p.EndpointURL, features: p.Features, gameTypes: p.GameTypes}
}

// registration is what the subject sent to register and what became of it.
type registration struct {
	registrationRequest
	sender     string
	violations []string
	// notRequest says why the body was not a JSON-RPC request.
	notRequest string
	// refused says why the tool refused a schema-valid registration ("" if it did not).
	refused string
	// done is set once the tool answered it.
	done  bool
	token string
}

// accepted reports whether the tool took the registration.
func (r *registration) accepted() bool { return r.done && r.token != "" }

// inbound is one request the subject sent the League Manager after registering.
type inbound struct {
	msgType, sender   string
	violations        []string
	notRequest        string
	tokenOK, senderOK bool
}

// reportSeen is one MATCH_RESULT_REPORT the tool took.
type reportSeen struct {
	env     protocol.Envelope
	payload protocol.ResultReport
}

// leagueMatch is a match the tool's League Manager knows.
type leagueMatch struct {
	id, round string
	players   [2]string
	// refereeID holds the match (MATCH_INFO).
	refereeID string
	// queried is set by a QUERY_MATCH of a player of the match, with its token.
	queried bool
	// reports are the MATCH_RESULT_REPORTs taken, acknowledged or not.
	reports []reportSeen
	// failFirst refuses the first report with INTERNAL, to see the referee send it again.
	failFirst bool
}

// Bounds of what the tool keeps of a subject's requests, so that a flood cannot
// exhaust it: the first ones are enough to judge.
const (
	maxInbox   = 10000
	maxReports = 100
)

// leagueSide is the tool acting as the subject's League Manager: it takes the
// registration and every later message, answers as ours does, and keeps what it saw.
type leagueSide struct {
	s        *session
	b        *board
	kind     string // "player" or "referee"
	features []string
	// url is where the tool's League Manager listens, set under b.mu before the agent
	// starts.
	url string

	// Guarded by b.mu.
	attempt *registration
	inbox   []inbound
	matches map[string]*leagueMatch
	// heartbeats counts HEARTBEAT_REQUESTs taken, withProgress those with
	// match_progress, moveEvents the MOVE_EVENTs.
	heartbeats, withProgress, moveEvents int
	// otherKind is the sender of a registration for the other role, if one came.
	otherKind string
	// relayed counts the agent's requests to the relay with its token, badRelay those
	// with another; polls is how many polls wait, lastPoll when one last began or ended.
	relayed, badRelay, polls int
	lastPoll                 time.Time
}

// serveLeague starts the tool's League Manager for a subject of kind on opt.Listen.
func (s *session) serveLeague(b *board, kind string, features []string) (*leagueSide, func(context.Context) error, error) {
	l := &leagueSide{s: s, b: b, kind: kind, features: append(features, protocol.FeatureRelay), matches: map[string]*leagueMatch{}}
	// The relay gives an outbound agent its endpoint beside the tool's /mcp.
	hub := relay.NewHub(l, prometheus.NewRegistry(), s.log)
	mux := http.NewServeMux()
	mux.Handle("/", s.serveRPC(l, l.observe, s.log.With().Str("role", "league_manager").Logger()))
	hub.Register(mux)
	url, serverStop, err := s.serve(s.opt.Listen, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/relay/poll" {
			l.pollEvent(1)
			defer l.pollEvent(-1)
		}
		mux.ServeHTTP(w, r)
	}))
	if err != nil {
		return nil, nil, fmt.Errorf("serve as league manager: %w", err)
	}
	// The relay ends first: its polls would hold the server's shutdown.
	stop := func(ctx context.Context) error { hub.Close(); return serverStop(ctx) }
	b.mu.Lock()
	l.url = url
	b.mu.Unlock()
	s.log.Info().Str("url", url).Str("game", s.opt.Game).Msgf("serving as League Manager; waiting for a %s", kind)
	if s.opt.Ready != nil {
		s.opt.Ready(url)
	}
	return l, stop, nil
}

// pollEvent counts a poll of the relay beginning (1) or ending (-1).
func (l *leagueSide) pollEvent(d int) {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	l.polls += d
	l.lastPoll = time.Now()
	l.b.notify()
}

// IsOutbound implements relay.Agents: key names the registered agent, outbound.
func (l *leagueSide) IsOutbound(key string) bool {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	reg := l.attempt
	return reg != nil && reg.accepted() && reg.outbound() && key == l.kind+"/"+reg.id
}

// OutboundByToken implements relay.Agents, and counts the requests to the relay.
func (l *leagueSide) OutboundByToken(token string) (string, bool) {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	defer l.b.notify()
	if reg := l.attempt; reg != nil && reg.accepted() && reg.outbound() && protocol.TokenEqual(token, reg.token) {
		l.relayed++
		return l.kind + "/" + reg.id, true
	}
	l.badRelay++
	return "", false
}

// registerType is the registration request the subject is to send.
func (l *leagueSide) registerType() string {
	if l.kind == "referee" {
		return protocol.RegisterRefereeRequest
	}
	return protocol.RegisterPlayerRequest
}

// observe records a request once it was answered; a registration the protocol server
// refused (Handle never saw it) is the subject's attempt.
func (l *leagueSide) observe(r received) {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	env := r.msg.Envelope
	switch reg := l.attempt; {
	case env.MessageType == protocol.RegisterPlayerRequest || env.MessageType == protocol.RegisterRefereeRequest:
		if env.MessageType != l.registerType() {
			l.otherKind = env.Sender
		} else if reg == nil {
			l.attempt = &registration{registrationRequest: readRegistration(r.msg), sender: env.Sender,
				violations: r.violations, notRequest: r.notRequest, done: true}
		}
	case reg == nil || !reg.accepted() || len(l.inbox) >= maxInbox:
		return
	default:
		l.inbox = append(l.inbox, inbound{msgType: env.MessageType, sender: env.Sender, violations: r.violations, notRequest: r.notRequest,
			tokenOK: env.AuthToken != "" && protocol.TokenEqual(env.AuthToken, reg.token), senderOK: env.Sender == reg.sender})
	}
	l.b.notify()
}

// Handle implements protocol.Handler: every schema-valid request to the tool's League
// Manager.
func (l *leagueSide) Handle(_ context.Context, m *protocol.Message) (*protocol.Message, error) {
	env := &m.Envelope
	if env.MessageType == protocol.RegisterPlayerRequest || env.MessageType == protocol.RegisterRefereeRequest {
		return l.register(m)
	}
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	reg := l.attempt
	switch {
	case reg == nil || !reg.accepted():
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "register first")
	case env.Sender != reg.sender:
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "%s is not the registered agent", env.Sender)
	case env.AuthToken == "" || !protocol.TokenEqual(env.AuthToken, reg.token):
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "auth_token is not the token issued to %s", reg.sender)
	}
	defer l.b.notify()
	switch env.MessageType {
	case protocol.AgentReadyRequest:
		return l.reply(m, protocol.AgentReadyResponse, protocol.AgentReadyAnswer{
			Status: protocol.StatusAcknowledged, AgentID: reg.id, AgentType: l.kind, AgentState: "ACTIVE"})
	case protocol.QueryStandings:
		return l.reply(m, protocol.StandingsResponse, map[string]any{"round_id": nil, "updated_at": protocol.Now(time.Now()), "standings": []any{}})
	case protocol.QueryMatch:
		return l.queryMatch(m, reg)
	case protocol.HeartbeatRequest:
		var p struct {
			// Raw: any match_progress counts, whatever it holds.
			MatchProgress json.RawMessage `json:"match_progress"`
		}
		decode(m.Payload, &p)
		l.heartbeats++
		if len(p.MatchProgress) > 0 {
			l.withProgress++
		}
		return l.reply(m, protocol.HeartbeatResponse, protocol.HeartbeatAnswer{Status: protocol.StatusAcknowledged, LeaseMS: leaseMS})
	case protocol.MoveEvent:
		l.moveEvents++
		return l.reply(m, protocol.MoveEventAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	case protocol.MatchResultReport:
		return l.report(m)
	}
	return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "the League Manager does not accept %s", env.MessageType)
}

// reply builds the answer of the tool's League Manager to m.
func (l *leagueSide) reply(m *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := m.Reply(messageType, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", m.Envelope.MessageType, err)
	}
	out.Envelope.LeagueID = leagueID
	return out, nil
}

// register takes the subject's registration: one agent per run, retries answered alike.
func (l *leagueSide) register(m *protocol.Message) (*protocol.Message, error) {
	env := &m.Envelope
	if env.MessageType != l.registerType() {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "this run certifies a %s; it takes %s only", l.kind, l.registerType())
	}
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	p := readRegistration(m)
	switch reg := l.attempt; {
	case reg == nil:
	case reg.accepted() && p.id == reg.id:
		// A retry gets the first answer again.
		return l.registered(m, reg)
	case reg.accepted():
		return nil, protocol.Errorf(protocol.ReasonRegistrationClosed, "this run certifies %s only", reg.sender)
	default:
		return nil, protocol.Errorf(protocol.ReasonRegistrationClosed, "this run judged the first registration, which was refused")
	}
	reg := &registration{registrationRequest: p, sender: env.Sender, done: true}
	l.attempt = reg
	defer l.b.notify()
	wantSender := protocol.PlayerSender(p.id)
	if l.kind == "referee" {
		wantSender = protocol.RefereeSender(p.id)
	}
	if env.Sender != wantSender {
		reg.refused = fmt.Sprintf("envelope sender %q does not name the registering %s (want %q)", env.Sender, l.kind, wantSender)
		return nil, protocol.Errorf(protocol.ReasonSenderMismatch, "sender must be %s", wantSender)
	}
	if l.kind == "referee" && len(p.gameTypes) > 0 && !slices.Contains(p.gameTypes, l.s.opt.Game) {
		reg.refused = fmt.Sprintf("game_types %v do not include %s", p.gameTypes, l.s.opt.Game)
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "this league plays %s", l.s.opt.Game)
	}
	reg.token = uuid.NewString()
	if reg.outbound() {
		reg.endpoint = relay.Endpoint(strings.TrimSuffix(l.url, "/mcp"), l.kind, reg.id)
	}
	l.s.log.Info().Str("conversation_id", env.ConversationID).Str("agent", reg.sender).Strs("features", reg.features).Msg("registered")
	return l.registered(m, reg)
}

// registered is the answer to an accepted registration; callers hold b.mu.
func (l *leagueSide) registered(m *protocol.Message, reg *registration) (*protocol.Message, error) {
	p := map[string]any{"status": "registered", "auth_token": reg.token, "league_id": leagueID, "features": l.features}
	typ := protocol.RegisterPlayerResponse
	if l.kind == "referee" {
		typ = protocol.RegisterRefereeResponse
		p["referee_id"], p["heartbeat_interval_ms"], p["lease_ms"] = reg.id, heartbeatMS, leaseMS
	} else {
		p["player_id"] = reg.id
	}
	if reg.outbound() {
		p["endpoint_url"] = reg.endpoint
	}
	return l.reply(m, typ, p)
}

// addMatch makes a match known to the League Manager.
func (l *leagueSide) addMatch(lm *leagueMatch) {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	l.matches[lm.id] = lm
}

// queryMatch answers QUERY_MATCH of a player of the match; callers hold b.mu.
func (l *leagueSide) queryMatch(m *protocol.Message, reg *registration) (*protocol.Message, error) {
	var p protocol.MatchQuery
	decode(m.Payload, &p)
	lm := l.matches[p.MatchID]
	switch {
	case lm == nil:
		return nil, protocol.Errorf(protocol.ReasonUnknownMatch, "match %q is not in the schedule", p.MatchID)
	case lm.players[0] != reg.id && lm.players[1] != reg.id:
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "%s is not a player of match %s", reg.sender, lm.id)
	}
	lm.queried = true
	out, err := l.reply(m, protocol.MatchInfo, map[string]any{"match_id": lm.id, "round_id": lm.round,
		"players": lm.players, "referee_id": lm.refereeID, "status": "ASSIGNED"})
	if err != nil {
		return nil, err
	}
	out.Envelope.MatchID, out.Envelope.RoundID = lm.id, lm.round
	return out, nil
}

// report takes a MATCH_RESULT_REPORT; callers hold b.mu.
func (l *leagueSide) report(m *protocol.Message) (*protocol.Message, error) {
	var p protocol.ResultReport
	decode(m.Payload, &p)
	lm := l.matches[m.Envelope.MatchID]
	if lm == nil {
		return nil, protocol.Errorf(protocol.ReasonUnknownMatch, "match %q was not assigned", m.Envelope.MatchID)
	}
	if len(lm.reports) < maxReports {
		lm.reports = append(lm.reports, reportSeen{env: m.Envelope, payload: p})
	}
	l.s.log.Info().Str("conversation_id", m.Envelope.ConversationID).Str("match_id", lm.id).Int("report", len(lm.reports)).Msg("result report")
	if lm.failFirst && len(lm.reports) == 1 {
		// On purpose: a referee must send its report again after a transient failure.
		return nil, protocol.Errorf(protocol.ReasonInternal, "temporary failure, send the report again (conformance check)")
	}
	return l.reply(m, protocol.MatchResultAck, protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: lm.id})
}

// readyWait bounds how long the tool waits for AGENT_READY_REQUEST before it sends the
// first match: an agent may still be storing its token when the registration answer has
// left, and a League Manager assigns matches only once registration closes.
const readyWait = time.Second

// admit waits for the subject's registration and judges it and its endpoint; once
// admitted, it waits for AGENT_READY_REQUEST, at most readyWait (agents of the seed
// alone send none). It returns the registration, nil when the run cannot go on.
func (l *leagueSide) admit(ctx context.Context, v *verdicts) *registration {
	var reg *registration
	l.b.await(ctx, l.s.opt.Wait, false, func() bool {
		reg = l.attempt
		return reg != nil && reg.done
	})
	if l.kind == "referee" && reg != nil && len(reg.violations) == 0 && reg.notRequest == "" {
		switch {
		case strings.HasPrefix(reg.refused, "game_types"):
			v.fail("referee.register.game_types", reg.refused)
		case len(reg.gameTypes) == 0:
			v.pass("referee.register.game_types", "game_types left out: takes any game")
		default:
			v.pass("referee.register.game_types", fmt.Sprintf("game_types %v include %s", reg.gameTypes, l.s.opt.Game))
		}
	}
	if !l.judgeRegistration(v, reg) {
		return nil
	}
	check := l.kind + ".register.endpoint"
	if reg.outbound() {
		if !l.judgeOutbound(ctx, v, reg) {
			return nil
		}
	} else if ok, err := l.s.poll(ctx, reg.endpoint, endpointWait, func(_ context.Context, err error) bool { return err == nil }); !ok {
		v.failf(check, "endpoint_url %s accepts no connection within %s: %s", reg.endpoint, endpointWait, shortErr(err))
		v.stop("its endpoint cannot be reached")
		return nil
	} else {
		v.pass(check, "endpoint_url "+reg.endpoint+" accepts connections")
		v.skip(l.kind+".outbound.register", fmt.Sprintf("the %s is inbound (endpoint_url %s): for an agent that registers with feature outbound", l.kind, reg.endpoint))
	}
	l.b.await(ctx, readyWait, false, func() bool {
		return slices.ContainsFunc(l.inbox, func(in inbound) bool { return in.msgType == protocol.AgentReadyRequest })
	})
	return reg
}

// judgeOutbound records the checks of an outbound agent (kind.register.endpoint,
// kind.outbound.register): given its endpoint on the tool's relay, it polls there with its
// token. It reports whether the run can go on.
func (l *leagueSide) judgeOutbound(ctx context.Context, v *verdicts, reg *registration) bool {
	polled := l.b.await(ctx, endpointWait, false, func() bool { return l.relayed > 0 })
	l.b.mu.Lock()
	bad := l.badRelay
	l.b.mu.Unlock()
	id := l.kind + ".outbound.register"
	switch {
	case !polled:
		why := fmt.Sprintf("registered outbound, was given %s, but did not poll the relay with its token within %s (%d request(s) with another token refused)", reg.endpoint, endpointWait, bad)
		v.failHint(l.kind+".register.endpoint", why, outboundHint)
		v.fail(id, why)
		v.stop("it never polled the relay")
		return false
	case bad > 0:
		v.failf(id, "%d request(s) to the relay carried a token the League Manager did not issue to %s", bad, reg.sender)
	default:
		v.pass(id, fmt.Sprintf("registered with features %v and no endpoint_url, was given %s and polls it with its token", reg.features, reg.endpoint))
	}
	v.pass(l.kind+".register.endpoint", "outbound: endpoint_url "+reg.endpoint+" on the tool's relay, which it polls")
	return true
}

// awaitQuiet reports whether an outbound agent stopped polling within d: no poll waits,
// and none began or ended for relayQuiet.
func (l *leagueSide) awaitQuiet(ctx context.Context, d time.Duration) bool {
	for end := time.Now().Add(d + relayQuiet); ; {
		if l.b.await(ctx, 50*time.Millisecond, false, func() bool { return l.polls == 0 && time.Since(l.lastPoll) >= relayQuiet }) {
			return true
		}
		if ctx.Err() != nil || time.Now().After(end) {
			return false
		}
	}
}

// judgeRegistration records the registration checks common to both subjects (schema,
// sender), and reports whether the run can go on.
func (l *leagueSide) judgeRegistration(v *verdicts, reg *registration) bool {
	kind, wait := l.kind, l.s.opt.Wait
	prefix := kind + ".register."
	if reg == nil {
		reason := fmt.Sprintf("no REGISTER_%s_REQUEST arrived within %s", strings.ToUpper(kind), wait)
		l.b.mu.Lock()
		if l.otherKind != "" {
			reason += fmt.Sprintf(", but %s registered for the other role", l.otherKind)
		}
		l.b.mu.Unlock()
		v.failHint(prefix+"schema", reason, fmt.Sprintf("start the %s with --league %s (or raise --wait); certify a player with `league conform player`, a referee with `league conform referee`", kind, l.url))
		v.stop("the " + kind + " never registered")
		return false
	}
	switch {
	case reg.notRequest != "":
		v.failf(prefix+"schema", "registration refused: %s", reg.notRequest)
	case len(reg.violations) > 0:
		v.failf(prefix+"schema", "registration refused, %d schema violation(s): %s", len(reg.violations), strings.Join(reg.violations, "; "))
	default:
		v.pass(prefix+"schema", fmt.Sprintf("REGISTER_%s_REQUEST of %s is valid", strings.ToUpper(kind), reg.sender))
	}
	if strings.HasPrefix(reg.refused, "envelope sender") {
		v.fail(prefix+"sender", reg.refused)
	} else if reg.accepted() {
		v.pass(prefix+"sender", fmt.Sprintf("sender %s names %s_id %s", reg.sender, kind, reg.id))
	}
	if !reg.accepted() {
		v.stop("the registration was refused")
		return false
	}
	return true
}

// judgeInbox records the checks of what the subject sent the League Manager after it
// registered: valid against the schemas, and carrying its token.
func (l *leagueSide) judgeInbox(v *verdicts) {
	l.b.mu.Lock()
	defer l.b.mu.Unlock()
	schemaID, tokenID := l.kind+".league.schema", l.kind+".league.token"
	for _, in := range l.inbox {
		switch {
		case in.notRequest != "":
			v.failf(schemaID, "a request to the League Manager is not JSON-RPC: %s", in.notRequest)
		case len(in.violations) > 0:
			v.failf(schemaID, "%s breaks its schema: %s", in.msgType, strings.Join(in.violations, "; "))
		default:
			v.ok(schemaID)
		}
		switch {
		case !in.senderOK:
			v.failf(tokenID, "%s has sender %q, not %q", in.msgType, in.sender, l.attempt.sender)
		case !in.tokenOK:
			v.failf(tokenID, "%s carries no auth_token or one the League Manager did not issue to %s", in.msgType, in.sender)
		default:
			v.ok(tokenID)
		}
	}
	if len(l.inbox) == 0 {
		v.pass(schemaID, "sent nothing to the League Manager after registering")
		v.pass(tokenID, "sent nothing to the League Manager after registering")
	}
}

// judgeShutdown sends LEAGUE_SHUTDOWN and records the checks of its answer and of the
// agent leaving (kind.shutdown, kind.shutdown.leaves).
func (l *leagueSide) judgeShutdown(ctx context.Context, v *verdicts, reg *registration) {
	req := message(protocol.LeagueShutdown, protocol.SenderLeagueManager, protocol.Shutdown{Reason: "conformance run complete", LeagueID: leagueID})
	req.Envelope.AuthToken, req.Envelope.LeagueID = reg.token, leagueID
	a := l.s.call(ctx, reg.endpoint, req, callTimeout, 1)
	id := l.kind + ".shutdown"
	switch {
	case a.problem() != "":
		v.failf(id, "LEAGUE_SHUTDOWN: %s", a.problem())
	case a.result.Envelope.MessageType != protocol.LeagueShutdownAck:
		v.failf(id, "LEAGUE_SHUTDOWN answered with %s, not LEAGUE_SHUTDOWN_ACK", a.result.Envelope.MessageType)
	case a.result.Envelope.ConversationID != req.Envelope.ConversationID:
		v.failf(id, "LEAGUE_SHUTDOWN_ACK has conversation_id %q, the request's is %q", a.result.Envelope.ConversationID, req.Envelope.ConversationID)
	case a.result.Envelope.Sender != reg.sender:
		v.failf(id, "LEAGUE_SHUTDOWN_ACK has sender %q, not %q", a.result.Envelope.Sender, reg.sender)
	case len(a.violations) > 0:
		v.failf(id, "LEAGUE_SHUTDOWN_ACK breaks its schema: %s", strings.Join(a.violations, "; "))
	default:
		v.pass(id, "acknowledged LEAGUE_SHUTDOWN")
	}
	what, gone := "listening", l.s.awaitGone
	if reg.outbound() {
		what, gone = "polling the relay", func(ctx context.Context, _ string, d time.Duration) bool { return l.awaitQuiet(ctx, d) }
	}
	if gone(ctx, reg.endpoint, l.s.opt.Grace) {
		v.pass(id+".leaves", fmt.Sprintf("stopped %s within %s of LEAGUE_SHUTDOWN", what, l.s.opt.Grace))
	} else {
		v.failf(id+".leaves", "still %s %s after LEAGUE_SHUTDOWN", what, l.s.opt.Grace)
	}
}

// announced describes features that lack want.
func announced(features []string, want string) string {
	if len(features) == 0 {
		return "no features"
	}
	return fmt.Sprintf("features %v but not %s", features, want)
}
