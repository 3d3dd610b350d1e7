package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/procsched"
)

// Every thread of every process of a league runs with a timer slack of 1 ms and under
// SCHED_BATCH, the Go runtime's own threads included (package procsched); the variables
// change them per process, and a bad value stops a command before it does anything.
func TestProcessesRunWithTheirScheduling(t *testing.T) {
	run := startLeague(t, leagueOpts{players: 3, referees: 1, hold: true,
		playerEnv: map[string][]string{"p02": {procsched.SlackEnv + "=250000"}, "p03": {procsched.PolicyEnv + "=inherit"}}})
	// slack/policy, the policy as /proc numbers it (SCHED_BATCH 3). The harness starts
	// each process with the policy the tests inherited, which p03 keeps.
	want := map[string]string{"league": "1000000/3", "ref1": "1000000/3", "p01": "1000000/3", "p02": "250000/3",
		"p03": "1000000/" + inheritedPolicy(t)}
	for _, p := range append(append([]*proc{run.lm}, run.refs...), run.players...) {
		tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(p.cmd.Process.Pid), "task", "*"))
		if err != nil || len(tasks) < 2 {
			t.Fatalf("%s: threads %v, %v", p.name, tasks, err)
		}
		for _, task := range tasks {
			dir := filepath.Join("/proc", filepath.Base(task))
			slack, err := os.ReadFile(filepath.Join(dir, "timerslack_ns"))
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			stat, err := os.ReadFile(filepath.Join(dir, "stat"))
			if err != nil {
				t.Fatalf("%s: %v", p.name, err)
			}
			got := strings.TrimSpace(string(slack)) + "/" + statPolicy(string(stat))
			if got != want[p.name] {
				t.Errorf("%s: thread %s has slack/policy %s, want %s", p.name, filepath.Base(task), got, want[p.name])
			}
		}
	}

	bad := []struct{ env, reason string }{
		{procsched.SlackEnv + "=1ms", procsched.SlackEnv + ` must be a whole number of nanoseconds from 0 to 100000000, got "1ms"`},
		{procsched.PolicyEnv + "=fifo", procsched.PolicyEnv + ` must be "batch" or "inherit", got "fifo"`},
	}
	for _, bin := range []string{"league", "referee", "player"} {
		for _, b := range bad {
			cmd := exec.Command(filepath.Join(binDir, bin))
			cmd.Env = append(os.Environ(), b.env)
			out, err := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), b.reason) {
				t.Errorf("%s with %s: exit %d (%v), output %q; want 2 and the reason", bin, b.env, code, err, out)
			}
		}
	}
}

// inheritedPolicy is the policy of a process the harness starts, as /proc numbers it.
func inheritedPolicy(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("cat", "/proc/self/stat")
	var out strings.Builder
	cmd.Stdout = &out
	if err := procsched.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return statPolicy(out.String())
}

// statPolicy is the policy field (the 41st) of a /proc stat line; the command name in
// the second may hold spaces, so fields are counted after its closing parenthesis.
func statPolicy(stat string) string {
	fields := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(fields) < 39 {
		return "?"
	}
	return fields[38]
}
