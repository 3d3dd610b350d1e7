package conform

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// binDir holds the referee, player and league binaries, built once for the package: the
// agents under test, and the `league conform` command line. Our League Manager runs
// in-process (league/server).
var binDir string

func TestMain(m *testing.M) {
	// The tool and our agents check every message they build before sending it.
	os.Setenv(protocol.SelfCheckEnv, "1")
	dir, err := os.MkdirTemp("", "agentleague-conform-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	for _, name := range []string{"referee", "player", "league"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = moduleRoot()
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", name, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// python is the python3 interpreter; the tests need it for the stand-ins of other
// implementations.
func python(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the stand-ins of other implementations (make deps installs it): %v", err)
	}
	return bin
}

// agent is the process of a subject, started once the tool listens.
type agent struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer // not embedded: io.Copy would write through its ReadFrom, unlocked
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startAgent starts name with args; the cleanup stops it (SIGTERM, then SIGKILL) and
// waits for it, so no process outlives its test.
func startAgent(t *testing.T, name string, args ...string) *agent {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdout = io.Discard
	a := &agent{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = a.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	// Ends when the process exits; the cleanup makes sure it does.
	go func() {
		_ = cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		select {
		case <-a.done:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-a.done
		}
	})
	return a
}

// options are the test defaults: short deadlines where our stand-ins are fast.
func options(t *testing.T, game string) Options {
	t.Helper()
	return Options{Listen: "127.0.0.1:0", Game: game, Wait: 20 * time.Second, MoveTimeout: 5 * time.Second,
		ResultTimeout: 10 * time.Second, Grace: 5 * time.Second, Log: zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)}
}

// conformRun runs subject with opt; start launches the agent with the tool's URL.
func conformRun(t *testing.T, subject string, opt Options, start func(leagueURL string) *agent) (*Report, *agent) {
	t.Helper()
	var ag *agent
	opt.Ready = func(url string) { ag = start(url) }
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rep := NewReport(subject, opt.Game)
	if err := Subjects[subject](ctx, opt, rep); err != nil {
		t.Fatalf("conform %s: %v", subject, err)
	}
	var text strings.Builder
	_ = rep.WriteText(&text)
	t.Logf("report:\n%s", text.String())
	if ag != nil && t.Failed() {
		t.Logf("agent stderr:\n%s", ag.stderr.String())
	}
	return rep, ag
}

// result finds check id in rep.
func result(t *testing.T, rep *Report, id string) Result {
	t.Helper()
	for _, r := range rep.Results() {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no check %s in the report", id)
	return Result{}
}

// wantStatus checks the status of each check named.
func wantStatus(t *testing.T, rep *Report, want map[string]Status) {
	t.Helper()
	for id, st := range want {
		if got := result(t, rep, id); got.Status != st {
			t.Errorf("%s: got %s (%s), want %s", id, got.Status, got.Reason, st)
		}
	}
}

// wantConforms checks every required check passed.
func wantConforms(t *testing.T, rep *Report) {
	t.Helper()
	for _, r := range rep.Results() {
		if r.Level == Required && r.Status != Pass {
			t.Errorf("required check %s: %s: %s", r.ID, r.Status, r.Reason)
		}
	}
}

// wantInbound checks that an inbound agent has its outbound check skipped, saying why.
func wantInbound(t *testing.T, rep *Report, kind string) {
	t.Helper()
	if got := result(t, rep, kind+".outbound.register"); got.Status != Skip || !strings.Contains(got.Reason, "the "+kind+" is inbound") {
		t.Errorf("%s.outbound.register of an inbound %s: got %s %q, want a skip saying it is inbound", kind, kind, got.Status, got.Reason)
	}
}

// wantOutbound checks that an outbound agent passed every check, through the relay.
func wantOutbound(t *testing.T, rep *Report) {
	t.Helper()
	wantConforms(t, rep)
	for _, r := range rep.Results() {
		if r.Status != Pass {
			t.Errorf("%s: %s: %s", r.ID, r.Status, r.Reason)
		}
	}
	id := rep.Subject + ".register.endpoint"
	if got := result(t, rep, id); !strings.Contains(got.Reason, "/relay/"+rep.Subject+"/") {
		t.Errorf("%s: %q names no relay endpoint", id, got.Reason)
	}
}
