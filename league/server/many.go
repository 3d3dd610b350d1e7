package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/protocol"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// The files of a league in a folder of ManyOptions.Dir (seed 001: one database per
// namespace), whatever paths its league.yaml names.
const (
	LeagueFile      = "league.yaml"
	LeagueDBPath    = "data/league.db"
	LeagueAuditPath = "logs/audit.jsonl"
	LeagueLogPath   = "logs/league.log"
)

// ManyOptions configure a League Manager of many leagues: every folder of Dir that
// holds a league.yaml is a league, served at /leagues/<league_id>/.
type ManyOptions struct {
	// Dir holds a folder per league.
	Dir string
	// Addr is the listen address; port 0 picks a free port. Empty means DefaultAddr.
	Addr string
	// Drain, CutDrain and StopReason apply to each league as in Options.
	Drain      time.Duration
	CutDrain   context.Context
	StopReason string
	// AdminToken authenticates the admin messages of every league. Empty: each league's
	// own admin.token beside its database.
	AdminToken string
	// Log is the process's own logger (start, the leagues that fail); each league logs
	// to its own logs/league.log and to Stderr. Nil: readable lines on Stderr.
	Log *zerolog.Logger
	// Stderr receives the readable log lines of the leagues; nil means os.Stderr.
	Stderr io.Writer
	// TLS, ClientTLS and Insecure apply to every league as in Options.
	TLS       *tls.Config
	ClientTLS *tls.Config
	Insecure  bool
	// Advertise is the base URL others reach the leagues at (e.g. https://lm.example:8000);
	// empty: the listen address's.
	Advertise string
}

// LeagueInfo is one league of a Many as the root page and /api/leagues list it.
type LeagueInfo struct {
	// Folder is the league's folder name in Dir.
	Folder string `json:"folder"`
	// LeagueID is league.league_id; empty when the configuration could not be read.
	LeagueID string `json:"league_id,omitempty"`
	GameType string `json:"game_type,omitempty"`
	// Path is where the league is served, e.g. /leagues/l1/; its endpoint is Path+"mcp".
	Path string `json:"path,omitempty"`
	// State is running, stopped (shut down) or failed (it could not start: Error says why).
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	// LeagueState, Players, MatchesDone and MatchesTotal are the league's progress (GET
	// /status), for a league that started.
	LeagueState  string `json:"league_state,omitempty"`
	Players      int    `json:"players"`
	MatchesDone  int    `json:"matches_done"`
	MatchesTotal int    `json:"matches_total"`
}

// The states of LeagueInfo.
const (
	LeagueRunning = "running"
	LeagueStopped = "stopped"
	LeagueFailed  = "failed"
)

// Many is a running League Manager of many leagues, each with its own configuration,
// database, audit log, lifecycle, live view and metrics; a league that fails to start
// is reported and the others run. It ends once every league has shut down.
type Many struct {
	http      *httpserve.Server
	advertise string
	log       zerolog.Logger
	leagues   []*mounted
	proc      *prometheus.Registry // the process's Go and process metrics, once
	stop      context.CancelFunc   // shuts every league down
	done      chan struct{}
	err       error
}

// mounted is one league of a Many: its server when it started, else why not.
type mounted struct {
	info LeagueInfo
	srv  *Server
}

// StartMany starts every league of opts.Dir and serves them on one address. It fails
// only when Dir cannot be read, holds no league, or the address cannot be listened on;
// a league that cannot start is listed as failed with its error.
func StartMany(ctx context.Context, opts ManyOptions) (*Many, error) {
	stderr := opts.Stderr
	if stderr == nil {
		stderr = os.Stderr
	}
	log := zerolog.New(zerolog.ConsoleWriter{Out: stderr, NoColor: true}).With().Timestamp().Str("component", "league_manager").Logger()
	if opts.Log != nil {
		log = *opts.Log
	}
	folders, err := leagueFolders(opts.Dir)
	if err != nil {
		return nil, err
	}
	addr := opts.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	// The address is taken before any league opens, so a taken port touches no league's
	// files; a request that comes while they open waits for the routes.
	var routes http.Handler
	ready := make(chan struct{})
	srv, err := httpserve.StartTLS(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ready:
			routes.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}), opts.TLS)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(ctx)
	m := &Many{log: log, advertise: strings.TrimSuffix(opts.Advertise, "/"), proc: prometheus.NewRegistry(), stop: stop, done: make(chan struct{}), http: srv}
	m.proc.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ids := map[string]string{}
	for _, folder := range folders {
		lg := m.open(ctx, opts, folder, ids)
		if lg.info.State == LeagueFailed {
			m.log.Error().Str("folder", folder).Str("error", lg.info.Error).Msg("league not started")
		}
		m.leagues = append(m.leagues, lg)
	}
	routes = m.routes()
	close(ready)
	// Ends once every league that started has ended; Wait waits for it.
	go m.run()
	return m, nil
}

// leagueFolders lists the folders of dir holding a league.yaml, sorted.
func leagueFolders(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read leagues folder: %w", err)
	}
	var folders []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), LeagueFile)); err == nil {
			folders = append(folders, e.Name())
		}
	}
	if len(folders) == 0 {
		return nil, fmt.Errorf("leagues folder %s: no folder holds a %s", dir, LeagueFile)
	}
	return folders, nil
}

// open starts the league of folder; ids maps the league ids taken so far to their
// folders, since two leagues cannot share a path.
func (m *Many) open(ctx context.Context, opts ManyOptions, folder string, ids map[string]string) *mounted {
	lg := &mounted{info: LeagueInfo{Folder: folder, State: LeagueFailed}}
	dir := filepath.Join(opts.Dir, folder)
	cfg, err := config.Load(filepath.Join(dir, LeagueFile), game.Default())
	if err != nil {
		lg.info.Error = err.Error()
		return lg
	}
	id := cfg.League.LeagueID
	lg.info.LeagueID, lg.info.GameType = id, cfg.League.GameType
	if other, taken := ids[id]; taken {
		lg.info.Error = fmt.Sprintf("league_id %q is the league of folder %s already", id, other)
		return lg
	}
	ids[id] = folder
	srv, err := Start(ctx, Options{
		Config: cfg, DBPath: filepath.Join(dir, LeagueDBPath), AuditPath: filepath.Join(dir, LeagueAuditPath),
		LogPath: filepath.Join(dir, LeagueLogPath), Drain: opts.Drain, CutDrain: opts.CutDrain,
		StopReason: opts.StopReason, AdminToken: opts.AdminToken, Stderr: opts.Stderr, mounted: true,
		ClientTLS: opts.ClientTLS, Insecure: opts.Insecure, Advertise: m.URL() + "leagues/" + id + "/mcp",
	})
	if err != nil {
		lg.info.Error = err.Error()
		return lg
	}
	lg.srv, lg.info.Path, lg.info.State = srv, "/leagues/"+id+"/", LeagueRunning
	return lg
}

// run waits for every league to end, then stops serving.
func (m *Many) run() {
	defer close(m.done)
	defer m.stop()
	var errs []error
	for _, lg := range m.leagues {
		if lg.srv == nil {
			continue
		}
		if err := lg.srv.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("league %s: %w", lg.info.LeagueID, err))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpShutdownTimeout)
	defer cancel()
	errs = append(errs, m.http.Shutdown(ctx))
	m.err = errors.Join(errs...)
}

// URL is the base address of the leagues, e.g. http://127.0.0.1:8000/: the advertised
// one when set.
func (m *Many) URL() string {
	if m.advertise != "" {
		return m.advertise + "/"
	}
	return m.http.Base() + "/"
}

// Leagues lists the leagues in folder order.
func (m *Many) Leagues() []LeagueInfo {
	out := make([]LeagueInfo, len(m.leagues))
	for i, lg := range m.leagues {
		out[i] = lg.info
		if lg.srv == nil {
			continue
		}
		select {
		case <-lg.srv.Done():
			out[i].State = LeagueStopped
		default:
			st := lg.srv.mgr.Status()
			out[i].LeagueState, out[i].Players, out[i].MatchesTotal = st.State, st.Players, st.MatchesTotal
			out[i].MatchesDone = st.MatchesByStatus[protocol.MatchStateCompleted] + st.MatchesByStatus[protocol.MatchStateAbandoned]
		}
	}
	return out
}

// ShuttingDown is closed when every league that started has begun its shutdown.
func (m *Many) ShuttingDown() <-chan struct{} {
	ch := make(chan struct{})
	// Ends once each league has begun its shutdown or ended.
	go func() {
		defer close(ch)
		for _, lg := range m.leagues {
			if lg.srv != nil {
				select {
				case <-lg.srv.ShuttingDown():
				case <-lg.srv.Done():
				}
			}
		}
	}()
	return ch
}

// Done is closed once every league has ended and the Many no longer serves.
func (m *Many) Done() <-chan struct{} { return m.done }

// Wait waits for the end of every league and returns their shutdown errors joined.
func (m *Many) Wait() error {
	<-m.done
	return m.err
}

// routes serves each league under /leagues/<league_id>/, the list of leagues at / and
// /api/leagues, and the metrics of all of them at /metrics.
func (m *Many) routes() http.Handler {
	mux := http.NewServeMux()
	gatherers := prometheus.Gatherers{m.proc}
	for _, lg := range m.leagues {
		if lg.srv == nil {
			continue
		}
		prefix := strings.TrimSuffix(lg.info.Path, "/")
		mux.Handle(lg.info.Path, http.StripPrefix(prefix, lg.srv.gate.wrap(lg.srv.handler)))
		mux.Handle("GET "+prefix, http.RedirectHandler(lg.info.Path, http.StatusMovedPermanently))
		gatherers = append(gatherers, lg.srv.mgr.Metrics())
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		// Degraded while any league's storage fails, naming each.
		h := map[string]any{"status": "ok"}
		degraded := map[string]*league.StorageStatus{}
		for _, lg := range m.leagues {
			if lg.srv != nil {
				if st := lg.srv.mgr.Health().Storage; st != nil {
					degraded[lg.info.LeagueID] = st
				}
			}
		}
		if len(degraded) > 0 {
			h["status"], h["leagues"] = "degraded", degraded
		}
		httpserve.WriteJSON(w, http.StatusOK, h)
	})
	mux.HandleFunc("GET /api/leagues", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, map[string]any{"leagues": m.Leagues()})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = leaguesPage.Execute(w, m.Leagues())
	})
	return mux
}

var leaguesPage = template.Must(template.New("leagues").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Agent League: leagues</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{padding:.3rem .8rem;border-bottom:1px solid #ddd;text-align:left}.failed{color:#b00}</style>
</head><body><h1>Agent League</h1>
<table><thead><tr><th>League</th><th>Game</th><th>State</th><th>League state</th><th>Players</th><th>Matches</th><th>Endpoint</th><th>Folder</th></tr></thead><tbody>
{{range .}}<tr class="{{.State}}"><td>{{if .Path}}<a href="{{.Path}}">{{.LeagueID}}</a>{{else}}{{.LeagueID}}{{end}}</td><td>{{.GameType}}</td>
<td>{{.State}}{{if .Error}}: {{.Error}}{{end}}</td><td>{{.LeagueState}}</td><td>{{if .LeagueState}}{{.Players}}{{end}}</td>
<td>{{if .LeagueState}}{{.MatchesDone}} / {{.MatchesTotal}}{{end}}</td><td>{{if .Path}}<code>{{.Path}}mcp</code>{{end}}</td><td>{{.Folder}}</td></tr>
{{end}}</tbody></table></body></html>
`))

// gate lets a mounted league's requests through until the league closes: close refuses
// new ones and waits for those in flight, as an HTTP server's Shutdown does.
type gate struct {
	mu       sync.Mutex
	inFlight int
	closed   bool
	idle     chan struct{} // closed when closed and nothing is in flight
}

func newGate() *gate { return &gate{idle: make(chan struct{})} }

// wrap serves h through the gate; after close the league answers 410 Gone.
func (g *gate) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.enter() {
			http.Error(w, "this league has shut down", http.StatusGone)
			return
		}
		defer g.leave()
		h.ServeHTTP(w, r)
	})
}

func (g *gate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.inFlight++
	return true
}

func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	if g.closed && g.inFlight == 0 {
		close(g.idle)
	}
}

// close refuses new requests and waits until those in flight have ended or ctx ends.
func (g *gate) close(ctx context.Context) error {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		if g.inFlight == 0 {
			close(g.idle)
		}
	}
	g.mu.Unlock()
	select {
	case <-g.idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("requests in flight at shutdown: %w", ctx.Err())
	}
}
