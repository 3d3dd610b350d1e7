package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/server"
	"go.uber.org/goleak"
)

// The tests of this package run whole League Managers in-process, with real HTTP on
// 127.0.0.1:0 and a real SQLite file; what they leave running when they end is a leak.
// Those of process_test.go run the league binary, for what only a process shows.

const e2eAdminToken = "e2e-admin-token-7f3c9a1b5d"

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// syncBuffer collects log lines written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func configPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../config/league.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ---- the League Manager, in-process ----

// lmRun is a League Manager started with server.Start.
type lmRun struct {
	t         *testing.T
	srv       *server.Server
	cancel    context.CancelFunc
	url, base string
	stderr    *syncBuffer
	stopped   bool
	// quiet holds back the timers of a League Manager on wallClock while unchanged
	// compares the league before and after a request.
	quiet sync.RWMutex
}

// wallClock is the server.Clock of a League Manager on real time (a test that passes no
// clock), except that a timer falling due while unchanged compares the league fires
// once the comparison is over. Otherwise a timer could change the league in the middle
// of a check that the request did not: the IN_PROGRESS the database gets a second after
// a referee's acknowledgement did, on a loaded machine.
type wallClock struct{ quiet *sync.RWMutex }

func (wallClock) Now() time.Time { return time.Now() }

func (c wallClock) AfterFunc(d time.Duration, f func()) server.Timer {
	return time.AfterFunc(d, func() {
		c.quiet.RLock()
		defer c.quiet.RUnlock()
		f()
	})
}

// baseOptions are the options of a League Manager on 127.0.0.1:0 with its files in dir.
func baseOptions(t *testing.T, dir string, stderr *syncBuffer) server.Options {
	return server.Options{
		ConfigPath: configPath(t), Addr: "127.0.0.1:0", DBPath: filepath.Join(dir, "league.db"),
		AuditPath: filepath.Join(dir, "audit.jsonl"), LogPath: filepath.Join(dir, "league.log"),
		AdminToken: e2eAdminToken, Stderr: stderr,
	}
}

// startServer starts a League Manager with baseOptions changed by edit, and stops it
// when the test ends if the test did not.
func startServer(t *testing.T, dir string, edit func(*server.Options)) *lmRun {
	t.Helper()
	p := &lmRun{t: t, stderr: &syncBuffer{}}
	opts := baseOptions(t, dir, p.stderr)
	if edit != nil {
		edit(&opts)
	}
	if opts.Clock == nil {
		opts.Clock = wallClock{&p.quiet}
	}
	// A test that fails mid-drain on fake time would otherwise leave the drain waiting
	// for a clock that no longer moves: the cleanup cuts it short.
	cutCtx, cut := context.WithCancel(context.Background())
	if opts.CutDrain == nil {
		opts.CutDrain = cutCtx
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Start(ctx, opts)
	if err != nil {
		cancel()
		cut()
		t.Fatalf("start the League Manager: %v\nstderr:\n%s", err, p.stderr)
	}
	p.srv, p.cancel = srv, cancel
	t.Cleanup(func() {
		cancel()
		cut()
		select {
		case <-srv.Done():
		case <-time.After(15 * time.Second):
			t.Errorf("the League Manager did not stop\nstderr:\n%s", p.stderr)
		}
	})
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/mcp$`).MatchString(srv.URL()) {
		t.Fatalf("URL %q, want http://127.0.0.1:<port>/mcp", srv.URL())
	}
	p.url, p.base = srv.URL(), "http://"+srv.Addr()
	return p
}

// startLM starts a League Manager that does not drain matches when stopped.
func startLM(t *testing.T, dir string) *lmRun {
	t.Helper()
	return startServer(t, dir, nil)
}

// stop cancels the League Manager's context and checks a clean end.
func (p *lmRun) stop() {
	p.t.Helper()
	if p.stopped {
		return
	}
	p.cancel()
	p.ended()
}

// ended waits for the League Manager to end by itself (or after stop) and checks Wait.
func (p *lmRun) ended() {
	p.t.Helper()
	p.stopped = true
	select {
	case <-p.srv.Done():
		if err := p.srv.Wait(); err != nil {
			p.t.Errorf("the League Manager ended with %v\nstderr:\n%s", err, p.stderr)
		}
	case <-time.After(15 * time.Second):
		p.t.Fatalf("the League Manager did not stop\nstderr:\n%s", p.stderr) // the cleanup stops it
	}
}

func (p *lmRun) status(t *testing.T) map[string]any {
	t.Helper()
	res, err := http.Get(p.base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var s map[string]any
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /status: %d %v", res.StatusCode, err)
	}
	return s
}

func (p *lmRun) state(t *testing.T) string {
	s, _ := p.status(t)["state"].(string)
	return s
}

func matchesIn(s map[string]any, status string) int {
	by, _ := s["matches_by_status"].(map[string]any)
	n, _ := by[status].(float64)
	return int(n)
}

// waitStatus polls GET /status until cond holds or a deadline passes.
func (p *lmRun) waitStatus(t *testing.T, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := p.status(t)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; status %v", what, s)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// settle waits until every assignment has been answered by its referee.
func (p *lmRun) settle(t *testing.T) {
	t.Helper()
	p.waitStatus(t, "assignments to be delivered", func(s map[string]any) bool { return matchesIn(s, "ASSIGNED") == 0 })
}

// ---- fake time ----

// fakeClock is a manual server.Clock: timers fire in time order, on the goroutine that
// advances the clock.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c    *fakeClock
	d    time.Duration
	at   time.Time
	f    func()
	done bool // fired or stopped
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) server.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, d: d, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves the clock by d, firing every timer that falls due on the way at its
// own time.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.done && !t.at.After(end) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			c.now = end
			c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool { return t.done })
			c.mu.Unlock()
			return
		}
		next.done = true
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

// armed waits until a timer of duration d is pending: the League Manager has armed
// that deadline. Only the wait for it is bounded by real time.
func (c *fakeClock) armed(t *testing.T, d time.Duration, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c.mu.Lock()
		found := slices.ContainsFunc(c.timers, func(x *fakeTimer) bool { return !x.done && x.d == d })
		c.mu.Unlock()
		if found {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (a %v timer) was never armed", what, d)
		}
		time.Sleep(time.Millisecond)
	}
}
