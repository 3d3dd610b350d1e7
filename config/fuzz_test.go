package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
)

// FuzzLoad writes arbitrary league.yaml, game_registry.yaml and timeout_policy.yaml files
// and loads them with the real game registry. Load must never panic, and must return
// either a configuration that validates again and knows its own game, or an error and
// no configuration; an *Error lists problems, each in one of the three files with a
// message, one per line of its text. The same files load the same way twice.
func FuzzLoad(f *testing.F) {
	read := func(name string) []byte {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		return data
	}
	league, registry, policy := read(config.LeagueFile), read(config.GameRegistryFile), read(config.TimeoutPolicyFile)
	f.Add(league, registry, policy)
	f.Add([]byte{}, []byte{}, []byte{})
	f.Add([]byte("league: {game_type: even_odd, seed: -3}\nscheduling: {algorithm: swiss, rounds: 2, bye_points: 1}\nranking: {tiebreaks: [head_to_head]}\n"), []byte{}, []byte{})
	f.Add([]byte("scheduling: {algorithm: gauntlet, candidates: [p01]}\ntimeouts: {move_response_ms: 500}\n"), []byte{}, []byte("timeouts:\n  match_level: {move_response: 500}\n"))
	f.Add([]byte("league: {game_type: chess}\nregistration: {window_seconds: 0.5}\n"), []byte("games:\n  - game_type: chess\n    params: {max_plies: 40}\n"), []byte{})
	f.Add([]byte("league: &a {seed: 1}\nregistration: *a\n"), []byte("games: [1, 2]\n"), []byte("timeouts: null\n"))

	dir := f.TempDir() // one per fuzzing process, which runs its inputs one at a time
	path := filepath.Join(dir, config.LeagueFile)
	games := game.Default()
	f.Fuzz(func(t *testing.T, league, registry, policy []byte) {
		for name, data := range map[string][]byte{config.LeagueFile: league, config.GameRegistryFile: registry, config.TimeoutPolicyFile: policy} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := config.Load(path, games)
		again, err2 := config.Load(path, games)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("loaded twice: %v, then %v", err, err2)
		}
		if err != nil {
			if cfg != nil || again != nil {
				t.Fatalf("a configuration with the error %v", err)
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				return // a syntax error, or more than one document
			}
			if len(ce.Problems) == 0 || strings.Count(err.Error(), "\n") != len(ce.Problems)-1 {
				t.Fatalf("%d problems in %d lines: %q", len(ce.Problems), strings.Count(err.Error(), "\n")+1, err)
			}
			sources := []string{path, filepath.Join(dir, config.GameRegistryFile), filepath.Join(dir, config.TimeoutPolicyFile)}
			for _, p := range ce.Problems {
				if p.Message == "" || (p.File != sources[0] && p.File != sources[1] && p.File != sources[2]) {
					t.Fatalf("problem %+v names no file of the three or says nothing", p)
				}
			}
			return
		}
		if cfg == nil {
			t.Fatal("no configuration and no error")
		}
		if err := cfg.Validate(); err != nil {
			t.Fatalf("a loaded configuration does not validate again: %v", err)
		}
		if _, ok := cfg.Game(cfg.League.GameType); !ok {
			t.Fatalf("the league's game %q is not in the registry", cfg.League.GameType)
		}
		heartbeat := time.Duration(cfg.Timeouts.LeagueLevel.HeartbeatIntervalMS) * time.Millisecond
		if cfg.MoveTimeout() <= 0 || cfg.MatchAssignmentTimeout() <= 0 || cfg.RegistrationWindow() < 0 || cfg.LeaseDuration() <= heartbeat {
			t.Fatalf("timeouts out of range: move %v, assignment %v, window %v, lease %v, heartbeat %v",
				cfg.MoveTimeout(), cfg.MatchAssignmentTimeout(), cfg.RegistrationWindow(), cfg.LeaseDuration(), heartbeat)
		}
	})
}
