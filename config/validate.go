package config

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/problem"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
)

// Problem is one violation found in a configuration file.
type Problem struct {
	// File is the file the value belongs to, as named in Config.Sources.
	File string
	// Path locates the field, e.g. "games[2].scoring.win"; empty for the whole file.
	Path string
	// Message says what is wrong, e.g. "must be >= draw (1), got 0".
	Message string
	// Line is the line of the value in File, or 0 when the problem was found after
	// decoding (range and cross-field rules).
	Line int
}

// String formats p as "<file>: <path>: <message>", followed by " (line N)" when known.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	if p.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", p.Line)
	}
	return b.String()
}

// Error lists every problem found in a configuration, grouped by file in the order
// league.yaml, game_registry.yaml, timeout_policy.yaml, or in another file read with
// DecodeYAML (an agent profile).
type Error struct {
	Problems []Problem
}

// Error returns one problem per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Bounds of the validated values.
const (
	maxWindowSeconds = 86400
	maxReferees      = 1000
	maxTimeoutMS     = 600000
	// maxOpeningPlies bounds openings.plies.
	maxOpeningPlies = 100
	// maxClockMS bounds a time control's base time and bank: a day.
	maxClockMS           = 86400000
	maxRetryAttempts     = 10
	maxBackoffMS         = 60000
	maxRate              = 1e6
	maxConcurrentMatches = 64
	maxPoints            = 1000
	maxNameLength        = 200
	maxEscalationSteps   = 10
	maxViolations        = 100
	maxSuspensionSeconds = 86400
	leaseHeartbeats      = 2 // a lease outlives this many heartbeat intervals
	maxExternalSteps     = 100000
	// An external game's params travel inside a match assignment, whose schema bounds them.
	maxParamsBytes   = 8192
	maxParamsMembers = 64
	maxParamsDepth   = 16
)

// logLevels are the accepted values of logging.log_level.
var logLevels = []string{"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"}

// Validate reports every violation in c, for example after a caller overrode fields
// loaded from YAML. It re-checks each game's params with the GameParams c was built
// with, but does not modify c. c must come from Load or Default.
func (c *Config) Validate() error {
	if c.params == nil {
		return errors.New("validate config: no GameParams, build the config with Load or Default")
	}
	return c.report(c.check(false))
}

// finish adds the problems of c to those found while decoding and reports them all;
// on success it has replaced each game's params with their normalized form.
func (c *Config) finish(decoded []Problem) error {
	return c.report(append(decoded, c.check(true)...))
}

// report returns problems as an *Error grouped by file, or nil if there are none.
func (c *Config) report(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	rank := map[string]int{c.Sources.League: 0, c.Sources.GameRegistry: 1, c.Sources.TimeoutPolicy: 2}
	slices.SortStableFunc(problems, func(a, b Problem) int { return cmp.Compare(rank[a.File], rank[b.File]) })
	return &Error{Problems: problems}
}

// checker collects the problems found after decoding.
type checker struct {
	problems []Problem
}

// add records a problem at path in file.
func (k *checker) add(file, path, format string, args ...any) {
	k.problems = append(k.problems, Problem{File: file, Path: path, Message: fmt.Sprintf(format, args...)})
}

// between checks lo <= v <= hi and reports whether it holds.
func (k *checker) between(file, path string, v, lo, hi int) bool {
	if v < lo || v > hi {
		k.add(file, path, "must be between %d and %d, got %d", lo, hi, v)
		return false
	}
	return true
}

// betweenFloat checks lo <= v <= hi; NaN fails.
func (k *checker) betweenFloat(file, path string, v, lo, hi float64) {
	if !(v >= lo && v <= hi) {
		k.add(file, path, "must be between %s and %s, got %s", num(lo), num(hi), num(v))
	}
}

// positive checks 0 < v <= hi; NaN fails.
func (k *checker) positive(file, path string, v, hi float64) {
	if !(v > 0 && v <= hi) {
		k.add(file, path, "must be > 0 and <= %s, got %s", num(hi), num(v))
	}
}

// atLeast checks lo <= v <= hi, where lo is the value of the field named loName.
func (k *checker) atLeast(file, path string, v int, loName string, lo, hi int) {
	switch {
	case v < lo:
		k.add(file, path, "must be >= %s (%d), got %d", loName, lo, v)
	case v > hi:
		k.add(file, path, "must be <= %d, got %d", hi, v)
	}
}

// oneOf checks that v is one of allowed and reports whether it is.
func (k *checker) oneOf(file, path, v string, allowed ...string) bool {
	if !slices.Contains(allowed, v) {
		k.add(file, path, "must be %s, got %q", quotedList(allowed), v)
		return false
	}
	return true
}

// text checks that v is non-empty and at most maxNameLength bytes long.
func (k *checker) text(file, path, v string) {
	switch {
	case v == "":
		k.add(file, path, "must not be empty")
	case len(v) > maxNameLength:
		k.add(file, path, "must be at most %d bytes, got %d", maxNameLength, len(v))
	}
}

// id checks that v matches schedule.IDPattern and reports whether it does.
func (k *checker) id(file, path, v string) bool {
	if !schedule.IDPattern.MatchString(v) {
		k.add(file, path, "must match %s, got %q", schedule.IDPattern, v)
		return false
	}
	return true
}

// num formats v without an exponent, e.g. 1000000 or 0.5.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// quotedList renders allowed as `"a", "b" or "c"`.
func quotedList(allowed []string) string {
	q := make([]string, len(allowed))
	for i, a := range allowed {
		q[i] = fmt.Sprintf("%q", a)
	}
	if len(q) == 1 {
		return q[0]
	}
	return "one of " + strings.Join(q, ", ")
}

// check returns the problems of c. With normalize, each game's params are replaced by
// their normalized form when GameParams accepts them.
func (c *Config) check(normalize bool) []Problem {
	var k checker
	c.checkLeague(&k)
	c.checkGames(&k, normalize)
	c.checkPolicy(&k)
	return k.problems
}

// checkLeague checks league.yaml, including that league.game_type is registered.
func (c *Config) checkLeague(k *checker) {
	f := c.Sources.League

	k.id(f, "league.league_id", c.League.LeagueID)
	k.text(f, "league.name", c.League.Name)
	if _, ok := c.Game(c.League.GameType); !ok {
		k.add(f, "league.game_type", "%q is not in %s", c.League.GameType, GameRegistryFile)
	}

	r := c.Registration
	k.betweenFloat(f, "registration.window_seconds", r.WindowSeconds, 0, maxWindowSeconds)
	if k.between(f, "registration.min_players", r.MinPlayers, 2, schedule.MaxPlayers) {
		k.atLeast(f, "registration.max_players", r.MaxPlayers, "min_players", r.MinPlayers, schedule.MaxPlayers)
	}
	if k.between(f, "registration.min_referees", r.MinReferees, 1, maxReferees) {
		k.atLeast(f, "registration.max_referees", r.MaxReferees, "min_referees", r.MinReferees, maxReferees)
	}

	c.checkFormat(k)

	t := c.LeagueTimeouts
	for _, v := range []struct {
		name  string
		value int
	}{{"registration_response_ms", t.RegistrationResponseMS}, {"match_join_ack_ms", t.MatchJoinAckMS}, {"move_response_ms", t.MoveResponseMS}, {"result_report_ms", t.ResultReportMS}} {
		// A value copied from timeout_policy.yaml is checked there.
		if c.copied[v.name] != LeagueFile {
			k.between(f, "timeouts."+v.name, v.value, 1, maxTimeoutMS)
		}
	}

	k.between(f, "retries.max_attempts", c.Retries.MaxAttempts, 1, maxRetryAttempts)
	k.between(f, "retries.backoff_ms", c.Retries.BackoffMS, 0, maxBackoffMS)
	k.between(f, "retries.max_match_attempts", c.Retries.MaxMatchAttempts, 1, maxRetryAttempts)

	k.positive(f, "rate_limits.registration_per_second", c.RateLimits.RegistrationPerSecond, maxRate)
	k.positive(f, "rate_limits.standings_per_minute", c.RateLimits.StandingsPerMinute, maxRate)
	k.positive(f, "rate_limits.results_per_second", c.RateLimits.ResultsPerSecond, maxRate)

	k.text(f, "logging.audit_log_path", c.Logging.AuditLogPath)
	k.text(f, "logging.application_log_path", c.Logging.ApplicationLogPath)
	k.oneOf(f, "logging.log_level", c.Logging.LogLevel, logLevels...)

	k.text(f, "database.path", c.Database.Path)

	k.between(f, "referees.max_concurrent_matches", c.Referees.MaxConcurrentMatches, 1, maxConcurrentMatches)

	k.oneOf(f, "illegal_move_policy", c.IllegalMovePolicy, protocol.PolicyLoss)

	k.timeControl(f, "time_control", c.TimeControl)
	c.checkOpenings(k)
}

// checkOpenings checks league.yaml's openings against the game and the format: a book
// is for chess, game pairs need every pairing to meet an even number of times with the
// first move alternating.
func (c *Config) checkOpenings(k *checker) {
	o, f := c.Openings, c.Sources.League
	if o == nil {
		return
	}
	k.oneOf(f, "openings.order", o.Order, OrderRandom, OrderSequential)
	k.between(f, "openings.plies", o.Plies, 0, maxOpeningPlies)
	switch {
	case o.Book != "" && c.League.GameType != game.TypeChess:
		k.add(f, "openings.book", "an opening book is for chess; this league plays %s (without a book, plies draws random openings)", c.League.GameType)
	case o.Book == "" && o.Plies == 0:
		k.add(f, "openings", "set book (chess) or plies (random openings of that many moves)")
	}
	s := c.Scheduling
	if o.GamePairs && !(s.Algorithm == schedule.RoundRobin && s.Cycles == 2) && !(s.Algorithm == schedule.Gauntlet && s.GamesPerPair%2 == 0) {
		k.add(f, "openings.game_pairs", "needs every pairing to meet an even number of times, first move alternating: round_robin with cycles 2, or gauntlet with an even games_per_pair")
	}
}

// timeControl checks a time_control, of league.yaml or of a game in the registry.
func (k *checker) timeControl(file, path string, tc *TimeControl) {
	switch {
	case tc == nil:
	case tc.Clock == NoClock:
		if tc.BankMS != 0 {
			k.add(file, path+".bank_ms", "must be 0 without a clock, got %d", tc.BankMS)
		}
	default:
		if clock, err := protocol.ParseTimeControl(tc.Clock); err != nil {
			k.add(file, path+".clock", "%v", err)
		} else {
			k.between(file, path+".clock", clock.BaseMS, 1, maxClockMS)
		}
		k.between(file, path+".bank_ms", tc.BankMS, 0, maxClockMS)
	}
}

// checkFormat adds the problems of the league's format (schedule.Format.Validate, the
// one judge of a format) at their league.yaml paths.
func (c *Config) checkFormat(k *checker) {
	var inv problem.List
	if errors.As(c.Format().Validate(), &inv) {
		for _, p := range inv {
			k.add(c.Sources.League, p.Path, "%s", p.Message)
		}
	}
}

// checkGames checks game_registry.yaml, each builtin game's params against the schema
// GameParams declares for it.
func (c *Config) checkGames(k *checker, normalize bool) {
	f := c.Sources.GameRegistry
	if len(c.Games) == 0 {
		k.add(f, "games", "must list at least one game")
	}
	firstIndex := make(map[string]int)
	for i := range c.Games {
		g := &c.Games[i]
		p := problem.Index("games", i)
		validID := k.id(f, p+".game_type", g.GameType)
		if validID {
			if j, dup := firstIndex[g.GameType]; dup {
				k.add(f, p+".game_type", "%q is already listed as games[%d]", g.GameType, j)
			} else {
				firstIndex[g.GameType] = i
			}
		}
		k.text(f, p+".name", g.Name)

		s := g.Scoring
		win := k.between(f, p+".scoring.win", s.Win, 0, maxPoints)
		draw := k.between(f, p+".scoring.draw", s.Draw, 0, maxPoints)
		loss := k.between(f, p+".scoring.loss", s.Loss, 0, maxPoints)
		if win && draw && s.Win < s.Draw {
			k.add(f, p+".scoring.win", "must be >= draw (%d), got %d", s.Draw, s.Win)
		}
		if draw && loss && s.Draw < s.Loss {
			k.add(f, p+".scoring.draw", "must be >= loss (%d), got %d", s.Loss, s.Draw)
		}

		k.timeControl(f, p+".time_control", g.TimeControl)

		k.oneOf(f, p+".rules", g.Rules, RulesBuiltin, RulesExternal)
		if g.External() {
			k.between(f, p+".max_steps", g.Steps(), 1, maxExternalSteps)
			if params, err := jsonParams(g.Params); err != nil {
				k.add(f, p+".params", "%v", err)
			} else if normalize {
				g.Params = params
			}
			continue
		}
		if g.MaxSteps != 0 {
			k.add(f, p+".max_steps", "only an external game sets it (the rules of %s bound its length)", g.GameType)
		}
		if !validID {
			continue
		}
		schema, ok := c.params.ParamSchema(g.GameType)
		if !ok {
			k.add(f, p+".game_type", "unknown game type %q", g.GameType)
			continue
		}
		params, err := schema.Check(g.Params)
		var bad problem.List
		if errors.As(err, &bad) {
			for _, pr := range bad {
				k.add(f, subPath(p+".params", pr.Path), "%s", pr.Message)
			}
			continue
		}
		// Declared bounds may still add up to more than a match assignment carries.
		if _, err := jsonParams(params); err != nil {
			k.add(f, p+".params", "%v", err)
		} else if normalize {
			g.Params = params
		}
	}
}

// subPath joins path and rel, a path relative to it ("heaps[1]", `["a b"]`).
func subPath(path, rel string) string {
	if strings.HasPrefix(rel, "[") {
		return path + rel
	}
	return path + "." + rel
}

// jsonParams returns an external game's params as they will travel in a match assignment
// (a JSON round trip), refusing what JSON cannot carry or the protocol bounds
// (maxParamsBytes, maxParamsMembers members).
func jsonParams(raw map[string]any) (map[string]any, error) {
	if raw == nil {
		return nil, nil
	}
	if len(raw) > maxParamsMembers {
		return nil, fmt.Errorf("must have at most %d members, got %d", maxParamsMembers, len(raw))
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, errors.New("must hold only JSON values (mappings with string keys, lists, strings, numbers, booleans, null)")
	}
	if len(b) > maxParamsBytes {
		return nil, fmt.Errorf("must be at most %d bytes as JSON, got %d", maxParamsBytes, len(b))
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode params: %w", err)
	}
	if depth(out) > maxParamsDepth {
		return nil, fmt.Errorf("must nest at most %d levels", maxParamsDepth)
	}
	return out, nil
}

// depth is how many levels of lists and mappings v nests.
func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
	default:
		return 0
	}
	return d + 1
}

// checkPolicy checks timeout_policy.yaml, including that a timeout set in both files has
// the same value in both (shareTimeouts copies one set in only one file to the other).
func (c *Config) checkPolicy(k *checker) {
	f := c.Sources.TimeoutPolicy
	l, m, e := c.Timeouts.LeagueLevel, c.Timeouts.MatchLevel, c.Timeouts.Enforcement
	lt := c.LeagueTimeouts

	same := func(path string, v int, leagueField string, leagueValue int) {
		if c.copied[strings.TrimPrefix(leagueField, "timeouts.")] == TimeoutPolicyFile {
			return // copied from league.yaml, and checked there
		}
		if k.between(f, path, v, 1, maxTimeoutMS) && leagueValue >= 1 && leagueValue <= maxTimeoutMS && v != leagueValue {
			k.add(f, path, "is %d but %s in %s is %d: set it in one file only, or the same in both", v, leagueField, LeagueFile, leagueValue)
		}
	}
	same("timeouts.league_level.registration", l.Registration, "timeouts.registration_response_ms", lt.RegistrationResponseMS)
	same("timeouts.league_level.result_report", l.ResultReport, "timeouts.result_report_ms", lt.ResultReportMS)
	k.between(f, "timeouts.league_level.match_assignment_response_ms", l.MatchAssignmentResponseMS, 1, maxTimeoutMS)
	if k.between(f, "timeouts.league_level.heartbeat_interval_ms", l.HeartbeatIntervalMS, 1, maxTimeoutMS/leaseHeartbeats) {
		k.atLeast(f, "timeouts.league_level.lease_ms", l.LeaseMS, "2 × heartbeat_interval_ms", leaseHeartbeats*l.HeartbeatIntervalMS, maxTimeoutMS)
	}
	same("timeouts.match_level.game_join_ack", m.GameJoinAck, "timeouts.match_join_ack_ms", lt.MatchJoinAckMS)
	same("timeouts.match_level.move_response", m.MoveResponse, "timeouts.move_response_ms", lt.MoveResponseMS)
	k.between(f, "timeouts.match_level.move_warnings", m.MoveWarnings, 0, maxEscalationSteps)
	k.between(f, "timeouts.match_level.forced_moves", m.ForcedMoves, 0, maxEscalationSteps)

	k.between(f, "timeouts.enforcement.suspend_after_violations", e.SuspendAfterViolations, 1, maxViolations)
	k.between(f, "timeouts.enforcement.suspension_duration_seconds", e.SuspensionDurationSeconds, 0, maxSuspensionSeconds)
}
