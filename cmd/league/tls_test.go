package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestCertsCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	code, stdout, stderr := runLeague(t, nil, "certs", "--out", dir, "--hosts", "localhost, 127.0.0.1,10.0.0.2", "--days", "2")
	if code != 0 {
		t.Fatalf("certs: exit %d, stderr %s", code, stderr)
	}
	for _, f := range []string{"ca.pem", "ca-key.pem", "localhost.pem", "localhost-key.pem", "127.0.0.1.pem", "127.0.0.1-key.pem", "10.0.0.2.pem", "10.0.0.2-key.pem"} {
		if !strings.Contains(stdout, filepath.Join(dir, f)) {
			t.Errorf("stdout does not name %s:\n%s", f, stdout)
		}
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "-key.pem") && st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	ca, _ := os.ReadFile(filepath.Join(dir, "ca.pem"))
	code, _, stderr = runLeague(t, nil, "certs", "--out", dir, "--hosts", "localhost")
	if code != 1 || !strings.Contains(stderr, "exists") || !strings.Contains(stderr, "--force") {
		t.Errorf("second run: exit %d, stderr %q; want 1 naming --force", code, stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, "ca.pem")); string(again) != string(ca) {
		t.Error("a refused run changed ca.pem")
	}
	if code, _, stderr = runLeague(t, nil, "certs", "--out", dir, "--hosts", "localhost", "--force"); code != 0 {
		t.Errorf("--force: exit %d, stderr %s", code, stderr)
	}
	empty := filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hosts", "localhost"}, "--out is required"},
		{[]string{"--out", empty}, "--hosts is required"},
		{[]string{"--out", empty, "--hosts", "a.test,,b.test"}, "empty host"},
		{[]string{"--out", empty, "--hosts", "not a host"}, "neither an IP address nor a DNS name"},
		{[]string{"--out", empty, "--hosts", "a.test", "--days", "0"}, "days must be between 1 and 3650"},
		{[]string{"--out", empty, "--hosts", "a.test", "stray"}, "unexpected argument"},
	} {
		code, _, stderr := runLeague(t, nil, append([]string{"certs"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("certs %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("bad command lines created %s (%v)", empty, err)
	}
}

// league serve over TLS prints its https endpoint (or the advertised one), and the
// admin commands reach it trusting --tls-ca, not without.
func TestServeOverTLS(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	if code, _, stderr := runLeague(t, nil, "certs", "--out", certs, "--hosts", "127.0.0.1"); code != 0 {
		t.Fatalf("certs: %s", stderr)
	}
	tlsFlags := []string{"--tls-cert", filepath.Join(certs, "127.0.0.1.pem"), "--tls-key", filepath.Join(certs, "127.0.0.1-key.pem")}
	p := startServe(t, dir, tlsFlags...)
	if !regexp.MustCompile(`^https://127\.0\.0\.1:\d+/mcp$`).MatchString(p.url) {
		t.Fatalf("endpoint %s, want https://127.0.0.1:PORT/mcp", p.url)
	}
	env := []string{"LEAGUE_ADMIN_TOKEN=" + e2eAdminToken}
	ca := filepath.Join(certs, "ca.pem")
	code, stdout, stderr := runLeague(t, env, "standings", "--league", p.url, "--tls-ca", ca, "--stats")
	if code != 0 || !strings.Contains(stdout, "state REGISTRATION") {
		t.Errorf("standings --tls-ca: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runLeague(t, env, "standings", "--league", p.url)
	if code != 1 || !strings.Contains(stderr, "certificate") {
		t.Errorf("standings without --tls-ca: exit %d, stderr %q; want 1 and a certificate error", code, stderr)
	}
	code, _, stderr = runLeague(t, env, "start", "--league", "http://10.0.0.1:8000/mcp")
	if code != 2 || !strings.Contains(stderr, "plain http off loopback") || !strings.Contains(stderr, "--insecure") {
		t.Errorf("start on plain http off loopback: exit %d, stderr %q", code, stderr)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.exited(time.Now())

	// Behind a proxy, the advertised endpoint is the one printed.
	p = startServe(t, t.TempDir(), append(tlsFlags, "--advertise", "https://league.example.org/mcp")...)
	if p.url != "https://league.example.org/mcp" {
		t.Errorf("endpoint %s, want the advertised one", p.url)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.exited(time.Now())
}

func TestServeRefusesPlainHTTPOffLoopback(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--addr", "10.0.0.1:8000"}, "--addr 10.0.0.1:8000 serves plain http off loopback"},
		{[]string{"--addr", "0.0.0.0:8000", "--insecure"}, "set --advertise"},
		{[]string{"--advertise", "league:8000"}, `--advertise "league:8000" is not an absolute http(s) url`},
		{[]string{"--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together"},
	} {
		dir := t.TempDir()
		args := append([]string{"serve", "--config", configPath(t), "--db", filepath.Join(dir, "league.db"), "--log", filepath.Join(dir, "league.log")}, tc.args...)
		code, stdout, stderr := runLeague(t, nil, args...)
		if code != 2 || strings.Contains(stdout, "listening") || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve %v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "league.db")); err == nil {
			t.Errorf("serve %v created a database", tc.args)
		}
	}
}
