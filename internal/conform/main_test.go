package conform

import (
	"bufio"
	"bytes"
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
)

// binDir holds bin/league, built once for the package: the League Manager under test and
// the `league conform` command line.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentleague-conform-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "league"), "./cmd/league")
	cmd.Dir = moduleRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build league: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// syncBuffer collects a child's stderr while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// subjectProc is a League Manager under test running as a child process.
type subjectProc struct {
	url    string
	stderr *syncBuffer
}

// startSubject starts bin with args and waits for its "listening on URL" line; the
// process is stopped (SIGTERM, then SIGKILL) when the test ends.
func startSubject(t *testing.T, env []string, bin string, args ...string) *subjectProc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &subjectProc{stderr: &syncBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	lines := make(chan string, 1)
	// Ends when the child exits and its stdout closes.
	go func() {
		r := bufio.NewReader(stdout)
		first, _ := r.ReadString('\n')
		lines <- first
		_, _ = io.Copy(io.Discard, r)
	}()
	// Ends when the child exits.
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		select {
		case <-done:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s ignored SIGTERM; killing it", bin)
			_ = cmd.Process.Kill()
			<-done
		}
	})
	select {
	case line := <-lines:
		i := strings.Index(line, "listening on ")
		if i < 0 {
			t.Fatalf("%s: first line %q; stderr:\n%s", bin, line, p.stderr.String())
		}
		p.url = strings.TrimSpace(line[i+len("listening on "):])
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not start; stderr:\n%s", bin, p.stderr.String())
	}
	return p
}

// startPythonLM starts a League Manager of testdata written in Python for 4 players.
func startPythonLM(t *testing.T, script string) *subjectProc {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the stand-in League Managers (make deps installs it): %v", err)
	}
	return startSubject(t, nil, python, script, "--players", fmt.Sprint(lmPlayers), "--game", "tic_tac_toe")
}

// seedStandIn is the League Manager written from the seeds that behaves like the Python
// implementation.
func seedStandIn() string {
	return filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "seed_league.py")
}
