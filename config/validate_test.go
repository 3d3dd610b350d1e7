package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/problem"
)

// games2 is a game registry of tic_tac_toe and, as games[1], the flow mapping entry.
func games2(entry string) string {
	return "games:\n  - {game_type: tic_tac_toe, name: T}\n  - " + entry + "\n"
}

// loadProblems loads the shipped files with files replaced and returns the problem
// lines, the directory prefix removed.
func loadProblems(t *testing.T, files map[string]string) []string {
	t.Helper()
	leaguePath := writeConfig(t, files)
	c, err := Load(leaguePath, newFakeGames())
	if err == nil {
		t.Fatalf("Load = %+v, want an error", c)
	}
	var ve *Error
	if !errors.As(err, &ve) {
		t.Fatalf("Load error %q is not an *Error", err)
	}
	prefix := filepath.Dir(leaguePath) + string(filepath.Separator)
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(ve.Problems) {
		t.Fatalf("error has %d lines for %d problems:\n%s", len(lines), len(ve.Problems), err)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, prefix) {
			t.Fatalf("problem %q does not start with the directory %q", l, prefix)
		}
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return lines
}

func TestLoadRejects(t *testing.T) {
	long := strings.Repeat("a", 65)
	tests := []struct {
		name  string
		file  string
		yaml  string
		wants []string // problems, each "<file name>: <path>: <message>"
	}{
		{"a book for a game other than chess", LeagueFile, "openings: {book: b.epd}\n",
			[]string{"league.yaml: openings.book: an opening book is for chess; this league plays tic_tac_toe (without a book, plies draws random openings)"}},
		{"openings of nothing", LeagueFile, "openings: {order: sequential}\n",
			[]string{"league.yaml: openings: set book (chess) or plies (random openings of that many moves)"}},
		{"openings in a bad order, too long", LeagueFile, "openings: {plies: 101, order: shuffled}\n",
			[]string{`league.yaml: openings.order: must be one of "random", "sequential", got "shuffled"`, "league.yaml: openings.plies: must be between 0 and 100, got 101"}},
		{"game pairs in a single round robin", LeagueFile, "openings: {plies: 2, game_pairs: true}\n",
			[]string{"league.yaml: openings.game_pairs: needs every pairing to meet an even number of times, first move alternating: round_robin with cycles 2, or gauntlet with an even games_per_pair"}},
		{"a game's clock that is not one", GameRegistryFile, games2("{game_type: even_odd, name: E, time_control: {clock: \"0+1\"}}"),
			[]string{`game_registry.yaml: games[1].time_control.clock: time control "0+1": the base time must be a positive number of seconds`}},
		{"a bank without a clock", LeagueFile, "time_control: {clock: \"-\", bank_ms: 500}\n",
			[]string{"league.yaml: time_control.bank_ms: must be 0 without a clock, got 500"}},
		{"a clock that is not one", LeagueFile, "time_control: {clock: \"5+x\", bank_ms: -1}\n",
			[]string{`league.yaml: time_control.clock: time control "5+x": the increment must be a number of seconds, 0 or more`,
				"league.yaml: time_control.bank_ms: must be between 0 and 86400000, got -1"}},
		// Decoding: unknown fields, types, shapes, duplicates.
		{"unknown top-level field", LeagueFile, "leauge: {}\n",
			[]string{"league.yaml: leauge: unknown field (line 1)"}},
		{"unknown nested field", LeagueFile, "registration:\n  max_player: 5\n",
			[]string{"league.yaml: registration.max_player: unknown field (line 2)"}},
		{"unknown field in a list entry", GameRegistryFile, games2("{game_type: even_odd, name: E, scoring: {wins: 3}}"),
			[]string{"game_registry.yaml: games[1].scoring.wins: unknown field (line 3)"}},
		{"string for an integer", LeagueFile, "registration:\n  min_players: \"two\"\n",
			[]string{`league.yaml: registration.min_players: must be an integer, got "two" (line 2)`}},
		{"plain string for an integer", LeagueFile, "registration:\n  min_players: two\n",
			[]string{`league.yaml: registration.min_players: must be an integer, got "two" (line 2)`}},
		{"fraction for an integer", LeagueFile, "registration: {min_players: 2.5}\n",
			[]string{"league.yaml: registration.min_players: must be an integer, got 2.5 (line 1)"}},
		{"integer overflow", LeagueFile, "league: {seed: 99999999999999999999}\n",
			[]string{"league.yaml: league.seed: must be an integer, got 99999999999999999999 (line 1)"}},
		{"string for a number", LeagueFile, "registration: {window_seconds: soon}\n",
			[]string{`league.yaml: registration.window_seconds: must be a number, got "soon" (line 1)`}},
		{"string for a bool", LeagueFile, "scheduling: {concurrent_matches_per_round: \"yes\"}\n",
			[]string{`league.yaml: scheduling.concurrent_matches_per_round: must be true or false, got "yes" (line 1)`}},
		{"number for a string", LeagueFile, "league: {name: 2025}\n",
			[]string{"league.yaml: league.name: must be a string, got 2025 (line 1)"}},
		{"list for a string", LeagueFile, "illegal_move_policy: [loss]\n",
			[]string{"league.yaml: illegal_move_policy: must be a string, got a list (line 1)"}},
		{"scalar for a section", LeagueFile, "registration: 5\n",
			[]string{"league.yaml: registration: must be a mapping, got 5 (line 1)"}},
		{"list for the whole file", TimeoutPolicyFile, "- timeouts\n",
			[]string{"timeout_policy.yaml: must be a mapping, got a list (line 1)"}},
		{"mapping for the games list", GameRegistryFile, "games: {tic_tac_toe: {}}\n",
			[]string{"game_registry.yaml: games: must be a list, got a mapping (line 1)"}},
		{"scalar for params", GameRegistryFile, games2("{game_type: even_odd, name: E, params: 5}"),
			[]string{"game_registry.yaml: games[1].params: must be a mapping, got 5 (line 3)"}},
		{"non-string params key", GameRegistryFile, games2("{game_type: even_odd, name: E, params: {[a, b]: 1}}"),
			[]string{"game_registry.yaml: games[1].params: must be a mapping with string keys (line 3)"}},
		{"duplicate key", LeagueFile, "registration:\n  min_players: 2\n  min_players: 3\n",
			[]string{"league.yaml: registration.min_players: duplicate key, first set at line 2 (line 3)"}},
		{"duplicate params key", GameRegistryFile, games2("{game_type: even_odd, name: E, params: {rounds: 1, rounds: 2}}"),
			[]string{"game_registry.yaml: games[1].params.rounds: duplicate key, first set at line 3 (line 3)"}},

		// league.yaml rules.
		{"league_id shape", LeagueFile, "league: {league_id: -bad}\n",
			[]string{`league.yaml: league.league_id: must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$, got "-bad"`}},
		{"league_id length", LeagueFile, "league: {league_id: " + long + "}\n",
			[]string{`league.yaml: league.league_id: must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$, got "` + long + `"`}},
		{"empty league name", LeagueFile, "league: {name: \"\"}\n",
			[]string{"league.yaml: league.name: must not be empty"}},
		{"long league name", LeagueFile, "league: {name: " + strings.Repeat("n", 201) + "}\n",
			[]string{"league.yaml: league.name: must be at most 200 bytes, got 201"}},
		{"unregistered game type", LeagueFile, "league: {game_type: go}\n",
			[]string{`league.yaml: league.game_type: "go" is not in game_registry.yaml`}},
		{"negative window", LeagueFile, "registration: {window_seconds: -0.5}\n",
			[]string{"league.yaml: registration.window_seconds: must be between 0 and 86400, got -0.5"}},
		{"window too long", LeagueFile, "registration: {window_seconds: 86400.5}\n",
			[]string{"league.yaml: registration.window_seconds: must be between 0 and 86400, got 86400.5"}},
		{"NaN window", LeagueFile, "registration: {window_seconds: .nan}\n",
			[]string{"league.yaml: registration.window_seconds: must be between 0 and 86400, got NaN"}},
		{"min_players too small", LeagueFile, "registration: {min_players: 1}\n",
			[]string{"league.yaml: registration.min_players: must be between 2 and 1000, got 1"}},
		{"max_players below min_players", LeagueFile, "registration: {min_players: 5, max_players: 4}\n",
			[]string{"league.yaml: registration.max_players: must be >= min_players (5), got 4"}},
		{"max_players too large", LeagueFile, "registration: {max_players: 1001}\n",
			[]string{"league.yaml: registration.max_players: must be <= 1000, got 1001"}},
		{"min_referees too small", LeagueFile, "registration: {min_referees: 0}\n",
			[]string{"league.yaml: registration.min_referees: must be between 1 and 1000, got 0"}},
		{"max_referees below min_referees", LeagueFile, "registration: {min_referees: 3, max_referees: 2}\n",
			[]string{"league.yaml: registration.max_referees: must be >= min_referees (3), got 2"}},
		{"max_referees too large", LeagueFile, "registration: {max_referees: 1001}\n",
			[]string{"league.yaml: registration.max_referees: must be <= 1000, got 1001"}},
		{"unsupported algorithm", LeagueFile, "scheduling: {algorithm: ladder}\n",
			[]string{`league.yaml: scheduling.algorithm: must be one of "round_robin", "swiss", "knockout", "gauntlet", "arena", got "ladder"`}},
		{"gauntlet without candidates", LeagueFile, "scheduling: {algorithm: gauntlet}\n",
			[]string{"league.yaml: scheduling.candidates: a gauntlet needs at least one candidate"}},
		{"bad scheduling values", LeagueFile, "scheduling: {rounds: -1, bye_points: 1001, best_of: 0, tie_rule: replay, games_per_pair: 0}\n",
			[]string{
				"league.yaml: scheduling.rounds: must be between 0 and 999, got -1",
				"league.yaml: scheduling.bye_points: must be between 0 and 1000, got 1001",
				"league.yaml: scheduling.best_of: must be between 1 and 99, got 0",
				`league.yaml: scheduling.tie_rule: must be one of "higher_seed", "coin_toss", "sudden_death", got "replay"`,
				"league.yaml: scheduling.games_per_pair: must be between 1 and 100, got 0",
			}},
		{"too many swiss rounds", LeagueFile, "scheduling: {algorithm: swiss, rounds: 1000}\n",
			[]string{"league.yaml: scheduling.rounds: must be between 0 and 999, got 1000"}},
		{"bad player lists", LeagueFile, "scheduling: {seeding: [p1, \"no way\", p1], candidates: [p2, \"p 2\"]}\n",
			[]string{
				`league.yaml: scheduling.seeding[1]: must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$, got "no way"`,
				`league.yaml: scheduling.seeding[2]: "p1" is already listed as scheduling.seeding[0]`,
				`league.yaml: scheduling.candidates[1]: must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$, got "p 2"`,
			}},
		{"candidates not a list", LeagueFile, "scheduling: {candidates: p1}\n",
			[]string{`league.yaml: scheduling.candidates: must be a list, got "p1" (line 1)`}},
		{"overlapping swiss rounds", LeagueFile, "scheduling: {algorithm: swiss, overlap_rounds: true}\n",
			[]string{"league.yaml: scheduling.overlap_rounds: swiss pairs each round from the results before it, so its rounds cannot overlap"}},
		{"overlap not a boolean", LeagueFile, "scheduling: {overlap_rounds: sometimes}\n",
			[]string{`league.yaml: scheduling.overlap_rounds: must be true or false, got "sometimes" (line 1)`}},
		{"bye points not a number", LeagueFile, "scheduling: {bye_points: lots}\n",
			[]string{`league.yaml: scheduling.bye_points: must be an integer, got "lots" (line 1)`}},
		{"bad ranking", LeagueFile, "ranking: {tiebreaks: [head_to_head, buchholz, head_to_head], rating_samples: 0}\n",
			[]string{
				`league.yaml: ranking.tiebreaks[1]: must be one of "sonneborn_berger", "head_to_head", got "buchholz"`,
				`league.yaml: ranking.tiebreaks[2]: "head_to_head" is listed twice`,
				"league.yaml: ranking.rating_samples: must be between 1 and 100000, got 0",
			}},
		{"zero cycles", LeagueFile, "scheduling: {cycles: 0}\n",
			[]string{"league.yaml: scheduling.cycles: must be between 1 and 2, got 0"}},
		{"three cycles", LeagueFile, "scheduling: {cycles: 3}\n",
			[]string{"league.yaml: scheduling.cycles: must be between 1 and 2, got 3"}},
		{"zero registration timeout", LeagueFile, "timeouts: {registration_response_ms: 0}\n",
			[]string{"league.yaml: timeouts.registration_response_ms: must be between 1 and 600000, got 0"}},
		{"zero join timeout", LeagueFile, "timeouts: {match_join_ack_ms: 0}\n",
			[]string{"league.yaml: timeouts.match_join_ack_ms: must be between 1 and 600000, got 0"}},
		{"move timeout too long", LeagueFile, "timeouts: {move_response_ms: 600001}\n",
			[]string{"league.yaml: timeouts.move_response_ms: must be between 1 and 600000, got 600001"}},
		{"negative report timeout", LeagueFile, "timeouts: {result_report_ms: -1}\n",
			[]string{"league.yaml: timeouts.result_report_ms: must be between 1 and 600000, got -1"}},
		{"zero attempts", LeagueFile, "retries: {max_attempts: 0}\n",
			[]string{"league.yaml: retries.max_attempts: must be between 1 and 10, got 0"}},
		{"too many attempts", LeagueFile, "retries: {max_attempts: 11}\n",
			[]string{"league.yaml: retries.max_attempts: must be between 1 and 10, got 11"}},
		{"negative backoff", LeagueFile, "retries: {backoff_ms: -1}\n",
			[]string{"league.yaml: retries.backoff_ms: must be between 0 and 60000, got -1"}},
		{"backoff too long", LeagueFile, "retries: {backoff_ms: 60001}\n",
			[]string{"league.yaml: retries.backoff_ms: must be between 0 and 60000, got 60001"}},
		{"zero registration rate", LeagueFile, "rate_limits: {registration_per_second: 0}\n",
			[]string{"league.yaml: rate_limits.registration_per_second: must be > 0 and <= 1000000, got 0"}},
		{"negative standings rate", LeagueFile, "rate_limits: {standings_per_minute: -1}\n",
			[]string{"league.yaml: rate_limits.standings_per_minute: must be > 0 and <= 1000000, got -1"}},
		{"infinite results rate", LeagueFile, "rate_limits: {results_per_second: .inf}\n",
			[]string{"league.yaml: rate_limits.results_per_second: must be > 0 and <= 1000000, got +Inf"}},
		{"empty audit log path", LeagueFile, "logging: {audit_log_path: \"\"}\n",
			[]string{"league.yaml: logging.audit_log_path: must not be empty"}},
		{"empty application log path", LeagueFile, "logging: {application_log_path: \"\"}\n",
			[]string{"league.yaml: logging.application_log_path: must not be empty"}},
		{"lowercase log level", LeagueFile, "logging: {log_level: info}\n",
			[]string{`league.yaml: logging.log_level: must be one of "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL", got "info"`}},
		{"empty database path", LeagueFile, "database: {path: \"\"}\n",
			[]string{"league.yaml: database.path: must not be empty"}},
		{"zero concurrent matches", LeagueFile, "referees: {max_concurrent_matches: 0}\n",
			[]string{"league.yaml: referees.max_concurrent_matches: must be between 1 and 64, got 0"}},
		{"too many concurrent matches", LeagueFile, "referees: {max_concurrent_matches: 65}\n",
			[]string{"league.yaml: referees.max_concurrent_matches: must be between 1 and 64, got 65"}},
		{"unsupported illegal move policy", LeagueFile, "illegal_move_policy: forfeit_turn\n",
			[]string{`league.yaml: illegal_move_policy: must be "loss", got "forfeit_turn"`}},

		// game_registry.yaml rules.
		{"no games", GameRegistryFile, "games: []\n",
			[]string{
				`league.yaml: league.game_type: "tic_tac_toe" is not in game_registry.yaml`,
				"game_registry.yaml: games: must list at least one game",
			}},
		{"missing game_type", GameRegistryFile, games2("{name: E}"),
			[]string{`game_registry.yaml: games[1].game_type: must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$, got ""`}},
		{"duplicate game_type", GameRegistryFile, games2("{game_type: tic_tac_toe, name: T2}"),
			[]string{`game_registry.yaml: games[1].game_type: "tic_tac_toe" is already listed as games[0]`}},
		{"unknown game type", GameRegistryFile, games2("{game_type: go, name: G}"),
			[]string{`game_registry.yaml: games[1].game_type: unknown game type "go"`}},
		{"missing game name", GameRegistryFile, games2("{game_type: even_odd}"),
			[]string{"game_registry.yaml: games[1].name: must not be empty"}},
		{"win too large", GameRegistryFile, games2("{game_type: even_odd, name: E, scoring: {win: 1001}}"),
			[]string{"game_registry.yaml: games[1].scoring.win: must be between 0 and 1000, got 1001"}},
		{"negative draw", GameRegistryFile, games2("{game_type: even_odd, name: E, scoring: {draw: -1}}"),
			[]string{"game_registry.yaml: games[1].scoring.draw: must be between 0 and 1000, got -1"}},
		{"negative loss", GameRegistryFile, games2("{game_type: even_odd, name: E, scoring: {loss: -1}}"),
			[]string{"game_registry.yaml: games[1].scoring.loss: must be between 0 and 1000, got -1"}},
		{"win below draw", GameRegistryFile, games2("{game_type: even_odd, name: E, scoring: {win: 0}}"),
			[]string{"game_registry.yaml: games[1].scoring.win: must be >= draw (1), got 0"}},
		{"draw below loss", GameRegistryFile, games2("{game_type: even_odd, name: E, scoring: {win: 5, draw: 1, loss: 2}}"),
			[]string{"game_registry.yaml: games[1].scoring.draw: must be >= loss (2), got 1"}},
		{"bad param", GameRegistryFile, games2("{game_type: even_odd, name: E, params: {rounds: 0}}"),
			[]string{"game_registry.yaml: games[1].params.rounds: must be >= 1, got 0"}},
		{"unknown rules", GameRegistryFile, games2("{game_type: even_odd, name: E, rules: plugin}"),
			[]string{`game_registry.yaml: games[1].rules: must be one of "builtin", "external", got "plugin"`}},
		{"max_steps on a builtin game", GameRegistryFile, games2("{game_type: even_odd, name: E, max_steps: 10}"),
			[]string{"game_registry.yaml: games[1].max_steps: only an external game sets it (the rules of even_odd bound its length)"}},
		{"external max_steps negative", GameRegistryFile, games2("{game_type: nim, name: N, rules: external, max_steps: -1}"),
			[]string{"game_registry.yaml: games[1].max_steps: must be between 1 and 100000, got -1"}},
		{"external max_steps too large", GameRegistryFile, games2("{game_type: nim, name: N, rules: external, max_steps: 100001}"),
			[]string{"game_registry.yaml: games[1].max_steps: must be between 1 and 100000, got 100001"}},
		{"external params with a number key", GameRegistryFile, games2("{game_type: nim, name: N, rules: external, params: {heaps: {1: 3}}}"),
			[]string{"game_registry.yaml: games[1].params: must hold only JSON values (mappings with string keys, lists, strings, numbers, booleans, null)"}},
		{"external params too large", GameRegistryFile, games2("{game_type: nim, name: N, rules: external, params: {text: " + strings.Repeat("x", 8200) + "}}"),
			[]string{"game_registry.yaml: games[1].params: must be at most 8192 bytes as JSON, got 8211"}},
		{"external params too deep", GameRegistryFile, games2("{game_type: nim, name: N, rules: external, params: {a: " + strings.Repeat("[", 16) + strings.Repeat("]", 16) + "}}"),
			[]string{"game_registry.yaml: games[1].params: must nest at most 16 levels"}},
		{"unknown param", GameRegistryFile, games2("{game_type: rock_paper_scissors, name: R, params: {best_of: 3}}"),
			[]string{"game_registry.yaml: games[1].params.best_of: unknown parameter"}},
		{"typed params", GameRegistryFile, games2("{game_type: typed, name: N, params: {heaps: [1, 400], name: Nim, board: {size: 2, sise: 3}, bord: 1}}"),
			[]string{
				"game_registry.yaml: games[1].params.bord: unknown parameter",
				"game_registry.yaml: games[1].params.board.sise: unknown field",
				"game_registry.yaml: games[1].params.board.size: must be >= 3, got 2",
				"game_registry.yaml: games[1].params.heaps[1]: must be <= 100, got 400",
				`game_registry.yaml: games[1].params.name: must match ^[a-z]+$, got "Nim"`,
			}},
		{"typed params of the wrong shape", GameRegistryFile, games2("{game_type: typed, name: N, params: {heaps: {a: 1}, name: [x], board: 5, \"odd key\": 1}}"),
			[]string{
				`game_registry.yaml: games[1].params["odd key"]: unknown parameter`,
				"game_registry.yaml: games[1].params.board: must be a mapping, got 5",
				"game_registry.yaml: games[1].params.heaps: must be a list, got a mapping",
				"game_registry.yaml: games[1].params.name: must be a string, got a list",
			}},
		{"builtin params too large for an assignment", GameRegistryFile, games2("{game_type: typed, name: N, params: {notes: " + strings.Repeat("x", 8200) + "}}"),
			[]string{"game_registry.yaml: games[1].params: must be at most 8192 bytes as JSON, got 8271"}},

		// timeout_policy.yaml rules.
		{"registration differs between the files", LeagueFile, "timeouts: {registration_response_ms: 4000}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.registration: is 5000 but timeouts.registration_response_ms in league.yaml is 4000: set it in one file only, or the same in both"}},
		{"zero registration", TimeoutPolicyFile, "timeouts: {league_level: {registration: 0}}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.registration: must be between 1 and 600000, got 0"}},
		{"result_report differs between the files", LeagueFile, "timeouts: {result_report_ms: 1}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.result_report: is 60000 but timeouts.result_report_ms in league.yaml is 1: set it in one file only, or the same in both"}},
		{"result_report too long", TimeoutPolicyFile, "timeouts: {league_level: {result_report: 600001}}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.result_report: must be between 1 and 600000, got 600001"}},
		{"zero heartbeat", TimeoutPolicyFile, "timeouts: {league_level: {heartbeat_interval_ms: 0}}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.heartbeat_interval_ms: must be between 1 and 300000, got 0"}},
		{"heartbeat too long", TimeoutPolicyFile, "timeouts: {league_level: {heartbeat_interval_ms: 300001}}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.heartbeat_interval_ms: must be between 1 and 300000, got 300001"}},
		{"lease shorter than two heartbeats", TimeoutPolicyFile, "timeouts: {league_level: {lease_ms: 3999}}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.lease_ms: must be >= 2 × heartbeat_interval_ms (4000), got 3999"}},
		{"zero assignment deadline", TimeoutPolicyFile, "timeouts: {league_level: {match_assignment_response_ms: 0}}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.match_assignment_response_ms: must be between 1 and 600000, got 0"}},
		{"assignment deadline too long", TimeoutPolicyFile, "timeouts: {league_level: {match_assignment_response_ms: 600001}}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.match_assignment_response_ms: must be between 1 and 600000, got 600001"}},
		{"lease too long", TimeoutPolicyFile, "timeouts: {league_level: {lease_ms: 600001}}\n",
			[]string{"timeout_policy.yaml: timeouts.league_level.lease_ms: must be <= 600000, got 600001"}},
		{"game_join_ack differs between the files", LeagueFile, "timeouts: {match_join_ack_ms: 9000}\n",
			[]string{"timeout_policy.yaml: timeouts.match_level.game_join_ack: is 10000 but timeouts.match_join_ack_ms in league.yaml is 9000: set it in one file only, or the same in both"}},
		{"league.yaml move timeout differs from the policy", LeagueFile, "timeouts: {move_response_ms: 20000}\n",
			[]string{"timeout_policy.yaml: timeouts.match_level.move_response: is 30000 but timeouts.move_response_ms in league.yaml is 20000: set it in one file only, or the same in both"}},
		{"zero move_response", TimeoutPolicyFile, "timeouts: {match_level: {move_response: 0}}\n",
			[]string{"timeout_policy.yaml: timeouts.match_level.move_response: must be between 1 and 600000, got 0"}},
		{"negative move_warnings", TimeoutPolicyFile, "timeouts: {match_level: {move_warnings: -1}}\n",
			[]string{"timeout_policy.yaml: timeouts.match_level.move_warnings: must be between 0 and 10, got -1"}},
		{"too many forced_moves", TimeoutPolicyFile, "timeouts: {match_level: {forced_moves: 11}}\n",
			[]string{"timeout_policy.yaml: timeouts.match_level.forced_moves: must be between 0 and 10, got 11"}},
		{"zero suspend_after_violations", TimeoutPolicyFile, "timeouts: {enforcement: {suspend_after_violations: 0}}\n",
			[]string{"timeout_policy.yaml: timeouts.enforcement.suspend_after_violations: must be between 1 and 100, got 0"}},
		{"negative suspension", TimeoutPolicyFile, "timeouts: {enforcement: {suspension_duration_seconds: -1}}\n",
			[]string{"timeout_policy.yaml: timeouts.enforcement.suspension_duration_seconds: must be between 0 and 86400, got -1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loadProblems(t, map[string]string{tt.file: tt.yaml})
			if !reflect.DeepEqual(got, tt.wants) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.wants, "\n"))
			}
		})
	}
}

func TestLoadReportsAllProblemsTogether(t *testing.T) {
	got := loadProblems(t, map[string]string{
		TimeoutPolicyFile: "timeouts:\n  enforcement: {suspend_after_violations: 0}\n  extra: 1\n",
		GameRegistryFile:  games2("{game_type: even_odd, name: E, scoring: {win: 0}, params: {rounds: 100}}"),
		LeagueFile:        "registration:\n  min_players: \"two\"\n  max_referees: 0\nretries: {max_attempts: 0}\n",
	})
	want := []string{
		`league.yaml: registration.min_players: must be an integer, got "two" (line 2)`,
		"league.yaml: registration.max_referees: must be >= min_referees (1), got 0",
		"league.yaml: retries.max_attempts: must be between 1 and 10, got 0",
		"game_registry.yaml: games[1].scoring.win: must be >= draw (1), got 0",
		"game_registry.yaml: games[1].params.rounds: must be <= 99, got 100",
		"timeout_policy.yaml: timeouts.extra: unknown field (line 3)",
		"timeout_policy.yaml: timeouts.enforcement.suspend_after_violations: must be between 1 and 100, got 0",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidateAfterOverride(t *testing.T) {
	tests := []struct {
		name     string
		override func(c *Config)
		want     string
	}{
		{"valid override", func(c *Config) { c.Registration.MaxPlayers = 4 }, ""},
		{"bad override", func(c *Config) { c.Registration.MinPlayers = 1 },
			"league.yaml: registration.min_players: must be between 2 and 1000, got 1"},
		{"bad params", func(c *Config) { c.Games[0].Params = map[string]any{"rounds": 0} },
			"game_registry.yaml: games[0].params.rounds: must be >= 1, got 0"},
		{"policy out of step", func(c *Config) { c.LeagueTimeouts.MoveResponseMS = 1000 },
			"timeout_policy.yaml: timeouts.match_level.move_response: is 30000 but timeouts.move_response_ms in league.yaml is 1000: set it in one file only, or the same in both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustDefault(t, newFakeGames())
			tt.override(c)
			err := c.Validate()
			if got := errorText(err); got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
		})
	}
}

// The league's format is judged by schedule.Format.Validate alone: every problem it
// finds is reported at its path in league.yaml, and nothing else about the format is.
func TestFormatProblemsAreTheFormatsOwn(t *testing.T) {
	for _, tt := range []struct {
		name     string
		override func(c *Config)
	}{
		{"bad algorithm", func(c *Config) { c.Scheduling.Algorithm = "ladder" }},
		{"rounds out of range", func(c *Config) { c.Scheduling.Algorithm, c.Scheduling.Rounds = "swiss", 1000 }},
		{"unknown tiebreak", func(c *Config) { c.Ranking.Tiebreaks = []string{"sonneborn_berger", "buchholz"} }},
		{"many at once", func(c *Config) {
			c.Scheduling.Cycles, c.Scheduling.Seeding, c.Ranking.RatingSamples = 3, []string{"p1", "p1"}, 0
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustDefault(t, newFakeGames())
			tt.override(c)
			var inv problem.List
			if !errors.As(c.Format().Validate(), &inv) {
				t.Fatal("the format is valid")
			}
			var want []string
			for _, p := range inv {
				want = append(want, LeagueFile+": "+p.Path+": "+p.Message)
			}
			if got := errorText(c.Validate()); got != strings.Join(want, "\n") {
				t.Errorf("Validate() = %q, want the format's problems %q", got, want)
			}
		})
	}
}

func TestValidateDoesNotNormalize(t *testing.T) {
	c := mustDefault(t, newFakeGames())
	c.Games[0].Params = map[string]any{}
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate() = %v", err)
	}
	if len(c.Games[0].Params) != 0 {
		t.Errorf("Validate changed params to %v, want them left empty", c.Games[0].Params)
	}
}

func TestValidateNeedsGameParams(t *testing.T) {
	var c Config
	want := "validate config: no GameParams, build the config with Load or Default"
	if got := errorText(c.Validate()); got != want {
		t.Errorf("Validate() on a zero Config = %q, want %q", got, want)
	}
}

func TestProblemString(t *testing.T) {
	tests := []struct {
		name string
		p    Problem
		want string
	}{
		{"path and line", Problem{File: "a.yaml", Path: "x.y", Message: "bad", Line: 3}, "a.yaml: x.y: bad (line 3)"},
		{"no line", Problem{File: "a.yaml", Path: "x[0]", Message: "bad"}, "a.yaml: x[0]: bad"},
		{"whole file", Problem{File: "a.yaml", Message: "must be a mapping, got 1", Line: 1}, "a.yaml: must be a mapping, got 1 (line 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

// errorText is err's message, or "" for nil.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
