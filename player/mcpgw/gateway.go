// Package mcpgw is the MCP gateway: an MCP server (Streamable HTTP at /mcp, or stdio)
// through whose tools any MCP client, such as an LLM application, takes a seat in a
// league. Each seat is an ordinary league.v2 player (package player) whose moves come from
// the session that joined with it. By default a seat is outbound: it takes its requests
// from the League Manager's relay over connections it opens, so the gateway needs no
// port anyone else reaches (with Stdio, none at all). Config.Inbound serves the seats at
// a path of the gateway instead, /seats/<player_id>, for a League Manager without relay.
package mcpgw

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/netsec"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// Defaults of Config.
const (
	DefaultRegisterFor    = 30 * time.Second
	DefaultSessionTimeout = 30 * time.Minute
	DefaultProgressEvery  = 5 * time.Second
)

// Bounds of wait_for_turn's timeout_s.
const (
	defaultWaitSeconds = 30
	maxWaitSeconds     = 600
)

// shutdownGrace bounds how long Close waits for requests in flight.
const shutdownGrace = 5 * time.Second

// Config configures a gateway.
type Config struct {
	// Addr is the HTTP listen address, e.g. 127.0.0.1:9400 (port 0 picks a free port):
	// MCP at /mcp unless Stdio, and the seats' endpoints when Inbound. With Stdio and
	// without Inbound nothing listens.
	Addr string
	// Inbound serves each seat at /seats/<player_id> on Addr and registers that endpoint,
	// so the League Manager and the referees must reach the gateway; without it seats are
	// outbound (the League Manager must announce the relay feature).
	Inbound bool
	// LeagueURL is the League Manager's JSON-RPC endpoint, e.g. http://127.0.0.1:8000/mcp.
	LeagueURL string
	// Stdio serves MCP over stdin and stdout (ServeStdio) instead of HTTP.
	Stdio bool
	// RegisterFor bounds how long join_league retries registration (DefaultRegisterFor when 0).
	RegisterFor time.Duration
	// SessionTimeout closes an HTTP session idle that long; its seat plays on without a
	// client, and times out (DefaultSessionTimeout when 0).
	SessionTimeout time.Duration
	// ProgressEvery is the interval of progress notifications while wait_for_turn waits
	// (DefaultProgressEvery when 0).
	ProgressEvery time.Duration
	// Version is the server version shown to clients.
	Version string
	// Advertise is the gateway's MCP endpoint as others reach it, e.g.
	// https://gw.example.org:9400/mcp; with Inbound each seat registers the URL beside
	// it, https://gw.example.org:9400/seats/<player_id>. Empty: the URL of Addr (https
	// with TLS).
	Advertise string
	// TLS, when set, makes the gateway serve HTTPS (netsec.ServerConfig).
	TLS *tls.Config
	// ClientTLS configures the seats' calls to the League Manager (whom to trust); nil:
	// the system's roots.
	ClientTLS *tls.Config
	// Insecure allows the seats' calls over plain http to a League Manager that is not
	// on loopback.
	Insecure bool
}

// Validate checks the configuration without side effects.
func (c Config) Validate() error {
	if c.Addr == "" && c.listens() {
		return errors.New("listen address is empty")
	}
	u, err := url.Parse(c.LeagueURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("league url %q must be an http(s) url", c.LeagueURL)
	}
	if c.RegisterFor < 0 || c.SessionTimeout < 0 || c.ProgressEvery < 0 {
		return errors.New("durations must not be negative")
	}
	if c.Advertise != "" {
		u, err := netsec.ParseURL(c.Advertise)
		if err != nil {
			return fmt.Errorf("advertised endpoint: %w", err)
		}
		// The seats' endpoints are made by replacing /mcp.
		if !strings.HasSuffix(u.Path, "/mcp") || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("advertised endpoint %s must end in /mcp, e.g. https://host:9400/mcp: it is the gateway's MCP endpoint, and its seats are served beside it at .../seats/<player_id>", c.Advertise)
		}
	}
	return nil
}

// listens reports whether the gateway serves HTTP: MCP over HTTP, or inbound seats.
func (c Config) listens() bool { return !c.Stdio || c.Inbound }

// Gateway is a running MCP gateway. Start it, and Close it once.
type Gateway struct {
	cfg    Config
	log    zerolog.Logger
	clock  clock
	games  *game.Registry
	server *sdk.Server
	// http is nil when nothing listens (Config.listens).
	http *httpserve.Server
	// base is the gateway's HTTP root as others reach it, e.g. http://127.0.0.1:9400.
	base string
	// seatsCtx ends every seat when the gateway closes.
	seatsCtx    context.Context
	cancelSeats context.CancelFunc
	// wg counts the seats' goroutines and the session watchers.
	wg sync.WaitGroup

	mu        sync.Mutex
	closed    bool
	seats     map[string]*seat             // by player id, until the seat is left
	bySession map[*sdk.ServerSession]*seat // the seat each session holds
	watched   map[*sdk.ServerSession]bool  // sessions whose end is watched
}

// Start checks cfg and starts serving MCP at /mcp unless cfg.Stdio, and the seats when
// cfg.Inbound.
// log should carry the component field.
func Start(cfg Config, log zerolog.Logger) (*Gateway, error) {
	return start(cfg, log, realClock{})
}

func start(cfg Config, log zerolog.Logger, clk clock) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.RegisterFor == 0 {
		cfg.RegisterFor = DefaultRegisterFor
	}
	if cfg.SessionTimeout == 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = DefaultProgressEvery
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	g := &Gateway{
		cfg: cfg, log: log, clock: clk, games: game.Default(),
		seats: map[string]*seat{}, bySession: map[*sdk.ServerSession]*seat{}, watched: map[*sdk.ServerSession]bool{},
	}
	g.seatsCtx, g.cancelSeats = context.WithCancel(context.Background())
	g.server = sdk.NewServer(&sdk.Implementation{Name: "agent-league-gateway", Title: "Agent League", Version: cfg.Version},
		&sdk.ServerOptions{Instructions: instructions, Capabilities: &sdk.ServerCapabilities{}})
	g.addTools()
	if err := g.addResources(); err != nil {
		g.cancelSeats()
		return nil, err
	}
	mux := http.NewServeMux()
	if !cfg.Stdio {
		mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return g.server },
			&sdk.StreamableHTTPOptions{SessionTimeout: cfg.SessionTimeout}))
	}
	if cfg.Inbound {
		mux.HandleFunc("/seats/{id}", g.serveSeat)
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
	})
	seats := "outbound"
	if cfg.Inbound {
		seats = "inbound"
	}
	if !cfg.listens() {
		log.Info().Str("league_url", cfg.LeagueURL).Str("seats", seats).Bool("stdio", cfg.Stdio).Msg("mcp gateway on stdio: no listening port, seats connect out to the League Manager's relay")
		return g, nil
	}
	srv, err := httpserve.StartTLS(cfg.Addr, g.bounded(mux), cfg.TLS)
	if err != nil {
		g.cancelSeats()
		return nil, err
	}
	g.http, g.base = srv, srv.Base()
	if cfg.Advertise != "" {
		g.base = strings.TrimSuffix(cfg.Advertise, "/mcp")
	}
	log.Info().Str("url", g.base).Str("addr", srv.Addr()).Str("league_url", cfg.LeagueURL).Str("seats", seats).Bool("stdio", cfg.Stdio).Msg("mcp gateway listening")
	return g, nil
}

// bounded lifts the server's write timeout for each request, and ends the request when
// the gateway closes. wait_for_turn and the session's event stream last minutes, and a
// seat holds REQUEST_MOVE until its client moves or the deadline: each has its own bound.
func (g *Gateway) bounded(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(g.seatsCtx, cancel)
		defer stop()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// URL is the MCP endpoint over HTTP, e.g. http://127.0.0.1:9400/mcp (under Config.Advertise
// when set); empty when nothing listens.
func (g *Gateway) URL() string {
	if g.base == "" {
		return ""
	}
	return g.base + "/mcp"
}

// Base is the gateway's HTTP root; inbound seats are served at Base/seats/<player_id>.
func (g *Gateway) Base() string { return g.base }

// ServeStdio serves one MCP session over r and w until the client closes it or ctx ends.
func (g *Gateway) ServeStdio(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
	err := g.server.Run(ctx, &sdk.IOTransport{Reader: r, Writer: w})
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// Close ends every seat and session, and stops the HTTP server. Seats end like players
// that stop: their matches in progress are left to the referees' rules.
func (g *Gateway) Close(ctx context.Context) error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.cancelSeats()
	for ss := range g.server.Sessions() {
		_ = ss.Close()
	}
	var err error
	if g.http != nil {
		sctx, cancel := context.WithTimeout(ctx, shutdownGrace)
		defer cancel()
		err = g.http.Shutdown(sctx)
	}
	g.wg.Wait()
	g.log.Info().Msg("mcp gateway stopped")
	return err
}

// serveSeat passes a referee's or the League Manager's request to the seat's player.
func (g *Gateway) serveSeat(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	s := g.seats[r.PathValue("id")]
	g.mu.Unlock()
	if s == nil {
		http.Error(w, "no such seat", http.StatusNotFound)
		return
	}
	s.player.Handler().ServeHTTP(w, r)
}

// seatOf is the seat the session holds, or nil.
func (g *Gateway) seatOf(ss *sdk.ServerSession) *seat {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bySession[ss]
}

// watch starts, once per session, the goroutine that notices its end: the seat then
// plays on without a client, and times out like an absent player. It ends with the
// session, which Close ends.
func (g *Gateway) watch(ss *sdk.ServerSession) {
	if g.watched[ss] {
		return
	}
	g.watched[ss] = true
	g.wg.Go(func() {
		_ = ss.Wait()
		g.mu.Lock()
		s := g.bySession[ss]
		delete(g.bySession, ss)
		delete(g.watched, ss)
		g.mu.Unlock()
		if s != nil {
			s.log.Warn().Msg("session ended: the seat plays on without a client, its moves time out")
		}
	})
}

// anySeat is a registered seat of the gateway that still plays, or nil.
func (g *Gateway) anySeat() *seat {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.seats {
		if s.live() {
			return s
		}
	}
	return nil
}
