package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
	_ "github.com/mattn/go-sqlite3"
)

// startServe starts `league serve` on 127.0.0.1:0 with its files in dir and extra flags,
// and waits for the `league manager listening on <url>` line.
func startServe(t *testing.T, dir string, extra ...string) *lmProc {
	t.Helper()
	p := &lmProc{t: t, stdout: newSyncBuffer(), stderr: newSyncBuffer(), done: make(chan error, 1)}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--config", configPath(t),
		"--db", filepath.Join(dir, "league.db"), "--audit", filepath.Join(dir, "audit.jsonl"), "--log", filepath.Join(dir, "league.log")}, extra...)
	p.cmd = exec.Command(leagueBin, args...)
	p.cmd.Env = append(os.Environ(), "LEAGUE_ADMIN_TOKEN="+e2eAdminToken)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start league serve: %v", err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if !p.stopped {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case <-p.stdout.first:
	case err := <-p.done:
		p.stopped = true
		t.Fatalf("league serve exited before listening: %v\nstderr:\n%s", err, p.stderr)
	case <-time.After(20 * time.Second):
		t.Fatalf("league serve did not print its address\nstderr:\n%s", p.stderr)
	}
	line, _, _ := strings.Cut(p.stdout.String(), "\n")
	m := regexp.MustCompile(`^league manager listening on (https?://\S+/mcp)$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("first stdout line %q, want `league manager listening on <url>`", line)
	}
	p.url, p.base = m[1], strings.TrimSuffix(m[1], "/mcp")
	return p
}

// exited waits for the process to end and returns how long that took from since.
func (p *lmProc) exited(since time.Time) time.Duration {
	p.t.Helper()
	p.stopped = true
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Errorf("league serve exited with %v, want 0\nstderr:\n%s", err, p.stderr)
		}
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("league serve did not exit\nstderr:\n%s", p.stderr)
	}
	return time.Since(since)
}

// league serve shuts down gracefully on SIGTERM: it tells the agents, waits --drain for
// the match in flight, cancels it, exits 0, and a restart on the same database plays the
// match again; SIGINT stops the restarted one. (The same shutdown on
// ADMIN_SHUTDOWN_REQUEST, and a drain cut short, are tested in-process in league/server.)
func TestServeShutsDownGracefullyOnSIGTERM(t *testing.T) {
	const drain = 300 * time.Millisecond
	dir := t.TempDir()
	lm := startServe(t, dir, "--drain", drain.String())
	w := newWire(t, lm)
	ref := newFakeRef(t, w.v, "ref1")
	w.ok(regReferee(t, "ref1", ref.url()))
	w.ok(regPlayer(t, "p01"))
	w.ok(regPlayer(t, "p02"))
	w.ok(adminStartMsg(t, e2eAdminToken))
	lm.waitStatus(t, "the match in progress", func(s map[string]any) bool { return matchesIn(s, "IN_PROGRESS") == 1 })

	start := time.Now()
	if err := lm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if took := lm.exited(start); took < drain {
		t.Errorf("league serve exited after %v, before the %v drain of the match in flight", took, drain)
	}
	db := openRO(t, filepath.Join(dir, "league.db"))
	var league, shutdownAt string
	var cancelled int
	if err := db.QueryRow(`SELECT (SELECT status FROM leagues), (SELECT count(*) FROM matches WHERE status = 'CANCELLED'),
		(SELECT coalesce(max(value), '') FROM meta WHERE key = 'shutdown_at')`).Scan(&league, &cancelled, &shutdownAt); err != nil {
		t.Fatal(err)
	}
	if league != "ACTIVE" || cancelled != 1 || shutdownAt == "" {
		t.Errorf("after the shutdown: league %s, %d cancelled, shutdown_at %q; want ACTIVE, 1, a time", league, cancelled, shutdownAt)
	}
	audit, err := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(audit), `"message_type":"LEAGUE_SHUTDOWN"`); n < 3 {
		t.Errorf("%d LEAGUE_SHUTDOWN messages in the audit log, want one to each of 3 agents", n)
	}
	w.noSecretIn("audit log", audit)

	// The restart resumes: the cancelled match is assigned again.
	again := startServe(t, dir, "--drain", "0s")
	w.lm = again
	again.waitStatus(t, "the match in progress again", func(s map[string]any) bool { return matchesIn(s, "IN_PROGRESS") == 1 })
	ref.mu.Lock()
	n := len(ref.got)
	ref.mu.Unlock()
	if n != 2 {
		t.Errorf("the referee got %d assignments, want 2 (before and after the restart)", n)
	}
	if err := again.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	again.exited(time.Now())
}

// A signal during the drain cuts it short: the second signal when a signal began the
// shutdown, the first when ADMIN_SHUTDOWN_REQUEST did. league serve then exits 0 long
// before its --drain of an hour, the match in flight cancelled.
func TestServeSignalDuringTheDrainCutsItShort(t *testing.T) {
	for _, tc := range []struct {
		name  string
		begin func(t *testing.T, lm *lmProc, w *wire)
	}{
		{"second signal", func(t *testing.T, lm *lmProc, _ *wire) {
			if err := lm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}},
		{"signal after ADMIN_SHUTDOWN_REQUEST", func(t *testing.T, _ *lmProc, w *wire) {
			msg := msgOf(t, protocol.AdminShutdownRequest, protocol.SenderAdmin, map[string]any{"reason": "end of the day"})
			msg.Envelope.AuthToken = e2eAdminToken
			w.ok(msg)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			lm := startServe(t, dir, "--drain", "1h")
			w := newWire(t, lm)
			ref := newFakeRef(t, w.v, "ref1")
			w.ok(regReferee(t, "ref1", ref.url()))
			w.ok(regPlayer(t, "p01"))
			w.ok(regPlayer(t, "p02"))
			w.ok(adminStartMsg(t, e2eAdminToken))
			lm.waitStatus(t, "the match in progress", func(s map[string]any) bool { return matchesIn(s, "IN_PROGRESS") == 1 })
			tc.begin(t, lm, w)
			lm.waitStatus(t, "the shutdown to begin", func(s map[string]any) bool { return s["shutting_down"] == true })
			// league serve listens for the signal once the shutdown has begun: signal until
			// it exits, so the test does not depend on when that is.
			for i := 0; ; i++ {
				if err := lm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				select {
				case err := <-lm.done:
					lm.done <- err
				case <-time.After(100 * time.Millisecond):
					if i < 100 {
						continue
					}
				}
				break
			}
			lm.exited(time.Now())
			if !strings.Contains(lm.stderr.String(), "second signal: the drain is cut short") {
				t.Errorf("stderr does not say the drain was cut short:\n%s", lm.stderr)
			}
			var cancelled int
			if err := openRO(t, filepath.Join(dir, "league.db")).QueryRow(`SELECT count(*) FROM matches WHERE status = 'CANCELLED'`).Scan(&cancelled); err != nil || cancelled != 1 {
				t.Errorf("%d cancelled matches (%v), want the one in flight", cancelled, err)
			}
		})
	}
}

// Configuration errors name the file and the field path, and the League Manager does not
// start.
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
			code, stdout, stderr := runLeague(t, nil, "serve", "--addr", "127.0.0.1:0", "--config", filepath.Join(dir, "league.yaml"),
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

// A database of another schema version is refused with a clear error.
func TestServeRefusesDatabaseOfAnotherSchemaVersion(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "league.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE TABLE leagues (league_id TEXT)", "PRAGMA user_version = 7"} {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	code, stdout, stderr := runLeague(t, []string{"LEAGUE_ADMIN_TOKEN=" + e2eAdminToken}, "serve", "--addr", "127.0.0.1:0", "--config", configPath(t),
		"--db", path, "--audit", filepath.Join(dir, "audit.jsonl"), "--log", filepath.Join(dir, "league.log"))
	if code != 1 || strings.Contains(stdout, "listening") {
		t.Fatalf("exit %d stdout %q, want exit 1 without listening", code, stdout)
	}
	for _, want := range []string{"schema version mismatch", "user_version 7", "needs 4"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}
