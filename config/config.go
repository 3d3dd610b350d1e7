// Package config loads and validates the League Manager's configuration: league.yaml,
// and the game_registry.yaml and timeout_policy.yaml files that sit beside it.
//
// Fields missing from a file (or set to null) keep their built-in defaults, which are
// exactly the values of the files shipped in this folder (see Default). Unknown fields,
// values of the wrong type and out-of-range values are errors; every problem found is
// reported, one per line, as "<file>: <field path>: <problem>".
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
)

// File names of the configuration files. The registry and the timeout policy are read
// from the directory that holds league.yaml.
const (
	LeagueFile        = "league.yaml"
	GameRegistryFile  = "game_registry.yaml"
	TimeoutPolicyFile = "timeout_policy.yaml"
)

// GameParams holds the declared params of each game whose rules are compiled in;
// *game.Registry implements it. The params of game_registry.yaml are checked against
// these declarations, and normalized, by game.ParamSchema.Check.
type GameParams interface {
	// ParamSchema returns the declared params of gameType, or false for a game type
	// whose rules it does not have.
	ParamSchema(gameType string) (game.ParamSchema, bool)
}

var _ GameParams = (*game.Registry)(nil)

// Config is the whole validated configuration. The fields hold the values as written in
// YAML (milliseconds, seconds); the methods convert them to time.Duration.
type Config struct {
	League       League       `yaml:"league"`
	Registration Registration `yaml:"registration"`
	// Scheduling and Ranking are the league's format (see Format).
	Scheduling     schedule.Scheduling `yaml:"scheduling"`
	Ranking        schedule.Ranking    `yaml:"ranking"`
	LeagueTimeouts LeagueTimeouts      `yaml:"timeouts"`
	Retries        Retries             `yaml:"retries"`
	RateLimits     RateLimits          `yaml:"rate_limits"`
	Logging        Logging             `yaml:"logging"`
	Database       Database            `yaml:"database"`
	Referees       Referees            `yaml:"referees"`
	// IllegalMovePolicy says what happens to a player whose move is illegal. The only
	// value is protocol.PolicyLoss ("loss"): the mover loses the match.
	IllegalMovePolicy string `yaml:"illegal_move_policy"`
	// TimeControl, when set, plays every match under clocks instead of the fixed
	// move_response_ms, whatever the game's entry says (see Clock).
	TimeControl *TimeControl `yaml:"time_control"`
	// Openings says where each match starts; unset, from the game's initial position.
	Openings *Openings `yaml:"openings"`

	// Games is the content of game_registry.yaml, with each builtin game's params
	// normalized by its ParamSchema.
	Games []GameEntry `yaml:"-"`
	// Timeouts is the content of timeout_policy.yaml.
	Timeouts TimeoutPolicy `yaml:"-"`
	// Sources names the files the values came from; errors are prefixed with them.
	Sources Sources `yaml:"-"`

	params GameParams
	// copied marks the shared timeouts (by their league.yaml name) that shareTimeouts
	// copied from one file to the other: their range is checked in the file that set them.
	copied map[string]string
}

// League identifies the league and the game it plays.
type League struct {
	LeagueID string `yaml:"league_id"`
	Name     string `yaml:"name"`
	// GameType must be a game_type listed in game_registry.yaml.
	GameType string `yaml:"game_type"`
	// Seed makes scheduling and match seeds reproducible.
	Seed int64 `yaml:"seed"`
}

// TimeControl is a time_control of league.yaml or of a game in game_registry.yaml: a
// clock per player.
type TimeControl struct {
	// Clock is base+increment in seconds ("10+0.1"), or moves/base+increment
	// ("40/60+0.5"): the form of PGN's TimeControl tag. NoClock ("-", PGN's word for
	// none) plays under move_response_ms.
	Clock string `yaml:"clock"`
	// BankMS is a reserve drawn on once the clock runs out, never refilled.
	BankMS int `yaml:"bank_ms"`
}

// Openings is league.yaml's openings: where each match starts (docs/rules.md,
// "Openings"). The k-th game of the schedule (with GamePairs, its k-th pair of games,
// first move swapped) plays the k-th opening, the book taken in Order and over again
// when it runs out.
type Openings struct {
	// Book is a chess opening book, .epd or .pgn (game.ReadChessBook), relative to
	// league.yaml; Load reads it.
	Book string `yaml:"book"`
	// Plies cuts a PGN book's games to that many moves; without a book, each opening is
	// that many plies drawn at random from the league seed (game.RandomOpening).
	Plies int `yaml:"plies"`
	// Order is OrderRandom (the book shuffled by the league seed) or OrderSequential.
	Order string `yaml:"order"`
	// GamePairs plays each opening twice in a row per pairing, first move swapped.
	GamePairs bool `yaml:"game_pairs"`
	// BookHash identifies the book's openings (a SHA-256 of them as JSON), set by Load.
	// It is stored with the league, so that a restart can tell a changed book.
	BookHash string `yaml:"-"`

	entries []protocol.Opening // the book's, read by Load
}

// SameAs reports whether o and p give every match the same opening: the same book
// contents, plies, order and pairing (the book's path may differ).
func (o *Openings) SameAs(p *Openings) bool {
	if o == nil || p == nil {
		return o == p
	}
	return o.BookHash == p.BookHash && o.Plies == p.Plies && o.Order == p.Order && o.GamePairs == p.GamePairs
}

// Orders of Openings.Order.
const (
	OrderRandom     = "random"
	OrderSequential = "sequential"
)

// Entries are the openings of the book, in the book's order; nil without a book.
func (o *Openings) Entries() []protocol.Opening { return o.entries }

// NoClock is TimeControl.Clock of no clock: league.yaml's way to play a game whose
// registry entry has a clock under move_response_ms.
const NoClock = "-"

// Clock is the league's time control: league.yaml's time_control, else the one of its
// game's registry entry; nil when matches play under move_response_ms.
func (c *Config) Clock() *protocol.TimeControl {
	set := c.TimeControl
	if g, ok := c.Game(c.League.GameType); set == nil && ok {
		set = g.TimeControl
	}
	if set == nil || set.Clock == NoClock {
		return nil
	}
	tc, err := protocol.ParseTimeControl(set.Clock)
	if err != nil {
		return nil // Validate refuses it
	}
	tc.BankMS = set.BankMS
	return &tc
}

// Registration bounds the registration phase.
type Registration struct {
	// WindowSeconds is how long registration stays open after the first player; fractions
	// of a second are allowed.
	WindowSeconds float64 `yaml:"window_seconds"`
	MinPlayers    int     `yaml:"min_players"`
	MaxPlayers    int     `yaml:"max_players"`
	MinReferees   int     `yaml:"min_referees"`
	MaxReferees   int     `yaml:"max_referees"`
}

// LeagueTimeouts is the timeouts section of league.yaml, in milliseconds.
type LeagueTimeouts struct {
	RegistrationResponseMS int `yaml:"registration_response_ms"`
	MatchJoinAckMS         int `yaml:"match_join_ack_ms"`
	MoveResponseMS         int `yaml:"move_response_ms"`
	ResultReportMS         int `yaml:"result_report_ms"`
}

// Retries bounds the retrying of failed requests.
type Retries struct {
	MaxAttempts int `yaml:"max_attempts"`
	BackoffMS   int `yaml:"backoff_ms"`
	// MaxMatchAttempts is how many times a match may fail (its referee lost, no progress,
	// no result after the reminders) before it is abandoned instead of played again.
	MaxMatchAttempts int `yaml:"max_match_attempts"`
}

// RateLimits caps the request rates the League Manager accepts.
type RateLimits struct {
	RegistrationPerSecond float64 `yaml:"registration_per_second"`
	StandingsPerMinute    float64 `yaml:"standings_per_minute"`
	ResultsPerSecond      float64 `yaml:"results_per_second"`
}

// Logging locates the logs. Relative paths are relative to the working directory.
type Logging struct {
	AuditLogPath       string `yaml:"audit_log_path"`
	ApplicationLogPath string `yaml:"application_log_path"`
	// LogLevel is one of DEBUG, INFO, WARNING, ERROR, CRITICAL.
	LogLevel string `yaml:"log_level"`
}

// Database locates the SQLite database. A relative path is relative to the working
// directory.
type Database struct {
	Path string `yaml:"path"`
}

// Referees configures the referees the league assigns matches to.
type Referees struct {
	MaxConcurrentMatches int `yaml:"max_concurrent_matches"`
}

// GameEntry is one entry of game_registry.yaml.
type GameEntry struct {
	GameType    string `yaml:"game_type"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// RefereeImplementation is informational only.
	RefereeImplementation string `yaml:"referee_implementation"`
	// Rules is RulesBuiltin (the default: the game's rules are compiled in, params are
	// checked against their ParamSchema) or RulesExternal: only a referee that names the
	// game plays it, and the League Manager judges its results by the generic rules alone.
	Rules   string           `yaml:"rules"`
	Scoring protocol.Scoring `yaml:"scoring"`
	// MaxSteps bounds the length of an external game: the League Manager waits that many
	// move gaps for the result of a referee that reports no progress. Zero (builtin games
	// always) means the rules decide; an external game then gets DefaultExternalMaxSteps.
	MaxSteps int `yaml:"max_steps"`
	// Params are the game-specific parameters, as normalized by the game's ParamSchema;
	// an external game's params are passed on as written (JSON values).
	Params map[string]any `yaml:"params"`
	// TimeControl is the clock a league of this game plays under when league.yaml sets
	// none; nil: move_response_ms.
	TimeControl *TimeControl `yaml:"time_control"`
}

// Values of GameEntry.Rules.
const (
	RulesBuiltin  = "builtin"
	RulesExternal = "external"
)

// DefaultExternalMaxSteps bounds an external game whose entry sets no max_steps.
const DefaultExternalMaxSteps = 1000

// External reports whether the League Manager lacks the game's rules.
func (g GameEntry) External() bool { return g.Rules == RulesExternal }

// Steps is the most steps a legal match of an external game may take.
func (g GameEntry) Steps() int {
	if g.MaxSteps == 0 {
		return DefaultExternalMaxSteps
	}
	return g.MaxSteps
}

// TimeoutPolicy is the timeouts section of timeout_policy.yaml.
type TimeoutPolicy struct {
	LeagueLevel LeagueLevelTimeouts `yaml:"league_level"`
	MatchLevel  MatchLevelTimeouts  `yaml:"match_level"`
	Enforcement Enforcement         `yaml:"enforcement"`
}

// LeagueLevelTimeouts are the League Manager's timeouts, in milliseconds. Registration
// and ResultReport must equal the matching values of league.yaml.
type LeagueLevelTimeouts struct {
	Registration int `yaml:"registration"`
	ResultReport int `yaml:"result_report"`
	// MatchAssignmentResponseMS is how long a referee has to answer each attempt of a
	// MATCH_ASSIGNMENT.
	MatchAssignmentResponseMS int `yaml:"match_assignment_response_ms"`
	HeartbeatIntervalMS       int `yaml:"heartbeat_interval_ms"`
	// LeaseMS must be at least twice HeartbeatIntervalMS, so that one lost heartbeat
	// does not expire a lease.
	LeaseMS int `yaml:"lease_ms"`
}

// MatchLevelTimeouts are the referee's timeouts, in milliseconds, and its escalation of
// move timeouts. GameJoinAck and MoveResponse must equal the matching values of
// league.yaml.
type MatchLevelTimeouts struct {
	GameJoinAck  int `yaml:"game_join_ack"`
	MoveResponse int `yaml:"move_response"`
	// MoveWarnings is how many move timeouts only draw a warning.
	MoveWarnings int `yaml:"move_warnings"`
	// ForcedMoves is how many further move timeouts are answered with a forced move;
	// the next one is a technical loss.
	ForcedMoves int `yaml:"forced_moves"`
}

// Enforcement suspends agents that keep violating timeouts.
type Enforcement struct {
	SuspendAfterViolations    int `yaml:"suspend_after_violations"`
	SuspensionDurationSeconds int `yaml:"suspension_duration_seconds"`
}

// Sources names the three files of a Config.
type Sources struct {
	League        string
	GameRegistry  string
	TimeoutPolicy string
}

// registryFile is the root of game_registry.yaml.
type registryFile struct {
	Games []GameEntry `yaml:"games"`
}

// policyFile is the root of timeout_policy.yaml.
type policyFile struct {
	Timeouts TimeoutPolicy `yaml:"timeouts"`
}

// defaultScoring is the scoring of a game entry that does not set it.
var defaultScoring = protocol.Scoring{Win: 3, Draw: 1, Loss: 0}

// applyDefaults prepares an entry of the games list before it is decoded.
func (g *GameEntry) applyDefaults() { g.Scoring, g.Rules = defaultScoring, RulesBuiltin }

// defaults returns a fresh Config holding the built-in values, params not normalized.
func defaults() *Config {
	format := schedule.Default()
	return &Config{
		League: League{
			LeagueID: "league-2025-01",
			Name:     "Agent League Championship 2025",
			GameType: "tic_tac_toe",
			Seed:     1,
		},
		Registration: Registration{WindowSeconds: 60, MinPlayers: 2, MaxPlayers: 100, MinReferees: 1, MaxReferees: 20},
		Scheduling:   format.Scheduling,
		Ranking:      format.Ranking,
		// The four timeouts both files may hold start unset; shareTimeouts fills them.
		LeagueTimeouts: LeagueTimeouts{RegistrationResponseMS: unset, MatchJoinAckMS: unset, MoveResponseMS: unset, ResultReportMS: unset},
		Retries:        Retries{MaxAttempts: 3, BackoffMS: 1000, MaxMatchAttempts: 3},
		RateLimits:     RateLimits{RegistrationPerSecond: 10, StandingsPerMinute: 100, ResultsPerSecond: 50},
		Logging: Logging{
			AuditLogPath:       "./logs/audit.jsonl",
			ApplicationLogPath: "./logs/league_manager.log",
			LogLevel:           "INFO",
		},
		Database:          Database{Path: "./data/league.db"},
		Referees:          Referees{MaxConcurrentMatches: 1},
		IllegalMovePolicy: protocol.PolicyLoss,
		Games: []GameEntry{
			{
				GameType:              "even_odd",
				Name:                  "Even/Odd Prediction",
				Description:           "Players predict even or odd",
				RefereeImplementation: "game",
				Rules:                 RulesBuiltin,
				Scoring:               defaultScoring,
				Params:                map[string]any{"rounds": 5},
			},
			{
				GameType:              "rock_paper_scissors",
				Name:                  "Rock Paper Scissors",
				Description:           "Classic RPS",
				RefereeImplementation: "game",
				Rules:                 RulesBuiltin,
				Scoring:               defaultScoring,
				Params:                map[string]any{"rounds": 5},
			},
			{
				GameType:              "tic_tac_toe",
				Name:                  "Tic Tac Toe",
				Description:           "3x3 grid game",
				RefereeImplementation: "game",
				Rules:                 RulesBuiltin,
				Scoring:               defaultScoring,
				Params:                map[string]any{},
			},
			{
				GameType:              "connect_four",
				Name:                  "Connect Four",
				Description:           "6x7 board with gravity, four in a row wins",
				RefereeImplementation: "game",
				Rules:                 RulesBuiltin,
				Scoring:               defaultScoring,
				Params:                map[string]any{},
			},
			{
				GameType:              "chess",
				Name:                  "Chess",
				Description:           "FIDE rules; draws declared when claimable; max_plies adjudicated a draw",
				RefereeImplementation: "game",
				Rules:                 RulesBuiltin,
				Scoring:               defaultScoring,
				Params:                map[string]any{"max_plies": 200},
			},
		},
		Timeouts: TimeoutPolicy{
			LeagueLevel: LeagueLevelTimeouts{Registration: unset, ResultReport: unset, MatchAssignmentResponseMS: 5000, HeartbeatIntervalMS: 2000, LeaseMS: 6000},
			MatchLevel:  MatchLevelTimeouts{GameJoinAck: unset, MoveResponse: unset, MoveWarnings: 1, ForcedMoves: 1},
			Enforcement: Enforcement{SuspendAfterViolations: 3, SuspensionDurationSeconds: 300},
		},
		Sources: Sources{League: LeagueFile, GameRegistry: GameRegistryFile, TimeoutPolicy: TimeoutPolicyFile},
	}
}

// unset marks a shared timeout that no file has set yet.
const unset = math.MinInt32

// Built-in values of the four timeouts league.yaml and timeout_policy.yaml share.
const (
	defaultRegistrationMS = 5000
	defaultJoinAckMS      = 10000
	defaultMoveMS         = 30000
	defaultResultReportMS = 60000
)

// shareTimeouts fills the four timeouts that league.yaml (timeouts) and
// timeout_policy.yaml (league_level, match_level) may both hold: a value set in one file
// is used for both, so an admin edits one file; set in neither, it takes its default.
// Set in both, the values must agree (checkPolicy).
func (c *Config) shareTimeouts() {
	c.copied = map[string]string{}
	share := func(name string, league, policy *int, def int) {
		switch {
		case *league == unset && *policy == unset:
			*league, *policy = def, def
		case *league == unset:
			*league, c.copied[name] = *policy, LeagueFile
		case *policy == unset:
			*policy, c.copied[name] = *league, TimeoutPolicyFile
		}
	}
	lt, ll, ml := &c.LeagueTimeouts, &c.Timeouts.LeagueLevel, &c.Timeouts.MatchLevel
	share("registration_response_ms", &lt.RegistrationResponseMS, &ll.Registration, defaultRegistrationMS)
	share("result_report_ms", &lt.ResultReportMS, &ll.ResultReport, defaultResultReportMS)
	share("match_join_ack_ms", &lt.MatchJoinAckMS, &ml.GameJoinAck, defaultJoinAckMS)
	share("move_response_ms", &lt.MoveResponseMS, &ml.MoveResponse, defaultMoveMS)
}

// Default returns the built-in configuration, identical to the shipped files, with the
// game params normalized by games.
func Default(games GameParams) (*Config, error) {
	if games == nil {
		return nil, errors.New("default config: nil GameParams")
	}
	c := defaults()
	c.params = games
	c.shareTimeouts()
	if err := c.finish(nil); err != nil {
		return nil, fmt.Errorf("default config: %w", err)
	}
	return c, nil
}

// Load reads leaguePath and the game_registry.yaml and timeout_policy.yaml beside it,
// fills in defaults, normalizes each game's params with games and validates the result.
// A validation failure is an *Error listing every problem of the three files.
func Load(leaguePath string, games GameParams) (*Config, error) {
	if games == nil {
		return nil, errors.New("load config: nil GameParams")
	}
	dir := filepath.Dir(leaguePath)
	c := defaults()
	c.params = games
	c.Sources = Sources{
		League:        leaguePath,
		GameRegistry:  filepath.Join(dir, GameRegistryFile),
		TimeoutPolicy: filepath.Join(dir, TimeoutPolicyFile),
	}
	registry := registryFile{Games: c.Games}
	policy := policyFile{Timeouts: c.Timeouts}
	var problems []Problem
	for _, f := range []struct {
		path string
		into any
	}{
		{c.Sources.League, c},
		{c.Sources.GameRegistry, &registry},
		{c.Sources.TimeoutPolicy, &policy},
	} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return nil, fmt.Errorf("load config: %w", err)
		}
		p, err := DecodeYAML(f.path, data, f.into)
		if err != nil {
			return nil, err
		}
		problems = append(problems, p...)
	}
	c.Games, c.Timeouts = registry.Games, policy.Timeouts
	c.shareTimeouts()
	if c.Openings != nil && c.Openings.Order == "" {
		c.Openings.Order = OrderRandom
	}
	problems = append(problems, c.readBook(dir)...)
	if err := c.finish(problems); err != nil {
		return nil, err
	}
	return c, nil
}

// readBook reads the opening book of a chess league, relative to dir.
func (c *Config) readBook(dir string) []Problem {
	o := c.Openings
	if o == nil || o.Book == "" || c.League.GameType != game.TypeChess {
		return nil // nothing to read, or checkLeague refuses it
	}
	path := o.Book
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := os.Open(path)
	if err == nil {
		defer f.Close()
		o.entries, err = game.ReadChessBook(path, f, o.Plies)
	}
	if err == nil {
		b, _ := json.Marshal(o.entries) // openings of strings and JSON values always encode
		sum := sha256.Sum256(b)
		o.BookHash = hex.EncodeToString(sum[:])
	}
	if err != nil {
		return []Problem{{File: c.Sources.League, Path: "openings.book", Message: err.Error()}}
	}
	return nil
}

// Format is the league's format as configured, before For resolves it for the players.
func (c *Config) Format() schedule.Format {
	return schedule.Format{Scheduling: c.Scheduling, Ranking: c.Ranking}
}

// Game returns the registry entry of gameType.
func (c *Config) Game(gameType string) (GameEntry, bool) {
	for _, g := range c.Games {
		if g.GameType == gameType {
			return g, true
		}
	}
	return GameEntry{}, false
}

// RegistrationWindow is registration.window_seconds.
func (c *Config) RegistrationWindow() time.Duration {
	return time.Duration(c.Registration.WindowSeconds * float64(time.Second))
}

// MatchJoinAckTimeout is timeouts.match_join_ack_ms.
func (c *Config) MatchJoinAckTimeout() time.Duration { return ms(c.LeagueTimeouts.MatchJoinAckMS) }

// MoveTimeout is timeouts.move_response_ms.
func (c *Config) MoveTimeout() time.Duration { return ms(c.LeagueTimeouts.MoveResponseMS) }

// ResultReportTimeout is timeouts.result_report_ms.
func (c *Config) ResultReportTimeout() time.Duration { return ms(c.LeagueTimeouts.ResultReportMS) }

// MatchAssignmentTimeout is timeout_policy's
// timeouts.league_level.match_assignment_response_ms.
func (c *Config) MatchAssignmentTimeout() time.Duration {
	return ms(c.Timeouts.LeagueLevel.MatchAssignmentResponseMS)
}

// RetryBackoff is retries.backoff_ms.
func (c *Config) RetryBackoff() time.Duration { return ms(c.Retries.BackoffMS) }

// LeaseDuration is timeout_policy's timeouts.league_level.lease_ms.
func (c *Config) LeaseDuration() time.Duration { return ms(c.Timeouts.LeagueLevel.LeaseMS) }

// SuspensionDuration is timeout_policy's timeouts.enforcement.suspension_duration_seconds.
func (c *Config) SuspensionDuration() time.Duration {
	return time.Duration(c.Timeouts.Enforcement.SuspensionDurationSeconds) * time.Second
}

// ms converts a millisecond count to a time.Duration.
func ms(v int) time.Duration { return time.Duration(v) * time.Millisecond }
