package conform

// The league-manager subject: the tool registers two referees and four players of its own
// (served on Options.Listen), probes the League Manager under test with good and bad
// requests, lets it run a whole round-robin league in which the tool's referees play every
// assigned match by the real rules (referee.MatchRunner against the tool's players), and
// judges every answer and every message it sends.

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// lmPlayers is how many players the tool registers: four make six matches in three rounds.
const lmPlayers = 4

// lmMaxMatches is the max_concurrent_matches each of the tool's referees announces.
const lmMaxMatches = 4

// lmRefereeFeatures are the extensions the first referee announces, so that the League
// Manager's can be exercised; the second announces none, like a referee written from the
// seeds.
var lmRefereeFeatures = []string{protocol.FeatureHeartbeats, protocol.FeatureMatchProgress, protocol.FeatureResultReminders}

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

// lmCheck is one check of the subject: its level (required when seed 004 demands it) and
// the hint shown when it does not pass.
type lmCheck struct {
	id    string
	level Level
	hint  string
}

// lmChecks lists every check; one the run never reached is reported as skipped, so the
// report always names them all.
var lmChecks = []lmCheck{
	{ckOrder, Required, "refuse REGISTER_PLAYER_REQUEST with a JSON-RPC error while no referee is registered (seed 004 §3.1 rule 1, §8.2); run conform against a freshly started League Manager"},
	{ckRefereeReg, Required, "answer REGISTER_REFEREE_REQUEST with the result {envelope: REGISTER_REFEREE_RESPONSE with league_id, payload: {status: \"registered\", auth_token: a UUID v4, league_id}} (seed 004 §4.2, §4.3, §8.1; schemas/register_referee_response.json)"},
	{ckPlayerReg, Required, "answer REGISTER_PLAYER_REQUEST with the result {envelope: REGISTER_PLAYER_RESPONSE with league_id, payload: {status: \"registered\", auth_token: a UUID v4, league_id}} (seed 004 §4.2, §8.1; schemas/register_player_response.json)"},
	{ckTokens, Required, "issue every agent a token of its own (seed 004 §8.1)"},
	{ckDuplicate, Required, "refuse a second registration of a registered id from another conversation and endpoint with a JSON-RPC error (seed 004 §3.1 \"check uniqueness\", §8.3)"},
	{ckJSONRPC, Required, "answer every request with a JSON-RPC 2.0 response object: jsonrpc \"2.0\", the request's id, and exactly one of result and error (seed 004 §4.1)"},
	{ckConversation, Required, "copy the request's envelope conversation_id into the answer's envelope (seed 004 §4.1, response structure)"},
	{ckEnvelope, Required, "answer with envelope protocol \"league.v2\" and sender \"league_manager\" (seed 004 §4.1, §4.4)"},
	{ckStandingsQ, Required, "answer QUERY_STANDINGS from a registered player with STANDINGS_RESPONSE {round_id, updated_at, standings} (seed 004 §3.4, §4.3; schemas/standings_response.json)"},
	{ckBadAuth, Required, "check that auth_token is the token issued to envelope.sender, and refuse the request with a JSON-RPC error otherwise (seed 004 §8.1)"},
	{ckBadType, Required, "answer an unknown message_type with a JSON-RPC error, never by dropping the connection (seed 004 §4.4, §10.1)"},
	{ckBadEnvelope, Required, "validate the envelope (protocol league.v2, a UTC timestamp, a conversation_id) and refuse a bad one with a JSON-RPC error (seed 004 §2.3 Protocol Validator, §4.4)"},
	{ckBadPayload, Required, "refuse a registration whose payload has no player_id with a JSON-RPC error (seed 004 §4.3, §8.3)"},
	{ckBadJSON, Required, "answer a body that is not JSON with a JSON-RPC error object (JSON-RPC 2.0 §5.1)"},
	{ckSurvived, Required, "keep serving after a bad request: catch every failure in the request handler and answer it with a JSON-RPC error"},
	{ckStart, Required, "close registration (admin start or the registration window) and send MATCH_ASSIGNMENT to a registered referee (seed 004 §3.2); set LEAGUE_ADMIN_TOKEN so the tool can start the league, or raise --wait above the registration window"},
	{ckAssignSchema, Required, "send MATCH_ASSIGNMENT as schemas/match_assignment.json says: envelope match_id, round_id, game_type; payload match_id, round_id, game_type, players, player_endpoints (seed 004 §4.2, §4.3)"},
	{ckAssignContent, Required, "assign two registered players with the endpoints they registered and the league's game, with the same match_id and round_id in envelope and payload (seed 004 §3.2, §4.4)"},
	{ckRounds, Required, "give each match its own match_id and never put a player in two matches of one round (seed 004 §3.2, scheduler step 3)"},
	{ckRoundRobin, Required, "schedule every pair of players exactly once: N(N-1)/2 matches (seed 004 §3.2)"},
	{ckResultAck, Required, "answer MATCH_RESULT_REPORT from the assigned referee with MATCH_RESULT_ACK {status: \"acknowledged\", match_id} (seed 004 §3.3, §3.4)"},
	{ckResultDup, Required, "answer a repeated identical MATCH_RESULT_REPORT with MATCH_RESULT_ACK again or with a JSON-RPC error, and count the result once (seed 004 §3.4, exactly one result per match_id)"},
	{ckResultToken, Required, "refuse MATCH_RESULT_REPORT whose auth_token is not the sending referee's (seed 004 §3.4 rule 1)"},
	{ckResultOwner, Required, "refuse MATCH_RESULT_REPORT from a referee the match is not assigned to (seed 004 §8.2: referee auth_token + match ownership)"},
	{ckStandings, Required, "compute the standings from the acknowledged results only, ranked by points, wins, draws (descending), then player_id (seed 004 §3.4)"},
	{ckFeatures, Recommended, "announce the extensions you implement in features of the registration answers (protocol/README.md, Features)"},
	{ckParseCode, Recommended, "answer a body that is not JSON with code -32700 and id null (JSON-RPC 2.0 §5.1)"},
	{ckOversized, Recommended, "refuse a body over 1 MiB with HTTP 413 or a JSON-RPC error (protocol/README.md, Framing)"},
	{ckSigned, Recommended, "put the referee's own token in auth_token of MATCH_ASSIGNMENT when you announce signed_assignments"},
	{ckCredentials, Recommended, "send match_credentials {player_id: hex(HMAC-SHA256(key = player's token, message = match_id))} when you announce match_credentials"},
	{ckQueryMatch, Recommended, "answer QUERY_MATCH from a player of the match with MATCH_INFO naming its referee when you announce match_query"},
	{ckHeartbeat, Recommended, "answer HEARTBEAT_REQUEST with HEARTBEAT_RESPONSE {status, lease_ms} when you announce heartbeats"},
	{ckReminder, Recommended, "send RESULT_REMINDER (with the referee's token) to a referee that announced result_reminders when its result is late"},
	{ckRespected, Recommended, "send an extension message (RESULT_REMINDER, MATCH_CANCELLED, ...) only to an agent that announced the feature, and only valid messages"},
	{ckCompletion, Recommended, "once the last result is in, mark the standings final (final: true, league_state COMPLETED) or send LEAGUE_SHUTDOWN to every agent (seed 004 §6.5)"},
}

// lmAgent is one of the tool's referees or players.
type lmAgent struct {
	id, kind string
	// url is the endpoint it registers.
	url      string
	features []string
	// srv answers the requests sent to it.
	srv http.Handler
	// rng picks a player's moves; guarded by lmRun.mu like token and games.
	rng   *rand.Rand
	token string
	// games holds a player's game of each match it was invited to.
	games map[string]game.Game
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

// lmRun is one run of the subject.
type lmRun struct {
	opt    Options
	rep    *Report
	log    zerolog.Logger
	v      *protocol.Validator
	wire   *lmWire
	reg    *game.Registry
	srv    *httpserve.Server
	base   string
	client *protocol.Client
	tag    string

	refs    [2]*lmAgent
	players [lmPlayers]*lmAgent
	agents  map[string]*lmAgent

	// ctx is what matches and heartbeats run under; cancel ends them in close.
	ctx    context.Context
	cancel context.CancelFunc
	// bg counts the match and heartbeat goroutines.
	bg sync.WaitGroup
	// changed is signalled when the league moves: an assignment, a result, a reminder.
	changed chan struct{}

	// badInputs counts the bad requests sent; only the run's own goroutine uses it.
	badInputs int

	// mu guards what follows, shared by the run, the agents' handlers and the match and
	// heartbeat goroutines (and each agent's token, rng and games).
	mu sync.Mutex
	// recorded are the checks reported so far; stopReason says why the run stopped early.
	recorded   map[string]bool
	stopReason string
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
	results     map[string]lmResult
	reportsSent int
	ackProblems []string
	dupAcked    string
	// progress is where each referee's matches stand (referee, then match), for heartbeats.
	progress map[string]map[string]protocol.MatchProgress
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

// lmResult is an acknowledged result.
type lmResult struct {
	players  []string
	outcomes map[string]string
	points   map[string]int
}

// runLeagueManager is the league-manager subject of `league conform`.
func runLeagueManager(ctx context.Context, opt Options, rep *Report) error {
	r, err := newLMRun(opt, rep)
	if err != nil {
		return err
	}
	r.run(ctx)
	r.close()
	r.finish()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("league-manager conformance interrupted: %w", err)
	}
	return nil
}

func newLMRun(opt Options, rep *Report) (*lmRun, error) {
	u, err := url.Parse(opt.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q must be the League Manager's http(s) JSON-RPC endpoint, e.g. http://127.0.0.1:8000/mcp", opt.URL)
	}
	reg := game.Default()
	if _, err := reg.New(opt.Game, nil); err != nil {
		return nil, fmt.Errorf("game %q: %w (have %s)", opt.Game, err, strings.Join(reg.Types(), ", "))
	}
	if opt.Wait <= 0 || opt.MoveTimeout <= 0 {
		return nil, errors.New("wait and move timeout must be positive")
	}
	v, err := protocol.NewValidator()
	if err != nil {
		return nil, err
	}
	log := opt.Log.With().Str("component", "conform").Str("subject", "league-manager").Logger()
	r := &lmRun{
		opt: opt, rep: rep, log: log, v: v, reg: reg, client: protocol.NewClientWith(v, nil, protocol.ClientOptions{TLS: opt.ClientTLS, Insecure: opt.Insecure}),
		wire: newLMWire(opt.URL, opt.ClientTLS, v, log), tag: uuid.NewString()[:6], agents: map[string]*lmAgent{},
		changed: make(chan struct{}, 1), recorded: map[string]bool{}, taken: map[string]bool{},
		results: map[string]lmResult{}, progress: map[string]map[string]protocol.MatchProgress{}, inbound: map[string][]string{},
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{kind}/{id}/mcp", func(w http.ResponseWriter, req *http.Request) {
		a := r.agents[req.PathValue("id")]
		if a == nil || a.kind != req.PathValue("kind") {
			http.NotFound(w, req)
			return
		}
		a.srv.ServeHTTP(w, req)
	})
	listen := opt.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if r.srv, err = httpserve.Start(listen, mux); err != nil {
		r.cancel()
		return nil, fmt.Errorf("serve the tool's referees and players: %w", err)
	}
	r.base = "http://" + r.srv.Addr()
	// The agents are all made before the first request can reach the mux, which only reads r.agents.
	for i := range r.refs {
		a := r.newAgent("referee", fmt.Sprintf("conform-%s-ref%d", r.tag, i+1))
		if i == 0 {
			a.features = lmRefereeFeatures
		}
		a.srv = protocol.NewServer(protocol.HandlerFunc(func(ctx context.Context, m *protocol.Message) (*protocol.Message, error) {
			return r.refereeHandle(ctx, a, m)
		}), v, lmRecorder{r: r, agent: a}, log)
		r.refs[i] = a
	}
	for i := range r.players {
		a := r.newAgent("player", fmt.Sprintf("conform-%s-p%d", r.tag, i+1))
		a.rng = rand.New(rand.NewPCG(uint64(i+1), 7))
		a.games = map[string]game.Game{}
		a.srv = protocol.NewServer(protocol.HandlerFunc(func(ctx context.Context, m *protocol.Message) (*protocol.Message, error) {
			return r.playerHandle(ctx, a, m)
		}), v, lmRecorder{r: r, agent: a}, log)
		r.players[i] = a
	}
	log.Info().Str("league_manager", opt.URL).Str("listen", r.base).Str("game", opt.Game).Msg("league-manager conformance starting")
	return r, nil
}

func (r *lmRun) newAgent(kind, id string) *lmAgent {
	a := &lmAgent{id: id, kind: kind, url: r.base + "/" + kind + "/" + id + "/mcp"}
	r.agents[id] = a
	return a
}

// run takes the steps in order; a step that makes the rest meaningless stops the run, and
// every check not reached is then skipped with its reason.
func (r *lmRun) run(ctx context.Context) {
	steps := []func(context.Context) error{r.registerFirst, r.duplicates, r.badRequests, r.registerRest, r.playLeague}
	for _, step := range steps {
		err := step(ctx)
		if ctx.Err() != nil {
			r.stop("interrupted")
			return
		}
		if err != nil {
			r.stop(err.Error())
			return
		}
	}
}

// close ends the matches and heartbeats, then the tool's server.
func (r *lmRun) close() {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.cancel()
	r.bg.Wait()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(sctx); err != nil {
		r.log.Warn().Err(err).Msg("stop the tool's server")
	}
	r.client.Close()
	r.wire.close()
}

// finish records the checks judged over the whole run, then skips those never reached.
func (r *lmRun) finish() {
	r.answerChecks()
	r.heartbeatCheck()
	r.mu.Lock()
	why := r.stopReason
	r.mu.Unlock()
	if why == "" {
		why = "not reached"
	}
	for _, c := range lmChecks {
		r.skip(c.id, why)
	}
}

func (r *lmRun) stop(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopReason == "" {
		r.stopReason = why
	}
	r.log.Warn().Str("reason", why).Msg("stopping the run")
}

// record adds a result for check id once: a check judged twice keeps its first verdict.
func (r *lmRun) record(id string, add func(Level, string)) {
	r.mu.Lock()
	done := r.recorded[id]
	r.recorded[id] = true
	r.mu.Unlock()
	if done {
		return
	}
	for _, c := range lmChecks {
		if c.id == id {
			add(c.level, c.hint)
			return
		}
	}
	r.log.Error().Str("check", id).Msg("unknown check id")
}

func (r *lmRun) pass(id, reason string) {
	r.record(id, func(l Level, _ string) { r.rep.Pass(id, l, reason) })
}

func (r *lmRun) fail(id, reason string) {
	r.record(id, func(l Level, hint string) { r.rep.Fail(id, l, reason, hint) })
}

func (r *lmRun) skip(id, why string) {
	r.record(id, func(l Level, _ string) { r.rep.Skip(id, l, why) })
}

func (r *lmRun) check(id string, err error, passReason string) {
	if err != nil {
		r.fail(id, err.Error())
		return
	}
	r.pass(id, passReason)
}

// notify tells the waiting run that the league moved.
func (r *lmRun) notify() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// await waits until done holds, giving up when nothing moved for idle.
func (r *lmRun) await(ctx context.Context, idle time.Duration, done func() bool) bool {
	t := time.NewTimer(idle)
	defer t.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return done()
		case <-r.changed:
			t.Reset(idle)
		}
	}
	return true
}

// lmHas says whether the League Manager announced feature at registration.
func (r *lmRun) lmHas(feature string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.lmFeatures, feature)
}

func (r *lmRun) tokenOf(a *lmAgent) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return a.token
}

func (r *lmRun) leagueIDOf() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leagueID
}

func (r *lmRun) playerIDs() []string {
	ids := make([]string, 0, len(r.players))
	for _, p := range r.players {
		ids = append(ids, p.id)
	}
	return ids
}

// message builds a request from agent a, carrying its token when it has one.
func (r *lmRun) message(a *lmAgent, messageType string, payload any) (*protocol.Message, error) {
	m, err := protocol.NewMessage(messageType, a.sender(), payload)
	if err != nil {
		return nil, err
	}
	m.Envelope.AuthToken = r.tokenOf(a)
	m.Envelope.LeagueID = r.leagueIDOf()
	return m, nil
}
