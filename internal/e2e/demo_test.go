package e2e

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ownProcesses lists the live processes running one of the test binaries, or whose
// command line contains mark (when not empty).
func ownProcesses(t *testing.T, mark string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !strings.HasPrefix(exe, binDir+string(os.PathSeparator)) && (mark == "" || !strings.Contains(string(cmdline), mark)) {
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

func waitNoOwnProcesses(t *testing.T, mark string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if len(ownProcesses(t, mark)) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("processes survived the demo: %v", ownProcesses(t, mark))
}

// demoCmd is a demo of 4 players and 2 referees run by the league binary in bin, in a
// fresh folder.
func demoCmd(t *testing.T, bin string, args ...string) (*exec.Cmd, string) {
	dir := t.TempDir()
	args = append([]string{"demo", "--players", "4", "--referees", "2", "--seed", "4",
		"--config", filepath.Join(moduleRoot(), "config", "league.yaml"),
		"--data", filepath.Join(dir, "data"), "--log-dir", filepath.Join(dir, "logs"), "--timeout", "60s"}, args...)
	return exec.Command(filepath.Join(bin, "league"), args...), dir
}

// shutdownLines are what our agents log when they stop on LEAGUE_SHUTDOWN (and only
// then: a signal logs something else).
var shutdownLines = map[string]string{
	"referee": "league shutdown: finishing matches in progress",
	"player":  "stopping: league shut down",
}

// checkLeftOnNotice checks in each agent's own log that it stopped on LEAGUE_SHUTDOWN.
func checkLeftOnNotice(t *testing.T, logDir string, agents ...string) {
	t.Helper()
	for _, a := range agents {
		role, _, _ := strings.Cut(a, "_")
		data, err := os.ReadFile(filepath.Join(logDir, a+".log"))
		if err != nil {
			t.Errorf("%s: %v", a, err)
			continue
		}
		if !strings.Contains(string(data), `"message":"`+shutdownLines[role]+`"`) {
			t.Errorf("%s did not log %q: it did not stop on LEAGUE_SHUTDOWN", a, shutdownLines[role])
		}
	}
}

func TestDemoRunsALeagueAndStopsEveryProcess(t *testing.T) {
	waitNoOwnProcesses(t, "")
	cmd, dir := demoCmd(t, binDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	text := string(out)
	// Every agent left by itself on the League Manager's notice: none had to be killed.
	for _, want := range []string{"Final standings", "matches 6/6", "matches/s", "rank  player",
		"League Manager stopped (exit status 0)\n",
		"left on LEAGUE_SHUTDOWN: ref1 ref2 p01 p02 p03 p04\n",
		"2 referees and 4 players left on LEAGUE_SHUTDOWN; 0 killed\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
	for _, f := range []string{"data/league.db", "logs/audit.jsonl", "logs/league_manager.log", "logs/referee_ref1.log", "logs/player_p01.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("demo left no %s: %v", f, err)
		}
	}
	checkLeftOnNotice(t, filepath.Join(dir, "logs"), "referee_ref1", "referee_ref2", "player_p01", "player_p02", "player_p03", "player_p04")
	waitNoOwnProcesses(t, "")
	checkReplayAndVerify(t, filepath.Join(dir, "logs", "audit.jsonl"), filepath.Join(dir, "data", "league.db"))
	checkExports(t, filepath.Join(dir, "data", "league.db"), 4, 6)
}

// Agents that do not leave on LEAGUE_SHUTDOWN are killed after the grace period: p03
// does not know the notice and SIGTERM stops it; p04 also ignores SIGTERM and needs
// SIGKILL. The others leave on the notice as usual.
func TestDemoKillsAgentsThatIgnoreLeagueShutdown(t *testing.T) {
	waitNoOwnProcesses(t, "")
	bin := stubbornPlayersBin(t)
	cmd, dir := demoCmd(t, bin, "--grace", "1s")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("demo failed: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"matches 6/6",
		"killed player p03: still running 1s after the League Manager stopped (it never acknowledged LEAGUE_SHUTDOWN); SIGTERM stopped it (signal: terminated)\n",
		"killed player p04: still running 1s after the League Manager stopped (it never acknowledged LEAGUE_SHUTDOWN); it ignored SIGTERM for 1s too, SIGKILL stopped it\n",
		"left on LEAGUE_SHUTDOWN: ref1 ref2 p01 p02\n",
		"2 referees and 2 players left on LEAGUE_SHUTDOWN; 2 killed\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
	checkLeftOnNotice(t, filepath.Join(dir, "logs"), "referee_ref1", "referee_ref2", "player_p01", "player_p02")
	waitNoOwnProcesses(t, bin)
}

// stubbornPlayersBin makes a folder with the demo's binaries in which player is a script:
// for p03 and p04 it starts the Python player without LEAGUE_SHUTDOWN handling (p04 also
// ignoring SIGTERM), for every other id the real player. The demo runs the referee and
// player beside its own binary.
func stubbornPlayersBin(t *testing.T) string {
	t.Helper()
	py, script := python(t, "python_player.py")
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// Hard links, since the demo finds its siblings through its own resolved path.
	for _, name := range []string{"league", "referee"} {
		if err := os.Link(filepath.Join(binDir, name), filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	// Through this link the Python players' command lines name bin, where
	// ownProcesses finds them.
	link := filepath.Join(bin, "python_player.py")
	if err := os.Symlink(script, link); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf(`#!/bin/sh
id= league= prev=
for a in "$@"; do
	case "$prev" in
	--id) id=$a ;;
	--league) league=$a ;;
	esac
	prev=$a
done
case "$id" in
p03) exec '%[1]s' '%[2]s' --id "$id" --league "$league" --shutdown ignore ;;
p04) exec '%[1]s' '%[2]s' --id "$id" --league "$league" --shutdown ignore --ignore-sigterm ;;
esac
exec '%[3]s' "$@"
`, py, link, filepath.Join(binDir, "player"))
	if err := os.WriteFile(filepath.Join(bin, "player"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// demoSummary matches the demo's last line after a stop, such as "2 referees and 1 player
// left on LEAGUE_SHUTDOWN; 3 killed".
var demoSummary = regexp.MustCompile(`2 referees and (\d+) players? left on LEAGUE_SHUTDOWN; (\d+) killed(?:; (\d+) exited otherwise)?`)

// Ctrl-C stops the League Manager first too: the referees (registered before any player
// starts) leave on its LEAGUE_SHUTDOWN, and the players leave on it or are killed.
func TestDemoInterruptedStopsEveryProcess(t *testing.T) {
	waitNoOwnProcesses(t, "")
	cmd, dir := demoCmd(t, binDir)
	// In a process group of its own, like a command in a terminal, so SIGINT can go to
	// the group as Ctrl-C sends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "players on ports") {
			break
		}
	}
	if len(ownProcesses(t, "")) < 7 {
		t.Errorf("expected the League Manager, 2 referees and 4 players running, got %v", ownProcesses(t, ""))
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest := make(chan string)
	// Ends when the demo exits and its stdout closes.
	go func() {
		var b strings.Builder
		for sc.Scan() {
			b.WriteString(sc.Text() + "\n")
		}
		rest <- b.String()
	}()
	text := <-rest
	_ = cmd.Wait()
	if !strings.Contains(text, "2 referees and ") {
		t.Fatalf("the demo does not report both referees leaving on LEAGUE_SHUTDOWN:\n%s", text)
	}
	// "1 player" or "N players": the demo counts in words.
	m := demoSummary.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no summary line like %q in the demo's output:\n%s", demoSummary, text)
	}
	players, _ := strconv.Atoi(m[1])
	killed, _ := strconv.Atoi(m[2])
	// A player that registers while the League Manager is already shutting down is
	// refused and stops cleanly by itself: the only other way a player may end.
	others := 0
	if m[3] != "" {
		others, _ = strconv.Atoi(m[3])
	}
	clean := strings.Count(text, "exited by itself (exit status 0)")
	if players+killed+others != 4 || others != clean {
		t.Errorf("want every player to have left on LEAGUE_SHUTDOWN (%d), been killed (%d) or stopped cleanly by itself (%d of %d), 4 in all:\n%s", players, killed, clean, others, text)
	}
	checkLeftOnNotice(t, filepath.Join(dir, "logs"), "referee_ref1", "referee_ref2")
	waitNoOwnProcesses(t, "")
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

// league demo --extra 1 waits for one more player and prints the command lines that start
// the examples; the Python example, started with exactly the printed line from the
// repository's root, registers and plays the whole league, then leaves on
// LEAGUE_SHUTDOWN, and the demo reports it beside the agents it started.
func TestDemoWaitsForExtraPlayers(t *testing.T) {
	waitNoOwnProcesses(t, "")
	interpreter(t, "python3")
	cmd, _ := demoCmd(t, binDir, "--extra", "1")
	cmd.Dir = moduleRoot() // as make demo runs it
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var head strings.Builder
	var line string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		head.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "  python3 ") {
			line = strings.TrimSpace(sc.Text())
			break
		}
	}
	if line == "" {
		_ = cmd.Wait()
		t.Fatalf("the demo printed no command line for the Python example:\n%s", head.String())
	}
	for _, want := range []string{"waiting up to 5m0s for 1 more player to register; start it from another terminal:\n",
		"  python3 examples/python/tic_tac_toe_player.py --id py1 --league http://127.0.0.1:"} {
		if !strings.Contains(head.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, head.String())
		}
	}
	args := strings.Fields(line)
	example := exec.Command(args[0], args[1:]...)
	example.Dir = moduleRoot()
	var exampleOut syncBuffer
	example.Stdout, example.Stderr = &exampleOut, &exampleOut
	if err := example.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exitErr error
	// Ends when the example exits: on LEAGUE_SHUTDOWN, or killed below.
	go func() {
		exitErr = example.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = example.Process.Kill()
			<-exited
		}
	})
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("demo failed: %v\n%s%s", err, head.String(), rest.String())
	}
	text := rest.String()
	for _, want := range []string{"extra player py1 registered (1 of 1)\n", "Final standings (tic_tac_toe, 5 players, 10 matches)", "matches 10/10\n",
		"2 referees and 4 players left on LEAGUE_SHUTDOWN; 0 killed\n",
		"extra players (started by hand, not by the demo, which cannot stop them): py1\n",
		"left on LEAGUE_SHUTDOWN: py1\n",
		"extra players: 1 of 1 left on LEAGUE_SHUTDOWN, 0 still listening\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("demo output lacks %q:\n%s", want, text)
		}
	}
	select {
	case <-exited:
		if exitErr != nil {
			t.Errorf("the example exited with %v, want 0:\n%s", exitErr, exampleOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Errorf("the example is still running after the demo:\n%s", exampleOut.String())
	}
	if !strings.Contains(exampleOut.String(), "py1: league shut down") {
		t.Errorf("the example did not log LEAGUE_SHUTDOWN:\n%s", exampleOut.String())
	}
	waitNoOwnProcesses(t, "")
}

// An extra player that never comes: the demo gives up after --extra-wait with a clear
// message, exits 1, and stops every process it started.
func TestDemoGivesUpOnMissingExtraPlayers(t *testing.T) {
	waitNoOwnProcesses(t, "")
	cmd, _ := demoCmd(t, binDir, "--extra", "2", "--extra-wait", "1s")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("demo ended with %v, want exit status 1:\n%s", err, out)
	}
	for _, want := range []string{"waiting up to 1s for 2 more players to register; start them from another terminal:\n",
		"league demo: 0 of 2 extra players registered within --extra-wait 1s: start them with the commands above while the demo waits, or wait longer with --extra-wait\n",
		"2 referees and 4 players left on LEAGUE_SHUTDOWN; 0 killed\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "Final standings") {
		t.Errorf("the demo started a league without its extra players:\n%s", out)
	}
	waitNoOwnProcesses(t, "")
}
