package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// fastConfig writes the repository's configuration with deadlines of a few seconds at
// most, patched by patch, and returns the path of its league.yaml. They are not
// shorter: on a loaded machine an agent that behaves can miss a deadline of 300 ms (a
// move, a join), and a referee that heartbeats every 100 ms lose a lease of 400 ms,
// which changes the results and the failures the tests check.
func fastConfig(t *testing.T, patch func(league, policy map[string]any)) string {
	t.Helper()
	dir := t.TempDir()
	load := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join(moduleRoot(), "config", name))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	league, policy, games := load("league.yaml"), load("timeout_policy.yaml"), load("game_registry.yaml")
	// Timeouts live in timeout_policy.yaml alone; league.yaml does not repeat them.
	league["retries"] = map[string]any{"max_attempts": 3, "backoff_ms": 50, "max_match_attempts": 3}
	pt := policy["timeouts"].(map[string]any)
	ll := pt["league_level"].(map[string]any)
	ll["registration"], ll["result_report"], ll["heartbeat_interval_ms"], ll["lease_ms"] = 2000, 3000, 500, 2000
	ml := pt["match_level"].(map[string]any)
	ml["game_join_ack"], ml["move_response"] = 2000, 2000
	if patch != nil {
		patch(league, policy)
	}
	for name, m := range map[string]any{"league.yaml": league, "timeout_policy.yaml": policy, "game_registry.yaml": games} {
		b, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "league.yaml")
}

func completed(s statusDoc) int { return s.MatchesByStatus["COMPLETED"] }

func TestLeagueManagerKilledAndRestarted(t *testing.T) {
	cases := []struct {
		name string
		// killAt reports when to kill, from the status; nil kills before the start.
		killAt func(s statusDoc) bool
	}{
		{"before the start", nil},
		{"mid-round", func(s statusDoc) bool { return completed(s) >= 2 }},
		{"late in the league", func(s statusDoc) bool { return completed(s) >= 10 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := startLeague(t, leagueOpts{players: 6, referees: 2, seed: 21, config: fastConfig(t, nil), hold: tc.killAt == nil})
			if tc.killAt == nil {
				run.killLM(t)
				run.restartLM(t)
				run.started = time.Now()
				run.admin(t, "ADMIN_START_LEAGUE_REQUEST", map[string]any{})
			} else {
				waitStatus(t, run.lm, 60*time.Second, tc.killAt)
				run.killLM(t)
				run.restartLM(t)
			}
			run.waitCompleted(t, 120*time.Second)
			run.checkLeague(t, 1)
		})
	}
}

func TestFaultyPlayersLoseAndTheLeagueCompletes(t *testing.T) {
	cases := []struct{ name, fault string }{
		{"killed mid-league", "crash-after:3"},
		{"answers after the deadline", "slow:3s"},
		{"answers garbage", "garbage"},
		{"plays illegal moves", "illegal"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := runLeague(t, leagueOpts{players: 5, referees: 2, seed: 23, config: fastConfig(t, nil), faults: map[string]string{"p03": tc.fault}})
			run.checkLeague(t, 1)
			rows := run.standings(t)
			last := rows[len(rows)-1]
			for _, r := range rows {
				if r.PlayerID == "p03" && r.Points != 0 {
					t.Errorf("faulty player scored %d points", r.Points)
				}
			}
			if last.Points != 0 {
				t.Errorf("last place %s has %d points; the faulty player should be there with 0", last.PlayerID, last.Points)
			}
		})
	}
}
