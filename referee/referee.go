package referee

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/protocol"
	"github.com/agentleague/agentleague/referee/game"
	"github.com/rs/zerolog"
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Config configures a referee process.
type Config struct {
	ID        string
	Addr      string
	LeagueURL string
	// Games the referee offers; empty means every game of the registry.
	Games      []string
	MaxMatches int
	Registry   *game.Registry
	// Defaults for assignments that do not carry deadlines or policies.
	JoinTimeout time.Duration
	MoveTimeout time.Duration
	Policy      string
	Penalties   Penalties
	// RegisterFor bounds how long registration is retried.
	RegisterFor time.Duration
	// CallTimeout is the deadline of each call to the League Manager.
	CallTimeout time.Duration
	// ReportTimeout is the deadline of each MATCH_RESULT_REPORT attempt (default 5 s).
	// Reports are retried with backoff until the League Manager acknowledges or refuses them.
	ReportTimeout time.Duration
	// DrainTimeout bounds how long matches in progress may run after LEAGUE_SHUTDOWN
	// (default 10 s); matches still running then are abandoned, unreported.
	DrainTimeout time.Duration
	// Stdout receives the one line "referee <id> listening on <url>" (os.Stdout when nil).
	Stdout io.Writer
}

// Defaults of Config.
const (
	DefaultReportTimeout = 5 * time.Second
	DefaultDrainTimeout  = 10 * time.Second
)

// Backoff between MATCH_RESULT_REPORT attempts: doubling from reportBackoff to
// reportMaxBackoff, with jitter.
const (
	reportBackoff    = 250 * time.Millisecond
	reportMaxBackoff = 5 * time.Second
)

// maxHeartbeatMatches is the most match ids HEARTBEAT_REQUEST may list (its schema's maxItems).
const maxHeartbeatMatches = 64

// Referee is a referee process: an HTTP server taking assignments from the League
// Manager and a runner per match.
type Referee struct {
	cfg       Config
	log       zerolog.Logger
	validator *protocol.Validator
	client    *protocol.Client
	// league carries every call to the League Manager; r.client outside tests.
	league Caller

	mu        sync.Mutex
	token     string
	leagueID  string
	features  []string
	heartbeat time.Duration // heartbeat_interval_ms of the registration answer; 0: none
	state     string
	running   map[string]*Assignment
	// closed is set before Run waits for the matches: no match starts after it.
	closed    bool
	completed int
	reported  int

	shutdown chan struct{}
	stopOnce sync.Once
	ctx      context.Context // matches run under it; cancelled when Run returns
	matches  sync.WaitGroup

	metrics *metrics
	// noMoveEvents is set once the League Manager answered UNSUPPORTED_MESSAGE to a
	// MOVE_EVENT.
	noMoveEvents atomic.Bool
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
	if cfg.JoinTimeout <= 0 {
		cfg.JoinTimeout = 10 * time.Second
	}
	if cfg.MoveTimeout <= 0 {
		cfg.MoveTimeout = 30 * time.Second
	}
	if cfg.RegisterFor <= 0 {
		cfg.RegisterFor = 2 * time.Minute
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
	if cfg.Policy != "" && cfg.Policy != PolicyLoss && cfg.Policy != PolicyForced {
		return nil, fmt.Errorf("illegal move policy %q: want %s or %s", cfg.Policy, PolicyLoss, PolicyForced)
	}
	v, err := protocol.NewValidator()
	if err != nil {
		return nil, err
	}
	client := protocol.NewClient(v, nil)
	return &Referee{
		cfg: cfg, log: log, validator: v, client: client, league: client,
		state: "STARTING", running: map[string]*Assignment{}, shutdown: make(chan struct{}), metrics: newMetrics(),
	}, nil
}

// Run serves, registers, and runs matches until ctx ends or the League Manager sends
// LEAGUE_SHUTDOWN. After LEAGUE_SHUTDOWN, matches in progress are finished and reported
// for up to cfg.DrainTimeout, then abandoned; when ctx ends they are abandoned at once.
// While Run serves, it sends heartbeats if the League Manager asked for them.
func (r *Referee) Run(ctx context.Context) error {
	defer r.client.Close()
	matchCtx, cancelMatches := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelMatches()
	r.ctx = matchCtx
	srv, err := httpserve.Start(r.cfg.Addr, r.routes())
	if err != nil {
		return err
	}
	// Tools and tests read the endpoint from this one stdout line.
	fmt.Fprintf(r.cfg.Stdout, "referee %s listening on %s\n", r.cfg.ID, srv.URL())
	r.log.Info().Str("url", srv.URL()).Strs("games", r.cfg.Games).Msg("referee listening")
	// Heartbeats go on while matches drain: the League Manager keeps the lease of a
	// referee that is still finishing matches.
	beatCtx, stopBeats := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBeats()
	var beats sync.WaitGroup
	stop := func() {
		r.closeAssignments()
		cancelMatches()
		r.matches.Wait()
		stopBeats()
		beats.Wait()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}
	if err := r.register(ctx, srv.URL()); err != nil {
		stop()
		return err
	}
	r.mu.Lock()
	every := r.heartbeat
	r.mu.Unlock()
	if every > 0 {
		// Ends when stop cancels beatCtx.
		beats.Go(func() { r.heartbeats(beatCtx, every) })
	}
	select {
	case <-ctx.Done():
		r.log.Info().Msg("signal: stopping")
	case <-r.shutdown:
		r.log.Info().Dur("drain_timeout", r.cfg.DrainTimeout).Msg("league shutdown: finishing matches in progress")
		r.drain(ctx, cancelMatches)
	}
	stop()
	return nil
}

// closeAssignments refuses every later assignment, so no match starts (and no
// r.matches.Add happens) once Run waits for the matches.
func (r *Referee) closeAssignments() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
}

// drain lets the matches in progress finish and report, until cfg.DrainTimeout passes
// or ctx ends; then it cancels them and waits for their goroutines.
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

func (r *Referee) register(ctx context.Context, url string) error {
	msg, err := protocol.NewMessage(protocol.RegisterRefereeRequest, protocol.RefereeSender(r.cfg.ID), map[string]any{
		"referee_id": r.cfg.ID, "endpoint_url": url, "game_types": r.cfg.Games, "max_concurrent_matches": r.cfg.MaxMatches,
	})
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, r.cfg.RegisterFor)
	defer cancel()
	ans, err := r.league.Call(rctx, r.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: r.cfg.CallTimeout,
		Retry: protocol.RetryPolicy{Attempts: 1000, Backoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second,
			Reasons: []protocol.Reason{protocol.ReasonRateLimited}},
		Peer: protocol.SenderLeagueManager,
	})
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	var p struct {
		AuthToken           string   `json:"auth_token"`
		LeagueID            string   `json:"league_id"`
		Features            []string `json:"features"`
		HeartbeatIntervalMS int      `json:"heartbeat_interval_ms"`
		LeaseMS             int      `json:"lease_ms"`
	}
	if err := ans.Decode(&p); err != nil {
		return fmt.Errorf("register: %w", err)
	}
	r.mu.Lock()
	r.token, r.leagueID, r.features, r.state = p.AuthToken, p.LeagueID, p.Features, "REGISTERED"
	r.heartbeat = time.Duration(max(p.HeartbeatIntervalMS, 0)) * time.Millisecond
	r.mu.Unlock()
	r.log.Info().Str("league_id", p.LeagueID).Strs("features", p.Features).
		Int("heartbeat_interval_ms", p.HeartbeatIntervalMS).Int("lease_ms", p.LeaseMS).Msg("registered")

	ready, err := protocol.NewMessage(protocol.AgentReadyRequest, protocol.RefereeSender(r.cfg.ID), map[string]any{})
	if err != nil {
		return err
	}
	ready.Envelope.AuthToken = p.AuthToken
	if _, err := r.league.Call(rctx, r.cfg.LeagueURL, ready, protocol.CallOptions{Timeout: r.cfg.CallTimeout, Retry: protocol.RetryPolicy{Attempts: 5, Backoff: 100 * time.Millisecond}, Peer: protocol.SenderLeagueManager}); err != nil {
		// Readiness is optional for the League Manager; a registered referee is usable.
		r.log.Warn().Err(err).Msg("agent ready not acknowledged")
	}
	r.mu.Lock()
	r.state = "IDLE"
	r.mu.Unlock()
	return nil
}

func (r *Referee) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", protocol.NewServer(r, r.validator, nil, r.log))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, r.Status())
	})
	mux.Handle("GET /metrics", r.metrics.handler())
	return mux
}

// Status is the GET /status document.
type Status struct {
	RefereeID        string   `json:"referee_id"`
	State            string   `json:"state"`
	LeagueID         string   `json:"league_id"`
	Games            []string `json:"game_types"`
	MaxMatches       int      `json:"max_concurrent_matches"`
	ActiveMatches    []string `json:"active_matches"`
	MatchesCompleted int      `json:"matches_completed"`
	ResultsReported  int      `json:"results_reported"`
}

// Status reports the referee's state: REGISTERED, ACTIVE (running matches) or IDLE.
func (r *Referee) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Status{RefereeID: r.cfg.ID, State: r.state, LeagueID: r.leagueID, Games: r.cfg.Games, MaxMatches: r.cfg.MaxMatches,
		ActiveMatches: []string{}, MatchesCompleted: r.completed, ResultsReported: r.reported}
	for id := range r.running {
		s.ActiveMatches = append(s.ActiveMatches, id)
	}
	slices.Sort(s.ActiveMatches)
	if len(s.ActiveMatches) > 0 {
		s.State = "ACTIVE"
	}
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Handle implements protocol.Handler.
func (r *Referee) Handle(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	switch msg.Envelope.MessageType {
	case protocol.MatchAssignment:
		return r.assignment(ctx, msg)
	case protocol.LeagueShutdown:
		if err := r.fromLeague(&msg.Envelope); err != nil {
			return nil, err
		}
		// No new match after the acknowledgement; those in progress drain in Run.
		r.closeAssignments()
		r.stopOnce.Do(func() { close(r.shutdown) })
		return r.reply(msg, protocol.LeagueShutdownAck, map[string]string{"status": "acknowledged"})
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
// announced signed assignments, carries this referee's own token.
func (r *Referee) fromLeague(env *protocol.Envelope) error {
	if env.Sender != protocol.SenderLeagueManager {
		return protocol.Errorf(protocol.ReasonUnauthorized, "only the League Manager may send %s", env.MessageType)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.token == "" {
		return protocol.Errorf(protocol.ReasonUnauthorized, "referee is not registered yet")
	}
	if slices.Contains(r.features, protocol.FeatureSignedAssignments) && !protocol.TokenEqual(env.AuthToken, r.token) {
		return protocol.Errorf(protocol.ReasonUnauthorized, "%s does not carry this referee's token", env.MessageType)
	}
	return nil
}

func (r *Referee) assignment(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
	if err := r.fromLeague(&msg.Envelope); err != nil {
		return nil, err
	}
	var a Assignment
	if err := msg.Decode(&a); err != nil {
		return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "assignment payload cannot be read")
	}
	if !slices.Contains(r.cfg.Games, a.GameType) {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "referee %s does not run %s", r.cfg.ID, a.GameType)
	}
	g, err := r.cfg.Registry.New(a.GameType, a.GameParams)
	if err != nil {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedGame, "game parameters refused: %v", err)
	}
	for _, id := range a.Players {
		if a.PlayerEndpoints[id] == "" {
			return nil, protocol.Errorf(protocol.ReasonSchemaViolation, "no endpoint for player %s", id)
		}
	}
	r.mu.Lock()
	features := r.features
	if slices.Contains(features, protocol.FeatureMatchCredentials) {
		for _, id := range a.Players {
			if a.MatchCredentials[id] == "" {
				r.mu.Unlock()
				return nil, protocol.Errorf(protocol.ReasonUnauthorized, "assignment lacks the match credential of %s", id)
			}
		}
	}
	if _, dup := r.running[a.MatchID]; dup {
		// A retried assignment: the match is already running.
		r.mu.Unlock()
		return r.reply(msg, protocol.MatchAssignmentAck, map[string]string{"status": "acknowledged", "match_id": a.MatchID})
	}
	if r.closed {
		r.mu.Unlock()
		return nil, protocol.Errorf(protocol.ReasonShuttingDown, "referee %s is shutting down", r.cfg.ID)
	}
	if len(r.running) >= r.cfg.MaxMatches {
		r.mu.Unlock()
		return nil, protocol.Errorf(protocol.ReasonBusy, "referee %s runs %d of %d matches", r.cfg.ID, len(r.running), r.cfg.MaxMatches)
	}
	r.running[a.MatchID] = &a
	leagueID := r.leagueID
	r.matches.Add(1)
	r.mu.Unlock()
	r.metrics.assigned.Inc()

	log := r.log.With().Str("match_id", a.MatchID).Str("conversation_id", msg.Envelope.ConversationID).Logger()
	runner := &MatchRunner{
		RefereeID: r.cfg.ID, LeagueID: leagueID, Game: g, A: a, Caller: r.client, Log: log,
		JoinTimeout: r.cfg.JoinTimeout, MoveTimeout: r.cfg.MoveTimeout, Policy: r.cfg.Policy, Penalties: r.cfg.Penalties,
	}
	// The match goroutine ends when the match is reported or r.ctx is cancelled.
	go func() {
		defer r.matches.Done()
		r.play(runner, log)
	}()
	return r.reply(msg, protocol.MatchAssignmentAck, map[string]string{"status": "acknowledged", "match_id": a.MatchID})
}

func (r *Referee) play(runner *MatchRunner, log zerolog.Logger) {
	a := runner.A
	log.Info().Strs("players", a.Players).Msg("match started")
	ev := r.startMoveEvents(a, log)
	// Events still queued once the result is reported are dropped: the League Manager
	// ignores the events of a finished match.
	defer ev.stop()
	runner.OnMove = func(rec MoveRecord, st game.State) {
		r.metrics.moveLatency.Observe(float64(rec.ElapsedMS) / 1000)
		ev.add(rec, st)
	}
	start := time.Now()
	rep, err := runner.Run(r.ctx)
	ev.finish()
	// The slot is free once the game is over: the League Manager may assign the next
	// match as soon as it has the result, possibly before the report call returns.
	r.mu.Lock()
	delete(r.running, a.MatchID)
	if err == nil {
		r.completed++
	}
	r.mu.Unlock()
	if err != nil {
		log.Warn().Err(err).Msg("match abandoned")
		return
	}
	r.metrics.completed.Inc()
	r.metrics.duration.Observe(time.Since(start).Seconds())
	r.metrics.countViolations(rep.Metadata.Violations)
	log.Info().Str("termination", rep.Metadata.Termination).Interface("outcome", rep.Outcome).Msg("match finished")
	if err := r.report(r.ctx, a, rep); err != nil {
		log.Error().Err(err).Msg("result not acknowledged")
		return
	}
	r.mu.Lock()
	r.reported++
	r.mu.Unlock()
}

// report sends MATCH_RESULT_REPORT until the League Manager acknowledges it, refuses it,
// or ctx ends. Each attempt has cfg.ReportTimeout; failed attempts (no answer, a
// malformed one, RATE_LIMITED or INTERNAL) are retried with a doubling backoff. Every
// attempt carries the same message, so the League Manager recognises a retry and never
// counts a result twice.
func (r *Referee) report(ctx context.Context, a Assignment, rep *Report) error {
	r.mu.Lock()
	token, leagueID := r.token, r.leagueID
	r.mu.Unlock()
	msg, err := protocol.NewMessage(protocol.MatchResultReport, protocol.RefereeSender(r.cfg.ID), map[string]any{
		"game_type": a.GameType, "players": a.Players, "outcome": rep.Outcome, "points": rep.Points,
		"game_metadata": rep.Metadata, "match_id": a.MatchID, "round_id": a.RoundID,
	})
	if err != nil {
		return err
	}
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = token, leagueID, a.RoundID, a.MatchID, a.GameType
	wait := reportBackoff
	for attempt := 1; ; attempt++ {
		_, err := r.league.Call(ctx, r.cfg.LeagueURL, msg, protocol.CallOptions{
			Timeout: r.cfg.ReportTimeout, Retry: protocol.RetryPolicy{Attempts: 1}, Peer: protocol.SenderLeagueManager,
		})
		if err == nil {
			return nil
		}
		if reason := protocol.ReasonOf(err); reason != "" && reason != protocol.ReasonRateLimited && reason != protocol.ReasonInternal {
			// The League Manager judged the report; sending it again cannot change that.
			return err
		}
		var status *protocol.StatusError
		if errors.As(err, &status) && status.Code >= 400 && status.Code < 500 && status.Code != http.StatusTooManyRequests {
			// The same bytes would be refused the same way (e.g. 413, too large).
			return err
		}
		if ctx.Err() != nil {
			return err
		}
		// Jitter in [wait/2, wait] keeps referees that failed together from retrying together.
		d := wait/2 + rand.N(wait/2+1)
		r.log.Warn().Err(err).Int("attempt", attempt).Dur("retry_in", d).Str("match_id", a.MatchID).Msg("result report failed; retrying")
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, reportMaxBackoff)
	}
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

// sendHeartbeat sends one HEARTBEAT_REQUEST naming the matches in progress. A failure is
// logged; the next tick is the retry. An attempt never outlasts the interval, so
// heartbeats do not pile up behind a slow League Manager.
func (r *Referee) sendHeartbeat(ctx context.Context, every time.Duration) {
	active := r.Status().ActiveMatches
	if len(active) > maxHeartbeatMatches {
		active = active[:maxHeartbeatMatches]
	}
	msg, err := protocol.NewMessage(protocol.HeartbeatRequest, protocol.RefereeSender(r.cfg.ID), map[string]any{"active_matches": active})
	if err != nil {
		r.log.Error().Err(err).Msg("build heartbeat")
		return
	}
	r.mu.Lock()
	msg.Envelope.AuthToken, msg.Envelope.LeagueID = r.token, r.leagueID
	r.mu.Unlock()
	log := r.log.With().Str("conversation_id", msg.Envelope.ConversationID).Strs("active_matches", active).Logger()
	ans, err := r.league.Call(ctx, r.cfg.LeagueURL, msg, protocol.CallOptions{
		Timeout: min(r.cfg.CallTimeout, every), Retry: protocol.RetryPolicy{Attempts: 1}, Peer: protocol.SenderLeagueManager,
	})
	switch {
	case ctx.Err() != nil:
		// Run is ending; the last heartbeat does not matter.
	case protocol.ReasonOf(err) == protocol.ReasonSuspended:
		log.Warn().Err(err).Msg("heartbeat refused: the League Manager suspended this referee")
	case err != nil:
		log.Warn().Err(err).Msg("heartbeat failed; retrying at the next tick")
	default:
		var p struct {
			LeaseMS int `json:"lease_ms"`
		}
		if err := ans.Decode(&p); err != nil {
			log.Warn().Err(err).Msg("heartbeat answer cannot be read")
			return
		}
		log.Debug().Int("lease_ms", p.LeaseMS).Msg("heartbeat acknowledged")
	}
}
