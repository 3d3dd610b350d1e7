package e2e

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// A chess league whose players take 1.5 s a move (well inside the 30 s move deadline, as
// an LLM or an engine would) and a result_report of 5 s completes with exactly one result
// and no failed or cancelled match: result_report counts from the end of play, and a
// match is alive while its referee reports progress.
func TestSlowChessLeagueFinishesExactlyOnce(t *testing.T) {
	cfg := fastConfig(t, func(_, policy map[string]any) {
		pt := policy["timeouts"].(map[string]any)
		ll := pt["league_level"].(map[string]any)
		ll["registration"], ll["result_report"], ll["heartbeat_interval_ms"], ll["lease_ms"] = 5000, 5000, 2000, 6000
		ml := pt["match_level"].(map[string]any)
		ml["game_join_ack"], ml["move_response"] = 10000, 30000
	})
	setChessPlies(t, cfg, 10)
	run := runLeagueWithin(t, leagueOpts{players: 2, referees: 2, game: "chess", strategy: "random", seed: 11, config: cfg,
		faults: map[string]string{"p01": "slow:1500ms", "p02": "slow:1500ms"}}, 3*time.Minute)
	run.checkLeague(t, 1)

	db := run.openDB(t)
	var results, assignments, failures int
	if err := db.QueryRow(`SELECT count(*) FROM match_results`).Scan(&results); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT sum(assignments), sum(failures) FROM matches`).Scan(&assignments, &failures); err != nil {
		t.Fatal(err)
	}
	if results != 1 || assignments != 1 || failures != 0 {
		t.Errorf("%d results, %d assignments, %d failures: want 1, 1, 0", results, assignments, failures)
	}
	var plies int
	if err := db.QueryRow(`SELECT json_array_length(game_metadata, '$.moves') FROM match_results`).Scan(&plies); err != nil {
		t.Fatal(err)
	}
	audit, err := os.ReadFile(run.audit)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`"MATCH_FAILED"`, `"MATCH_CANCELLED"`, `"DUPLICATE_RESULT"`, `"STALE_ASSIGNMENT"`} {
		if n := strings.Count(string(audit), bad); n != 0 {
			t.Errorf("the audit log has %d %s", n, bad)
		}
	}
	// The referees kept the match alive by their progress, not by a long deadline.
	if !strings.Contains(string(audit), `"match_progress"`) || !strings.Contains(string(audit), `"phase":"playing"`) {
		t.Error("no heartbeat in the audit log reports the match playing")
	}
	t.Logf("%d plies at 1.5 s a move, league time %v", plies, run.elapsed)
	if time.Duration(plies)*1500*time.Millisecond < 5*time.Second {
		t.Errorf("the game took %d plies: too short to outlast result_report", plies)
	}
}

// setChessPlies sets chess max_plies in the game registry beside league.yaml.
func setChessPlies(t *testing.T, leagueYAML string, plies int) {
	t.Helper()
	path := strings.TrimSuffix(leagueYAML, "league.yaml") + "game_registry.yaml"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var reg map[string]any
	if err := yaml.Unmarshal(b, &reg); err != nil {
		t.Fatal(err)
	}
	for _, g := range reg["games"].([]any) {
		if e := g.(map[string]any); e["game_type"] == "chess" {
			e["params"] = map[string]any{"max_plies": plies}
		}
	}
	out, err := json.Marshal(reg) // YAML is a superset of JSON
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runLeagueWithin runs a league and waits up to limit for it to complete.
func runLeagueWithin(t *testing.T, o leagueOpts, limit time.Duration) *leagueRun {
	t.Helper()
	run := startLeague(t, o)
	run.waitCompleted(t, limit)
	return run
}
