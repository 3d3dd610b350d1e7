package conform

// The league-manager subject: the tool registers two referees and four players of its own
// (served on Options.Listen), probes the League Manager under test with good and bad
// requests, lets it run a whole round-robin league in which the tool's referees play every
// assigned match by the real rules (referee.MatchRunner against the tool's players), and
// judges every answer and every message it sends.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
	"github.com/agentleague/agentleague/referee"
	"github.com/google/uuid"
)

// lmPlayers is how many players the tool registers: four make six matches in three rounds.
const lmPlayers = 4

// lmMaxMatches is the max_concurrent_matches each of the tool's referees announces.
const lmMaxMatches = 4

// lmRefereeFeatures are the extensions the first referee announces, so that the League
// Manager's can be exercised; the second announces none, like a referee written from the
// seeds.
var lmRefereeFeatures = []string{protocol.FeatureHeartbeats, protocol.FeatureMatchProgress, protocol.FeatureResultReminders}

// maxNotes bounds each list of problems kept for a reason line.
const maxNotes = 8

// Check ids of the league-manager subject.
const (
	ckOrder         = "lm.register.order"
	ckRefereeReg    = "lm.register.referee"
	ckPlayerReg     = "lm.register.player"
	ckTokens        = "lm.register.tokens"
	ckDuplicate     = "lm.register.duplicate"
	ckJSONRPC       = "lm.answers.jsonrpc"
	ckConversation  = "lm.answers.conversation_id"
	ckEnvelope      = "lm.answers.envelope"
	ckStandingsQ    = "lm.standings.query"
	ckBadAuth       = "lm.bad.auth_token"
	ckBadType       = "lm.bad.unknown_type"
	ckBadEnvelope   = "lm.bad.envelope"
	ckBadPayload    = "lm.bad.payload"
	ckBadJSON       = "lm.bad.malformed_json"
	ckSurvived      = "lm.bad.survived"
	ckStart         = "lm.league.start"
	ckAssignSchema  = "lm.assignment.schema"
	ckAssignContent = "lm.assignment.content"
	ckRounds        = "lm.schedule.rounds"
	ckRoundRobin    = "lm.schedule.round_robin"
	ckResultAck     = "lm.result.ack"
	ckResultDup     = "lm.result.duplicate"
	ckResultToken   = "lm.result.wrong_token"
	ckResultOwner   = "lm.result.not_assigned"
	ckStandings     = "lm.standings.consistent"
	ckFeatures      = "lm.features"
	ckParseCode     = "lm.bad.parse_error_code"
	ckOversized     = "lm.bad.oversized"
	ckSigned        = "lm.assignment.signed"
	ckCredentials   = "lm.assignment.credentials"
	ckQueryMatch    = "lm.query_match"
	ckHeartbeat     = "lm.heartbeat"
	ckReminder      = "lm.result_reminder"
	ckRespected     = "lm.features.respected"
	ckCompletion    = "lm.league.completion"
)

// lmChecks are the checks of `league conform league-manager`, in report order.
var lmChecks = []checkDef{
	{ckOrder, Required, "", "refuse REGISTER_PLAYER_REQUEST with a JSON-RPC error while no referee is registered (seed 004 §3.1 rule 1, §8.2); run conform against a freshly started League Manager"},
	{ckRefereeReg, Required, "", "answer REGISTER_REFEREE_REQUEST with the result {envelope: REGISTER_REFEREE_RESPONSE with league_id, payload: {status: \"registered\", auth_token: a UUID v4, league_id}} (seed 004 §4.2, §4.3, §8.1; schemas/register_referee_response.json)"},
	{ckPlayerReg, Required, "", "answer REGISTER_PLAYER_REQUEST with the result {envelope: REGISTER_PLAYER_RESPONSE with league_id, payload: {status: \"registered\", auth_token: a UUID v4, league_id}} (seed 004 §4.2, §8.1; schemas/register_player_response.json)"},
	{ckTokens, Required, "", "issue every agent a token of its own (seed 004 §8.1)"},
	{ckDuplicate, Required, "", "refuse a second registration of a registered id from another conversation and endpoint with a JSON-RPC error (seed 004 §3.1 \"check uniqueness\", §8.3)"},
	{ckJSONRPC, Required, "%d answers: JSON-RPC 2.0, each echoing its request's id", "answer every request with a JSON-RPC 2.0 response object: jsonrpc \"2.0\", the request's id, and exactly one of result and error (seed 004 §4.1)"},
	{ckConversation, Required, "%d results echo their request's conversation_id", "copy the request's envelope conversation_id into the answer's envelope (seed 004 §4.1, response structure)"},
	{ckEnvelope, Required, "%d results: protocol league.v2, sender league_manager", "answer with envelope protocol \"league.v2\" and sender \"league_manager\" (seed 004 §4.1, §4.4)"},
	{ckStandingsQ, Required, "", "answer QUERY_STANDINGS from a registered player with STANDINGS_RESPONSE {round_id, updated_at, standings} (seed 004 §3.4, §4.3; schemas/standings_response.json)"},
	{ckBadAuth, Required, "", "check that auth_token is the token issued to envelope.sender, and refuse the request with a JSON-RPC error otherwise (seed 004 §8.1)"},
	{ckBadType, Required, "", "answer an unknown message_type with a JSON-RPC error, never by dropping the connection (seed 004 §4.4, §10.1)"},
	{ckBadEnvelope, Required, "", "validate the envelope (protocol league.v2, a UTC timestamp, a conversation_id) and refuse a bad one with a JSON-RPC error (seed 004 §2.3 Protocol Validator, §4.4)"},
	{ckBadPayload, Required, "", "refuse a registration whose payload has no player_id with a JSON-RPC error (seed 004 §4.3, §8.3)"},
	{ckBadJSON, Required, "", "answer a body that is not JSON with a JSON-RPC error object (JSON-RPC 2.0 §5.1)"},
	{ckSurvived, Required, "", "keep serving after a bad request: catch every failure in the request handler and answer it with a JSON-RPC error"},
	{ckStart, Required, "", "close registration (admin start or the registration window) and send MATCH_ASSIGNMENT to a registered referee (seed 004 §3.2); set LEAGUE_ADMIN_TOKEN so the tool can start the league, or raise --wait above the registration window"},
	{ckAssignSchema, Required, "", "send MATCH_ASSIGNMENT as schemas/match_assignment.json says: envelope match_id, round_id, game_type; payload match_id, round_id, game_type, players, player_endpoints (seed 004 §4.2, §4.3)"},
	{ckAssignContent, Required, "", "assign two registered players with the endpoints they registered and the league's game, with the same match_id and round_id in envelope and payload (seed 004 §3.2, §4.4)"},
	{ckRounds, Required, "", "give each match its own match_id and never put a player in two matches of one round (seed 004 §3.2, scheduler step 3)"},
	{ckRoundRobin, Required, "", "schedule every pair of players exactly once: N(N-1)/2 matches (seed 004 §3.2)"},
	{ckResultAck, Required, "", "answer MATCH_RESULT_REPORT from the assigned referee with MATCH_RESULT_ACK {status: \"acknowledged\", match_id} (seed 004 §3.3, §3.4)"},
	{ckResultDup, Required, "", "answer a repeated identical MATCH_RESULT_REPORT with MATCH_RESULT_ACK again or with a JSON-RPC error, and count the result once (seed 004 §3.4, exactly one result per match_id)"},
	{ckResultToken, Required, "", "refuse MATCH_RESULT_REPORT whose auth_token is not the sending referee's (seed 004 §3.4 rule 1)"},
	{ckResultOwner, Required, "", "refuse MATCH_RESULT_REPORT from a referee the match is not assigned to (seed 004 §8.2: referee auth_token + match ownership)"},
	{ckStandings, Required, "", "compute the standings from the acknowledged results only, ranked by points, wins, draws (descending), then player_id (seed 004 §3.4)"},
	{ckFeatures, Recommended, "", "announce the extensions you implement in features of the registration answers (protocol/README.md, Features)"},
	{ckParseCode, Recommended, "", "answer a body that is not JSON with code -32700 and id null (JSON-RPC 2.0 §5.1)"},
	{ckOversized, Recommended, "", "refuse a body over 1 MiB with HTTP 413 or a JSON-RPC error (protocol/README.md, Framing)"},
	{ckSigned, Recommended, "", "put the referee's own token in auth_token of MATCH_ASSIGNMENT when you announce signed_assignments"},
	{ckCredentials, Recommended, "", "send match_credentials {player_id: hex(HMAC-SHA256(key = player's token, message = match_id))} when you announce match_credentials"},
	{ckQueryMatch, Recommended, "", "answer QUERY_MATCH from a player of the match with MATCH_INFO naming its referee when you announce match_query"},
	{ckHeartbeat, Recommended, "", "answer HEARTBEAT_REQUEST with HEARTBEAT_RESPONSE {status, lease_ms} when you announce heartbeats"},
	{ckReminder, Recommended, "", "send RESULT_REMINDER (with the referee's token) to a referee that announced result_reminders when its result is late"},
	{ckRespected, Recommended, "", "send an extension message (RESULT_REMINDER, MATCH_CANCELLED, ...) only to an agent that announced the feature, and only valid messages"},
	{ckCompletion, Recommended, "", "once the last result is in, mark the standings final (final: true, league_state COMPLETED) or send LEAGUE_SHUTDOWN to every agent (seed 004 §6.5)"},
}

// lmAgent is one of the tool's referees or players.
type lmAgent struct {
	r        *lmRun
	id, kind string
	// url is the endpoint it registers.
	url      string
	features []string
	// Guarded by the board's lock: rng picks a player's moves, games holds a player's
	// game of each match it was invited to, progress where a referee's matches stand
	// (for heartbeats).
	rng      *rand.Rand
	games    map[string]game.Game
	progress map[string]protocol.MatchProgress
	token    string
}

func (a *lmAgent) sender() string {
	if a.kind == "referee" {
		return protocol.RefereeSender(a.id)
	}
	return protocol.PlayerSender(a.id)
}

// lmAssignment is one MATCH_ASSIGNMENT a referee of the tool took.
type lmAssignment struct {
	referee string
	env     protocol.Envelope
	a       protocol.Assignment
}

// lmReminder is the match whose result the first referee holds back to see a RESULT_REMINDER.
type lmReminder struct {
	matchID string
	since   time.Time
	got     chan string
}

// lmRun is one run against a League Manager.
type lmRun struct {
	s *session
	v *verdicts
	b *board
	// client carries the calls of the tool's referees to the tool's players.
	client  *protocol.Client
	tag     string
	refs    [2]*lmAgent
	players [lmPlayers]*lmAgent
	agents  map[string]*lmAgent

	// ctx is what matches and heartbeats run under; cancel ends them in close, and bg
	// counts them.
	ctx    context.Context
	cancel context.CancelFunc
	bg     sync.WaitGroup
	// badInputs counts the bad requests sent; only the run's own goroutine uses it.
	badInputs int

	// Guarded by b.mu, shared by the run, the agents' handlers and the match and
	// heartbeat goroutines (and each agent's token and rng).
	// closing refuses assignments once close has begun, so no match starts after bg.Wait.
	closing  bool
	leagueID string
	// lmFeatures are the features of the first registration answer; featuresMissing
	// names the agents whose answer carried none.
	lmFeatures      []string
	featuresMissing []string
	heartbeatEvery  time.Duration
	// assignments are every MATCH_ASSIGNMENT the referees took, repeats included; taken
	// holds "<referee>/<match>" of each match already being played.
	assignments []lmAssignment
	taken       map[string]bool
	// results are the acknowledged results by match; reportsSent counts the reports of
	// played matches, ackProblems keeps those not acknowledged, dupAcked the match whose
	// identical second report was acknowledged again.
	results     map[string]protocol.ResultReport
	reportsSent int
	ackProblems []string
	dupAcked    string
	// inbound are the schema violations of what the agents got, by message type;
	// unexpected the extension messages sent to an agent that did not announce them;
	// shutdowns the agents that got LEAGUE_SHUTDOWN.
	inbound    map[string][]string
	unexpected []string
	shutdowns  []string
	// probed is set once a match carried the result probes; reminder is the match held
	// back for a RESULT_REMINDER.
	probed   bool
	reminder *lmReminder
	// heartbeats counts those answered or refused, heartbeatErr keeps the first problem.
	heartbeats     int
	heartbeatLease int
	heartbeatErr   string
}

// runLeagueManager is the league-manager subject of `league conform`.
func runLeagueManager(ctx context.Context, opt Options, rep *Report) error {
	if u, err := url.Parse(opt.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--url %q must be the League Manager's http(s) JSON-RPC endpoint, e.g. http://127.0.0.1:8000/mcp", opt.URL)
	}
	if opt.Listen == "" {
		opt.Listen = "127.0.0.1:0"
	}
	s, err := newSession(opt)
	if err != nil {
		return err
	}
	s.log = s.log.With().Str("subject", "league-manager").Logger()
	r := &lmRun{s: s, v: newVerdicts(lmChecks), b: newBoard(), client: protocol.NewClientWith(s.v, nil, protocol.ClientOptions{HTTP: s.http, Insecure: opt.Insecure}),
		tag: uuid.NewString()[:6], agents: map[string]*lmAgent{}, taken: map[string]bool{}, results: map[string]protocol.ResultReport{},
		inbound: map[string][]string{}}
	r.ctx, r.cancel = context.WithCancel(context.WithoutCancel(ctx))
	mux := http.NewServeMux()
	base, stop, err := s.serve(opt.Listen, mux)
	if err != nil {
		r.cancel()
		return fmt.Errorf("serve the tool's referees and players: %w", err)
	}
	base = strings.TrimSuffix(base, "/mcp")
	for i := range r.refs {
		r.refs[i] = r.newAgent(mux, base, "referee", fmt.Sprintf("ref%d", i+1))
	}
	r.refs[0].features = lmRefereeFeatures
	for i := range r.players {
		r.players[i] = r.newAgent(mux, base, "player", fmt.Sprintf("p%d", i+1))
		r.players[i].rng = rand.New(rand.NewPCG(uint64(i+1), 7))
	}
	s.log.Info().Str("league_manager", opt.URL).Str("listen", base).Str("game", opt.Game).Msg("league-manager conformance starting")
	r.run(ctx)
	r.b.mu.Lock()
	r.closing = true
	r.b.mu.Unlock()
	r.cancel()
	r.bg.Wait()
	s.stop(ctx, stop)
	if r.heartbeats > 0 {
		r.v.check(ckHeartbeat, errorIf(r.heartbeatErr), fmt.Sprintf("%d HEARTBEAT_REQUESTs answered with a valid HEARTBEAT_RESPONSE (lease_ms %d)", r.heartbeats, r.heartbeatLease))
	}
	r.v.emit(rep)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("league-manager conformance interrupted: %w", err)
	}
	return nil
}

// newAgent makes one of the tool's agents, served at base/kind/conform-<tag>-id/mcp.
func (r *lmRun) newAgent(mux *http.ServeMux, base, kind, id string) *lmAgent {
	a := &lmAgent{r: r, id: "conform-" + r.tag + "-" + id, kind: kind, games: map[string]game.Game{}, progress: map[string]protocol.MatchProgress{}}
	path := "/" + kind + "/" + a.id + "/mcp"
	a.url = base + path
	r.agents[a.id] = a
	mux.Handle("POST "+path, r.s.serveRPC(a, func(rc received) {
		switch mt := rc.msg.Envelope.MessageType; {
		case rc.notRequest != "":
			r.note(r.inbound, "", fmt.Sprintf("%s got a request that is not a JSON-RPC request: %s", a.id, rc.notRequest))
		case len(rc.violations) > 0:
			r.note(r.inbound, mt, fmt.Sprintf("%s to %s: %s", mt, a.id, joinMax(rc.violations, 4)))
		}
	}, r.s.log.With().Str("agent", a.id).Logger()))
	return a
}

// note keeps a problem under key, at most maxNotes of them, and wakes the run.
func (r *lmRun) note(notes map[string][]string, key, problem string) {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if len(notes[key]) < maxNotes {
		notes[key] = append(notes[key], problem)
	}
	r.b.notify()
}

// joinMax lists at most n problems, then how many more there are.
func joinMax(problems []string, n int) string {
	if len(problems) > n {
		problems = append(problems[:n:n], fmt.Sprintf("and %d more", len(problems)-n))
	}
	return strings.Join(problems, "; ")
}

// run takes the steps in order; a step that makes the rest meaningless stops the run, and
// every check not reached is then skipped with its reason.
func (r *lmRun) run(ctx context.Context) {
	for _, step := range []func(context.Context) error{r.registerFirst, r.duplicates, r.badRequests, r.registerRest, r.playLeague} {
		err := step(ctx)
		if ctx.Err() != nil {
			r.v.stop("interrupted")
			return
		}
		if err != nil {
			r.v.stop(err.Error())
			r.s.log.Warn().Str("reason", err.Error()).Msg("stopping the run")
			return
		}
	}
}

// errorIf is problem as an error, nil when it is "".
func errorIf(problem string) error {
	if problem == "" {
		return nil
	}
	return errors.New(problem)
}

// locked reads a value under the board's lock.
func locked[T any](r *lmRun, f func() T) T {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	return f()
}

// send sends msg to the League Manager with the protocol client and judges how it was
// answered; raw posts it as it is, for a probe the client would not send, and body
// marks a probe whose body may be refused before it is read (a plain HTTP answer then).
func (r *lmRun) send(ctx context.Context, label string, msg *protocol.Message, attempts int) *answer {
	a := r.s.call(ctx, r.s.opt.URL, msg, callTimeout, attempts)
	r.judgeAnswer(label, a, msg.Envelope.ConversationID, false)
	return a
}

// sendRaw posts msg as it is: a request that is to be refused, which the protocol
// client would refuse to send itself.
func (r *lmRun) sendRaw(ctx context.Context, label string, msg *protocol.Message) *answer {
	body, id, err := request(msg)
	if err != nil {
		return &answer{err: err}
	}
	a := r.s.post(ctx, r.s.opt.URL, body, id)
	r.judgeAnswer(label, a, msg.Envelope.ConversationID, false)
	return a
}

// judgeAnswer records the checks of every answer of the League Manager: JSON-RPC
// framing, and for a result the conversation_id and the envelope. A probe's body may be
// refused before it is read: a plain HTTP answer is then fair.
func (r *lmRun) judgeAnswer(label string, a *answer, conversationID string, bodyProbe bool) {
	switch {
	case a.err != nil:
		return
	case a.result == nil && a.rpcErr == nil:
		if !bodyProbe {
			r.v.failf(ckJSONRPC, "%s: %s", label, a.describe())
		}
		return
	case a.malformed != "":
		r.v.failf(ckJSONRPC, "%s: %s", label, a.malformed)
		return
	}
	r.v.ok(ckJSONRPC)
	if a.result == nil {
		return
	}
	if env := a.result.Envelope; env.ConversationID != conversationID {
		r.v.failf(ckConversation, "%s: conversation_id %q, the request's was %q", label, env.ConversationID, conversationID)
	} else {
		r.v.ok(ckConversation)
	}
	if env := a.result.Envelope; env.Protocol != protocol.Version || env.Sender != protocol.SenderLeagueManager {
		r.v.failf(ckEnvelope, "%s: protocol %q, sender %q", label, env.Protocol, env.Sender)
	} else {
		r.v.ok(ckEnvelope)
	}
}

// refusal is "" when a is a JSON-RPC error, else what came instead.
func refusal(a *answer) string {
	switch {
	case a.refused():
		return ""
	case a.result != nil:
		return "accepted: " + a.describe()
	}
	return a.describe()
}

// answerOf returns the result of a when it is a message of type want that validates
// against its schema; otherwise an error saying what came instead.
func answerOf(a *answer, want string) (*protocol.Message, error) {
	switch {
	case a.result == nil:
		return nil, errors.New(a.describe())
	case a.result.Envelope.MessageType != want:
		return nil, fmt.Errorf("answered %q, want %s", a.result.Envelope.MessageType, want)
	case len(a.violations) > 0:
		return nil, fmt.Errorf("%s violates its schema: %s", want, joinMax(a.violations, 4))
	}
	return a.result, nil
}

// payloadOf decodes the payload of the result of a, of type want, into v.
func payloadOf(a *answer, want string, v any) error {
	m, err := answerOf(a, want)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(m.Payload, v); err != nil {
		return fmt.Errorf("%s payload cannot be read: %w", want, err)
	}
	return nil
}

// register sends a's registration and judges the answer; on success a holds its token.
func (r *lmRun) register(ctx context.Context, a *lmAgent) error {
	msg := a.registration(a.url)
	return r.registered(r.send(ctx, msg.Envelope.MessageType+" of "+a.id, msg, 1), a)
}

// registered judges a registration answer: a result of the right type that validates,
// whose league_id agrees with the envelope's and with earlier answers. It stores a's token
// and what the League Manager announced.
func (r *lmRun) registered(ans *answer, a *lmAgent) error {
	want := protocol.RegisterPlayerResponse
	if a.kind == "referee" {
		want = protocol.RegisterRefereeResponse
	}
	var p protocol.RegistrationAnswer
	if err := payloadOf(ans, want, &p); err != nil {
		return fmt.Errorf("%s: %w", a.id, err)
	}
	if p.LeagueID != ans.result.Envelope.LeagueID {
		return fmt.Errorf("%s: payload league_id %q differs from the envelope's %q", a.id, p.LeagueID, ans.result.Envelope.LeagueID)
	}
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if r.leagueID != "" && r.leagueID != p.LeagueID {
		return fmt.Errorf("%s: league_id %q, earlier answers said %q", a.id, p.LeagueID, r.leagueID)
	}
	if r.leagueID == "" {
		r.lmFeatures = p.Features
	}
	r.leagueID, a.token = p.LeagueID, p.AuthToken
	if len(p.Features) == 0 {
		r.featuresMissing = append(r.featuresMissing, a.id)
	}
	if a.kind == "referee" && p.HeartbeatIntervalMS > 0 && r.heartbeatEvery == 0 {
		r.heartbeatEvery = time.Duration(p.HeartbeatIntervalMS) * time.Millisecond
	}
	return nil
}

// lmHas says whether the League Manager announced feature at registration.
func (r *lmRun) lmHas(feature string) bool {
	return locked(r, func() bool { return slices.Contains(r.lmFeatures, feature) })
}

// registerFirst checks that a player is refused before any referee, then registers both
// referees and the first player.
func (r *lmRun) registerFirst(ctx context.Context) error {
	p1 := r.players[0]
	a := r.send(ctx, "REGISTER_PLAYER_REQUEST before any referee", p1.registration(p1.url), 1)
	if a.err != nil {
		r.v.fail(ckOrder, a.describe())
		return fmt.Errorf("the League Manager at %s does not answer: %s", r.s.opt.URL, a.describe())
	}
	p1Registered := false
	if why := refusal(a); why == "" {
		r.v.pass(ckOrder, "a player registering before any referee was refused with "+a.rpcErr.Error())
	} else {
		r.v.fail(ckOrder, "a player registering before any referee was "+why)
		// A League Manager that took it gave p1 its token: keep it.
		p1Registered = r.registered(a, p1) == nil
	}
	var problems []string
	for _, ref := range r.refs {
		if err := r.register(ctx, ref); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		r.v.fail(ckRefereeReg, strings.Join(problems, "; "))
		return errors.New("a referee could not register")
	}
	r.v.pass(ckRefereeReg, fmt.Sprintf("%s and %s registered: valid REGISTER_REFEREE_RESPONSE, league_id %q", r.refs[0].id, r.refs[1].id, r.leagueID))
	r.startHeartbeats()
	if !p1Registered {
		if err := r.register(ctx, p1); err != nil {
			r.v.fail(ckPlayerReg, err.Error())
			return errors.New("the first player could not register")
		}
	}
	return nil
}

// duplicates registers the first referee and the first player again from another
// conversation and another endpoint (the same agent behind a query string, so that a
// League Manager that wrongly takes it still reaches the tool).
func (r *lmRun) duplicates(ctx context.Context) error {
	var refused, problems []string
	for _, ag := range []*lmAgent{r.refs[0], r.players[0]} {
		msg := ag.registration(ag.url + "?again=1")
		a := r.send(ctx, "second "+msg.Envelope.MessageType+" of "+ag.id, msg, 1)
		if why := refusal(a); why != "" {
			problems = append(problems, fmt.Sprintf("the second registration of %s: %s", ag.id, a.describe()))
			// Taken: the League Manager now knows the agent by the new answer's token, if any.
			_ = r.registered(a, ag)
			continue
		}
		refused = append(refused, fmt.Sprintf("%s (%s)", ag.id, a.rpcErr.Error()))
	}
	r.v.check(ckDuplicate, errorIf(strings.Join(problems, "; ")), "second registrations from another conversation and endpoint were refused: "+strings.Join(refused, ", "))
	return nil
}

// standingsQuery is a QUERY_STANDINGS of the first player.
func (r *lmRun) standingsQuery() *protocol.Message {
	return r.players[0].message(protocol.QueryStandings, map[string]any{})
}

// badRequests sends one good standings query, then bad requests, each followed by a good
// one to see that the League Manager still answers.
func (r *lmRun) badRequests(ctx context.Context) error {
	_, err := answerOf(r.send(ctx, "QUERY_STANDINGS", r.standingsQuery(), 1), protocol.StandingsResponse)
	r.v.check(ckStandingsQ, err, "a registered player's QUERY_STANDINGS was answered with a valid STANDINGS_RESPONSE")
	p1, ref1 := r.players[0], r.refs[0]
	wrong, other := r.standingsQuery(), r.standingsQuery()
	wrong.Envelope.AuthToken, other.Envelope.AuthToken = uuid.NewString(), locked(r, func() string { return ref1.token })
	noID := "conform-" + r.tag + "-noid"
	var envelopes []lmBadRequest
	for _, bad := range []struct {
		name  string
		spoil func(*protocol.Envelope)
	}{
		{"protocol league.v1", func(e *protocol.Envelope) { e.Protocol = "league.v1" }},
		{"a timestamp at +02:00", func(e *protocol.Envelope) { e.Timestamp = "2025-01-21T10:00:00+02:00" }},
		{"an empty conversation_id", func(e *protocol.Envelope) { e.ConversationID = "" }},
	} {
		msg := r.standingsQuery()
		bad.spoil(&msg.Envelope)
		envelopes = append(envelopes, lmBadRequest{"QUERY_STANDINGS with " + bad.name, msg})
	}
	steps := []struct {
		name string
		run  func(context.Context)
	}{
		{"requests with a wrong auth_token", func(ctx context.Context) {
			r.refusedAll(ctx, ckBadAuth, lmBadRequest{"QUERY_STANDINGS with an unknown token", wrong},
				lmBadRequest{"QUERY_STANDINGS of " + p1.id + " with " + ref1.id + "'s token", other})
		}},
		{"an unknown message type", func(ctx context.Context) {
			r.refusedAll(ctx, ckBadType, lmBadRequest{"message_type CONFORM_NO_SUCH_MESSAGE", p1.message("CONFORM_NO_SUCH_MESSAGE", map[string]any{})})
		}},
		{"envelopes that break seed 004 §4.4", func(ctx context.Context) { r.refusedAll(ctx, ckBadEnvelope, envelopes...) }},
		{"a registration without player_id", func(ctx context.Context) {
			r.refusedAll(ctx, ckBadPayload, lmBadRequest{"REGISTER_PLAYER_REQUEST without player_id",
				message(protocol.RegisterPlayerRequest, protocol.PlayerSender(noID), map[string]any{"endpoint_url": strings.Replace(p1.url, p1.id, noID, 1)})})
		}},
		{"a body that is not JSON", r.badJSON},
		{"a body over 1 MiB", r.oversized},
	}
	for _, step := range steps {
		step.run(ctx)
		// Any JSON-RPC answer shows the League Manager is still serving (an error may be
		// a rate limit).
		if a := r.send(ctx, "QUERY_STANDINGS after "+step.name, r.standingsQuery(), 1); a.result == nil && a.rpcErr == nil {
			r.v.failf(ckSurvived, "after %s, a good QUERY_STANDINGS got %s", step.name, a.describe())
			return errors.New("the League Manager stopped answering after " + step.name)
		}
	}
	r.v.pass(ckSurvived, fmt.Sprintf("a good QUERY_STANDINGS was answered after each of the %d bad requests", r.badInputs))
	return nil
}

// lmBadRequest is a request that must be refused.
type lmBadRequest struct {
	name string
	msg  *protocol.Message
}

// refusedAll sends each request and records check id: each refused with a JSON-RPC
// error, or the first one taken or not answered so.
func (r *lmRun) refusedAll(ctx context.Context, id string, reqs ...lmBadRequest) {
	var how []string
	for _, q := range reqs {
		r.badInputs++
		a := r.sendRaw(ctx, q.name, q.msg)
		if why := refusal(a); why != "" {
			r.v.failf(id, "%s: %s", q.name, why)
			return
		}
		how = append(how, fmt.Sprintf("%s (%s)", q.name, a.rpcErr.Error()))
	}
	r.v.pass(id, "refused: "+strings.Join(how, "; "))
}

func (r *lmRun) badJSON(ctx context.Context) {
	r.badInputs++
	a := r.s.post(ctx, r.s.opt.URL, []byte(`{"jsonrpc": "2.0", "method": "league.handle", "params": {"envelope": `), nil)
	r.judgeAnswer("a body that is not JSON", a, "", true)
	if why := refusal(a); why != "" {
		r.v.fail(ckBadJSON, "a body that is not JSON got "+why)
		r.v.fail(ckParseCode, "no JSON-RPC error came back")
		return
	}
	r.v.pass(ckBadJSON, "a body that is not JSON was refused with "+a.rpcErr.Error())
	switch {
	case a.rpcErr.Code != protocol.CodeParseError:
		r.v.failf(ckParseCode, "code %d, JSON-RPC 2.0 says -32700 (Parse error)", a.rpcErr.Code)
	case len(a.id) > 0 && string(a.id) != "null":
		r.v.failf(ckParseCode, "code -32700 but id %s: JSON-RPC 2.0 says null when the id cannot be read", snippet(a.id, 60))
	default:
		r.v.pass(ckParseCode, "code -32700 with id null")
	}
}

func (r *lmRun) oversized(ctx context.Context) {
	r.badInputs++
	msg := r.standingsQuery()
	msg.Payload, _ = json.Marshal(map[string]string{"padding": strings.Repeat("x", oversizedBytes)})
	body, id, err := request(msg)
	if err != nil {
		r.v.fail(ckOversized, err.Error())
		return
	}
	a := r.s.post(ctx, r.s.opt.URL, body, id)
	r.judgeAnswer("a body over 1 MiB", a, msg.Envelope.ConversationID, true)
	size := fmt.Sprintf("a body of %d bytes", len(body))
	switch {
	case a.refused():
		r.v.pass(ckOversized, size+" was refused with "+a.rpcErr.Error())
	case a.err == nil && a.status == http.StatusRequestEntityTooLarge:
		r.v.pass(ckOversized, size+" was refused with HTTP 413")
	case a.err != nil && !a.timeout && ctx.Err() == nil:
		// Closing the connection on a body it will not read is a refusal too; whether the
		// server survived is lm.bad.survived's business.
		r.v.pass(ckOversized, size+" was cut off: "+a.err.Error())
	default:
		r.v.fail(ckOversized, size+": "+a.describe())
	}
}

// registerRest registers the other players, then judges every player's registration,
// the tokens and the features announced.
func (r *lmRun) registerRest(ctx context.Context) error {
	var problems []string
	for _, p := range r.players[1:] {
		if err := r.register(ctx, p); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		r.v.fail(ckPlayerReg, strings.Join(problems, "; "))
		return errors.New("a player could not register")
	}
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	r.v.pass(ckPlayerReg, fmt.Sprintf("%d players registered: valid REGISTER_PLAYER_RESPONSE, league_id %q", len(r.players), r.leagueID))
	seen := map[string]string{}
	var clash []string
	for _, a := range append(r.refs[:], r.players[:]...) {
		if other, ok := seen[a.token]; ok {
			clash = append(clash, a.id+" got the token of "+other)
		}
		seen[a.token] = a.id
	}
	r.v.check(ckTokens, errorIf(strings.Join(clash, "; ")), fmt.Sprintf("%d agents, %d distinct tokens", len(seen), len(seen)))
	switch missing := r.featuresMissing; {
	case len(missing) >= len(r.refs)+len(r.players):
		r.v.fail(ckFeatures, "no registration answer announces features: agents will use plain league.v2 only")
	case len(missing) > 0:
		r.v.fail(ckFeatures, "the registration answers of "+strings.Join(missing, ", ")+" announce no features")
	default:
		r.v.pass(ckFeatures, "announced: "+strings.Join(r.lmFeatures, ", "))
	}
	return nil
}

// Handle implements protocol.Handler: what the League Manager and the tool's referees
// send one of the tool's agents. A referee plays every match assigned; a player joins
// every match and plays a random legal move by the game's rules.
func (a *lmAgent) Handle(_ context.Context, msg *protocol.Message) (*protocol.Message, error) {
	r, env := a.r, &msg.Envelope
	switch mt := env.MessageType; {
	case mt == protocol.LeagueShutdown:
		r.b.mu.Lock()
		if !slices.Contains(r.shutdowns, a.id) {
			r.shutdowns = append(r.shutdowns, a.id)
		}
		r.b.mu.Unlock()
		return a.reply(msg, protocol.LeagueShutdownAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	case a.kind == "referee" && mt == protocol.MatchAssignment:
		return a.assignment(msg)
	case a.kind == "referee" && mt == protocol.ResultReminder && slices.Contains(a.features, protocol.FeatureResultReminders):
		return a.resultReminder(msg)
	case mt == protocol.MatchCancelled, a.kind == "referee" && mt == protocol.ResultReminder:
		r.b.mu.Lock()
		if len(r.unexpected) < maxNotes {
			r.unexpected = append(r.unexpected, mt+" to "+a.id)
		}
		r.b.mu.Unlock()
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "%s did not announce the feature %s needs", a.id, mt)
	case a.kind == "player" && mt == protocol.GameInvitation:
		var inv protocol.Invitation
		decode(msg.Payload, &inv)
		g, err := game.Default().New(env.GameType, inv.GameParams)
		if err != nil {
			return a.reply(msg, protocol.GameJoinAck, protocol.JoinAck{Status: protocol.StatusDeclined, MatchID: env.MatchID, Reason: "unknown game"})
		}
		locked(r, func() bool { a.games[env.MatchID] = g; return true })
		return a.reply(msg, protocol.GameJoinAck, protocol.JoinAck{Status: protocol.StatusAccepted, MatchID: env.MatchID})
	case a.kind == "player" && mt == protocol.RequestMove:
		var req protocol.MoveRequest
		decode(msg.Payload, &req)
		g := locked(r, func() game.Game { return a.games[env.MatchID] })
		if g == nil {
			return nil, protocol.Errorf(protocol.ReasonUnknownMatch, "%s was not invited to %s", a.id, env.MatchID)
		}
		legal, err := g.LegalMoves(req.StepContext)
		if err != nil || len(legal) == 0 {
			return nil, protocol.Errorf(protocol.ReasonStaleStep, "no legal move in this step_context")
		}
		mv := locked(r, func() json.RawMessage { return legal[a.rng.IntN(len(legal))] })
		step := req.StepNumber
		return a.reply(msg, protocol.MoveResponse, protocol.MoveAnswer{MovePayload: mv, StepNumber: &step, ContextHash: req.ContextHash})
	case a.kind == "player" && mt == protocol.GameOver:
		locked(r, func() bool { delete(a.games, env.MatchID); return true })
		return a.reply(msg, protocol.GameOverAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	}
	return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "a %s does not accept %s", a.kind, env.MessageType)
}

// reply answers msg as agent a, naming the match when msg did.
func (a *lmAgent) reply(msg *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := msg.Reply(messageType, a.sender(), payload)
	if err != nil {
		return nil, fmt.Errorf("reply to %s: %w", msg.Envelope.MessageType, err)
	}
	out.Envelope.MatchID = msg.Envelope.MatchID
	return out, nil
}

// message builds a request from agent a, carrying its token when it has one.
func (a *lmAgent) message(messageType string, payload any) *protocol.Message {
	m := message(messageType, a.sender(), payload)
	a.r.b.mu.Lock()
	m.Envelope.AuthToken, m.Envelope.LeagueID = a.token, a.r.leagueID
	a.r.b.mu.Unlock()
	return m
}

// registration builds the registration request of a, naming endpoint. Like seed 004 §3.1
// says, it carries no auth_token.
func (a *lmAgent) registration(endpoint string) *protocol.Message {
	p := map[string]any{a.kind + "_id": a.id, "endpoint_url": endpoint, "game_types": []string{a.r.s.opt.Game}}
	mt := protocol.RegisterPlayerRequest
	if a.kind == "referee" {
		mt = protocol.RegisterRefereeRequest
		p["max_concurrent_matches"] = lmMaxMatches
	}
	if len(a.features) > 0 {
		p["features"] = a.features
	}
	return message(mt, a.sender(), p)
}

// assignment acknowledges a MATCH_ASSIGNMENT and plays the match in the background; a
// repeated assignment of a match the referee took is acknowledged again.
func (a *lmAgent) assignment(msg *protocol.Message) (*protocol.Message, error) {
	r := a.r
	var as protocol.Assignment
	if err := msg.Decode(&as); err != nil {
		r.note(r.inbound, protocol.MatchAssignment, fmt.Sprintf("MATCH_ASSIGNMENT to %s cannot be read: %v", a.id, err))
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "assignment payload cannot be read")
	}
	g, err := game.Default().New(as.GameType, as.GameParams)
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "the conform referee cannot play %s with these game_params", as.GameType)
	}
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	r.assignments = append(r.assignments, lmAssignment{referee: a.id, env: msg.Envelope, a: as})
	r.b.notify()
	key := a.id + "/" + as.MatchID
	switch {
	case r.closing:
		return nil, protocol.Errorf(protocol.ReasonShuttingDown, "the conformance run is over")
	case !r.taken[key]:
		r.taken[key] = true
		// Ends when the match is reported or the run's context ends.
		r.bg.Go(func() { r.playMatch(a, as, g) })
	}
	r.s.log.Info().Str("conversation_id", msg.Envelope.ConversationID).Str("referee_id", a.id).Str("match_id", as.MatchID).
		Strs("players", as.Players).Msg("match assigned")
	return a.reply(msg, protocol.MatchAssignmentAck, protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: as.MatchID})
}

// setProgress keeps where a match stands for heartbeats; an empty phase forgets it.
func (a *lmAgent) setProgress(matchID, phase string, step int) {
	a.r.b.mu.Lock()
	defer a.r.b.mu.Unlock()
	if phase == "" {
		delete(a.progress, matchID)
		return
	}
	a.progress[matchID] = protocol.MatchProgress{MatchID: matchID, Step: step, Phase: phase}
}

// resultMessage is a MATCH_RESULT_REPORT of as from referee a.
func (a *lmAgent) resultMessage(as protocol.Assignment, outcome map[string]string, points map[string]int, meta any) *protocol.Message {
	m := a.message(protocol.MatchResultReport, map[string]any{"game_type": as.GameType, "players": as.Players, "outcome": outcome,
		"points": points, "game_metadata": meta, "match_id": as.MatchID, "round_id": as.RoundID})
	m.Envelope.RoundID, m.Envelope.MatchID, m.Envelope.GameType = as.RoundID, as.MatchID, as.GameType
	return m
}

// playMatch plays one assigned match by the rules and reports it. The first match of the
// run also carries the result probes; the first of the first referee may be held back to
// see a RESULT_REMINDER.
func (r *lmRun) playMatch(a *lmAgent, as protocol.Assignment, g game.Game) {
	ctx := r.ctx
	log := r.s.log.With().Str("referee_id", a.id).Str("match_id", as.MatchID).Logger()
	probe := locked(r, func() bool { first := !r.probed; r.probed = true; return first })
	if probe {
		r.probeResults(ctx, a, as)
		r.probeQueryMatch(ctx, a, as)
	}
	runner := &referee.MatchRunner{
		RefereeID: a.id, LeagueID: locked(r, func() string { return r.leagueID }), Game: g, A: as, Caller: r.client, Log: log,
		JoinTimeout: r.s.opt.MoveTimeout, MoveTimeout: r.s.opt.MoveTimeout,
		Progress: func(phase string, step int) { a.setProgress(as.MatchID, phase, step) },
	}
	defer a.setProgress(as.MatchID, "", 0)
	rep, err := runner.Run(ctx)
	if err != nil {
		log.Info().Err(err).Msg("match not finished")
		return
	}
	if h := r.claimHold(a, as.MatchID); h != nil {
		r.holdForReminder(ctx, a, h, rep.Metadata.Steps)
	}
	r.report(ctx, a, as, rep, probe)
}

// probeResults sends two reports of a match that must be refused, both players drawn:
// one with a wrong token, one from the referee the match is not assigned to. One the
// League Manager takes stands as the match's result.
func (r *lmRun) probeResults(ctx context.Context, a *lmAgent, as protocol.Assignment) {
	sc := cmp.Or(as.Scoring, &scoring)
	outcome, points := map[string]string{}, map[string]int{}
	for _, p := range as.Players {
		outcome[p], points[p] = string(protocol.Draw), sc.Draw
	}
	other := r.refs[0]
	if a == other {
		other = r.refs[1]
	}
	for _, p := range []struct {
		check, what string
		from        *lmAgent
		token       string
	}{
		{ckResultToken, "with a wrong auth_token", a, uuid.NewString()},
		{ckResultOwner, "from " + other.id + ", which it is not assigned to", other, ""},
	} {
		msg := p.from.resultMessage(as, outcome, points, map[string]any{"conform_probe": "a result no referee played"})
		if p.token != "" {
			msg.Envelope.AuthToken = p.token
		}
		ans := r.send(ctx, "MATCH_RESULT_REPORT of "+as.MatchID+" "+p.what, msg, 1)
		if ctx.Err() != nil {
			return
		}
		if why := refusal(ans); why != "" {
			r.v.failf(p.check, "a report of %s %s: %s", as.MatchID, p.what, ans.describe())
			if _, err := answerOf(ans, protocol.MatchResultAck); err == nil {
				r.accept(as, outcome, points)
			}
			continue
		}
		r.v.pass(p.check, fmt.Sprintf("a report of %s %s was refused with %s", as.MatchID, p.what, ans.rpcErr.Error()))
	}
}

// probeQueryMatch asks, as a player of the match, which referee holds it.
func (r *lmRun) probeQueryMatch(ctx context.Context, a *lmAgent, as protocol.Assignment) {
	if !r.lmHas(protocol.FeatureMatchQuery) || len(as.Players) == 0 {
		return
	}
	p := r.agents[as.Players[0]]
	if p == nil || p.kind != "player" {
		r.v.failf(ckQueryMatch, "match %s names %q, not a player of the tool", as.MatchID, as.Players[0])
		return
	}
	msg := p.message(protocol.QueryMatch, protocol.MatchQuery{MatchID: as.MatchID})
	msg.Envelope.MatchID = as.MatchID
	ans := r.send(ctx, "QUERY_MATCH of "+as.MatchID, msg, 1)
	if ctx.Err() != nil {
		return
	}
	var info protocol.MatchDetails
	switch err := payloadOf(ans, protocol.MatchInfo, &info); {
	case err != nil:
		r.v.fail(ckQueryMatch, err.Error())
	case info.MatchID != as.MatchID:
		r.v.failf(ckQueryMatch, "MATCH_INFO names match %q, asked about %s", info.MatchID, as.MatchID)
	case info.RefereeID == nil || *info.RefereeID != a.id:
		r.v.failf(ckQueryMatch, "MATCH_INFO of %s (status %s) does not name its referee %s", as.MatchID, info.Status, a.id)
	default:
		r.v.pass(ckQueryMatch, fmt.Sprintf("MATCH_INFO of %s names referee %s (status %s)", as.MatchID, a.id, info.Status))
	}
}

// report sends the result of a played match until an answer comes, judges the
// acknowledgement, and for the probed match sends it a second time.
func (r *lmRun) report(ctx context.Context, a *lmAgent, as protocol.Assignment, rep *referee.Report, probe bool) {
	if locked(r, func() bool { _, forged := r.results[as.MatchID]; return forged }) {
		// A probe's report was taken for this match: nothing more would be accepted.
		if probe {
			r.v.skip(ckResultDup, "the League Manager took a probe's report of "+as.MatchID+", so no report of the match was sent twice")
		}
		return
	}
	for try := range 2 {
		label := "MATCH_RESULT_REPORT of " + as.MatchID
		if try == 1 {
			label = "second identical " + label
		}
		// The first report is sent again while no answer comes, as a referee would.
		attempts := 3
		if try == 1 {
			attempts = 1
		}
		ans := r.send(ctx, label, a.resultMessage(as, rep.Outcome, rep.Points, rep.Metadata), attempts)
		if ctx.Err() != nil {
			return
		}
		var ack protocol.MatchAck
		err := payloadOf(ans, protocol.MatchResultAck, &ack)
		if err == nil && ack.MatchID != as.MatchID {
			err = fmt.Errorf("MATCH_RESULT_ACK names match %q", ack.MatchID)
		}
		if try == 0 {
			r.b.mu.Lock()
			r.reportsSent++
			if err != nil && len(r.ackProblems) < maxNotes {
				r.ackProblems = append(r.ackProblems, as.MatchID+": "+err.Error())
			}
			r.b.mu.Unlock()
			if err == nil {
				r.accept(as, rep.Outcome, rep.Points)
			}
			if err != nil || !probe {
				return
			}
			continue
		}
		switch {
		case ans.refused():
			r.v.pass(ckResultDup, fmt.Sprintf("an identical second report of %s was refused with %s", as.MatchID, ans.rpcErr.Error()))
		case err != nil:
			r.v.failf(ckResultDup, "an identical second report of %s: %v", as.MatchID, err)
		default:
			r.b.mu.Lock()
			r.dupAcked = as.MatchID
			r.b.mu.Unlock()
			r.v.pass(ckResultDup, fmt.Sprintf("an identical second report of %s was acknowledged again", as.MatchID))
		}
	}
}

// accept keeps an acknowledged result, the first for each match.
func (r *lmRun) accept(as protocol.Assignment, outcome map[string]string, points map[string]int) {
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if _, ok := r.results[as.MatchID]; !ok {
		r.results[as.MatchID] = protocol.ResultReport{Players: slices.Clone(as.Players), Outcome: maps.Clone(outcome), Points: maps.Clone(points)}
	}
	r.b.notify()
}

// reminderReady says why the League Manager or the run does not allow the reminder
// check, "" when they do.
func (r *lmRun) reminderReady() string {
	for _, f := range lmRefereeFeatures {
		if !r.lmHas(f) {
			return fmt.Sprintf("the League Manager did not announce %s (a reminder is checked with a referee announcing %v)", f, lmRefereeFeatures)
		}
	}
	if r.s.opt.ReminderWait <= 0 {
		return "not checked: --reminder-wait is 0 (set it above the League Manager's result_report_ms)"
	}
	return ""
}

// claimHold picks the first match the first referee finishes as the one whose result is
// held back; nil for any other.
func (r *lmRun) claimHold(a *lmAgent, matchID string) *lmReminder {
	if a != r.refs[0] || r.reminderReady() != "" {
		return nil
	}
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	if r.reminder != nil {
		return nil
	}
	r.reminder = &lmReminder{matchID: matchID, since: time.Now(), got: make(chan string, 1)}
	return r.reminder
}

// holdForReminder says play is over (phase reporting) and waits for the RESULT_REMINDER.
func (r *lmRun) holdForReminder(ctx context.Context, a *lmAgent, h *lmReminder, steps int) {
	a.setProgress(h.matchID, protocol.PhaseReporting, steps)
	r.heartbeat(ctx, a)
	t := time.NewTimer(r.s.opt.ReminderWait)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case how := <-h.got:
		r.v.pass(ckReminder, fmt.Sprintf("RESULT_REMINDER of %s came %s after the referee said play was over (%s); the report followed",
			h.matchID, time.Since(h.since).Round(time.Millisecond), how))
	case <-t.C:
		if bad := locked(r, func() []string { return slices.Clone(r.inbound[protocol.ResultReminder]) }); len(bad) > 0 {
			r.v.fail(ckReminder, "RESULT_REMINDER broke its schema: "+bad[0])
			return
		}
		r.v.skip(ckReminder, fmt.Sprintf("no RESULT_REMINDER of %s within --reminder-wait %s of its referee saying play was over; set --reminder-wait above the League Manager's result_report_ms",
			h.matchID, r.s.opt.ReminderWait))
	}
}

// resultReminder answers RESULT_REMINDER with where the match stands and lets the held
// report go.
func (a *lmAgent) resultReminder(msg *protocol.Message) (*protocol.Message, error) {
	r := a.r
	var p protocol.Reminder
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "reminder payload cannot be read")
	}
	r.b.mu.Lock()
	prog, held := a.progress[p.MatchID]
	h := r.reminder
	signed := slices.Contains(r.lmFeatures, protocol.FeatureSignedAssignments)
	tokenOK := protocol.TokenEqual(msg.Envelope.AuthToken, a.token)
	r.b.notify()
	r.b.mu.Unlock()
	phase := protocol.PhaseUnknown
	if held {
		phase = prog.Phase
	}
	if h != nil && h.matchID == p.MatchID {
		how := fmt.Sprintf("attempt %d", p.Attempt)
		if signed && !tokenOK {
			how += ", without the referee's token although signed_assignments was announced"
		}
		select {
		case h.got <- how:
		default:
		}
	}
	return a.reply(msg, protocol.ResultReminderAck, protocol.ReminderAck{Status: protocol.StatusAcknowledged, MatchID: p.MatchID, Phase: phase, Resent: held && phase == protocol.PhaseReporting})
}

// startHeartbeats sends the first referee's heartbeats when both sides announced them.
func (r *lmRun) startHeartbeats() {
	if !r.lmHas(protocol.FeatureHeartbeats) {
		r.v.skip(ckHeartbeat, "the League Manager did not announce heartbeats")
		return
	}
	every := cmp.Or(locked(r, func() time.Duration { return r.heartbeatEvery }), 2*time.Second)
	r.bg.Go(func() {
		// Ends when the run's context ends.
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			r.heartbeat(r.ctx, r.refs[0])
			select {
			case <-r.ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// heartbeat sends one HEARTBEAT_REQUEST listing where a's matches stand and judges the answer.
func (r *lmRun) heartbeat(ctx context.Context, a *lmAgent) {
	r.b.mu.Lock()
	progress := slices.SortedFunc(maps.Values(a.progress), func(x, y protocol.MatchProgress) int { return strings.Compare(x.MatchID, y.MatchID) })
	withProgress := slices.Contains(r.lmFeatures, protocol.FeatureMatchProgress)
	r.b.mu.Unlock()
	payload := protocol.Heartbeat{ActiveMatches: []string{}}
	for _, p := range progress {
		if p.Phase == protocol.PhaseJoining || p.Phase == protocol.PhasePlaying {
			payload.ActiveMatches = append(payload.ActiveMatches, p.MatchID)
		}
	}
	if withProgress {
		payload.MatchProgress = progress
	}
	ans := r.send(ctx, "HEARTBEAT_REQUEST of "+a.id, a.message(protocol.HeartbeatRequest, payload), 1)
	if ctx.Err() != nil {
		return
	}
	var p protocol.HeartbeatAnswer
	err := payloadOf(ans, protocol.HeartbeatResponse, &p)
	r.b.mu.Lock()
	defer r.b.mu.Unlock()
	r.heartbeats++
	if err != nil && r.heartbeatErr == "" {
		r.heartbeatErr = fmt.Sprintf("heartbeat %d: %v", r.heartbeats, err)
	}
	if err == nil {
		r.heartbeatLease = p.LeaseMS
	}
}

// playLeague starts the league (or waits for the League Manager to), lets it run to the
// last result, and judges the schedule, the results and the standings.
func (r *lmRun) playLeague(ctx context.Context) error {
	for _, f := range []struct{ feature, check string }{
		{protocol.FeatureSignedAssignments, ckSigned}, {protocol.FeatureMatchCredentials, ckCredentials}, {protocol.FeatureMatchQuery, ckQueryMatch},
	} {
		if !r.lmHas(f.feature) {
			r.v.skip(f.check, "the League Manager did not announce "+f.feature)
		}
	}
	if why := r.reminderReady(); why != "" {
		r.v.skip(ckReminder, why)
	}
	registered := time.Now()
	how := "the League Manager closed registration itself"
	if r.s.opt.AdminToken != "" {
		msg := message(protocol.AdminStartLeagueRequest, protocol.SenderAdmin, map[string]any{})
		msg.Envelope.AuthToken = r.s.opt.AdminToken
		how = "ADMIN_START_LEAGUE_REQUEST answered with a valid ADMIN_START_LEAGUE_RESPONSE"
		if _, err := answerOf(r.send(ctx, "ADMIN_START_LEAGUE_REQUEST", msg, 1), protocol.AdminStartLeagueResponse); err != nil {
			how = "ADMIN_START_LEAGUE_REQUEST: " + err.Error()
		}
	}
	if !r.b.await(ctx, r.s.opt.Wait, true, func() bool { return len(r.assignments) > 0 || len(r.inbound[protocol.MatchAssignment]) > 0 }) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.v.failf(ckStart, "no MATCH_ASSIGNMENT within --wait %s of the last registration (%s)", r.s.opt.Wait, how)
		return errors.New("the league did not start")
	}
	if r.s.opt.AdminToken != "" && !strings.HasSuffix(how, "RESPONSE") {
		how += "; the League Manager started the league itself"
	}
	r.v.pass(ckStart, fmt.Sprintf("the first MATCH_ASSIGNMENT came %s after the last registration; %s", time.Since(registered).Round(time.Millisecond), how))

	// Nothing may move while a result is held back for a reminder.
	idle := r.s.opt.Wait + r.s.opt.ReminderWait
	complete := r.b.await(ctx, idle, true, func() bool { return len(r.missingPairs()) == 0 })
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.b.mu.Lock()
	r.judgeAssignments()
	r.judgeSchedule()
	switch {
	case len(r.ackProblems) > 0:
		r.v.fail(ckResultAck, strings.Join(r.ackProblems, "; "))
	case r.reportsSent == 0:
		r.v.skip(ckResultAck, "no match was played to the end")
	default:
		r.v.pass(ckResultAck, fmt.Sprintf("%d reports acknowledged with a valid MATCH_RESULT_ACK naming the match (%d results in all)", r.reportsSent, len(r.results)))
	}
	unexpected := slices.Clone(r.unexpected)
	for mt, notes := range r.inbound {
		if mt != protocol.MatchAssignment && mt != protocol.ResultReminder && mt != protocol.LeagueShutdown {
			unexpected = append(unexpected, notes...)
		}
	}
	r.b.mu.Unlock()
	if !complete {
		r.v.skip(ckResultDup, "the league did not complete")
	}
	r.judgeStandings(ctx, complete)
	r.v.check(ckRespected, errorIf(strings.Join(unexpected, "; ")), "no extension message reached an agent that did not announce it, and every message the agents got was valid")
	if !complete {
		return fmt.Errorf("the league did not complete: nothing moved for %s", idle)
	}
	return nil
}

// pairs lists every pair of players, each sorted.
func pairs(players []*lmAgent) [][2]string {
	var out [][2]string
	for i, a := range players {
		for _, b := range players[i+1:] {
			out = append(out, pairOf(a.id, b.id))
		}
	}
	return out
}

// pairOf is a match's two players, sorted.
func pairOf(a, b string) [2]string {
	return [2]string{min(a, b), max(a, b)}
}

// missingPairs lists the pairs of the tool's players without an acknowledged result;
// callers hold b.mu.
func (r *lmRun) missingPairs() [][2]string {
	done := map[[2]string]bool{}
	for _, res := range r.results {
		if len(res.Players) == 2 {
			done[pairOf(res.Players[0], res.Players[1])] = true
		}
	}
	return slices.DeleteFunc(pairs(r.players[:]), func(p [2]string) bool { return done[p] })
}

// judgeAssignments checks every MATCH_ASSIGNMENT against its schema and what it must
// say; callers hold b.mu.
func (r *lmRun) judgeAssignments() {
	r.v.check(ckAssignSchema, errorIf(strings.Join(r.inbound[protocol.MatchAssignment], "; ")), fmt.Sprintf("%d MATCH_ASSIGNMENTs, every one valid", len(r.assignments)))
	var content, signed, creds []string
	note := func(list *[]string, format string, args ...any) {
		if len(*list) < maxNotes {
			*list = append(*list, fmt.Sprintf(format, args...))
		}
	}
	for _, x := range r.assignments {
		a, e := x.a, x.env
		switch {
		case e.MatchID != a.MatchID || e.RoundID != a.RoundID:
			note(&content, "%s: envelope names match %q round %q, payload match %q round %q", x.referee, e.MatchID, e.RoundID, a.MatchID, a.RoundID)
		case e.GameType != a.GameType || a.GameType != r.s.opt.Game:
			note(&content, "%s: game_type %q (envelope %q), the league plays %s (--game)", a.MatchID, a.GameType, e.GameType, r.s.opt.Game)
		case e.LeagueID != "" && e.LeagueID != r.leagueID:
			note(&content, "%s: envelope league_id %q, registration said %q", a.MatchID, e.LeagueID, r.leagueID)
		}
		for _, p := range a.Players {
			switch ag := r.agents[p]; {
			case ag == nil || ag.kind != "player":
				note(&content, "%s: %q is not a registered player", a.MatchID, p)
			case a.PlayerEndpoints[p] != ag.url:
				note(&content, "%s: endpoint of %s is %q, it registered %q", a.MatchID, p, a.PlayerEndpoints[p], ag.url)
			case a.MatchCredentials[p] != protocol.MatchCredential(ag.token, a.MatchID):
				note(&creds, "%s: the credential of %s is not HMAC-SHA256(its token, match_id)", a.MatchID, p)
			}
		}
		if !protocol.TokenEqual(e.AuthToken, r.agents[x.referee].token) {
			note(&signed, "the assignment of %s to %s does not carry that referee's token", a.MatchID, x.referee)
		}
	}
	n := len(r.assignments)
	r.v.check(ckAssignContent, errorIf(strings.Join(content, "; ")), fmt.Sprintf("%d assignments name registered players, their registered endpoints and %s", n, r.s.opt.Game))
	if slices.Contains(r.lmFeatures, protocol.FeatureSignedAssignments) {
		r.v.check(ckSigned, errorIf(strings.Join(signed, "; ")), fmt.Sprintf("%d assignments carry their referee's own token", n))
	}
	if slices.Contains(r.lmFeatures, protocol.FeatureMatchCredentials) {
		r.v.check(ckCredentials, errorIf(strings.Join(creds, "; ")), fmt.Sprintf("%d assignments carry both players' match credentials", n))
	}
}

// judgeSchedule checks that match ids are distinct, nobody plays twice in a round, and
// every pair meets exactly once; callers hold b.mu.
func (r *lmRun) judgeSchedule() {
	byMatch := map[string][2]string{}
	inRound := map[string]map[string]string{}
	var problems []string
	for _, x := range r.assignments {
		a := x.a
		if len(a.Players) != 2 {
			problems = append(problems, fmt.Sprintf("%s has %d players", a.MatchID, len(a.Players)))
			continue
		}
		p := pairOf(a.Players[0], a.Players[1])
		if old, seen := byMatch[a.MatchID]; seen {
			// A match sent again (a retry, or to another referee) is the same match.
			if old != p {
				problems = append(problems, fmt.Sprintf("match id %s names %s-%s and %s-%s", a.MatchID, old[0], old[1], p[0], p[1]))
			}
			continue
		}
		byMatch[a.MatchID] = p
		if inRound[a.RoundID] == nil {
			inRound[a.RoundID] = map[string]string{}
		}
		for _, id := range p {
			if other, ok := inRound[a.RoundID][id]; ok {
				problems = append(problems, fmt.Sprintf("%s plays %s and %s in round %s", id, other, a.MatchID, a.RoundID))
			}
			inRound[a.RoundID][id] = a.MatchID
		}
	}
	r.v.check(ckRounds, errorIf(strings.Join(problems, "; ")), fmt.Sprintf("%d distinct match ids in %d rounds; nobody plays twice in a round", len(byMatch), len(inRound)))
	count := map[[2]string]int{}
	for _, p := range byMatch {
		count[p]++
	}
	var missing, twice []string
	for _, p := range pairs(r.players[:]) {
		switch n := count[p]; {
		case n == 0:
			missing = append(missing, p[0]+"-"+p[1])
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s-%s (%d matches)", p[0], p[1], n))
		}
	}
	var err error
	switch {
	case len(missing) > 0 && len(twice) > 0:
		err = fmt.Errorf("never paired: %s; paired more than once: %s", strings.Join(missing, ", "), strings.Join(twice, ", "))
	case len(missing) > 0:
		err = fmt.Errorf("never paired within --wait: %s", strings.Join(missing, ", "))
	case len(twice) > 0:
		err = fmt.Errorf("paired more than once: %s", strings.Join(twice, ", "))
	}
	r.v.check(ckRoundRobin, err, fmt.Sprintf("all %d pairs of the %d players met exactly once", len(pairs(r.players[:])), len(r.players)))
}

// standingsTries and standingsPause bound how long the standings may lag the last
// acknowledgement: seed 004 §3.4 recomputes them after answering the referee.
const (
	standingsTries = 5
	standingsPause = 100 * time.Millisecond
)

// judgeStandings compares the standings with a recount of the acknowledged results, and
// looks for the sign that the league is over.
func (r *lmRun) judgeStandings(ctx context.Context, complete bool) {
	var err error
	var final protocol.Standings
	for try := range standingsTries {
		if try > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(standingsPause):
			}
		}
		final = protocol.Standings{}
		if err = payloadOf(r.send(ctx, "final QUERY_STANDINGS", r.standingsQuery(), 1), protocol.StandingsResponse, &final); err == nil {
			if err = r.compareStandings(final.Standings); err == nil {
				break
			}
		}
	}
	r.b.mu.Lock()
	n, dup, shutdowns, badShutdown := len(r.results), r.dupAcked, len(r.shutdowns), slices.Clone(r.inbound[protocol.LeagueShutdown])
	r.b.mu.Unlock()
	if err != nil && dup != "" {
		err = fmt.Errorf("%w (the second report of %s was acknowledged: counted twice?)", err, dup)
	}
	r.v.check(ckStandings, err, fmt.Sprintf("the standings agree with a recount of the %d acknowledged results, ranked by points, wins, draws, player_id", n))
	switch {
	case !complete:
		r.v.skip(ckCompletion, "the league did not complete")
	case len(badShutdown) > 0:
		r.v.fail(ckCompletion, "LEAGUE_SHUTDOWN broke its schema: "+badShutdown[0])
	case shutdowns > 0:
		r.v.pass(ckCompletion, fmt.Sprintf("LEAGUE_SHUTDOWN reached %d of the tool's agents", shutdowns))
	case final.Final || final.LeagueState == "COMPLETED":
		r.v.pass(ckCompletion, fmt.Sprintf("the standings after the last result say final: %v, league_state %q", final.Final, final.LeagueState))
	default:
		r.v.fail(ckCompletion, "after the last result neither LEAGUE_SHUTDOWN came nor did the standings say final: true or league_state COMPLETED")
	}
}

// compareStandings checks rows against the acknowledged results: the tool's players'
// numbers and order, and no one else with a match played.
func (r *lmRun) compareStandings(rows []protocol.StandingsRow) error {
	r.b.mu.Lock()
	results := make([]standings.Result, 0, len(r.results))
	for _, res := range r.results {
		results = append(results, standings.Result{Outcomes: res.Outcome, Points: res.Points})
	}
	r.b.mu.Unlock()
	ids := make([]string, 0, len(r.players))
	for _, p := range r.players {
		ids = append(ids, p.id)
	}
	want, err := standings.Recount(ids, results)
	if err != nil {
		return fmt.Errorf("the acknowledged results cannot be counted: %w", err)
	}
	got := map[string]protocol.StandingsRow{}
	for _, row := range rows {
		if _, dup := got[row.PlayerID]; dup {
			return fmt.Errorf("%s is listed twice", row.PlayerID)
		}
		got[row.PlayerID] = row
		if r.agents[row.PlayerID] == nil && row.MatchesPlayed > 0 {
			return fmt.Errorf("%s, who played no acknowledged match, is listed with %d matches", row.PlayerID, row.MatchesPlayed)
		}
	}
	line := func(s protocol.StandingsRow) string {
		return fmt.Sprintf("%d points, %d wins, %d draws, %d losses, %d played", s.Points, s.Wins, s.Draws, s.Losses, s.MatchesPlayed)
	}
	var ours []protocol.StandingsRow
	for _, w := range want {
		g, ok := got[w.PlayerID]
		switch {
		case !ok && w.MatchesPlayed > 0:
			return fmt.Errorf("%s is missing; it played %d acknowledged matches", w.PlayerID, w.MatchesPlayed)
		case !ok:
		case g.Points != w.Points || g.Wins != w.Wins || g.Draws != w.Draws || g.Losses != w.Losses || g.MatchesPlayed != w.MatchesPlayed:
			return fmt.Errorf("%s has %s; the acknowledged results give %s", w.PlayerID, line(g), line(w))
		default:
			ours = append(ours, g)
		}
	}
	slices.SortFunc(ours, func(a, b protocol.StandingsRow) int { return cmp.Compare(a.Rank, b.Rank) })
	for i := 1; i < len(ours); i++ {
		a, b := ours[i-1], ours[i]
		if a.Rank == b.Rank {
			return fmt.Errorf("%s and %s share rank %d; the player_id breaks the last tie", a.PlayerID, b.PlayerID, a.Rank)
		}
		if cmp.Or(cmp.Compare(b.Points, a.Points), cmp.Compare(b.Wins, a.Wins), cmp.Compare(b.Draws, a.Draws), cmp.Compare(a.PlayerID, b.PlayerID)) > 0 {
			return fmt.Errorf("%s (rank %d) is ranked above %s (rank %d): points, wins, draws, then player_id order them the other way", a.PlayerID, a.Rank, b.PlayerID, b.Rank)
		}
	}
	return nil
}
