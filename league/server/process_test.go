package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/proctest"
	"github.com/agentleague/agentleague/protocol"
)

// The League Manager as `league serve` runs it, for what only a process shows: signals,
// the exit code and stderr. The binary is built on first use, into binDir.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// leagueBin is the path of the league binary, built once for the package's tests.
func leagueBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "league-serve-"); buildErr == nil {
			buildErr = proctest.Build(binDir, "league")
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "league")
}

// serveInFlight starts `league serve` with its files in dir and the extra flags, with one
// match in flight (oneMatchInFlight). The lmRun it returns knows the process's address
// only, for the wire and GET /status.
func serveInFlight(t *testing.T, dir string, extra ...string) (*proctest.LM, *lmRun, *wire, *fakeRef) {
	t.Helper()
	p := proctest.Serve(t, leagueBin(t), dir, extra...)
	lm := &lmRun{t: t, url: p.URL, base: p.Base}
	w, ref := oneMatchInFlight(t, lm)
	return p, lm, w, ref
}

// league serve shuts down gracefully on SIGTERM: it tells the agents, waits --drain for
// the match in flight, cancels it, exits 0, and a restart on the same database plays the
// match again; SIGINT stops the restarted one.
func TestServeShutsDownGracefullyOnSIGTERM(t *testing.T) {
	const drain = 300 * time.Millisecond
	dir := t.TempDir()
	p, _, w, ref := serveInFlight(t, dir, "--drain", drain.String())
	start := time.Now()
	p.Signal(syscall.SIGTERM)
	if took := p.Exited(start); took < drain {
		t.Errorf("league serve exited after %v, before the %v drain of the match in flight", took, drain)
	}
	shutdownRecorded(t, dir, w, "the League Manager was stopped by a signal")

	again := proctest.Serve(t, leagueBin(t), dir, "--drain", "0s")
	w.lm = &lmRun{t: t, url: again.URL, base: again.Base}
	w.lm.waitStatus(t, "the match in progress again", func(s map[string]any) bool { return matchesIn(s, "IN_PROGRESS") == 1 })
	ref.mu.Lock()
	n := len(ref.got)
	ref.mu.Unlock()
	if n != 2 {
		t.Errorf("the referee got %d assignments, want 2 (before and after the restart)", n)
	}
	again.Stop(syscall.SIGINT)
}

// A signal during the drain cuts it short: the second signal when a signal began the
// shutdown, the first when ADMIN_SHUTDOWN_REQUEST did. league serve then exits 0 long
// before its --drain of an hour, the match in flight cancelled.
func TestServeSignalDuringTheDrainCutsItShort(t *testing.T) {
	for _, tc := range []struct {
		name  string
		begin func(t *testing.T, p *proctest.LM, w *wire)
	}{
		{"second signal", func(t *testing.T, p *proctest.LM, _ *wire) { p.Signal(syscall.SIGTERM) }},
		{"signal after ADMIN_SHUTDOWN_REQUEST", func(t *testing.T, _ *proctest.LM, w *wire) {
			msg := msgOf(t, protocol.AdminShutdownRequest, protocol.SenderAdmin, map[string]any{"reason": "end of the day"})
			msg.Envelope.AuthToken = e2eAdminToken
			w.ok(msg)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, lm, w, _ := serveInFlight(t, dir, "--drain", "1h")
			tc.begin(t, p, w)
			lm.waitStatus(t, "the shutdown to begin", func(s map[string]any) bool { return s["shutting_down"] == true })
			// league serve listens for the signal once the shutdown has begun: signal until
			// it exits, so the test does not depend on when that is.
			for i := 0; ; i++ {
				p.Signal(syscall.SIGTERM)
				select {
				case err := <-p.Done:
					p.Done <- err
				case <-time.After(100 * time.Millisecond):
					if i < 100 {
						continue
					}
				}
				break
			}
			p.Exited(time.Now())
			if !strings.Contains(p.Stderr.String(), "second signal: the drain is cut short") {
				t.Errorf("stderr does not say the drain was cut short:\n%s", p.Stderr)
			}
			var cancelled int
			if err := openRO(t, filepath.Join(dir, "league.db")).QueryRow(`SELECT count(*) FROM matches WHERE status = 'CANCELLED'`).Scan(&cancelled); err != nil || cancelled != 1 {
				t.Errorf("%d cancelled matches (%v), want the one in flight", cancelled, err)
			}
		})
	}
}

// Configuration errors name the file and the field path, and league serve exits 1
// without listening or creating a database.
func TestServeRefusesBadConfig(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(configPath(t)), name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	league, registry, policy := read("league.yaml"), read("game_registry.yaml"), read("timeout_policy.yaml")
	tests := []struct {
		name                      string
		league, registry, policy  string
		wantFile, wantPath, wants string
	}{
		{"out of range", strings.Replace(league, "min_players: 2", "min_players: 1", 1), registry, policy,
			"league.yaml", "registration.min_players", "must be between 2 and 1000, got 1"},
		{"unknown field", strings.Replace(league, "  seed: 1", "  seed: 1\n  sed: 2", 1), registry, policy,
			"league.yaml", "league.sed", "unknown field"},
		{"wrong type", strings.Replace(league, "cycles: 1", `cycles: "one"`, 1), registry, policy,
			"league.yaml", "scheduling.cycles", "must be an integer"},
		{"game not registered", strings.Replace(league, `game_type: "tic_tac_toe"`, `game_type: "no_such_game"`, 1), registry, policy,
			"league.yaml", "league.game_type", `"no_such_game" is not in game_registry.yaml`},
		{"bad scoring in the registry", league, strings.Replace(registry, "draw: 1", "draw: 5", 1), policy,
			"game_registry.yaml", "games[0].scoring.win", "must be >= draw (5), got 3"},
		{"bad lease in the policy", league, registry, strings.Replace(policy, "lease_ms: 6000", "lease_ms: 1000", 1),
			"timeout_policy.yaml", "timeouts.league_level.lease_ms", "got 1000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range map[string]string{"league.yaml": tc.league, "game_registry.yaml": tc.registry, "timeout_policy.yaml": tc.policy} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := proctest.Run(t, leagueBin(t), nil, "serve", "--addr", "127.0.0.1:0", "--config", filepath.Join(dir, "league.yaml"),
				"--db", filepath.Join(dir, "league.db"), "--audit", filepath.Join(dir, "audit.jsonl"), "--log", filepath.Join(dir, "league.log"))
			if code != 1 || strings.Contains(stdout, "listening") {
				t.Fatalf("exit %d, stdout %q; want exit 1 without listening", code, stdout)
			}
			want := filepath.Join(dir, tc.wantFile) + ": " + tc.wantPath + ": "
			if !strings.Contains(stderr, want) || !strings.Contains(stderr, tc.wants) {
				t.Errorf("stderr %q, want %q ... %q", stderr, want, tc.wants)
			}
			if _, err := os.Stat(filepath.Join(dir, "league.db")); err == nil {
				t.Errorf("a database was created despite the bad configuration")
			}
		})
	}
}

// A database of another schema version is refused with a clear error: league serve
// exits 1 without listening.
func TestServeRefusesDatabaseOfAnotherSchemaVersion(t *testing.T) {
	dir := t.TempDir()
	oldSchemaDB(t, dir)
	code, stdout, stderr := proctest.Run(t, leagueBin(t), []string{"LEAGUE_ADMIN_TOKEN=" + e2eAdminToken}, "serve", "--addr", "127.0.0.1:0", "--config", configPath(t),
		"--db", filepath.Join(dir, "league.db"), "--audit", filepath.Join(dir, "audit.jsonl"), "--log", filepath.Join(dir, "league.log"))
	if code != 1 || strings.Contains(stdout, "listening") {
		t.Fatalf("exit %d stdout %q, want exit 1 without listening", code, stdout)
	}
	for _, want := range oldSchemaRefused {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}
