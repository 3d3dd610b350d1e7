package referee

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/netsec"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Config configures a referee process.
type Config struct {
	ID        string
	Addr      string
	LeagueURL string
	// Advertise is the endpoint registered with the League Manager; empty: the URL of
	// Addr (https with TLS).
	Advertise string
	// Outbound makes a referee that accepts no connections: it listens on no port,
	// registers without an endpoint and takes its requests from the League Manager's
	// relay over connections it opens (protocol/README.md, "Outbound agents").
	Outbound bool
	// TLS, when set, makes the server serve HTTPS (netsec.ServerConfig).
	TLS *tls.Config
	// ClientTLS configures the calls to the League Manager and the players (whom to
	// trust); nil: the system's roots.
	ClientTLS *tls.Config
	// Insecure allows calls over plain http to hosts that are not loopback.
	Insecure bool
	// Games the referee offers; empty means every game of the registry.
	Games []string
	// MaxMatches is how many matches run at once (1 to MaxMatchesLimit; 0 means 1).
	MaxMatches int
	// MaxQueued bounds the assignments accepted beyond MaxMatches, which wait for a slot
	// in arrival order (1 to MaxQueuedLimit; 0 means DefaultMaxQueued). An assignment
	// beyond both is refused with BUSY.
	MaxQueued int
	Registry  *game.Registry
	// Defaults for assignments that do not carry deadlines or policies.
	JoinTimeout time.Duration
	MoveTimeout time.Duration
	Policy      string
	Penalties   protocol.Penalties
	// RegisterFor bounds how long registration and AGENT_READY are retried
	// (DefaultRegisterFor when 0): lost connections and the transient refusals of
	// protocol.Transient (INTERNAL, STORAGE_UNAVAILABLE, RATE_LIMITED), so the League
	// Manager may start after the referee, or fail to write for a while, without the
	// referee giving up. Run fails once it passes unregistered.
	RegisterFor time.Duration
	// CallTimeout is the deadline of each attempt of a call to the League Manager (5 s
	// when 0).
	CallTimeout time.Duration
	// ReportTimeout is the deadline of each MATCH_RESULT_REPORT attempt (default 5 s).
	// Reports are retried with backoff until the League Manager acknowledges them or
	// refuses them for good: a transient refusal (INTERNAL, STORAGE_UNAVAILABLE,
	// RATE_LIMITED) is retried, until the match is cancelled or the referee stops.
	ReportTimeout time.Duration
	// DrainTimeout bounds how long matches in progress may run after LEAGUE_SHUTDOWN
	// (default 10 s); matches still running then are abandoned, unreported.
	DrainTimeout time.Duration
	// Stdout receives the one line "referee <id> listening on <url>" (os.Stdout when nil).
	Stdout io.Writer
}

// Defaults and limits of Config.
const (
	DefaultRegisterFor   = 2 * time.Minute
	DefaultReportTimeout = 5 * time.Second
	DefaultDrainTimeout  = 10 * time.Second
	DefaultMaxQueued     = 16
	// MaxMatchesLimit is the most max_concurrent_matches a registration may announce.
	MaxMatchesLimit = 64
	// MaxQueuedLimit keeps every held match within the 256 entries of a heartbeat's
	// match_progress: up to 64 running plus 192 queued.
	MaxQueuedLimit = 192
)

// Features are the extensions this referee implements, announced at registration
// (protocol/README.md, "Features"). Each is used only if the League Manager announced it
// too; a League Manager that announced nothing gets plain league.v2.
var Features = []string{
	protocol.FeatureMatchCredentials, protocol.FeatureHeartbeats, protocol.FeatureMatchProgress,
	protocol.FeatureResultReminders, protocol.FeatureMoveEvents, protocol.FeatureMoveBatches, protocol.FeatureMatchCancellation,
	protocol.FeatureLeagueCompleted, protocol.FeatureClocks, protocol.FeatureOpenings,
}

// Backoff between MATCH_RESULT_REPORT attempts: doubling from reportBackoff to
// reportMaxBackoff, with jitter.
const (
	reportBackoff    = 250 * time.Millisecond
	reportMaxBackoff = 5 * time.Second
)

// heartbeatBackoff is the first wait before a heartbeat is sent again within its
// interval (at most a quarter of it), doubling to half the interval, with jitter.
const heartbeatBackoff = 100 * time.Millisecond

// Bounds of HEARTBEAT_REQUEST (its schema's maxItems): match ids in active_matches,
// entries in match_progress.
const (
	maxHeartbeatMatches  = 64
	maxHeartbeatProgress = 256
)

// Referee is a referee process: an HTTP server taking assignments from the League
// Manager and a runner per match.
type Referee struct {
	cfg       Config
	log       zerolog.Logger
	validator *protocol.Validator
	client    *protocol.Client
	// league carries every call to the League Manager, players every call to a player;
	// both are r.client outside tests.
	league  Caller
	players Caller

	mu       sync.Mutex
	token    string
	leagueID string
	// leagueFeatures are the features the League Manager announced at registration.
	leagueFeatures []string
	heartbeat      time.Duration // heartbeat_interval_ms of the registration answer; 0: none
	state          string
	// held are the matches from assignment to the end of their report; queue the ones
	// waiting for a slot, oldest first; playing the slots taken (a cancelled match keeps
	// its slot until its goroutine has stopped playing).
	held    map[string]*heldMatch
	queue   []*heldMatch
	playing int
	// recent are the last acknowledged results, recentOrder their ids oldest first.
	recent      map[string]*reportedResult
	recentOrder []string
	// closed is set before Run waits for the matches: no match or resend starts after it.
	closed    bool
	completed int
	reported  int

	shutdown chan struct{}
	stopOnce sync.Once
	// registered is closed once the registration answer is stored: the League Manager
	// may assign a match before this referee has read its token.
	registered chan struct{}
	// matches counts the goroutines of matches and of reminder resends; Run waits for
	// them (stopMatches).
	matches sync.WaitGroup

	metrics *metrics
}

// New checks cfg and builds a referee.
func New(cfg Config, log zerolog.Logger) (*Referee, error) {
	if !idPattern.MatchString(cfg.ID) {
		return nil, fmt.Errorf("referee id %q must match %s", cfg.ID, idPattern)
	}
	if cfg.Registry == nil {
		cfg.Registry = game.Default()
	}
	if len(cfg.Games) == 0 {
		cfg.Games = cfg.Registry.Types()
	}
	for _, g := range cfg.Games {
		if !slices.Contains(cfg.Registry.Types(), g) {
			return nil, fmt.Errorf("unknown game %q (have %v)", g, cfg.Registry.Types())
		}
	}
	if cfg.MaxMatches <= 0 {
		cfg.MaxMatches = 1
	}
	if cfg.MaxMatches > MaxMatchesLimit {
		return nil, fmt.Errorf("max matches %d: at most %d", cfg.MaxMatches, MaxMatchesLimit)
	}
	if cfg.MaxQueued == 0 {
		cfg.MaxQueued = DefaultMaxQueued
	}
	if cfg.MaxQueued < 0 || cfg.MaxQueued > MaxQueuedLimit {
		return nil, fmt.Errorf("max queued %d: want 1 to %d", cfg.MaxQueued, MaxQueuedLimit)
	}
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 10 * time.Second
	}
	if cfg.MoveTimeout <= 0 {
		cfg.MoveTimeout = 30 * time.Second
	}
	if cfg.RegisterFor <= 0 {
		cfg.RegisterFor = DefaultRegisterFor
	}
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 5 * time.Second
	}
	if cfg.ReportTimeout <= 0 {
		cfg.ReportTimeout = DefaultReportTimeout
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	if cfg.Advertise != "" {
		if _, err := netsec.ParseURL(cfg.Advertise); err != nil {
			return nil, fmt.Errorf("advertised endpoint: %w", err)
		}
	}
	if cfg.Policy != "" && cfg.Policy != protocol.PolicyLoss && cfg.Policy != protocol.PolicyForced {
		return nil, fmt.Errorf("illegal move policy %q: want %s or %s", cfg.Policy, protocol.PolicyLoss, protocol.PolicyForced)
	}
	v, err := protocol.NewValidator()
	if err != nil {
		return nil, err
	}
	client := protocol.NewClientWith(v, nil, protocol.ClientOptions{TLS: cfg.ClientTLS, Insecure: cfg.Insecure})
	return &Referee{
		cfg: cfg, log: log, validator: v, client: client, league: client, players: client,
		state: "STARTING", held: map[string]*heldMatch{}, recent: map[string]*reportedResult{},
		shutdown: make(chan struct{}), registered: make(chan struct{}), metrics: newMetrics(),
	}, nil
}

// Run serves, registers, and runs matches until ctx ends or the League Manager sends
// LEAGUE_SHUTDOWN. After LEAGUE_SHUTDOWN, matches in progress are finished and reported
// for up to cfg.DrainTimeout, then abandoned; when ctx ends they are abandoned at once.
// Matches still queued at LEAGUE_SHUTDOWN or when ctx ends are dropped. While Run
// serves, it sends heartbeats if the League Manager announced them. Registration is retried
// until cfg.RegisterFor (lost connections, INTERNAL, STORAGE_UNAVAILABLE, RATE_LIMITED);
// Run returns an error only if it cannot serve or is still unregistered then.
func (r *Referee) Run(ctx context.Context) error {
	defer r.client.Close()
	if err := r.validator.Warm(protocol.RefereeReceives...); err != nil {
		return err
	}
	// Matches run under mctx, which outlives ctx until stopMatches, so that a drain
	// can let them finish; the handlers pass it to the goroutines they start.
	mctx, cancelMatches := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelMatches()
	var srv *httpserve.Server
	endpoint := "" // outbound: the League Manager gives one on its relay
	if r.cfg.Outbound {
		fmt.Fprintf(r.cfg.Stdout, "referee %s outbound through %s\n", r.cfg.ID, r.cfg.LeagueURL)
		r.log.Info().Str("league_url", r.cfg.LeagueURL).Strs("games", r.cfg.Games).Msg("referee outbound: no listening port, requests come through the League Manager's relay")
	} else {
		var err error
		if srv, err = httpserve.StartTLS(r.cfg.Addr, r.routes(mctx), r.cfg.TLS); err != nil {
			return err
		}
		endpoint = srv.URL()
		if r.cfg.Advertise != "" {
			endpoint = r.cfg.Advertise
		}
		// Tools and tests read the endpoint from this one stdout line.
		fmt.Fprintf(r.cfg.Stdout, "referee %s listening on %s\n", r.cfg.ID, endpoint)
		r.log.Info().Str("url", endpoint).Str("addr", srv.Addr()).Strs("games", r.cfg.Games).Msg("referee listening")
	}
	// Heartbeats go on while matches drain: the League Manager keeps the lease of a
	// referee that is still finishing matches.
	beatCtx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBeats()
	var beats sync.WaitGroup
	// The relay of an outbound referee runs under relayCtx until stop, which waits for
	// the answers in progress (a LEAGUE_SHUTDOWN_ACK among them).
	relayCtx, stopRelay := context.WithCancel(context.WithoutCancel(ctx))
	relayed := make(chan error, 1)
	var relay sync.WaitGroup
	stop := func() {
		r.stopMatches(cancelMatches)
		stopBeats()
		beats.Wait()
		stopRelay()
		relay.Wait()
		if srv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}
	}
	// Registration and AGENT_READY are retried until cfg.RegisterFor: the League Manager
	// may start after the referee, or fail to write for a while (a full disk).
	jctx, stopJoining := r.joinContext(ctx)
	defer stopJoining()
	if err := r.register(jctx, endpoint); err != nil {
		stop()
		return err
	}
	if r.cfg.Outbound {
		r.mu.Lock()
		token := r.token
		r.mu.Unlock()
		relay.Go(func() {
			relayed <- r.client.ServeOutbound(relayCtx, protocol.Outbound{LeagueURL: r.cfg.LeagueURL, Token: token, Handler: r.routes(mctx), Log: r.log})
		})
	}
	r.mu.Lock()
	every := r.heartbeat
	r.mu.Unlock()
	if every > 0 {
		// Ends when stop cancels beatCtx. Started before AGENT_READY, which may be
		// retried for a while: the lease must not lapse meanwhile.
		beats.Go(func() { r.heartbeats(beatCtx, every) })
	}
	r.ready(jctx)
	stopJoining()
	select {
	case <-ctx.Done():
		r.log.Info().Msg("signal: stopping")
	case <-r.shutdown:
		r.log.Info().Dur("drain_timeout", r.cfg.DrainTimeout).Msg("league shutdown: finishing matches in progress")
		r.drain(ctx, cancelMatches)
	case err := <-relayed:
		r.log.Info().AnErr("relay", err).Msg("stopping: the League Manager's relay ended")
		stop()
		if errors.Is(err, protocol.ErrRelayClosed) {
			return nil
		}
		return err
	}
	stop()
	return nil
}

// stopMatches refuses later assignments, drops the queue, cancels the matches with
// cancelMatches (the cancel of the context they run under) and waits for every match and
// resend goroutine.
func (r *Referee) stopMatches(cancelMatches context.CancelFunc) {
	r.closeAssignments()
	cancelMatches()
	r.matches.Wait()
}

// closeAssignments refuses every later assignment and drops the queued matches, so no
// match starts (and no r.matches.Add happens) once Run waits for the matches.
func (r *Referee) closeAssignments() {
	r.mu.Lock()
	first := !r.closed
	r.closed = true
	dropped := r.dropQueuedLocked()
	r.mu.Unlock()
	if first && len(dropped) > 0 {
		r.log.Info().Strs("match_ids", dropped).Msg("stopping: queued matches dropped")
	}
}

// drain lets the matches in progress finish and report, until cfg.DrainTimeout passes
// or ctx ends; then it cancels them (cancelMatches) and waits for their goroutines.
func (r *Referee) drain(ctx context.Context, cancelMatches context.CancelFunc) {
	r.closeAssignments()
	done := make(chan struct{})
	// Ends once every match goroutine has; cancelMatches below bounds that.
	go func() {
		r.matches.Wait()
		close(done)
	}()
	t := time.NewTimer(r.cfg.DrainTimeout)
	defer t.Stop()
	select {
	case <-done:
		r.log.Info().Msg("every match finished")
		return
	case <-t.C:
		r.log.Warn().Strs("active_matches", r.Status().ActiveMatches).Msg("drain deadline passed: abandoning the matches still running")
	case <-ctx.Done():
		r.log.Info().Msg("signal while draining: abandoning the matches still running")
	}
	cancelMatches()
	<-done
}

// joinContext is the deadline of registration and AGENT_READY together: cfg.RegisterFor,
// cut short when ctx ends or LEAGUE_SHUTDOWN arrives.
func (r *Referee) joinContext(ctx context.Context) (context.Context, context.CancelFunc) {
	jctx, cancel := context.WithTimeout(ctx, r.cfg.RegisterFor)
	go func() {
		select {
		case <-r.shutdown:
			cancel()
		case <-jctx.Done():
		}
	}()
	return jctx, cancel
}

// leagueRetry retries lost connections and the transient refusals of protocol.Transient
// (INTERNAL, STORAGE_UNAVAILABLE, RATE_LIMITED) with a capped, jittered backoff until the
// caller's deadline: the deadline, not a count, ends the retries. Every attempt carries
// the same JSON-RPC id and conversation id.
func leagueRetry(backoff, maxBackoff time.Duration) protocol.RetryPolicy {
	return protocol.RetryPolicy{Attempts: math.MaxInt32, Backoff: backoff, MaxBackoff: maxBackoff, Reasons: protocol.Transient()}
}

// Backoff of registration and AGENT_READY: 100 ms doubling to 2 s, with jitter.
const (
	registerBackoff    = 100 * time.Millisecond
	registerMaxBackoff = 2 * time.Second
)

// register sends REGISTER_REFEREE_REQUEST, retried (leagueRetry) until the League Manager
// takes it or jctx (see joinContext) ends, and stores the token, league id, features and
// heartbeat interval.
func (r *Referee) register(jctx context.Context, url string) error {
	features := Features
	if url == "" {
		// Outbound: the League Manager gives the referee an endpoint on its relay.
		features = append(slices.Clip(Features), protocol.FeatureOutbound)
	}
	msg, err := protocol.NewMessage(protocol.RegisterRefereeRequest, protocol.RefereeSender(r.cfg.ID), protocol.RefereeRegistration{
		RefereeID: r.cfg.ID, EndpointURL: url, GameTypes: r.cfg.Games, MaxConcurrentMatches: r.cfg.MaxMatches,
		Features: features,
	})
	if err != nil {
		return err
	}
	log := r.log.With().Str("conversation_id", msg.Envelope.ConversationID).Logger()
	ans, err := r.league.Call(jctx, r.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: r.cfg.CallTimeout, Retry: leagueRetry(registerBackoff, registerMaxBackoff), Peer: protocol.SenderLeagueManager,
	})
	if err != nil {
		if errors.Is(jctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("gave up after %v (the registration deadline): %w", r.cfg.RegisterFor, err)
		}
		if !errors.Is(jctx.Err(), context.Canceled) {
			log.Error().Err(err).Msg("registration failed")
		}
		return fmt.Errorf("register: %w", err)
	}
	var p protocol.RegistrationAnswer
	if err := ans.Decode(&p); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	r.mu.Lock()
	r.token, r.leagueID, r.leagueFeatures, r.state = p.AuthToken, p.LeagueID, p.Features, "REGISTERED"
	if slices.Contains(p.Features, protocol.FeatureHeartbeats) {
		r.heartbeat = time.Duration(max(p.HeartbeatIntervalMS, 0)) * time.Millisecond
	}
	r.mu.Unlock()
	close(r.registered)
	log.Info().Str("league_id", p.LeagueID).Strs("features", p.Features).
		Int("heartbeat_interval_ms", p.HeartbeatIntervalMS).Int("lease_ms", p.LeaseMS).Msg("registered")
	return nil
}

// ready sends AGENT_READY_REQUEST, retried (leagueRetry) until jctx (see joinContext)
// ends, then marks the referee IDLE. A failure is logged, not fatal: readiness is
// optional for the League Manager, and a registered referee is usable.
func (r *Referee) ready(jctx context.Context) {
	defer func() {
		r.mu.Lock()
		r.state = "IDLE"
		r.mu.Unlock()
	}()
	msg, err := protocol.NewMessage(protocol.AgentReadyRequest, protocol.RefereeSender(r.cfg.ID), protocol.AgentReady{})
	if err != nil {
		r.log.Error().Err(err).Msg("build agent ready request")
		return
	}
	r.mu.Lock()
	msg.Envelope.AuthToken = r.token
	r.mu.Unlock()
	if _, err := r.league.Call(jctx, r.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: r.cfg.CallTimeout, Retry: leagueRetry(registerBackoff, registerMaxBackoff), Peer: protocol.SenderLeagueManager,
	}); err != nil {
		r.log.Warn().Err(err).Str("conversation_id", msg.Envelope.ConversationID).Msg("agent ready not acknowledged")
	}
}

// routes serves the League Manager's requests (handler) and the GET endpoints; the
// matches the requests start run under matches.
func (r *Referee) routes(matches context.Context) http.Handler {
	mux := http.NewServeMux()
	rpc := protocol.NewServer(r.handler(matches), r.validator, nil, r.log)
	mux.Handle("/mcp", rpc)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		s := r.Status()
		s.Exchanges = rpc.Exchanges()
		httpserve.WriteJSON(w, http.StatusOK, s)
	})
	mux.Handle("GET /metrics", r.metrics.handler())
	return mux
}

// Status is the GET /status document.
type Status struct {
	RefereeID  string   `json:"referee_id"`
	State      string   `json:"state"`
	LeagueID   string   `json:"league_id"`
	Games      []string `json:"game_types"`
	MaxMatches int      `json:"max_concurrent_matches"`
	MaxQueued  int      `json:"max_queued_matches"`
	// ActiveMatches are the matches holding a slot (joining or playing), by id.
	ActiveMatches []string `json:"active_matches"`
	// Matches are every held match with its phase and steps: slots first, then those
	// being reported, then the queue.
	Matches          []protocol.MatchProgress `json:"matches"`
	MatchesCompleted int                      `json:"matches_completed"`
	ResultsReported  int                      `json:"results_reported"`
	// Exchanges counts the JSON-RPC requests the referee's endpoint has handled; only GET
	// /status, which owns the endpoint, fills it in.
	Exchanges int64 `json:"exchanges"`
}

// Status reports the referee's state: REGISTERED, ACTIVE (holding matches) or IDLE.
func (r *Referee) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Status{RefereeID: r.cfg.ID, State: r.state, LeagueID: r.leagueID, Games: r.cfg.Games, MaxMatches: r.cfg.MaxMatches,
		MaxQueued: r.cfg.MaxQueued, ActiveMatches: []string{}, Matches: r.progressLocked(),
		MatchesCompleted: r.completed, ResultsReported: r.reported}
	for _, m := range s.Matches {
		if m.Phase == protocol.PhaseJoining || m.Phase == protocol.PhasePlaying {
			s.ActiveMatches = append(s.ActiveMatches, m.MatchID)
		}
	}
	slices.Sort(s.ActiveMatches)
	if len(s.Matches) > 0 {
		s.State = "ACTIVE"
	}
	return s
}

// handler answers the League Manager's requests, each under its request's context; the
// matches and resends they start run under matches (Run's), not under a request's.
func (r *Referee) handler(matches context.Context) protocol.Handler {
	return protocol.HandlerFunc(func(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
		return r.handle(ctx, matches, msg)
	})
}

func (r *Referee) handle(ctx, matches context.Context, msg *protocol.Message) (*protocol.Message, error) {
	switch msg.Envelope.MessageType {
	case protocol.MatchAssignment:
		return r.assignment(ctx, matches, msg)
	case protocol.ResultReminder:
		return r.resultReminder(ctx, matches, msg)
	case protocol.MatchCancelled:
		return r.matchCancelled(ctx, msg)
	case protocol.LeagueShutdown:
		if err := r.fromLeague(ctx, &msg.Envelope); err != nil {
			return nil, err
		}
		// No new match after the acknowledgement; those in progress drain in Run.
		r.closeAssignments()
		r.stopOnce.Do(func() { close(r.shutdown) })
		return r.reply(msg, protocol.LeagueShutdownAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	case protocol.LeagueCompleted:
		// Every result is in: nothing changes for the referee, which serves until
		// LEAGUE_SHUTDOWN or until it is stopped.
		if err := r.fromLeague(ctx, &msg.Envelope); err != nil {
			return nil, err
		}
		var lc protocol.LeagueCompletion
		_ = msg.Decode(&lc) // validated against its schema already; only logged
		r.log.Info().Str("conversation_id", msg.Envelope.ConversationID).Str("league_id", lc.LeagueID).
			Int("rounds", lc.Rounds).Int("players", len(lc.Standings)).Msg("league completed")
		return r.reply(msg, protocol.LeagueCompletedAck, protocol.Ack{Status: protocol.StatusAcknowledged})
	}
	return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "a referee does not accept %s", msg.Envelope.MessageType)
}

func (r *Referee) reply(msg *protocol.Message, messageType string, payload any) (*protocol.Message, error) {
	out, err := msg.Reply(messageType, protocol.RefereeSender(r.cfg.ID), payload)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	// The token goes back only to a sender that showed it, so a caller that merely
	// claims to be the League Manager (possible when nothing is signed) cannot collect it.
	if msg.Envelope.AuthToken != "" && protocol.TokenEqual(msg.Envelope.AuthToken, r.token) {
		out.Envelope.AuthToken = r.token
	}
	out.Envelope.LeagueID = r.leagueID
	r.mu.Unlock()
	out.Envelope.MatchID = msg.Envelope.MatchID
	return out, nil
}

// fromLeague checks a message claims to come from the League Manager and, when it
// announced signed assignments, carries this referee's own token. A message that comes
// while the registration answer is still on its way waits for it (or for ctx).
func (r *Referee) fromLeague(ctx context.Context, env *protocol.Envelope) error {
	if env.Sender != protocol.SenderLeagueManager {
		return protocol.Errorf(protocol.ReasonUnauthorized, "only the League Manager may send %s", env.MessageType)
	}
	select {
	case <-r.registered:
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.token == "" {
		return protocol.Errorf(protocol.ReasonUnauthorized, "referee is not registered yet")
	}
	if slices.Contains(r.leagueFeatures, protocol.FeatureSignedAssignments) && !protocol.TokenEqual(env.AuthToken, r.token) {
		return protocol.Errorf(protocol.ReasonUnauthorized, "%s does not carry this referee's token", env.MessageType)
	}
	return nil
}

// leagueHas says whether the League Manager announced feature at registration.
func (r *Referee) leagueHas(feature string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.leagueFeatures, feature)
}

func (r *Referee) leagueIDOf() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.leagueID
}

// sameMatch refuses a message whose envelope names another match than its payload.
func sameMatch(msg *protocol.Message, payloadMatchID string) error {
	if e := msg.Envelope.MatchID; e != "" && e != payloadMatchID {
		return protocol.Errorf(protocol.ReasonSchemaViolation, "envelope match_id %q and payload match_id %q differ", e, payloadMatchID)
	}
	return nil
}

// assignment takes a MATCH_ASSIGNMENT: the match starts at once under matches if a slot
// is free, else waits in the queue; BUSY only when the queue is full too. A retried
// assignment of a match the referee holds is acknowledged again and changes nothing.
func (r *Referee) assignment(ctx, matches context.Context, msg *protocol.Message) (*protocol.Message, error) {
	if err := r.fromLeague(ctx, &msg.Envelope); err != nil {
		return nil, err
	}
	var a protocol.Assignment
	if err := msg.Decode(&a); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "assignment payload cannot be read")
	}
	if err := sameMatch(msg, a.MatchID); err != nil {
		return nil, err
	}
	if !slices.Contains(r.cfg.Games, a.GameType) {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "referee %s does not run %s", r.cfg.ID, a.GameType)
	}
	g, err := r.cfg.Registry.New(a.GameType, a.GameParams)
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "game parameters refused: %v", err)
	}
	if _, err := game.Open(g, a.MatchSeed, a.Opening); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "opening refused: %v", err)
	}
	for _, id := range a.Players {
		if a.PlayerEndpoints[id] == "" {
			return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "no endpoint for player %s", id)
		}
	}
	ack := protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: a.MatchID}
	log := r.log.With().Str("match_id", a.MatchID).Str("conversation_id", msg.Envelope.ConversationID).Logger()
	r.mu.Lock()
	if slices.Contains(r.leagueFeatures, protocol.FeatureMatchCredentials) {
		for _, id := range a.Players {
			if a.MatchCredentials[id] == "" {
				r.mu.Unlock()
				return nil, protocol.Errorf(protocol.ReasonUnauthorized, "assignment lacks the match credential of %s", id)
			}
		}
	}
	if hm, dup := r.held[a.MatchID]; dup {
		// A retried assignment: the match is queued, running or being reported.
		phase := hm.phase
		r.mu.Unlock()
		log.Info().Str("phase", phase).Msg("assignment of a held match acknowledged again")
		return r.reply(msg, protocol.MatchAssignmentAck, ack)
	}
	if r.closed {
		r.mu.Unlock()
		return nil, protocol.Errorf(protocol.ReasonShuttingDown, "referee %s is shutting down", r.cfg.ID)
	}
	hm := &heldMatch{a: a, game: g, log: log, phase: protocol.PhaseQueued}
	// A slot is free only when the queue is empty: ending play starts the oldest queued match.
	switch {
	case r.playing < r.cfg.MaxMatches:
		r.held[a.MatchID] = hm
		r.startLocked(matches, hm)
	case len(r.queue) < r.cfg.MaxQueued:
		r.held[a.MatchID] = hm
		r.queue = append(r.queue, hm)
		log.Info().Int("queue_position", len(r.queue)).Msg("match queued")
	default:
		err := protocol.Errorf(protocol.ReasonBusy, "referee %s runs %d of %d matches, %d of %d queued",
			r.cfg.ID, r.playing, r.cfg.MaxMatches, len(r.queue), r.cfg.MaxQueued)
		r.mu.Unlock()
		return nil, err
	}
	r.mu.Unlock()
	r.metrics.assigned.Inc()
	return r.reply(msg, protocol.MatchAssignmentAck, ack)
}

// resultReminder answers RESULT_REMINDER with where the match stands, sending its
// report again, under matches, when the referee holds it (remind).
func (r *Referee) resultReminder(ctx, matches context.Context, msg *protocol.Message) (*protocol.Message, error) {
	if err := r.fromLeague(ctx, &msg.Envelope); err != nil {
		return nil, err
	}
	var p protocol.Reminder
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "reminder payload cannot be read")
	}
	if err := sameMatch(msg, p.MatchID); err != nil {
		return nil, err
	}
	phase, resent := r.remind(matches, p.MatchID)
	r.log.Info().Str("match_id", p.MatchID).Str("conversation_id", msg.Envelope.ConversationID).Int("attempt", p.Attempt).
		Str("reason", p.Reason).Str("phase", phase).Bool("resent", resent).Msg("result reminder")
	return r.reply(msg, protocol.ResultReminderAck, protocol.ReminderAck{
		Status: protocol.StatusAcknowledged, MatchID: p.MatchID, Phase: phase, Resent: resent,
	})
}

// matchCancelled stops a match the League Manager took back (cancelMatch). An unknown
// match is acknowledged too: the cancellation may be a retry.
func (r *Referee) matchCancelled(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	if err := r.fromLeague(ctx, &msg.Envelope); err != nil {
		return nil, err
	}
	var p protocol.Cancellation
	if err := msg.Decode(&p); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "cancellation payload cannot be read")
	}
	if err := sameMatch(msg, p.MatchID); err != nil {
		return nil, err
	}
	phase := r.cancelMatch(p.MatchID)
	r.log.Info().Str("match_id", p.MatchID).Str("conversation_id", msg.Envelope.ConversationID).Str("reason", p.Reason).
		Str("phase", phase).Msg("match cancelled by the League Manager")
	return r.reply(msg, protocol.MatchCancelledAck, protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: p.MatchID})
}

// heartbeats sends HEARTBEAT_REQUEST every interval until ctx ends.
func (r *Referee) heartbeats(ctx context.Context, every time.Duration) {
	r.log.Info().Dur("interval", every).Msg("sending heartbeats")
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.sendHeartbeat(ctx, every)
	}
}

// sendHeartbeat sends one HEARTBEAT_REQUEST naming the matches in progress and, when
// the League Manager announced match_progress, where every held match stands. Lost
// connections and transient refusals (leagueRetry) are retried within the interval; a
// failure is logged and the next tick is the next heartbeat. Attempts and retries never
// outlast the interval, so heartbeats do not pile up behind a slow League Manager, and no
// refusal ends the heartbeats.
func (r *Referee) sendHeartbeat(ctx context.Context, every time.Duration) {
	st := r.Status()
	active := st.ActiveMatches[:min(len(st.ActiveMatches), maxHeartbeatMatches)]
	payload := protocol.Heartbeat{ActiveMatches: active}
	if r.leagueHas(protocol.FeatureMatchProgress) {
		// Bounded, slots first (Status.Matches is in that order).
		payload.MatchProgress = st.Matches[:min(len(st.Matches), maxHeartbeatProgress)]
	}
	msg, err := protocol.NewMessage(protocol.HeartbeatRequest, protocol.RefereeSender(r.cfg.ID), payload)
	if err != nil {
		r.log.Error().Err(err).Msg("build heartbeat")
		return
	}
	r.mu.Lock()
	msg.Envelope.AuthToken, msg.Envelope.LeagueID = r.token, r.leagueID
	r.mu.Unlock()
	log := r.log.With().Str("conversation_id", msg.Envelope.ConversationID).Strs("active_matches", active).Logger()
	hctx, cancel := context.WithTimeout(ctx, every)
	defer cancel()
	ans, err := r.league.Call(hctx, r.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: min(r.cfg.CallTimeout, every), Retry: leagueRetry(min(heartbeatBackoff, every/4), every/2), Peer: protocol.SenderLeagueManager,
	})
	switch {
	case ctx.Err() != nil:
		// Run is ending; the last heartbeat does not matter.
	case protocol.ReasonOf(err) == protocol.ReasonSuspended:
		log.Warn().Err(err).Msg("heartbeat refused: the League Manager suspended this referee")
	case err != nil:
		log.Warn().Err(err).Msg("heartbeat failed; retrying at the next tick")
	default:
		var p protocol.HeartbeatAnswer
		if err := ans.Decode(&p); err != nil {
			log.Warn().Err(err).Msg("heartbeat answer cannot be read")
			return
		}
		log.Debug().Int("lease_ms", p.LeaseMS).Msg("heartbeat acknowledged")
	}
}
