package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nimEntry is the one game_registry.yaml entry a league of nim needs (seed 004 §7.2).
const nimEntry = `
  - game_type: "nim"
    name: "Nim"
    description: "Take stones from one heap; whoever takes the last stone wins"
    referee_implementation: "examples/nim/nim_referee.py"
    rules: external
    max_steps: 9
    params: {heaps: [2, 3, 4]}
`

// nimConfig is the repository's configuration with nim added to the registry.
func nimConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"league.yaml", "game_registry.yaml", "timeout_policy.yaml"} {
		data, err := os.ReadFile(filepath.Join(moduleRoot(), "config", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "game_registry.yaml" {
			data = append(data, nimEntry...)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "league.yaml")
}

// A game we do not ship, refereed and played by third-party agents (standard-library
// Python) after one registry entry: the League Manager schedules it, assigns it to the
// referee that named it with the registry's params, takes the results by the generic
// rules and keeps standings; league verify checks them and names the matches it could
// not re-play.
func TestExternalGameLeagueWithThirdPartyAgents(t *testing.T) {
	bin, referee := pythonExample(t, "nim/nim_referee.py")
	_, player := pythonExample(t, "nim/nim_player.py")
	players := map[string]string{"nim-a": "perfect", "nim-b": "random", "nim-c": "random", "nim-d": "random"}
	run := runLeague(t, leagueOpts{game: "nim", seed: 5, config: nimConfig(t),
		extraReferees: func(t *testing.T, lmURL string) int {
			startProc(t, "nim-referee", nil, bin, referee, "--id", "nimref", "--league", lmURL)
			return 1
		},
		extraPlayers: func(t *testing.T, lmURL string) int {
			seed := 0
			for id, strategy := range players {
				seed++
				startProc(t, id, nil, bin, player, "--id", id, "--league", lmURL, "--strategy", strategy, "--seed", fmt.Sprint(seed))
			}
			return len(players)
		}})
	run.checkLeague(t, 1)

	rs := results(t, run)
	if len(rs) != 6 {
		t.Fatalf("%d results, want 6", len(rs))
	}
	var ids []string
	for _, r := range rs {
		moves, _ := r.metadata["moves"].([]any)
		taken := 0
		for _, m := range moves {
			mv, _ := m.(map[string]any)["move"].(map[string]any)
			n, _ := mv["take"].(float64)
			taken += int(n)
		}
		// Heaps 2, 3 and 4 come from the registry entry (the referee's default differs).
		if r.referee != "nimref" || r.termination != "normal" || taken != 9 {
			t.Errorf("match %v: referee %q, termination %q, %d stones taken in %d moves; want nimref's normal game of 9 stones", r.players, r.referee, r.termination, taken, len(moves))
		}
	}
	for _, p := range run.standings(t) {
		ids = append(ids, p.PlayerID)
	}
	if len(ids) != 4 {
		t.Errorf("standings list %v, want the 4 nim players", ids)
	}

	out, err := exec.Command(filepath.Join(binDir, "league"), "verify", run.audit, "--db", run.db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 matches re-played") ||
		!strings.Contains(string(out), "6 matches of nim were not re-played, rules unknown (outcomes and points checked only): ") {
		t.Errorf("league verify: %v\n%s\nwant the 6 nim matches named as not re-played", err, out)
	}
	t.Logf("league verify:\n%s", out)
	out, err = exec.Command(filepath.Join(binDir, "league"), "export", "--db", run.db, "--format", "json").Output()
	var export map[string]any
	if err != nil || json.Unmarshal(out, &export) != nil {
		t.Errorf("league export --format json of the nim league: %v\n%s", err, out)
	}
}
