package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A result under a clock gives parseAudit its termination and each move's charged time
// (elapsed_ms less network_ms); clockFiguresOf counts the time losses and the moves
// charged more than the increment.
func TestClockFigures(t *testing.T) {
	start := auditLine("request", "c0", 0, request("ADMIN_START_LEAGUE_REQUEST", "", 0, map[string]any{})) + auditLine("response", "c0", 0, okAnswer)
	clocked := func(match, conv string, ms float64, termination string, moves ...[2]int64) string {
		var mv []map[string]any
		for i, m := range moves {
			mv = append(mv, map[string]any{"step": i + 1, "player": fmt.Sprint("p", i%2), "elapsed_ms": m[0], "network_ms": m[1], "clock_ms": 1000})
		}
		return auditLine("request", conv, ms, request("MATCH_RESULT_REPORT", match, ms,
			map[string]any{"game_metadata": map[string]any{"termination": termination, "moves": mv}})) + auditLine("response", conv, ms, okAnswer)
	}
	log := start + assignment("m1", "c1", 1, 1) + assignment("m2", "c2", 1, 1) + assignment("m3", "c3", 1, 1) +
		clocked("m1", "c4", 10, "normal", [2]int64{12, 10}, [2]int64{30, 5}, [2]int64{21, 1}) +
		clocked("m2", "c5", 20, "timeout", [2]int64{400, 390}, [2]int64{2100, 0}) +
		report("m3", "c6", 30, 2, okAnswer) // no clock: nothing charged
	af, err := parseAudit(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%s %v %s %v %v", af.matches[0].termination, af.matches[0].charged, af.matches[1].termination, af.matches[1].charged, af.matches[2].charged); got != "normal [2 25 20] timeout [10 2100] []" {
		t.Errorf("terminations and charged times %q", got)
	}
	f := clockFiguresOf(af.matches, 20)
	if f.timeLosses != 1 || f.moves != 5 || f.overIncrement != 2 || f.chargedP50 != 20 || f.chargedP99 != 2100 {
		t.Errorf("got %+v; want 1 time loss, 5 moves, 2 over 20 ms, p50 20, p99 2100", f)
	}
}

// clockedConfig copies the configuration folder with league.yaml's time_control set and
// everything else kept.
func TestClockedConfig(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"league.yaml":         "league:\n  league_id: x\ntime_control:\n  clock: \"60+1\"\n  bank_ms: 5\n",
		"game_registry.yaml":  "games: []\n",
		"timeout_policy.yaml": "timeouts: {}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path, remove, err := clockedConfig(filepath.Join(dir, "league.yaml"), "2+0.02")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "map[league:map[league_id:x] time_control:map[clock:2+0.02]]" {
		t.Errorf("league.yaml %v", got)
	}
	for _, f := range []string{"game_registry.yaml", "timeout_policy.yaml"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), f)); err != nil {
			t.Error(err)
		}
	}
	remove()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the folder is still there after remove: %v", err)
	}
	if _, _, err := clockedConfig(filepath.Join(t.TempDir(), "league.yaml"), "2+0.02"); err == nil {
		t.Error("a missing folder gave no error")
	}
}
