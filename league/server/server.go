// Package server runs a whole League Manager: it loads the configuration, opens the
// database, the audit log and the application log, serves the league over HTTP, and on
// the way out drains and records a graceful shutdown and closes everything it opened.
// `league serve` is flag parsing and signals around Main; tests run the same League
// Manager in-process, with a context, on 127.0.0.1:0.
//
// It is a package of its own, not part of package league, because it is the assembly of
// the League Manager's parts (config, store, audit log, manager, HTTP) that a process
// owns, not one of those parts; and not part of cmd/league, so tests of other packages
// can import it. It is named server for what Start returns: a running server.
package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/logging"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// DefaultAddr is where the League Manager listens when Options.Addr is empty.
const DefaultAddr = "127.0.0.1:8000"

// TokenFile is the file beside the database holding the admin token when none is given.
const TokenFile = "admin.token"

// DefaultStopReason is the reason of a shutdown because ctx ended, when
// Options.StopReason is empty.
const DefaultStopReason = "the League Manager was stopped"

// httpShutdownTimeout bounds the wait for requests in flight once the league has shut down.
const httpShutdownTimeout = 5 * time.Second

// ErrNegativeDrain refuses a negative Options.Drain; league serve reports it as a bad
// command line.
var ErrNegativeDrain = errors.New("drain must not be negative")

// Options configure a League Manager. The configuration comes from Config or ConfigPath;
// the other fields override parts of it or wire the process around it.
type Options struct {
	// ConfigPath is a league.yaml; game_registry.yaml and timeout_policy.yaml are read
	// beside it. Set it or Config, not both.
	ConfigPath string
	// Config is a configuration already loaded (config.Load or config.Default). It is
	// not modified: the overrides apply to a copy.
	Config *config.Config
	// Addr is the listen address; port 0 picks a free port. Empty means DefaultAddr.
	Addr string
	// DBPath, AuditPath and LogPath override database.path, logging.audit_log_path and
	// logging.application_log_path when set.
	DBPath, AuditPath, LogPath string
	// Overrides change the league the configuration describes.
	Overrides Overrides
	// Drain is how long a graceful shutdown lets matches in flight finish before they are
	// cancelled; 0 cancels them at once (league serve's default is league.DefaultDrain).
	Drain time.Duration
	// CutDrain ends the drain of a graceful shutdown once it is done (or at once if it is
	// done already): the matches still in flight are cancelled. Its cause
	// (context.Cause), when set, is logged as why. league serve cancels it on a second
	// signal. Nil: only Drain ends the drain.
	CutDrain context.Context
	// StopReason is sent to the agents in LEAGUE_SHUTDOWN and recorded when the shutdown
	// comes from the end of ctx; empty means DefaultStopReason.
	StopReason string
	// AdminToken authenticates the admin messages. Empty: the token in TokenFile beside
	// the database, created (random, mode 0600) on first start.
	AdminToken string
	// Log is the League Manager's logger. Nil: JSON lines to the application log file
	// and readable lines to Stderr, at logging.log_level.
	Log *zerolog.Logger
	// Stderr receives the readable log lines when Log is nil; nil means os.Stderr.
	Stderr io.Writer
	// Clock drives every deadline of the league (registration window, leases, result
	// reports, suspensions, the drain); nil means real time. Tests pass a fake one.
	Clock Clock
	// TLS, when set, makes the League Manager serve HTTPS (netsec.ServerConfig).
	TLS *tls.Config
	// ClientTLS configures the calls to agents (whom to trust); nil: the system's roots.
	ClientTLS *tls.Config
	// Insecure accepts and calls agents at plain-http endpoints off loopback.
	Insecure bool
	// Advertise is the endpoint URL reports; empty: the URL of the listen address.
	Advertise string

	// mounted: the league is served by a Many under its path, not on an address.
	mounted bool
}

// Overrides change parts of the league's configuration; zero values change nothing.
type Overrides struct {
	// GameType overrides league.game_type.
	GameType string
	// Seed overrides league.seed when not 0.
	Seed int64
	// LeagueID overrides league.league_id.
	LeagueID string
	// WindowSeconds overrides registration.window_seconds when set (0 is a window).
	WindowSeconds *float64
	// MinPlayers overrides registration.min_players when not 0.
	MinPlayers int
}

// Clock is the time the League Manager's deadlines run on.
type Clock interface {
	Now() time.Time
	// AfterFunc runs f once d has passed on the clock.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending call of Clock.AfterFunc; *time.Timer is one.
type Timer interface {
	Stop() bool
}

// Server is a running League Manager. Wait for its end with Wait or Done.
type Server struct {
	http      *httpserve.Server // nil when mounted
	advertise string
	log       zerolog.Logger
	cfg       *config.Config

	// handler and gate serve a mounted league: requests pass the gate until the league
	// closes, and its close waits for those in flight.
	handler http.Handler
	gate    *gate

	// What Start opened, closed in reverse order by close; nil when not opened.
	logFile io.Closer
	store   *store.Store
	audit   *audit.Log
	client  *protocol.Client
	mgr     *league.Manager

	shuttingDown chan struct{}
	done         chan struct{}
	err          error
}

// Start starts a League Manager and returns once it listens and has resumed its league.
// It then runs until ctx ends or an authenticated ADMIN_SHUTDOWN_REQUEST arrives, and
// shuts down gracefully: no more assignments, LEAGUE_SHUTDOWN to every agent, Drain (or
// until CutDrain) for the matches in flight, the rest cancelled, then the HTTP server
// and the files closed. When Start fails, whatever it opened is closed again.
func Start(ctx context.Context, opts Options) (*Server, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, advertise: opts.Advertise, shuttingDown: make(chan struct{}), done: make(chan struct{})}
	if err := s.open(cfg, opts); err != nil {
		return nil, s.close(err)
	}
	if s.http != nil {
		s.log.Info().Str("url", s.URL()).Str("addr", s.http.Addr()).Str("live_view", s.http.Base()+"/").Str("league_id", cfg.League.LeagueID).
			Str("game_type", cfg.League.GameType).Str("db", cfg.Database.Path).Msg("league manager listening")
	} else {
		s.log.Info().Str("game_type", cfg.League.GameType).Str("db", cfg.Database.Path).Msg("league opened")
	}
	// Ends once the league has shut down and everything is closed; Wait waits for it.
	go s.run(ctx, opts)
	return s, nil
}

// URL is the League Manager's JSON-RPC endpoint, e.g. http://127.0.0.1:8000/mcp:
// Options.Advertise when set.
func (s *Server) URL() string {
	if s.advertise != "" {
		return s.advertise
	}
	return s.http.URL()
}

// Addr is the bound address, e.g. 127.0.0.1:8000; GET /status and the live view are
// served there.
func (s *Server) Addr() string { return s.http.Addr() }

// ShuttingDown is closed when the graceful shutdown begins.
func (s *Server) ShuttingDown() <-chan struct{} { return s.shuttingDown }

// Done is closed once the League Manager has ended and everything it started is closed.
func (s *Server) Done() <-chan struct{} { return s.done }

// Wait waits for the end of the League Manager and returns the first error of its
// shutdown (HTTP server, audit log, database), nil after a clean one.
func (s *Server) Wait() error {
	<-s.done
	return s.err
}

// config loads the configuration and applies the overrides, in the order league serve
// always did: a bad drain is reported before a configuration that does not validate.
func (o Options) config() (*config.Config, error) {
	var cfg *config.Config
	switch {
	case o.Config != nil && o.ConfigPath != "":
		return nil, errors.New("options: both Config and ConfigPath are set, give one")
	case o.Config != nil:
		c := *o.Config
		cfg = &c
	case o.ConfigPath != "":
		var err error
		if cfg, err = config.Load(o.ConfigPath, game.Default()); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("options: no configuration, set Config or ConfigPath")
	}
	ov := o.Overrides
	if ov.GameType != "" {
		cfg.League.GameType = ov.GameType
	}
	if ov.Seed != 0 {
		cfg.League.Seed = ov.Seed
	}
	if ov.LeagueID != "" {
		cfg.League.LeagueID = ov.LeagueID
	}
	if ov.WindowSeconds != nil {
		cfg.Registration.WindowSeconds = *ov.WindowSeconds
	}
	if ov.MinPlayers != 0 {
		cfg.Registration.MinPlayers = ov.MinPlayers
	}
	if o.DBPath != "" {
		cfg.Database.Path = o.DBPath
	}
	if o.AuditPath != "" {
		cfg.Logging.AuditLogPath = o.AuditPath
	}
	if o.LogPath != "" {
		cfg.Logging.ApplicationLogPath = o.LogPath
	}
	if o.Drain < 0 {
		return nil, fmt.Errorf("%w, got %s", ErrNegativeDrain, o.Drain)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// open opens the logs, the database and the audit log, builds the Manager, serves it
// and starts it. What it opened is recorded in s for close, also when it fails. The
// errors of the parts go out as they are: they name their file or field already, and
// league serve prints them unchanged.
func (s *Server) open(cfg *config.Config, opts Options) error {
	if opts.Log != nil {
		s.log = *opts.Log
	} else {
		stderr := opts.Stderr
		if stderr == nil {
			stderr = os.Stderr
		}
		log, f, err := logging.OpenTo("league_manager", cfg.Logging.ApplicationLogPath, cfg.Logging.LogLevel, stderr)
		if err != nil {
			return err
		}
		s.log, s.logFile = log, f
		if opts.mounted {
			s.log = s.log.With().Str("league_id", cfg.League.LeagueID).Logger()
		}
	}
	token := opts.AdminToken
	if token == "" {
		var err error
		if token, err = LoadAdminToken(cfg.Database.Path, true); err != nil {
			return err
		}
	}
	db, err := store.Open(cfg.Database.Path)
	if err != nil {
		return err
	}
	s.store = db
	log, err := audit.Open(cfg.Logging.AuditLogPath, protocol.SenderLeagueManager)
	if err != nil {
		return err
	}
	s.audit = log
	db.TrackAudit(log)
	validator, err := protocol.NewValidator()
	if err != nil {
		return err
	}
	if err := validator.Warm(protocol.LeagueManagerReceives...); err != nil {
		return err
	}
	s.client = protocol.NewClientWith(validator, log, protocol.ClientOptions{TLS: opts.ClientTLS, Insecure: opts.Insecure})
	mopt := league.Options{Config: cfg, Store: db, Audit: log, Client: s.client, AdminToken: token, Log: s.log, Insecure: opts.Insecure, PublicURL: s.URL}
	if c := opts.Clock; c != nil {
		mopt.Now = c.Now
		mopt.AfterFunc = func(d time.Duration, f func()) league.Timer { return c.AfterFunc(d, f) }
	}
	mgr, err := league.NewManager(mopt)
	if err != nil {
		return err
	}
	s.mgr = mgr
	addr := opts.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	rpc := protocol.NewServer(mgr, validator, log, s.log)
	if opts.mounted {
		s.handler, s.gate = league.Routes(mgr, rpc), newGate()
		return mgr.Start()
	}
	srv, err := httpserve.StartTLS(addr, league.Routes(mgr, rpc), opts.TLS)
	if err != nil {
		return err
	}
	if err := mgr.Start(); err != nil {
		_ = srv.Shutdown(context.Background())
		return err
	}
	s.http = srv
	return nil
}

// run waits for the reason to stop, shuts the league down and closes everything.
func (s *Server) run(ctx context.Context, opts Options) {
	defer close(s.done)
	reason := opts.StopReason
	if reason == "" {
		reason = DefaultStopReason
	}
	select {
	case <-ctx.Done():
	case reason = <-s.mgr.ShutdownRequests():
	}
	close(s.shuttingDown)
	s.log.Info().Str("reason", reason).Dur("drain", opts.Drain).Msg("shutting down")
	dctx, cutDrain := context.WithCancel(context.Background())
	var cut <-chan struct{}
	if opts.CutDrain != nil {
		cut = opts.CutDrain.Done()
	}
	var watch sync.WaitGroup
	// Ends with the first of CutDrain and the end of the drain.
	watch.Go(func() {
		select {
		case <-cut:
			msg := "the drain is cut short"
			if cause := context.Cause(opts.CutDrain); cause != nil && !errors.Is(cause, context.Canceled) {
				msg = cause.Error() + ": " + msg
			}
			s.log.Warn().Msg(msg)
			cutDrain()
		case <-dctx.Done():
		}
	})
	if err := s.mgr.Shutdown(dctx, reason, opts.Drain); err != nil {
		s.log.Error().Err(err).Msg("graceful shutdown")
	}
	cutDrain()
	watch.Wait()
	sctx, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
	defer cancel()
	if s.http == nil {
		s.err = s.close(s.gate.close(sctx))
		return
	}
	err := s.http.Shutdown(sctx)
	if s.http.Stragglers() {
		s.log.Warn().Dur("waited", httpShutdownTimeout).Msg("connections still open after the shutdown were closed")
	}
	s.err = s.close(err)
}

// close closes what open opened, in reverse order, and records the audit log's final
// position in the database. It returns err, else the first error of closing the audit
// log or the database.
func (s *Server) close(err error) error {
	if s.mgr != nil {
		s.mgr.Close()
	}
	if s.client != nil {
		s.client.Close()
	}
	if s.store != nil {
		// The final position of the audit log goes to the database.
		if merr := s.store.SaveMark(); merr != nil {
			s.log.Error().Err(merr).Msg("record final audit mark")
		}
	}
	if s.audit != nil {
		if cerr := s.audit.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close audit log: %w", cerr)
		}
	}
	if s.store != nil {
		if cerr := s.store.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close database: %w", cerr)
		}
	}
	if s.logFile != nil {
		_ = s.logFile.Close()
	}
	return err
}

// TokenPath is the admin token file of the database at dbPath: TokenFile beside it.
func TokenPath(dbPath string) string { return filepath.Join(filepath.Dir(dbPath), TokenFile) }

// LoadAdminToken reads the admin token from TokenPath(dbPath). When there is none, it
// writes a new random one (mode 0600, creating the folder) if create is set, and returns
// "" otherwise.
func LoadAdminToken(dbPath string, create bool) (string, error) {
	path := TokenPath(dbPath)
	b, err := os.ReadFile(path)
	if err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	if !create {
		return "", nil
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate admin token: %w", err)
	}
	tok := hex.EncodeToString(raw)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("create database folder: %w", err)
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write admin token: %w", err)
	}
	return tok, nil
}

// AdminTokenEnv names the environment variable holding the admin token of league serve
// and of the admin commands.
const AdminTokenEnv = "LEAGUE_ADMIN_TOKEN"

// AdminTokenFor is the admin token an admin command sends to the League Manager of the
// database at dbPath: fromEnv (the value of AdminTokenEnv) when set, else the token kept
// beside the database.
func AdminTokenFor(fromEnv, dbPath string) (string, error) {
	if t := strings.TrimSpace(fromEnv); t != "" {
		return t, nil
	}
	tok, err := LoadAdminToken(dbPath, false)
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", fmt.Errorf("no admin token: set %s or run league serve with the same database folder (%s)", AdminTokenEnv, TokenPath(dbPath))
	}
	return tok, nil
}
