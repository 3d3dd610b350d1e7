package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMain serves bench-echo when the tests start their own binary with it, as league
// bench starts the league binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == EchoCommand {
		if err := Echo(context.Background(), os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// self is this test binary.
func self(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// children lists the processes whose parent is this test process, alive or not yet
// reaped, as "pid (command) state".
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			t.Fatalf("/proc/%s/stat: %q", e.Name(), s)
		}
		// After the command name: state, parent.
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			t.Fatalf("/proc/%s/stat: %q", e.Name(), s)
		}
		if f[1] == strconv.Itoa(os.Getpid()) {
			out = append(out, s[:i+1]+" "+f[0])
		}
	}
	return out
}

// The floor between processes measures against bench-echo in a child process (this
// test binary, see TestMain), and reaps it.
func TestProcessFloor(t *testing.T) {
	pf, err := measureProcessFloor(context.Background(), self(t), 200*time.Millisecond, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", pf)
	if pf.sequential <= 0 || pf.roundTrip <= 0 || pf.concurrent <= 0 || pf.workers != 3 {
		t.Errorf("figures not positive: %+v", pf)
	}
	if pf.clientCPU <= 0 || pf.serverCPU <= 0 || pf.concurrentCPU <= 0 {
		t.Errorf("CPU per round trip not positive: %+v", pf)
	}
	if c := children(t); len(c) > 0 {
		t.Errorf("children left: %v", c)
	}
}

// The echo server is stopped and reaped when ctx ends in the middle of a measure, and
// when it prints no address.
func TestProcessFloorStopsTheChild(t *testing.T) {
	t.Run("ctx ends", func(t *testing.T) {
		// ctx ends at the first answer of the echo server, in the middle of the measure:
		// a 300 ms timeout could end it on a loaded machine before the child had even
		// printed its address.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotFirstResponseByte: cancel})
		_, err := measureProcessFloor(ctx, self(t), time.Minute, 2)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want the end of ctx", err)
		}
		if c := children(t); len(c) > 0 {
			t.Errorf("children left: %v", c)
		}
	})
	t.Run("no address", func(t *testing.T) {
		// true ignores its arguments and prints nothing.
		bin, err := exec.LookPath("true")
		if err != nil {
			t.Skip(err)
		}
		_, err = measureProcessFloor(context.Background(), bin, time.Minute, 2)
		if err == nil || !strings.Contains(err.Error(), "printed no address") {
			t.Errorf("got %v, want no address", err)
		}
		if c := children(t); len(c) > 0 {
			t.Errorf("children left: %v", c)
		}
	})
}
