// Package proctest builds this module's commands and runs them as processes, for the
// tests where the process is the point: signals, exit codes, stdout and the command
// line. Only tests import it; no binary links it.
package proctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// AdminToken is the admin token of the League Managers Serve starts.
const AdminToken = "e2e-admin-token-7f3c9a1b5d"

// Root is the module's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// ConfigPath is the repository's league.yaml.
func ConfigPath() string { return filepath.Join(Root(), "config", "league.yaml") }

// Build builds the commands named (league, referee, player) into dir.
func Build(dir string, names ...string) error {
	for _, name := range names {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", name, err, out)
		}
	}
	return nil
}

// Run runs bin with args to its end, with env added to this process's environment, and
// returns its exit code and output.
func Run(tb testing.TB, bin string, env []string, args ...string) (code int, stdout, stderr string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	}
	tb.Fatalf("run %s: %v", filepath.Base(bin), err)
	return 0, "", ""
}

// Buffer collects a child's output; First is closed at the first newline.
type Buffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	First chan struct{}
	once  sync.Once
}

func newBuffer() *Buffer { return &Buffer{First: make(chan struct{})} }

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if bytes.IndexByte(b.buf.Bytes(), '\n') >= 0 {
		b.once.Do(func() { close(b.First) })
	}
	return len(p), nil
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// LM is a running `league serve`.
type LM struct {
	tb             testing.TB
	Cmd            *exec.Cmd
	URL, Base      string // the JSON-RPC endpoint and the URL beside it (/status)
	Stdout, Stderr *Buffer
	// Done receives the process's end once; Exited and the test's cleanup wait for it.
	Done    chan error
	stopped bool
}

// listening is the first stdout line of league serve.
var listening = regexp.MustCompile(`^league manager listening on (https?://\S+/mcp)$`)

// Serve starts `league serve` (the league binary bin) on 127.0.0.1:0 with the
// repository's configuration, AdminToken, its files in dir and the extra flags, and
// waits for its `league manager listening on <url>` line. The test's end kills it if it
// still runs.
func Serve(tb testing.TB, bin, dir string, extra ...string) *LM {
	tb.Helper()
	p := &LM{tb: tb, Stdout: newBuffer(), Stderr: newBuffer(), Done: make(chan error, 1)}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--config", ConfigPath(),
		"--db", filepath.Join(dir, "league.db"), "--audit", filepath.Join(dir, "audit.jsonl"), "--log", filepath.Join(dir, "league.log")}, extra...)
	p.Cmd = exec.Command(bin, args...)
	p.Cmd.Env = append(os.Environ(), "LEAGUE_ADMIN_TOKEN="+AdminToken)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Stdout, p.Stderr
	if err := p.Cmd.Start(); err != nil {
		tb.Fatalf("start league serve: %v", err)
	}
	// Ends with the process.
	go func() { p.Done <- p.Cmd.Wait() }()
	tb.Cleanup(func() {
		if !p.stopped {
			_ = p.Cmd.Process.Kill()
			<-p.Done
		}
	})
	select {
	case <-p.Stdout.First:
	case err := <-p.Done:
		p.stopped = true
		tb.Fatalf("league serve exited before listening: %v\nstderr:\n%s", err, p.Stderr)
	case <-time.After(20 * time.Second):
		tb.Fatalf("league serve did not print its address\nstderr:\n%s", p.Stderr)
	}
	line, _, _ := strings.Cut(p.Stdout.String(), "\n")
	m := listening.FindStringSubmatch(line)
	if m == nil {
		tb.Fatalf("first stdout line %q, want `league manager listening on <url>`", line)
	}
	p.URL, p.Base = m[1], strings.TrimSuffix(m[1], "/mcp")
	return p
}

// Signal sends sig to the League Manager.
func (p *LM) Signal(sig os.Signal) {
	p.tb.Helper()
	if err := p.Cmd.Process.Signal(sig); err != nil {
		p.tb.Fatal(err)
	}
}

// Stop sends sig to the League Manager and waits for it to exit 0.
func (p *LM) Stop(sig os.Signal) {
	p.tb.Helper()
	p.Signal(sig)
	p.Exited(time.Now())
}

// Exited waits for the process to end, checks that it exited 0 and returns how long
// that took from since.
func (p *LM) Exited(since time.Time) time.Duration {
	p.tb.Helper()
	p.stopped = true
	select {
	case err := <-p.Done:
		if err != nil {
			p.tb.Errorf("league serve exited with %v, want 0\nstderr:\n%s", err, p.Stderr)
		}
	case <-time.After(10 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.Done
		p.tb.Fatalf("league serve did not exit\nstderr:\n%s", p.Stderr)
	}
	return time.Since(since)
}
