package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/timerslack"
)

// Every thread of every process of a league runs with a timer slack of 1 ms, the Go
// runtime's own threads included (package timerslack), and a bad LEAGUE_TIMER_SLACK_NS
// stops a command before it does anything.
func TestProcessesRunWithTheTimerSlack(t *testing.T) {
	run := startLeague(t, leagueOpts{players: 2, referees: 1, hold: true,
		playerEnv: map[string][]string{"p02": {timerslack.Env + "=250000"}}})
	want := map[string]string{"league": "1000000", "ref1": "1000000", "p01": "1000000", "p02": "250000"}
	for _, p := range append(append([]*proc{run.lm}, run.refs...), run.players...) {
		tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "task", "*"))
		if err != nil || len(tasks) < 2 {
			t.Fatalf("%s: threads %v, %v", p.name, tasks, err)
		}
		for _, task := range tasks {
			b, err := os.ReadFile(filepath.Join("/proc", filepath.Base(task), "timerslack_ns"))
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			if got := strings.TrimSpace(string(b)); got != want[p.name] {
				t.Errorf("%s: thread %s has slack %s ns, want %s", p.name, filepath.Base(task), got, want[p.name])
			}
		}
	}

	for _, bin := range []string{"league", "referee", "player"} {
		cmd := exec.Command(filepath.Join(binDir, bin))
		cmd.Env = append(os.Environ(), timerslack.Env+"=1ms")
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), timerslack.Env+` must be a whole number of nanoseconds from 0 to 100000000, got "1ms"`) {
			t.Errorf("%s with %s=1ms: exit %d (%v), output %q; want 2 and the reason", bin, timerslack.Env, code, err, out)
		}
	}
}
