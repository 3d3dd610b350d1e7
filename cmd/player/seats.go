package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/logging"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/player/lbm"
	"github.com/agentleague/agentleague/player/uci"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
	"gopkg.in/yaml.v3"
)

// Bounds of a seats file: ten thousand players in one process is the aim of issue 40,
// and a file of that many seats with every option set stays well under the size.
const (
	maxSeats          = 10_000
	maxSeatsFileBytes = 8 << 20
)

// seatsShutdownGrace bounds how long the seats' server waits for answers in flight, a
// LEAGUE_SHUTDOWN_ACK among them, once every seat has stopped.
const seatsShutdownGrace = 5 * time.Second

// seatFlags are the flags of one player that a seats file sets for each seat instead.
var seatFlags = []string{"id", "strategy", "profile", "model-url", "engine", "engine-option",
	"movetime", "nodes", "depth", "seed", "display-name", "think", "fault"}

// seatsRun holds the flags of player --seats: the process's, which every seat shares.
type seatsRun struct {
	file, addr, league, logDir, logLevel, cpuProfile string
	registerFor                                      time.Duration
	net                                              cli.Net
}

// seatSpec is one seat of a seats file: the options of one player, named as the single
// player's flags (underscores for dashes, engine_options for --engine-option).
type seatSpec struct {
	ID          string        `yaml:"id"`
	Strategy    string        `yaml:"strategy"`
	DisplayName string        `yaml:"display_name"`
	Seed        int64         `yaml:"seed"`
	Think       time.Duration `yaml:"think"`
	Profile     string        `yaml:"profile"`
	ModelURL    string        `yaml:"model_url"`
	Engine      string        `yaml:"engine"`
	// EngineOptions are "Name=Value", as --engine-option takes them, in order.
	EngineOptions []string      `yaml:"engine_options"`
	MoveTime      time.Duration `yaml:"movetime"`
	Nodes         int64         `yaml:"nodes"`
	Depth         int           `yaml:"depth"`

	// line is where the seat starts in the file, for errors.
	line int
}

// seatFields are the fields a seat may have, from seatSpec's tags.
var seatFields = func() []string {
	var fields []string
	t := reflect.TypeFor[seatSpec]()
	for i := range t.NumField() {
		if tag := t.Field(i).Tag.Get("yaml"); tag != "" {
			fields = append(fields, tag)
		}
	}
	return fields
}()

// runSeats is player --seats: one process hosts every player of the seats file, each
// registered with its own token and endpoint, all served by one HTTP server on --addr at
// /seats/<player_id> (or, with --outbound, through the League Manager's relay). It
// returns once every seat has stopped: 0 after a clean stop, 1 when a seat failed, 2 for a
// bad command line or seats file, and then nothing is registered.
func runSeats(ctx context.Context, o seatsRun, fset *flag.FlagSet, rest []string, stdout, stderr io.Writer) int {
	fail := func(code int, err error) int {
		fmt.Fprintf(stderr, "player: %v\n", err)
		return code
	}
	if len(rest) > 0 {
		return fail(2, fmt.Errorf("unexpected argument %q", rest[0]))
	}
	var misplaced []string
	fset.Visit(func(f *flag.Flag) {
		if slices.Contains(seatFlags, f.Name) {
			misplaced = append(misplaced, "--"+f.Name)
		}
	})
	if len(misplaced) > 0 {
		return fail(2, fmt.Errorf("%s: with --seats each seat's options are in the seats file", strings.Join(misplaced, ", ")))
	}
	if err := o.net.Check(o.addr, cli.Call{Flag: "league", URL: o.league}); err != nil {
		return fail(2, err)
	}
	if _, err := logging.ParseLevel(o.logLevel); err != nil {
		return fail(2, fmt.Errorf("--log-level: %w", err))
	}
	specs, err := readSeats(o.file)
	if err != nil {
		return fail(2, err)
	}
	v, err := protocol.NewValidator()
	if err != nil {
		return fail(1, fmt.Errorf("load schemas: %w", err))
	}
	serverTLS, clientTLS, err := o.net.Load()
	if err != nil {
		return fail(1, err)
	}
	base := player.Config{
		Addr: o.addr, LeagueURL: o.league, RegisterFor: o.registerFor, Stdout: io.Discard, ModelAuth: lbm.AuthFromEnv(),
		Outbound: o.net.Outbound, ClientTLS: clientTLS, Insecure: o.net.Insecure, Validator: v,
	}
	cfgs := make([]player.Config, len(specs))
	for i, s := range specs {
		if cfgs[i], err = s.config(base); err != nil {
			return fail(2, fmt.Errorf("seats file %s: seat %s (line %d): %w", o.file, s.ID, s.line, err))
		}
	}
	// One log file for the process: a file per seat would hold thousands open.
	log, logFile, err := logging.Open("player", filepath.Join(o.logDir, seatsLogName(o.file)), o.logLevel)
	if err != nil {
		return fail(1, err)
	}
	defer logFile.Close()
	stopProfile, err := cli.StartCPUProfile(o.cpuProfile)
	if err != nil {
		return fail(1, err)
	}
	err = hostSeats(ctx, o, cfgs, serverTLS, log, stdout)
	if err = errors.Join(err, stopProfile()); err != nil {
		return fail(1, err)
	}
	return 0
}

// seatsLogName is the log file of the process that hosts the seats of file:
// player_seats_<file name without extension>.log.
func seatsLogName(file string) string {
	name := filepath.Base(file)
	return "player_seats_" + strings.TrimSuffix(name, filepath.Ext(name)) + ".log"
}

// hostSeats builds a player for each configuration, serves them with one server on
// o.addr (HTTPS with serverTLS) unless they are outbound, and plays them all until each
// has stopped: on LEAGUE_SHUTDOWN, when ctx ends, or when it fails. The error joins the
// seats' failures.
func hostSeats(ctx context.Context, o seatsRun, cfgs []player.Config, serverTLS *tls.Config, log zerolog.Logger, stdout io.Writer) error {
	players := make(map[string]*player.Player, len(cfgs))
	for _, cfg := range cfgs {
		plog := log.With().Str("player_id", cfg.ID).Logger()
		if cfg.LLM != nil {
			logLLM(plog, cfg.LLM)
		}
		p, err := player.New(cfg, plog)
		if err != nil {
			return fmt.Errorf("seat %s: %w", cfg.ID, err)
		}
		players[cfg.ID] = p
	}
	endpoint := func(string) string { return "" } // outbound: through the relay
	var srv *httpserve.Server
	if o.net.Outbound {
		log.Info().Str("league_url", o.league).Int("seats", len(cfgs)).Msg("seats outbound: no listening port, requests come through the League Manager's relay")
		// Tools and tests read how the process plays from this one stdout line.
		fmt.Fprintf(stdout, "player --seats: %d players outbound through %s\n", len(cfgs), o.league)
	} else {
		var err error
		if srv, err = httpserve.StartTLS(o.addr, seatRoutes(players), serverTLS); err != nil {
			return fmt.Errorf("start server: %w", err)
		}
		root := srv.Base()
		if o.net.Advertise != "" {
			root = strings.TrimSuffix(o.net.Advertise, "/")
		}
		endpoint = func(id string) string { return root + "/seats/" + id }
		log.Info().Str("url", root).Str("addr", srv.Addr()).Bool("tls", serverTLS != nil).Int("seats", len(cfgs)).Msg("seats listening at /seats/<player_id>")
		fmt.Fprintf(stdout, "player --seats: %d players listening on %s\n", len(cfgs), root)
	}
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		p, ep := players[cfg.ID], endpoint(cfg.ID)
		log.Debug().Str("player_id", cfg.ID).Str("strategy", cfg.Strategy).Str("endpoint", ep).Msg("seat starting")
		// Each seat's goroutine ends when its player stops.
		wg.Go(func() {
			if err := p.Serve(ctx, ep); err != nil {
				errs[i] = fmt.Errorf("seat %s: %w", cfg.ID, err)
			}
		})
	}
	wg.Wait()
	err := errors.Join(errs...)
	if srv != nil {
		// Shutdown lets answers in flight finish, each seat's LEAGUE_SHUTDOWN_ACK among them.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), seatsShutdownGrace)
		defer cancel()
		if serr := srv.Shutdown(sctx); serr != nil {
			err = errors.Join(err, fmt.Errorf("shut down server: %w", serr))
		}
	}
	failed := 0
	for _, e := range errs {
		if e != nil {
			failed++
		}
	}
	log.Info().Int("seats", len(cfgs)).Int("failed", failed).Msg("every seat stopped")
	return err
}

// seatRoutes serves each seat's JSON-RPC endpoint at /seats/<player_id> and its status at
// /seats/<player_id>/status, and GET /health.
func seatRoutes(players map[string]*player.Player) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/seats/{id}", func(w http.ResponseWriter, r *http.Request) {
		p := players[r.PathValue("id")]
		if p == nil {
			http.Error(w, "no such seat", http.StatusNotFound)
			return
		}
		// A move may think for as long as its deadline, which the server's write timeout
		// would cut, as the single player's routes know.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		p.Handler().ServeHTTP(w, r)
	})
	mux.HandleFunc("GET /seats/{id}/status", func(w http.ResponseWriter, r *http.Request) {
		p := players[r.PathValue("id")]
		if p == nil {
			http.Error(w, "no such seat", http.StatusNotFound)
			return
		}
		httpserve.WriteJSON(w, http.StatusOK, p.Status())
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		httpserve.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return mux
}

// config is the player configuration of the seat: base with the seat's options.
func (s seatSpec) config(base player.Config) (player.Config, error) {
	if field, strategy := s.stray(); field != "" {
		return base, fmt.Errorf("%s goes with strategy %s, not %s", field, strategy, s.Strategy)
	}
	cfg := base
	cfg.ID, cfg.Strategy, cfg.DisplayName, cfg.Seed, cfg.Think, cfg.ModelURL = s.ID, s.Strategy, s.DisplayName, s.Seed, s.Think, s.ModelURL
	cfg.Engine = uci.Config{Path: s.Engine, MoveTime: s.MoveTime, Nodes: s.Nodes, Depth: s.Depth}
	for _, opt := range s.EngineOptions {
		o, err := uci.ParseOption(opt)
		if err != nil {
			return cfg, fmt.Errorf("engine_options: %w", err)
		}
		cfg.Engine.Options = append(cfg.Engine.Options, o)
	}
	if s.Strategy == player.StrategyLLM {
		if s.Profile == "" {
			return cfg, errors.New("strategy llm needs profile, an agent profile such as config/agents/aggressive.yaml")
		}
		c, err := loadLLM(s.Profile)
		if err != nil {
			return cfg, err
		}
		withLLM(&cfg, c)
	}
	return cfg, cfg.Validate()
}

// stray names an option the seat sets that its strategy does not use, and the strategy
// that would; "" when there is none.
func (s seatSpec) stray() (field, strategy string) {
	for _, o := range []struct {
		field, strategy string
		set             bool
	}{
		{"profile", player.StrategyLLM, s.Profile != ""},
		{"model_url", player.StrategyLBM, s.ModelURL != ""},
		{"engine", player.StrategyUCI, s.Engine != ""},
		{"engine_options", player.StrategyUCI, len(s.EngineOptions) > 0},
		{"movetime", player.StrategyUCI, s.MoveTime != 0},
		{"nodes", player.StrategyUCI, s.Nodes != 0},
		{"depth", player.StrategyUCI, s.Depth != 0},
	} {
		if o.set && s.Strategy != o.strategy {
			return o.field, o.strategy
		}
	}
	return "", ""
}

// readSeats reads and checks the seats file at path.
func readSeats(path string) ([]seatSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("seats file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSeatsFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("seats file: %w", err)
	}
	if len(data) > maxSeatsFileBytes {
		return nil, fmt.Errorf("seats file %s is larger than %d MiB", path, maxSeatsFileBytes>>20)
	}
	specs, err := parseSeats(data)
	if err != nil {
		return nil, fmt.Errorf("seats file %s: %w", path, err)
	}
	return specs, nil
}

// parseSeats decodes a seats file: one YAML list of seats, each with its own id and a
// strategy, and no field a seat does not have.
func parseSeats(data []byte) ([]seatSpec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
		return nil, errors.New("no seats: the file is empty")
	} else if err != nil {
		return nil, err
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document: want one list of seats")
	}
	root := doc.Content[0]
	switch {
	case root.Kind == yaml.ScalarNode && root.Tag == "!!null":
		return nil, errors.New("no seats: the file is empty")
	case root.Kind != yaml.SequenceNode:
		return nil, fmt.Errorf("line %d: want a list of seats, e.g. \"- {id: p01, strategy: random}\"", root.Line)
	case len(root.Content) == 0:
		return nil, errors.New("no seats: the list is empty")
	case len(root.Content) > maxSeats:
		return nil, fmt.Errorf("%d seats: one process hosts at most %d", len(root.Content), maxSeats)
	}
	specs := make([]seatSpec, 0, len(root.Content))
	lines := make(map[string]int, len(root.Content))
	for i, n := range root.Content {
		name := seatName(i, n)
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s: want a mapping such as {id: p01, strategy: random}", name)
		}
		if err := checkFields(n); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s := seatSpec{line: n.Line}
		if err := n.Decode(&s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		switch {
		case s.ID == "":
			return nil, fmt.Errorf("%s: id is required", name)
		case s.Strategy == "":
			return nil, fmt.Errorf("%s: strategy is required, e.g. random", name)
		}
		if line, dup := lines[s.ID]; dup {
			return nil, fmt.Errorf("%s: duplicate id %s, first at line %d: every seat is a player of its own", name, s.ID, line)
		}
		lines[s.ID] = n.Line
		specs = append(specs, s)
	}
	return specs, nil
}

// seatName names the i-th seat in errors: by its id when it has one, and its line.
func seatName(i int, n *yaml.Node) string {
	if n.Kind == yaml.MappingNode {
		for k := 0; k+1 < len(n.Content); k += 2 {
			if key, v := n.Content[k], n.Content[k+1]; key.Value == "id" && v.Kind == yaml.ScalarNode && v.Value != "" {
				return fmt.Sprintf("seat %s (line %d)", v.Value, n.Line)
			}
		}
	}
	return fmt.Sprintf("seat %d (line %d)", i+1, n.Line)
}

// checkFields refuses a field a seat does not have, in n and in the mappings it merges
// with "<<": the YAML decoder itself would ignore it.
func checkFields(n *yaml.Node) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.SequenceNode: // << : [*a, *b]
		for _, c := range n.Content {
			if err := checkFields(c); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		for k := 0; k+1 < len(n.Content); k += 2 {
			key := n.Content[k]
			switch {
			case key.Tag == "!!merge":
				if err := checkFields(n.Content[k+1]); err != nil {
					return err
				}
			case !slices.Contains(seatFields, key.Value):
				return fmt.Errorf("unknown field %q at line %d (a seat has %s)", key.Value, key.Line, strings.Join(seatFields, ", "))
			}
		}
	}
	return nil
}
