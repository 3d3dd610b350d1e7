package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
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
	m := regexp.MustCompile(`^league manager listening on (http://127\.0\.0\.1:\d+/mcp)$`).FindStringSubmatch(line)
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

// league serve shuts down gracefully on SIGTERM and on ADMIN_SHUTDOWN_REQUEST: it tells
// the agents, waits --drain for the match in flight, cancels it, exits 0, and a restart
// on the same database plays the match again.
func TestServeShutsDownGracefully(t *testing.T) {
	const drain = 300 * time.Millisecond
	tests := []struct {
		name string
		stop func(t *testing.T, lm *lmProc, w *wire)
	}{
		{"SIGTERM", func(t *testing.T, lm *lmProc, _ *wire) {
			if err := lm.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}},
		{"ADMIN_SHUTDOWN_REQUEST", func(t *testing.T, _ *lmProc, w *wire) {
			msg := msgOf(t, protocol.AdminShutdownRequest, protocol.SenderAdmin, map[string]any{"reason": "end of the day"})
			msg.Envelope.AuthToken = e2eAdminToken
			var p map[string]string
			if err := w.ok(msg).Decode(&p); err != nil || p["status"] != "shutting_down" || p["league_status"] != "ACTIVE" {
				t.Errorf("answer %v (%v), want shutting_down / ACTIVE", p, err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
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
			tc.stop(t, lm, w)
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
		})
	}
}
