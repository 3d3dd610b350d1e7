package e2e

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ownProcesses lists the live processes running one of the test binaries.
func ownProcesses(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !strings.HasPrefix(exe, binDir+string(os.PathSeparator)) {
			continue
		}
		// A zombie is already dead: only its parent has not reaped it yet.
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if fields := strings.Fields(string(stat)); len(fields) > 2 && fields[2] == "Z" {
			continue
		}
		out = append(out, e.Name()+" "+exe)
	}
	return out
}

func waitNoOwnProcesses(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(ownProcesses(t)) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("processes survived the demo: %v", ownProcesses(t))
}

func demoCmd(t *testing.T) (*exec.Cmd, string) {
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(binDir, "league"), "demo", "--players", "4", "--referees", "2", "--seed", "4",
		"--config", filepath.Join(moduleRoot(), "config", "league.yaml"),
		"--data", filepath.Join(dir, "data"), "--log-dir", filepath.Join(dir, "logs"), "--timeout", "60s")
	return cmd, dir
}

func TestDemoRunsALeagueAndStopsEveryProcess(t *testing.T) {
	waitNoOwnProcesses(t)
	cmd, dir := demoCmd(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"Final standings", "matches 6/6", "matches/s", "rank  player"} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
	for _, f := range []string{"data/league.db", "logs/audit.jsonl", "logs/league_manager.log", "logs/referee_ref1.log", "logs/player_p01.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("demo left no %s: %v", f, err)
		}
	}
	waitNoOwnProcesses(t)
	checkReplayAndVerify(t, filepath.Join(dir, "logs", "audit.jsonl"), filepath.Join(dir, "data", "league.db"))
	checkExports(t, filepath.Join(dir, "data", "league.db"), 4, 6)
}

func TestDemoInterruptedStopsEveryProcess(t *testing.T) {
	waitNoOwnProcesses(t)
	cmd, _ := demoCmd(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the players are up, as Ctrl-C would.
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "players on ports") {
			break
		}
	}
	if len(ownProcesses(t)) < 7 {
		t.Errorf("expected the League Manager, 2 referees and 4 players running, got %v", ownProcesses(t))
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	_ = cmd.Wait()
	waitNoOwnProcesses(t)
}

// checkReplayAndVerify runs league replay --check and league verify --db, which must
// both pass.
func checkReplayAndVerify(t *testing.T, audit, db string) {
	t.Helper()
	for _, args := range [][]string{{"replay", audit, "--rounds", "--check", db}, {"verify", audit, "--db", db}} {
		out, err := exec.Command(filepath.Join(binDir, "league"), args...).CombinedOutput()
		if err != nil {
			t.Errorf("league %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// checkExports writes the league as CSV and JSON and reads both back.
func checkExports(t *testing.T, db string, players, matches int) {
	t.Helper()
	out, err := exec.Command(filepath.Join(binDir, "league"), "export", "--db", db, "--format", "json").Output()
	if err != nil {
		t.Fatalf("export json: %v", err)
	}
	var doc struct {
		Standings []map[string]any `json:"standings"`
		Results   []struct {
			Status  string            `json:"status"`
			Outcome map[string]string `json:"outcome"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("export json does not parse: %v", err)
	}
	if len(doc.Standings) != players || len(doc.Results) != matches {
		t.Errorf("json export: %d standings rows and %d results, want %d and %d", len(doc.Standings), len(doc.Results), players, matches)
	}
	csvPath := filepath.Join(t.TempDir(), "league.csv")
	if err := exec.Command(filepath.Join(binDir, "league"), "export", "--db", db, "--format", "csv", "--out", csvPath).Run(); err != nil {
		t.Fatalf("export csv: %v", err)
	}
	raw, err := os.ReadFile(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	tables := strings.Split(strings.TrimSpace(string(raw)), "\n\n")
	if len(tables) != 2 {
		t.Fatalf("csv export has %d tables, want standings and results", len(tables))
	}
	for i, want := range []int{players, matches} {
		rows, err := csv.NewReader(strings.NewReader(tables[i])).ReadAll()
		if err != nil {
			t.Fatalf("csv table %d: %v", i, err)
		}
		if len(rows) != want+1 {
			t.Errorf("csv table %d has %d rows, want a header and %d", i, len(rows), want)
		}
	}
}
