//go:build linux && cgo

package timerslack

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
)

const (
	prSetTimerSlack = 29 // PR_SET_TIMERSLACK
	helperEnv       = "TIMERSLACK_TEST_HELPER"
	// parentSlack is the slack the tests give the processes they start, as a shell would
	// give its own: distinct from Default and from the kernel's 50 µs.
	parentSlack = 300000
)

// TestMain runs the helper when the tests start this binary as a child: it prints its
// setting, the slack of each of its threads, and what a child of its own inherits.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		os.Exit(m.Run())
	}
	d, err := Setting()
	fmt.Printf("setting %d %v\n", d, errors.Is(err, ErrBadValue))
	fmt.Printf("error %v\n", err)
	fmt.Printf("threads %s\n", strings.Join(threadSlacks(), ","))
	// A child started by Start has the helper's inherited slack; one started plainly, the
	// helper's own.
	for _, start := range []func(*exec.Cmd) error{Start, (*exec.Cmd).Start} {
		cmd := exec.Command("cat", "/proc/self/timerslack_ns")
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
		fmt.Printf("child %s\n", strings.TrimSpace(out.String()))
	}
	os.Exit(0)
}

// threadSlacks reads the slack of every thread of this process.
func threadSlacks() []string {
	tasks, err := filepath.Glob("/proc/self/task/*")
	if err != nil || len(tasks) == 0 {
		return []string{fmt.Sprintf("error %v", err)}
	}
	var out []string
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", filepath.Base(t), "timerslack_ns"))
		if err != nil {
			out = append(out, "error")
			continue
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	return out
}

// runHelper runs this binary as the helper with env, started from a thread whose slack
// is parentSlack, and returns its report, line by line.
func runHelper(t *testing.T, env ...string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// GORACE: under -race a process otherwise waits a second at exit.
	cmd.Env = append(append(os.Environ(), helperEnv+"=1", "GORACE=atexit_sleep_ms=0"), env...)
	var out strings.Builder
	cmd.Stdout = &out
	errc := make(chan error, 1)
	go func() {
		// The thread forks the helper with parentSlack, then ends with this goroutine.
		runtime.LockOSThread()
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, parentSlack, 0); e != 0 {
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

func TestSlack(t *testing.T) {
	def := strconv.Itoa(int(Default.Nanoseconds()))
	tests := []struct {
		name, env string
		setting   string // Setting's duration and whether its error is ErrBadValue
		slack     string // every thread's
	}{
		{name: "unset", setting: def + " false", slack: def},
		{name: "empty", env: Env + "=", setting: def + " false", slack: def},
		{name: "set", env: Env + "=250000", setting: "250000 false", slack: "250000"},
		{name: "highest", env: Env + "=100000000", setting: "100000000 false", slack: "100000000"},
		{name: "zero keeps the inherited slack", env: Env + "=0", setting: "0 false", slack: strconv.Itoa(parentSlack)},
		{name: "too high", env: Env + "=100000001", setting: "0 true", slack: strconv.Itoa(parentSlack)},
		{name: "negative", env: Env + "=-1", setting: "0 true", slack: strconv.Itoa(parentSlack)},
		{name: "not a number", env: Env + "=1ms", setting: "0 true", slack: strconv.Itoa(parentSlack)},
		{name: "exponent", env: Env + "=1e6", setting: "0 true", slack: strconv.Itoa(parentSlack)},
		{name: "space", env: Env + "= 5", setting: "0 true", slack: strconv.Itoa(parentSlack)},
		{name: "plus", env: Env + "=+5", setting: "0 true", slack: strconv.Itoa(parentSlack)},
		{name: "overflow", env: Env + "=18446744073709551616", setting: "0 true", slack: strconv.Itoa(parentSlack)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env []string
			if tt.env != "" {
				env = append(env, tt.env)
			}
			r := runHelper(t, env...)
			if r["setting"] != tt.setting {
				t.Errorf("setting %q, want %q", r["setting"], tt.setting)
			}
			if value := strings.TrimPrefix(tt.env, Env+"="); strings.HasSuffix(tt.setting, "true") && !strings.Contains(r["error"], strconv.Quote(value)) {
				t.Errorf("error %q does not name the value %q", r["error"], value)
			}
			threads := strings.Split(r["threads"], ",")
			// The runtime's threads, sysmon among them, exist before any Go code runs.
			if len(threads) < 2 {
				t.Errorf("threads %q: want the slack of several", r["threads"])
			}
			for _, s := range threads {
				if s != tt.slack {
					t.Errorf("a thread's slack is %s, want %s (all: %s)", s, tt.slack, r["threads"])
					break
				}
			}
			if r["child1"] != strconv.Itoa(parentSlack) {
				t.Errorf("a child started by Start has slack %q, want the inherited %d", r["child1"], parentSlack)
			}
			if r["child2"] != tt.slack {
				t.Errorf("a child started plainly has slack %q, want the process's %s", r["child2"], tt.slack)
			}
		})
	}
}
