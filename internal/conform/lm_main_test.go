package conform

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// subjectProc is a League Manager under test running as a child process.
type subjectProc struct {
	url    string
	stderr *lockedBuffer
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
	p := &subjectProc{stderr: &lockedBuffer{}}
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
