//go:build linux && cgo

package procsched

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

const (
	prSetTimerSlack = 29 // PR_SET_TIMERSLACK
	helperEnv       = "PROCSCHED_TEST_HELPER"
	unbatchEnv      = "PROCSCHED_TEST_UNBATCH" // the helper calls Unbatch first
	// parentSlack is the slack the tests give the processes they start, as a shell would
	// give its own: distinct from DefaultSlack and from the kernel's 50 µs.
	parentSlack = 300000
)

// TestMain runs the helper when the tests start this binary as a child: it prints its
// settings, those of each of its threads, and what a child of its own inherits.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		os.Exit(m.Run())
	}
	if os.Getenv(unbatchEnv) != "" {
		if err := Unbatch(); err != nil {
			fmt.Printf("unbatch error %v\n", err)
			os.Exit(1)
		}
	}
	d, err := Slack()
	fmt.Printf("slack %d %v\n", d, errors.Is(err, ErrBadSlack))
	fmt.Printf("slackerror %v\n", err)
	p, err := Policy()
	fmt.Printf("policy %s %v\n", p, errors.Is(err, ErrBadPolicy))
	fmt.Printf("policyerror %v\n", err)
	fmt.Printf("threads %s\n", strings.Join(threadSettings(), ","))
	// A child started by Start has the helper's inherited settings; one started plainly,
	// the helper's own.
	for _, start := range []func(*exec.Cmd) error{Start, (*exec.Cmd).Start} {
		cmd := exec.Command("cat", "/proc/self/timerslack_ns", "/proc/self/stat")
		var out strings.Builder
		cmd.Stdout = &out
		if err := start(cmd); err != nil {
			fmt.Printf("child error %v\n", err)
			os.Exit(1)
		}
		if err := cmd.Wait(); err != nil {
			fmt.Printf("child error %v\n", err)
			os.Exit(1)
		}
		slack, stat, _ := strings.Cut(out.String(), "\n")
		fmt.Printf("child %s/%s\n", strings.TrimSpace(slack), statPolicy(stat))
	}
	os.Exit(0)
}

// threadSettings reads the slack and the policy of every thread of this process, as
// "slack/policy" (the kernel's number).
func threadSettings() []string {
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil || len(tasks) == 0 {
		return []string{fmt.Sprintf("error %v", err)}
	}
	var out []string
	for _, t := range tasks {
		dir := filepath.Join("/proc", filepath.Base(t))
		slack, err1 := os.ReadFile(filepath.Join(dir, "timerslack_ns"))
		stat, err2 := os.ReadFile(filepath.Join(dir, "stat"))
		if err1 != nil || err2 != nil {
			out = append(out, "error")
			continue
		}
		out = append(out, strings.TrimSpace(string(slack))+"/"+statPolicy(string(stat)))
	}
	return out
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

// runHelper runs this binary as the helper with env, started from a thread whose slack
// is parentSlack and whose policy is parentPolicy, and returns its report, line by line.
func runHelper(t *testing.T, parentPolicy int, env ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: under -race a process otherwise waits a second at exit.
	cmd.Env = append(append(os.Environ(), helperEnv+"=1", "GORACE=atexit_sleep_ms=0"), env...)
	var out strings.Builder
	cmd.Stdout = &out
	errc := make(chan error, 1)
	go func() {
		// The thread forks the helper with the parent's settings, then ends with this
		// goroutine.
		runtime.LockOSThread()
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, parentSlack, 0); e != 0 {
			errc <- e
			return
		}
		param := struct{ priority int32 }{}
		if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, 0, uintptr(parentPolicy), uintptr(unsafe.Pointer(&param))); e != 0 {
			errc <- e
			return
		}
		errc <- cmd.Run()
	}()
	if err := <-errc; err != nil {
		t.Fatalf("helper: %v\n%s", err, out.String())
	}
	report := map[string]string{}
	children := 0
	for line := range strings.Lines(out.String()) {
		key, value, _ := strings.Cut(strings.TrimSpace(line), " ")
		if key == "child" {
			children++
			key += strconv.Itoa(children)
		}
		report[key] = value
	}
	return report
}

// checkThreads checks that every thread of the helper has the settings want
// ("slack/policy"); the runtime's threads, sysmon among them, exist before any Go code
// runs.
func checkThreads(t *testing.T, r map[string]string, want string) {
	t.Helper()
	threads := strings.Split(r["threads"], ",")
	if len(threads) < 2 {
		t.Errorf("threads %q: want the settings of several", r["threads"])
	}
	for _, s := range threads {
		if s != want {
			t.Errorf("a thread has slack/policy %s, want %s (all: %s)", s, want, r["threads"])
			break
		}
	}
}

// checkError checks that a setting's error names the value of env that caused it.
func checkError(t *testing.T, got, env, name string) {
	t.Helper()
	if value := strings.TrimPrefix(env, name+"="); !strings.Contains(got, strconv.Quote(value)) {
		t.Errorf("error %q does not name the value %q", got, value)
	}
}

func TestSlack(t *testing.T) {
	def := strconv.Itoa(int(DefaultSlack.Nanoseconds()))
	parent := strconv.Itoa(parentSlack)
	tests := []struct {
		name, env string
		setting   string // Slack's duration and whether its error is ErrBadSlack
		slack     string // every thread's
	}{
		{name: "unset", setting: def + " false", slack: def},
		{name: "empty", env: SlackEnv + "=", setting: def + " false", slack: def},
		{name: "set", env: SlackEnv + "=250000", setting: "250000 false", slack: "250000"},
		{name: "highest", env: SlackEnv + "=100000000", setting: "100000000 false", slack: "100000000"},
		{name: "zero keeps the inherited slack", env: SlackEnv + "=0", setting: "0 false", slack: parent},
		{name: "too high", env: SlackEnv + "=100000001", setting: "0 true", slack: parent},
		{name: "negative", env: SlackEnv + "=-1", setting: "0 true", slack: parent},
		{name: "not a number", env: SlackEnv + "=1ms", setting: "0 true", slack: parent},
		{name: "exponent", env: SlackEnv + "=1e6", setting: "0 true", slack: parent},
		{name: "space", env: SlackEnv + "= 5", setting: "0 true", slack: parent},
		{name: "plus", env: SlackEnv + "=+5", setting: "0 true", slack: parent},
		{name: "overflow", env: SlackEnv + "=18446744073709551616", setting: "0 true", slack: parent},
	}
	batch := strconv.Itoa(schedBatch)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env []string
			if tt.env != "" {
				env = append(env, tt.env)
			}
			r := runHelper(t, schedOther, env...)
			if r["slack"] != tt.setting {
				t.Errorf("slack %q, want %q", r["slack"], tt.setting)
			}
			if strings.HasSuffix(tt.setting, "true") {
				checkError(t, r["slackerror"], tt.env, SlackEnv)
			}
			checkThreads(t, r, tt.slack+"/"+batch)
			if want := parent + "/" + strconv.Itoa(schedOther); r["child1"] != want {
				t.Errorf("a child started by Start has slack/policy %q, want the inherited %s", r["child1"], want)
			}
			if want := tt.slack + "/" + batch; r["child2"] != want {
				t.Errorf("a child started plainly has slack/policy %q, want the process's %s", r["child2"], want)
			}
		})
	}
}

func TestPolicy(t *testing.T) {
	def := strconv.Itoa(int(DefaultSlack.Nanoseconds()))
	tests := []struct {
		name, env     string
		parent        int    // the policy the helper starts under
		setting       string // Policy's name and whether its error is ErrBadPolicy
		policy        int    // every thread's
		startedPolicy int    // that of a child started by Start
	}{
		{name: "unset", parent: schedOther, setting: "batch false", policy: schedBatch, startedPolicy: schedOther},
		{name: "empty", env: PolicyEnv + "=", parent: schedOther, setting: "batch false", policy: schedBatch, startedPolicy: schedOther},
		{name: "batch", env: PolicyEnv + "=batch", parent: schedOther, setting: "batch false", policy: schedBatch, startedPolicy: schedOther},
		{name: "inherit", env: PolicyEnv + "=inherit", parent: schedOther, setting: "other false", policy: schedOther, startedPolicy: schedOther},
		{name: "started idle keeps it", parent: schedIdle, setting: "idle false", policy: schedIdle, startedPolicy: schedIdle},
		{name: "started batch", parent: schedBatch, setting: "batch false", policy: schedBatch, startedPolicy: schedBatch},
		{name: "unknown", env: PolicyEnv + "=fifo", parent: schedOther, setting: " true", policy: schedOther, startedPolicy: schedOther},
		{name: "upper case", env: PolicyEnv + "=BATCH", parent: schedOther, setting: " true", policy: schedOther, startedPolicy: schedOther},
		{name: "space", env: PolicyEnv + "= batch", parent: schedOther, setting: " true", policy: schedOther, startedPolicy: schedOther},
		{name: "unbatched", env: unbatchEnv + "=1", parent: schedOther, setting: "other false", policy: schedOther, startedPolicy: schedOther},
		{name: "unbatch keeps idle", env: unbatchEnv + "=1", parent: schedIdle, setting: "idle false", policy: schedIdle, startedPolicy: schedIdle},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env []string
			if tt.env != "" {
				env = append(env, tt.env)
			}
			r := runHelper(t, tt.parent, env...)
			if r["policy"] != tt.setting {
				t.Errorf("policy %q, want %q", r["policy"], tt.setting)
			}
			if strings.HasSuffix(tt.setting, "true") {
				checkError(t, r["policyerror"], tt.env, PolicyEnv)
			}
			checkThreads(t, r, def+"/"+strconv.Itoa(tt.policy))
			if want := strconv.Itoa(parentSlack) + "/" + strconv.Itoa(tt.startedPolicy); r["child1"] != want {
				t.Errorf("a child started by Start has slack/policy %q, want %s", r["child1"], want)
			}
			if want := def + "/" + strconv.Itoa(tt.policy); r["child2"] != want {
				t.Errorf("a child started plainly has slack/policy %q, want the process's %s", r["child2"], want)
			}
		})
	}
}
