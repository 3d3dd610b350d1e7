package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// fakeGames is a GameParams holding the schema of each game type it knows.
type fakeGames map[string]game.ParamSchema

// ParamSchema implements GameParams.
func (f fakeGames) ParamSchema(gameType string) (game.ParamSchema, bool) {
	s, ok := f[gameType]
	return s, ok
}

// newFakeGames knows the shipped games with their params, and typed, whose params are a
// list, two strs (one checked by a pattern), a dict with int keys and an object.
func newFakeGames() fakeGames {
	schema := func(params map[string]game.Param) game.ParamSchema {
		s, err := game.NewParamSchema(params)
		if err != nil {
			panic(err)
		}
		return s
	}
	rounds := schema(map[string]game.Param{"rounds": game.Int(1, 99).Default(5)})
	return fakeGames{
		"even_odd":            rounds,
		"rock_paper_scissors": rounds,
		"tic_tac_toe":         schema(nil),
		"connect_four":        schema(nil),
		"chess":               schema(map[string]game.Param{"max_plies": game.Int(10, 700).Default(200)}),
		"typed": schema(map[string]game.Param{
			"heaps": game.List(game.Int(1, 100), 10).Default([]any{3, 4, 5}),
			"name":  game.Str("^[a-z]+$", 20).Default("nim"),
			"notes": game.Str("", 0).Default(""),
			"score": game.Dict(game.ParamInt, game.Int(0, 9)).Default(map[string]any{}),
			"board": game.Object(map[string]game.Param{"size": game.Int(3, 19).Default(9)}).Default(map[string]any{}),
		}),
	}
}

// shippedFiles are the names of the default files in this folder.
var shippedFiles = []string{LeagueFile, GameRegistryFile, TimeoutPolicyFile}

// writeConfig writes the shipped files into a temporary directory, replaces those named
// in files with the given contents and returns the path of league.yaml.
func writeConfig(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range shippedFiles {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if content, ok := files[name]; ok {
			data = []byte(content)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, LeagueFile)
}

// mustDefault returns Default(games) or fails the test.
func mustDefault(t *testing.T, games GameParams) *Config {
	t.Helper()
	c, err := Default(games)
	if err != nil {
		t.Fatalf("Default: %v", err)
	}
	return c
}

func TestLoadShippedFilesEqualDefault(t *testing.T) {
	games := newFakeGames()
	got, err := Load(LeagueFile, games)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := mustDefault(t, games)
	got.copied, want.copied = nil, nil // which file held a timeout is no part of its value
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load(shipped files) =\n%+v\nwant Default() =\n%+v", got, want)
	}
}

func TestLoadEachShippedFileAlone(t *testing.T) {
	games := newFakeGames()
	for _, name := range shippedFiles {
		t.Run(name, func(t *testing.T) {
			empty := map[string]string{}
			for _, other := range shippedFiles {
				if other != name {
					empty[other] = ""
				}
			}
			leaguePath := writeConfig(t, empty)
			got, err := Load(leaguePath, games)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			want := mustDefault(t, games)
			want.Sources = got.Sources
			got.copied, want.copied = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Load(%s with empty siblings) =\n%+v\nwant\n%+v", name, got, want)
			}
		})
	}
}

func TestLoadSources(t *testing.T) {
	leaguePath := writeConfig(t, nil)
	c, err := Load(leaguePath, newFakeGames())
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	dir := filepath.Dir(leaguePath)
	want := Sources{
		League:        leaguePath,
		GameRegistry:  filepath.Join(dir, GameRegistryFile),
		TimeoutPolicy: filepath.Join(dir, TimeoutPolicyFile),
	}
	if c.Sources != want {
		t.Errorf("Sources = %+v, want %+v", c.Sources, want)
	}
}

func TestLoadAppliesDefaultsAndNormalizes(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		check func(t *testing.T, c *Config)
	}{
		{
			name:  "null keeps the default",
			files: map[string]string{LeagueFile: "registration:\n  min_players:\n  max_players: 8\n"},
			check: func(t *testing.T, c *Config) {
				want := Registration{WindowSeconds: 60, MinPlayers: 2, MaxPlayers: 8, MinReferees: 1, MaxReferees: 20}
				if c.Registration != want {
					t.Errorf("Registration = %+v, want %+v", c.Registration, want)
				}
			},
		},
		{
			name:  "fractional registration window",
			files: map[string]string{LeagueFile: "registration: {window_seconds: 0.5}\n"},
			check: func(t *testing.T, c *Config) {
				if got := c.RegistrationWindow(); got != 500*time.Millisecond {
					t.Errorf("RegistrationWindow() = %v, want 500ms", got)
				}
			},
		},
		{
			name:  "aliases are followed",
			files: map[string]string{LeagueFile: "league: {name: &n \"Shared\"}\ndatabase: {path: *n}\n"},
			check: func(t *testing.T, c *Config) {
				if c.League.Name != "Shared" || c.Database.Path != "Shared" {
					t.Errorf("League.Name, Database.Path = %q, %q, want Shared twice", c.League.Name, c.Database.Path)
				}
			},
		},
		{
			name: "missing params are normalized, missing scoring defaults",
			files: map[string]string{GameRegistryFile: "games:\n" +
				"  - {game_type: tic_tac_toe, name: T}\n" +
				"  - {game_type: even_odd, name: E, scoring: {win: 2}}\n"},
			check: func(t *testing.T, c *Config) {
				want := []GameEntry{
					{GameType: "tic_tac_toe", Name: "T", Rules: RulesBuiltin, Scoring: protocol.Scoring{Win: 3, Draw: 1, Loss: 0}, Params: map[string]any{}},
					{GameType: "even_odd", Name: "E", Rules: RulesBuiltin, Scoring: protocol.Scoring{Win: 2, Draw: 1, Loss: 0}, Params: map[string]any{"rounds": 5}},
				}
				if !reflect.DeepEqual(c.Games, want) {
					t.Errorf("Games = %+v, want %+v", c.Games, want)
				}
			},
		},
		{
			name:  "missing games key keeps the default games",
			files: map[string]string{GameRegistryFile: "# no games\n"},
			check: func(t *testing.T, c *Config) {
				if len(c.Games) != 5 || c.Games[1].GameType != "rock_paper_scissors" {
					t.Errorf("Games = %+v, want the three default games", c.Games)
				}
			},
		},
		{
			name: "an external game keeps its params as JSON and needs no compiled-in rules",
			files: map[string]string{
				LeagueFile:       "league: {game_type: nim}\n",
				GameRegistryFile: "games: [{game_type: nim, name: Nim, rules: external, params: {heaps: [3, 4, 5], misere: true, name: {short: n}}}]\n",
			},
			check: func(t *testing.T, c *Config) {
				g, ok := c.Game("nim")
				want := map[string]any{"heaps": []any{3.0, 4.0, 5.0}, "misere": true, "name": map[string]any{"short": "n"}}
				if !ok || !g.External() || !reflect.DeepEqual(g.Params, want) {
					t.Errorf("Game(nim) = %+v, %v, want external with params %v", g, ok, want)
				}
				if g.Steps() != DefaultExternalMaxSteps {
					t.Errorf("Steps() = %d, want the default %d", g.Steps(), DefaultExternalMaxSteps)
				}
			},
		},
		{
			name:  "typed params are normalized, their defaults filled in",
			files: map[string]string{GameRegistryFile: "games: [{game_type: tic_tac_toe, name: T}, {game_type: typed, name: N, params: {heaps: [7, 8.0], board: {}, score: {3: 1, \"10\": 2}}}]\n"},
			check: func(t *testing.T, c *Config) {
				g, _ := c.Game("typed")
				want := map[string]any{"heaps": []any{7, 8}, "name": "nim", "notes": "", "score": map[string]any{"3": 1, "10": 2}, "board": map[string]any{"size": 9}}
				if !reflect.DeepEqual(g.Params, want) {
					t.Errorf("Game(typed).Params = %#v, want %#v", g.Params, want)
				}
			},
		},
		{
			name:  "nested game params pass through",
			files: map[string]string{GameRegistryFile: "games: [{game_type: tic_tac_toe, name: T}, {game_type: even_odd, name: E, params: {rounds: 7}}]\n"},
			check: func(t *testing.T, c *Config) {
				g, ok := c.Game("even_odd")
				if !ok || !reflect.DeepEqual(g.Params, map[string]any{"rounds": 7}) {
					t.Errorf("Game(even_odd) = %+v, %v, want params rounds 7", g, ok)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, tt.files), newFakeGames())
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			tt.check(t, c)
		})
	}
}

func TestLoadReadAndSyntaxErrors(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		remove   string
		wantText string
		wantIs   error
	}{
		{name: "missing league file", remove: LeagueFile, wantText: LeagueFile, wantIs: fs.ErrNotExist},
		{name: "missing game registry", remove: GameRegistryFile, wantText: GameRegistryFile, wantIs: fs.ErrNotExist},
		{name: "missing timeout policy", remove: TimeoutPolicyFile, wantText: TimeoutPolicyFile, wantIs: fs.ErrNotExist},
		{
			name:     "syntax error keeps the line",
			files:    map[string]string{LeagueFile: "league:\n  name: x\nregistration: [\n"},
			wantText: LeagueFile + ": yaml: line 3:",
		},
		{
			name:     "syntax error in a later document",
			files:    map[string]string{TimeoutPolicyFile: "timeouts: {}\n---\na: [\n"},
			wantText: TimeoutPolicyFile + ": yaml: line 3:",
		},
		{
			name:     "two documents",
			files:    map[string]string{GameRegistryFile: "games: []\n---\ngames: []\n"},
			wantText: GameRegistryFile + ": line 2: more than one YAML document",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaguePath := writeConfig(t, tt.files)
			dir := filepath.Dir(leaguePath)
			if tt.remove != "" {
				if err := os.Remove(filepath.Join(dir, tt.remove)); err != nil {
					t.Fatal(err)
				}
			}
			c, err := Load(leaguePath, newFakeGames())
			if err == nil {
				t.Fatalf("Load = %+v, want an error", c)
			}
			if want := filepath.Join(dir, tt.wantText); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %q is not %v", err, tt.wantIs)
			}
			var ve *Error
			if errors.As(err, &ve) {
				t.Errorf("error %q is a validation *Error, want a read or syntax error", err)
			}
		})
	}
}

func TestNilGameParams(t *testing.T) {
	tests := []struct {
		name string
		call func() (*Config, error)
		want string
	}{
		{"Load", func() (*Config, error) { return Load(LeagueFile, nil) }, "load config: nil GameParams"},
		{"Default", func() (*Config, error) { return Default(nil) }, "default config: nil GameParams"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.call()
			if err == nil || err.Error() != tt.want {
				t.Errorf("%s(nil) = %+v, %v, want error %q", tt.name, c, err, tt.want)
			}
		})
	}
}

func TestDefaultReportsRejectedParams(t *testing.T) {
	onlyTicTacToe := fakeGames{"tic_tac_toe": newFakeGames()["tic_tac_toe"]}
	_, err := Default(onlyTicTacToe)
	want := "default config: " +
		`game_registry.yaml: games[0].game_type: unknown game type "even_odd"` + "\n" +
		`game_registry.yaml: games[1].game_type: unknown game type "rock_paper_scissors"` + "\n" +
		`game_registry.yaml: games[3].game_type: unknown game type "connect_four"` + "\n" +
		`game_registry.yaml: games[4].game_type: unknown game type "chess"`
	if err == nil || err.Error() != want {
		t.Errorf("Default error = %v, want %q", err, want)
	}
}

func TestGame(t *testing.T) {
	c := mustDefault(t, newFakeGames())
	tests := []struct {
		gameType string
		wantOK   bool
		wantName string
	}{
		{"rock_paper_scissors", true, "Rock Paper Scissors"},
		{"tic_tac_toe", true, "Tic Tac Toe"},
		{"chess", true, "Chess"},
		{"go", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.gameType, func(t *testing.T) {
			g, ok := c.Game(tt.gameType)
			if ok != tt.wantOK || g.Name != tt.wantName {
				t.Errorf("Game(%q) = %q, %v, want %q, %v", tt.gameType, g.Name, ok, tt.wantName, tt.wantOK)
			}
		})
	}
}

func TestDurations(t *testing.T) {
	c := mustDefault(t, newFakeGames())
	c.Registration.WindowSeconds = 1.25
	c.LeagueTimeouts = LeagueTimeouts{RegistrationResponseMS: 1, MatchJoinAckMS: 2, MoveResponseMS: 3, ResultReportMS: 4}
	c.Retries.BackoffMS = 5
	c.Timeouts.LeagueLevel.MatchAssignmentResponseMS = 6
	c.Timeouts.LeagueLevel.LeaseMS = 7
	c.Timeouts.Enforcement.SuspensionDurationSeconds = 8
	tests := []struct {
		name string
		got  time.Duration
		want time.Duration
	}{
		{"RegistrationWindow", c.RegistrationWindow(), 1250 * time.Millisecond},
		{"MatchJoinAckTimeout", c.MatchJoinAckTimeout(), 2 * time.Millisecond},
		{"MoveTimeout", c.MoveTimeout(), 3 * time.Millisecond},
		{"ResultReportTimeout", c.ResultReportTimeout(), 4 * time.Millisecond},
		{"RetryBackoff", c.RetryBackoff(), 5 * time.Millisecond},
		{"MatchAssignmentTimeout", c.MatchAssignmentTimeout(), 6 * time.Millisecond},
		{"LeaseDuration", c.LeaseDuration(), 7 * time.Millisecond},
		{"SuspensionDuration", c.SuspensionDuration(), 8 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%s() = %v, want %v", tt.name, tt.got, tt.want)
			}
		})
	}
}

// TestSharedTimeoutsLiveInOneFile: each of the four timeouts both files know may be set
// in either file alone; set in both, the values must agree.
func TestSharedTimeoutsLiveInOneFile(t *testing.T) {
	games := newFakeGames()
	policyOnly := "timeouts:\n  league_level:\n    result_report: 5000\n  match_level:\n    move_response: 1500\n"
	leagueOnly := "timeouts:\n  result_report_ms: 7000\n  registration_response_ms: 900\n"
	tests := []struct {
		name                       string
		files                      map[string]string
		result, move, registration int
		wantErr                    string
	}{
		{"shipped", nil, 60000, 30000, 5000, ""},
		{"policy alone", map[string]string{TimeoutPolicyFile: policyOnly}, 5000, 1500, 5000, ""},
		{"league.yaml alone", map[string]string{LeagueFile: leagueOnly, TimeoutPolicyFile: ""}, 7000, 30000, 900, ""},
		{"neither", map[string]string{TimeoutPolicyFile: "", LeagueFile: ""}, 60000, 30000, 5000, ""},
		{"both, different", map[string]string{TimeoutPolicyFile: policyOnly, LeagueFile: "timeouts:\n  result_report_ms: 7000\n"}, 0, 0, 0,
			"timeout_policy.yaml: timeouts.league_level.result_report: is 5000 but timeouts.result_report_ms in league.yaml is 7000"},
		{"both, equal", map[string]string{TimeoutPolicyFile: policyOnly, LeagueFile: "timeouts:\n  result_report_ms: 5000\n"}, 5000, 1500, 5000, ""},
		{"explicit zero is refused", map[string]string{LeagueFile: "timeouts:\n  result_report_ms: 0\n"}, 0, 0, 0,
			"league.yaml: timeouts.result_report_ms: must be between 1 and 600000, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(writeConfig(t, tt.files), games)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load: got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			lt, ll, ml := c.LeagueTimeouts, c.Timeouts.LeagueLevel, c.Timeouts.MatchLevel
			if lt.ResultReportMS != tt.result || ll.ResultReport != tt.result {
				t.Errorf("result report: league.yaml %d, policy %d, want %d", lt.ResultReportMS, ll.ResultReport, tt.result)
			}
			if lt.MoveResponseMS != tt.move || ml.MoveResponse != tt.move {
				t.Errorf("move: league.yaml %d, policy %d, want %d", lt.MoveResponseMS, ml.MoveResponse, tt.move)
			}
			if lt.RegistrationResponseMS != tt.registration || ll.Registration != tt.registration {
				t.Errorf("registration: league.yaml %d, policy %d, want %d", lt.RegistrationResponseMS, ll.Registration, tt.registration)
			}
		})
	}
}

func TestMaxMatchAttemptsBounds(t *testing.T) {
	games := newFakeGames()
	for _, v := range []int{0, 11} {
		_, err := Load(writeConfig(t, map[string]string{LeagueFile: fmt.Sprintf("retries:\n  max_match_attempts: %d\n", v)}), games)
		want := fmt.Sprintf("league.yaml: retries.max_match_attempts: must be between 1 and 10, got %d", v)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("max_match_attempts %d: got %v, want %q", v, err, want)
		}
	}
	c, err := Load(writeConfig(t, map[string]string{LeagueFile: "retries:\n  max_match_attempts: 5\n"}), games)
	if err != nil || c.Retries.MaxMatchAttempts != 5 {
		t.Fatalf("max_match_attempts 5: got %v, %+v", err, c)
	}
}

// The league's clock is league.yaml's time_control, else its game's in the registry;
// league.yaml's "-" plays a game that has one under move_response_ms.
func TestClockOfLeagueOrGame(t *testing.T) {
	registry := "games:\n  - {game_type: tic_tac_toe, name: T, time_control: {clock: \"5+0.1\"}}\n  - {game_type: even_odd, name: E}\n"
	for _, c := range []struct {
		name, league string
		want         *protocol.TimeControl
	}{
		{"the game's", "league: {game_type: tic_tac_toe}\n", &protocol.TimeControl{BaseMS: 5000, IncrementMS: 100}},
		{"the league's over the game's", "league: {game_type: tic_tac_toe}\ntime_control: {clock: \"40/60+0.5\", bank_ms: 900}\n",
			&protocol.TimeControl{BaseMS: 60000, IncrementMS: 500, MovesPerPeriod: 40, BankMS: 900}},
		{"none over the game's", "league: {game_type: tic_tac_toe}\ntime_control: {clock: \"-\"}\n", nil},
		{"a game without one", "league: {game_type: even_odd}\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Load(writeConfig(t, map[string]string{LeagueFile: c.league, GameRegistryFile: registry}), newFakeGames())
			if err != nil {
				t.Fatal(err)
			}
			if got := cfg.Clock(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("Clock() = %+v, want %+v", got, c.want)
			}
		})
	}
}

// A chess league's opening book is read relative to league.yaml when it loads: its
// entries come with the config, in the book's order, random order the default. A book
// that cannot be read is a problem at openings.book.
func TestOpeningBook(t *testing.T) {
	book, err := filepath.Abs(filepath.Join("..", "testdata", "openings", "book20.epd"))
	if err != nil {
		t.Fatal(err)
	}
	leaguePath := writeConfig(t, map[string]string{LeagueFile: "league: {game_type: chess}\nscheduling: {cycles: 2}\nopenings: {book: book20.epd, game_pairs: true}\n"})
	data, err := os.ReadFile(book)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(leaguePath), "book20.epd"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(leaguePath, newFakeGames())
	if err != nil {
		t.Fatal(err)
	}
	if o := c.Openings; len(o.Entries()) != 20 || o.Entries()[19].Name != "book20.epd#20" || o.Order != OrderRandom || !o.GamePairs || len(o.BookHash) != 64 {
		t.Errorf("openings %+v: want the 20 entries in random order, in game pairs", o)
	}
	got := loadProblems(t, map[string]string{LeagueFile: "league: {game_type: chess}\nopenings: {book: missing.epd}\n"})
	if len(got) != 1 || !strings.HasPrefix(got[0], "league.yaml: openings.book: ") || !strings.Contains(got[0], "no such file") {
		t.Errorf("a missing book: %v", got)
	}
}
