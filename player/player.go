// Package player is the player runtime: an HTTP server answering referees (GAME_INVITATION,
// REQUEST_MOVE, GAME_OVER) and the League Manager (LEAGUE_SHUTDOWN, MATCH_CANCELLED),
// registration with the League Manager, and one strategy per match from player/strategy.
// Config.Fault makes a player misbehave on purpose, for fault-injection tests.
package player

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/netsec"
	"github.com/agentleague/agentleague/player/lbm"
	"github.com/agentleague/agentleague/player/llm"
	"github.com/agentleague/agentleague/player/strategy"
	"github.com/agentleague/agentleague/player/uci"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	DefaultRegisterTimeout = 5 * time.Second
	DefaultRegisterFor     = 2 * time.Minute
)

// shutdownGrace bounds how long Run waits for requests in flight when it stops.
const shutdownGrace = 5 * time.Second

// States of a player as GET /status shows them.
const (
	StateStarting    = "STARTING"
	StateRegistering = "REGISTERING"
	// StateRegistered: registered, but the League Manager did not acknowledge AGENT_READY.
	StateRegistered = "REGISTERED"
	StateActive     = "ACTIVE"
	StateStopping   = "STOPPING"
	StateStopped    = "STOPPED"
)

// idPattern is the id rule of every agent (PROTOCOL-NOTES 2).
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ErrNotRegistered is returned by calls that need the token before registration succeeded.
var ErrNotRegistered = errors.New("player is not registered")

// Config configures a player process.
type Config struct {
	// ID is the player_id.
	ID string
	// Addr is the listen address, e.g. 127.0.0.1:9001; port 0 picks a free port.
	Addr string
	// LeagueURL is the League Manager's JSON-RPC endpoint, e.g. http://127.0.0.1:8000/mcp.
	LeagueURL string
	// Advertise is the endpoint registered with the League Manager; empty: the URL of
	// Addr (https with TLS).
	Advertise string
	// Outbound makes a player that accepts no connections: it listens on no port,
	// registers without an endpoint and takes its requests from the League Manager's
	// relay over connections it opens (protocol/README.md, "Outbound agents").
	Outbound bool
	// TLS, when set, makes the server serve HTTPS (netsec.ServerConfig).
	TLS *tls.Config
	// ClientTLS configures the calls to the League Manager (whom to trust); nil: the
	// system's roots.
	ClientTLS *tls.Config
	// Insecure allows calls over plain http to hosts that are not loopback.
	Insecure bool
	// Strategy names a strategy of player/strategy, e.g. "random".
	Strategy string
	// Seed seeds the strategies; each match derives its own generator from it.
	Seed int64
	// DisplayName is sent at registration when set.
	DisplayName string
	// AgentCard is sent at registration when set.
	AgentCard *protocol.AgentCard
	// RegisterTimeout is the deadline of each attempt of a call to the League Manager
	// (DefaultRegisterTimeout when 0).
	RegisterTimeout time.Duration
	// RegisterFor bounds how long registration and AGENT_READY are retried
	// (DefaultRegisterFor when 0): lost connections, NO_REFEREE_REGISTERED and the
	// transient refusals of protocol.Transient (INTERNAL, STORAGE_UNAVAILABLE,
	// RATE_LIMITED), so the League Manager may start after the player, or fail to write
	// for a while, without the player giving up. Run fails once it passes unregistered.
	RegisterFor time.Duration
	// Stdout receives the one line "player <id> listening on <url>" (os.Stdout when nil).
	Stdout io.Writer
	// Fault makes the player misbehave on purpose, for fault-injection tests: "" (none),
	// "slow:DURATION", "garbage", "illegal" or "crash-after:N"; see FaultSlow and the
	// other Fault constants. crash-after ends the whole process (os.Exit).
	Fault string
	// Think is how long the player waits before choosing each move, as if it thought
	// (0: it answers at once); a referee that stops waiting cuts it short. Benchmarks use
	// it to model players slower than a random strategy.
	Think time.Duration
	// ModelURL is the model server the "lbm" strategy asks for every move (LBM Arena
	// model API); required by and only used with that strategy.
	ModelURL string
	// ModelAuth is the Authorization header value for the model server ("" for none).
	ModelAuth string
	// LLM asks a language model for every move of strategy "llm" (see player/llm);
	// required by and only used with that strategy.
	LLM *llm.Client
	// Engine is the chess engine of the "uci" strategy; required by and only used with
	// that strategy.
	Engine uci.Config
	// Remote, when set, builds the strategy of every match in place of Strategy's plugin:
	// the moves come from elsewhere (the MCP gateway's seats, whose client chooses them).
	// Strategy then only names it in Status, and no stand-in strategy ever plays.
	Remote func(g game.Game, matchID string) (strategy.Strategy, error)
	// OnLeagueCompleted, when set, is told once the final standings LEAGUE_COMPLETED
	// brought (the MCP gateway's seats tell their client the league is over).
	OnLeagueCompleted func(protocol.LeagueCompletion)
	// Validator, when set, checks the player's messages in place of one of its own: the
	// players of one process share it (player --seats), so the schemas, some 770 KB and
	// 20 ms of compiling each, are compiled once.
	Validator *protocol.Validator
}

// StrategyLBM plays every move through an external model server (Config.ModelURL).
const StrategyLBM = "lbm"

// StrategyLLM plays every move through a language model as an agent profile says (Config.LLM).
const StrategyLLM = "llm"

// StrategyUCI plays chess with a UCI engine subprocess (Config.Engine).
const StrategyUCI = "uci"

// Validate checks the configuration without side effects, so a command can refuse bad
// flags before it creates a log file named after the id.
func (c Config) Validate() error {
	if !idPattern.MatchString(c.ID) {
		return fmt.Errorf("player id %q must match %s", c.ID, idPattern)
	}
	if c.Addr == "" && !c.Outbound {
		return errors.New("listen address is empty")
	}
	u, err := url.Parse(c.LeagueURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("league url %q must be an http(s) url", c.LeagueURL)
	}
	if c.Advertise != "" {
		if _, err := netsec.ParseURL(c.Advertise); err != nil {
			return fmt.Errorf("advertised endpoint: %w", err)
		}
	}
	switch {
	case c.Remote != nil:
	case c.Strategy == StrategyLBM:
		if u, err := url.Parse(c.ModelURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("strategy lbm needs a model server url, got %q", c.ModelURL)
		}
	case c.Strategy == StrategyLLM:
		if c.LLM == nil {
			return errors.New("strategy llm needs an agent profile")
		}
	case c.Strategy == StrategyUCI:
		if err := c.Engine.Validate(); err != nil {
			return fmt.Errorf("strategy uci: %w", err)
		}
	case !slices.Contains(strategy.Names(), c.Strategy):
		return fmt.Errorf("unknown strategy %q (have %v, %s, %s and %s)", c.Strategy, strategy.Names(), StrategyLBM, StrategyLLM, StrategyUCI)
	}
	if c.Think < 0 {
		return fmt.Errorf("think time must not be negative, got %v", c.Think)
	}
	if c.RegisterTimeout < 0 || c.RegisterFor < 0 {
		return errors.New("register timeouts must not be negative")
	}
	if _, err := parseFault(c.Fault); err != nil {
		return err
	}
	return nil
}

// Status is the GET /status document.
type Status struct {
	PlayerID       string `json:"player_id"`
	State          string `json:"state"`
	LeagueID       string `json:"league_id"`
	MatchesPlayed  int    `json:"matches_played"`
	Wins           int    `json:"wins"`
	Draws          int    `json:"draws"`
	Losses         int    `json:"losses"`
	CurrentMatches int    `json:"current_matches"`
	Strategy       string `json:"strategy"`
	// Exchanges counts the JSON-RPC requests the player's endpoint has handled.
	Exchanges int64 `json:"exchanges"`
	// MatchesLeft is how many of the player's matches are not finished, as the League
	// Manager last said (0 once the league completed); absent when it never said.
	MatchesLeft *int `json:"matches_left,omitempty"`
	// LeagueCompleted is true once LEAGUE_COMPLETED arrived; FinalRank and FinalPoints
	// are then the player's line of the final standings.
	LeagueCompleted bool `json:"league_completed,omitempty"`
	FinalRank       int  `json:"final_rank,omitempty"`
	FinalPoints     int  `json:"final_points,omitempty"`
}

// strategyFunc builds the strategy of one match; strategy.New outside tests.
type strategyFunc func(name string, g game.Game, seed int64, matchID string) (strategy.Strategy, error)

// Player is one player process. Build it with New and call Run once.
type Player struct {
	cfg         Config
	log         zerolog.Logger
	games       *game.Registry
	newStrategy strategyFunc
	client      *protocol.Client
	// link is the player's standing with the League Manager, and carries its calls.
	link  *leagueLink
	rpc   *protocol.Server
	fault faultInjector
	// model is the model server of strategy lbm, nil otherwise; modelGames are the game
	// types it listed at start.
	model      *lbm.Client
	modelGames []string
	validator  *protocol.Validator
	// book records the matches, in progress and ended.
	book *matchBook

	ran      atomic.Bool
	stopping chan struct{} // closed when Run starts to stop
	shutdown chan struct{} // closed by LEAGUE_SHUTDOWN
	shutOnce sync.Once

	mu    sync.Mutex // guards state
	state string
}

// New checks cfg, fills in defaults and builds a player. log should carry the component
// field (internal/logging does); New has no side effects.
func New(cfg Config, log zerolog.Logger) (*Player, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.RegisterTimeout == 0 {
		cfg.RegisterTimeout = DefaultRegisterTimeout
	}
	if cfg.RegisterFor == 0 {
		cfg.RegisterFor = DefaultRegisterFor
	}
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	flt, err := parseFault(cfg.Fault)
	if err != nil {
		return nil, err
	}
	v := cfg.Validator
	if v == nil {
		if v, err = protocol.NewValidator(); err != nil {
			return nil, fmt.Errorf("load schemas: %w", err)
		}
	}
	p := &Player{
		cfg:         cfg,
		log:         log,
		games:       game.Default(),
		newStrategy: strategy.New,
		validator:   v,
		client:      protocol.NewClientWith(v, nil, protocol.ClientOptions{TLS: cfg.ClientTLS, Insecure: cfg.Insecure}),
		stopping:    make(chan struct{}),
		shutdown:    make(chan struct{}),
		state:       StateStarting,
		book:        newMatchBook(log),
	}
	p.book.open = p.newMatch
	p.fault.fault, p.fault.log, p.fault.exit = flt, log, os.Exit
	p.link = newLeagueLink(cfg, p.client, log)
	p.rpc = protocol.NewServer(p, v, nil, log)
	switch cfg.Strategy {
	case StrategyLBM:
		p.model = lbm.NewClient(cfg.ModelURL, cfg.ModelAuth)
		p.newStrategy = p.modelStrategy
	case StrategyLLM:
		p.newStrategy = p.llmStrategy
	case StrategyUCI:
		p.newStrategy = p.engineStrategy
	}
	if cfg.Remote != nil {
		p.newStrategy = func(_ string, g game.Game, _ int64, matchID string) (strategy.Strategy, error) {
			return cfg.Remote(g, matchID)
		}
	}
	return p, nil
}

// Run serves the player's HTTP endpoint, registers with the League Manager, announces
// readiness, and serves until ctx ends or LEAGUE_SHUTDOWN arrives; both are a clean stop
// and return nil. It returns an error when the server cannot start or registration fails:
// refused for good, or still refused or unanswered after cfg.RegisterFor (see
// leagueLink.register).
func (p *Player) Run(ctx context.Context) error {
	if err := p.begin(); err != nil {
		return err
	}
	if p.cfg.Outbound {
		p.setState(StateRegistering)
		p.log.Info().Str("league_url", p.cfg.LeagueURL).Str("strategy", p.cfg.Strategy).Msg("player outbound: no listening port, requests come through the League Manager's relay")
		fmt.Fprintf(p.cfg.Stdout, "player %s outbound through %s\n", p.cfg.ID, p.cfg.LeagueURL)
		return p.play(ctx, "", nil)
	}
	srv, err := httpserve.StartTLS(p.cfg.Addr, p.routes(), p.cfg.TLS)
	if err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	endpoint := srv.URL()
	if p.cfg.Advertise != "" {
		endpoint = p.cfg.Advertise
	}
	p.setState(StateRegistering)
	p.log.Info().Str("url", endpoint).Str("addr", srv.Addr()).Str("strategy", p.cfg.Strategy).Msg("player listening")
	if p.cfg.Fault != "" {
		p.log.Warn().Str("fault", p.cfg.Fault).Msg("fault injection on: this player misbehaves on purpose")
	}
	// Tools and tests read the endpoint from this one stdout line.
	fmt.Fprintf(p.cfg.Stdout, "player %s listening on %s\n", p.cfg.ID, endpoint)
	return p.play(ctx, endpoint, srv)
}

// begin starts the one run a player has, with the schemas of what it receives compiled.
func (p *Player) begin() error {
	if !p.ran.CompareAndSwap(false, true) {
		return errors.New("player: run called twice")
	}
	return p.validator.Warm(protocol.PlayerReceives...)
}

// Serve is Run for a player whose endpoint another server serves (the MCP gateway serves
// the Handler of each seat at a path of its own): it registers endpoint and plays until
// ctx ends or LEAGUE_SHUTDOWN arrives, and prints nothing. An empty endpoint makes it
// outbound: its requests come through the League Manager's relay.
func (p *Player) Serve(ctx context.Context, endpoint string) error {
	if err := p.begin(); err != nil {
		return err
	}
	p.setState(StateRegistering)
	return p.play(ctx, endpoint, nil)
}

// Handler is the player's JSON-RPC endpoint, for the server of a player run with Serve.
func (p *Player) Handler() http.Handler { return p.rpc }

// Registered is closed once the player is registered.
func (p *Player) Registered() <-chan struct{} { return p.link.registered }

// play registers endpoint and serves until ctx ends or LEAGUE_SHUTDOWN arrives, then
// stops: srv, when the player has its own, is shut down gracefully.
func (p *Player) play(ctx context.Context, endpoint string, srv *httpserve.Server) error {
	var err error
	stopRelay := func() {}
	switch {
	case p.model != nil:
		err = p.checkModel(ctx)
	case p.cfg.Strategy == StrategyUCI && p.cfg.Remote == nil:
		err = p.checkEngine(ctx)
	}
	// Registration and AGENT_READY are retried until cfg.RegisterFor: the League Manager
	// may start after the player, or fail to write for a while (a full disk).
	jctx, stopJoining := p.joinContext(ctx)
	defer stopJoining()
	if err == nil {
		err = p.link.register(jctx, endpoint, p.modelGames)
	}
	switch {
	case err == nil:
		var relayed <-chan error
		if endpoint == "" {
			relayed, stopRelay = p.serveRelay(ctx)
		}
		if p.link.ready(jctx) {
			p.setState(StateActive)
		} else {
			p.setState(StateRegistered)
		}
		stopJoining()
		select {
		case <-ctx.Done():
			p.log.Info().Msg("stopping: asked to stop")
		case <-p.shutdown:
			p.log.Info().Msg("stopping: league shut down")
		case rerr := <-relayed:
			p.log.Info().AnErr("relay", rerr).Msg("stopping: the League Manager's relay ended")
			if !errors.Is(rerr, protocol.ErrRelayClosed) {
				err = rerr
			}
		}
	case ctx.Err() != nil:
		// Asked to stop while registering: a clean stop, not a failure.
		p.log.Info().Msg("stopping before registration completed")
		err = nil
	case errors.Is(err, errLeagueOver):
		// Refused because the league is ending, as a LEAGUE_SHUTDOWN would end it.
		p.log.Info().Msg("stopping: the league shut down before registration")
		err = nil
	}
	p.setState(StateStopping)
	close(p.stopping)
	stopRelay()
	if srv != nil {
		// Shutdown lets requests in flight finish, so a LEAGUE_SHUTDOWN_ACK is written
		// before the connection closes.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		if serr := srv.Shutdown(sctx); serr != nil && err == nil {
			err = fmt.Errorf("shut down server: %w", serr)
		}
	}
	p.book.releaseAll()
	p.client.Close()
	p.setState(StateStopped)
	p.log.Info().Msg("player stopped")
	return err
}

// serveRelay serves the player's requests from the League Manager's relay until stop is
// called (it waits for the answers in progress, a LEAGUE_SHUTDOWN_ACK among them) or the
// relay ends, which ended reports.
func (p *Player) serveRelay(ctx context.Context) (ended <-chan error, stop func()) {
	token, _ := p.link.registration()
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	over := make(chan struct{})
	go func() {
		defer close(over)
		done <- p.client.ServeOutbound(rctx, protocol.Outbound{LeagueURL: p.cfg.LeagueURL, Token: token, Handler: p.routes(), Grace: shutdownGrace, Log: p.log})
	}()
	return done, func() {
		cancel()
		<-over
	}
}

// Status reports the player's state and results.
func (p *Player) Status() Status {
	rec := p.book.record()
	_, leagueID := p.link.registration()
	p.mu.Lock()
	st := Status{
		PlayerID:       p.cfg.ID,
		State:          p.state,
		LeagueID:       leagueID,
		MatchesPlayed:  rec.played,
		Wins:           rec.wins,
		Draws:          rec.draws,
		Losses:         rec.losses,
		CurrentMatches: rec.current,
		Strategy:       p.cfg.Strategy,
		Exchanges:      p.rpc.Exchanges(),
	}
	p.mu.Unlock()
	p.link.mu.Lock()
	defer p.link.mu.Unlock()
	if l := p.link.matchesLeft; l != nil {
		st.MatchesLeft = new(*l)
	}
	if f := p.link.final; f != nil {
		st.LeagueCompleted = true
		if row, ok := rowOf(f.Standings, p.cfg.ID); ok {
			st.FinalRank, st.FinalPoints = row.Rank, row.Points
		}
	}
	return st
}

func (p *Player) setState(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = s
}

// routes serves POST /mcp, GET /health, GET /status and GET /standings.
func (p *Player) routes() http.Handler {
	mux := http.NewServeMux()
	var rpc http.Handler = p.rpc
	if p.fault.mode == FaultGarbage {
		rpc = p.fault.garbageMoves(p.rpc)
	}
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A move may think for as long as its deadline (minutes, for a model): the
		// server's write timeout, which net/http counts from the request's arrival, would
		// cut its answer. The answer is small; the idle timeout ends a stalled connection.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		rpc.ServeHTTP(w, r)
	}))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, p.Status())
	})
	mux.HandleFunc("GET /standings", p.serveStandings)
	return mux
}

// serveStandings relays QUERY_STANDINGS for a person asking the running player. Errors
// name the League Manager's reason at most, never local details.
func (p *Player) serveStandings(w http.ResponseWriter, r *http.Request) {
	st, err := p.Standings(r.Context())
	switch {
	case errors.Is(err, ErrNotRegistered):
		httpserve.WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "not registered yet"})
	case protocol.ReasonOf(err) != "":
		httpserve.WriteJSON(w, http.StatusBadGateway, map[string]string{"error": "league manager refused: " + string(protocol.ReasonOf(err))})
	case err != nil:
		httpserve.WriteJSON(w, http.StatusBadGateway, map[string]string{"error": "league manager did not answer"})
	default:
		httpserve.WriteJSON(w, http.StatusOK, st)
	}
}

// checkModel asks the model server which games it plays; the player refuses the others.
func (p *Player) checkModel(ctx context.Context) error {
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	h, err := p.model.Health(hctx)
	if err != nil {
		return fmt.Errorf("model server: %w", err)
	}
	p.modelGames = h.Games()
	if len(p.modelGames) == 0 {
		return fmt.Errorf("model server plays none of our games (capabilities %v)", h.Capabilities)
	}
	p.log.Info().Str("model_url", p.cfg.ModelURL).Strs("games", p.modelGames).Str("version", h.Version).Msg("model server healthy")
	return nil
}

// checkEngine starts the engine of strategy uci once and quits it: a player whose engine
// cannot run refuses to register.
func (p *Player) checkEngine(ctx context.Context) error {
	name, err := uci.Probe(ctx, p.cfg.Engine)
	if err != nil {
		return err
	}
	p.log.Info().Str("engine", p.cfg.Engine.Path).Str("name", name).Msg("chess engine ready")
	return nil
}

// engineStrategy is the strategy factory of strategy uci: chess only, with an engine of
// the match's own.
func (p *Player) engineStrategy(_ string, g game.Game, _ int64, matchID string) (strategy.Strategy, error) {
	return uci.NewStrategy(p.cfg.Engine, g, matchID, p.log)
}

// modelStrategy is the strategy factory of strategy lbm: games the model did not list
// are refused, never played by a stand-in.
func (p *Player) modelStrategy(_ string, g game.Game, _ int64, matchID string) (strategy.Strategy, error) {
	if !slices.Contains(p.modelGames, g.Type()) {
		return nil, fmt.Errorf("the model server does not play %s", g.Type())
	}
	return p.model.Strategy(g, matchID), nil
}

// llmStrategy is the strategy factory of strategy llm: games the model cannot be told
// about are refused, never played by a stand-in.
func (p *Player) llmStrategy(_ string, g game.Game, _ int64, _ string) (strategy.Strategy, error) {
	return p.cfg.LLM.Strategy(g)
}
