package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/agentleague/agentleague/internal/proctest"
)

// league certs writes the files it names, refuses to overwrite them without --force,
// and refuses a bad command line (exit 2) before it writes anything. (What the
// certificates hold is tested in internal/netsec.)
func TestCertsCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	code, stdout, stderr := runLeague(t, nil, "certs", "--out", dir, "--hosts", "localhost, 127.0.0.1", "--days", "2")
	if code != 0 {
		t.Fatalf("certs: exit %d, stderr %s", code, stderr)
	}
	for _, f := range []string{"ca.pem", "ca-key.pem", "localhost.pem", "localhost-key.pem", "127.0.0.1.pem", "127.0.0.1-key.pem"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil || !strings.Contains(stdout, filepath.Join(dir, f)) {
			t.Errorf("%s: %v; stdout:\n%s", f, err, stdout)
		}
	}
	if code, _, stderr = runLeague(t, nil, "certs", "--out", dir, "--hosts", "localhost"); code != 1 || !strings.Contains(stderr, "--force") {
		t.Errorf("second run: exit %d, stderr %q; want 1 naming --force", code, stderr)
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
		if code, _, stderr := runLeague(t, nil, append([]string{"certs"}, tc.args...)...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("certs %v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("bad command lines created %s (%v)", empty, err)
	}
}

// tlsFlags makes a CA and a certificate for 127.0.0.1 in dir with league certs, and
// returns the flags that serve with them.
func tlsFlags(t *testing.T, dir string) []string {
	t.Helper()
	if code, _, stderr := runLeague(t, nil, "certs", "--out", dir, "--hosts", "127.0.0.1"); code != 0 {
		t.Fatalf("certs: %s", stderr)
	}
	return []string{"--tls-cert", filepath.Join(dir, "127.0.0.1.pem"), "--tls-key", filepath.Join(dir, "127.0.0.1-key.pem")}
}

// league serve over TLS prints its https endpoint (or the advertised one), and the
// admin commands reach it trusting --tls-ca, not without.
func TestServeOverTLS(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	flags := tlsFlags(t, certs)
	p := startServe(t, dir, flags...)
	if !regexp.MustCompile(`^https://127\.0\.0\.1:\d+/mcp$`).MatchString(p.URL) {
		t.Fatalf("endpoint %s, want https://127.0.0.1:PORT/mcp", p.URL)
	}
	env := []string{"LEAGUE_ADMIN_TOKEN=" + proctest.AdminToken}
	ca := filepath.Join(certs, "ca.pem")
	code, stdout, stderr := runLeague(t, env, "standings", "--league", p.URL, "--tls-ca", ca, "--stats")
	if code != 0 || !strings.Contains(stdout, "state REGISTRATION") {
		t.Errorf("standings --tls-ca: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr = runLeague(t, env, "standings", "--league", p.URL)
	if code != 1 || !strings.Contains(stderr, "certificate") {
		t.Errorf("standings without --tls-ca: exit %d, stderr %q; want 1 and a certificate error", code, stderr)
	}
	p.Stop(syscall.SIGTERM)

	// Behind a proxy, the advertised endpoint is the one printed.
	p = startServe(t, t.TempDir(), append(flags, "--advertise", "https://league.example.org/mcp")...)
	if p.URL != "https://league.example.org/mcp" {
		t.Errorf("endpoint %s, want the advertised one", p.URL)
	}
	p.Stop(syscall.SIGTERM)
}

// league conform league-manager checks a League Manager served over TLS with a private
// CA when given --tls-ca, and without it says the certificate is not trusted and how to
// trust it.
func TestConformOverTLS(t *testing.T) {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	p := startServe(t, dir, tlsFlags(t, certs)...)
	args := []string{"conform", "league-manager", "--url", p.URL, "--listen", "127.0.0.1:0", "--json"}
	// Untrusted, nothing reaches the League Manager, which stays fresh for the run below.
	code, stdout, stderr := runLeague(t, nil, args...)
	rep := conformReport(t, stdout)
	if r := rep["lm.register.order"]; code != 1 || r.Status != "fail" || !strings.Contains(r.Reason, "certificate signed by unknown authority") || !strings.Contains(r.Reason, "--tls-ca") {
		t.Errorf("without --tls-ca: exit %d, lm.register.order %+v; want 1 and a certificate error naming --tls-ca; stderr:\n%s", code, r, stderr)
	}
	code, stdout, stderr = runLeague(t, []string{"LEAGUE_ADMIN_TOKEN=" + proctest.AdminToken}, append(args, "--tls-ca", filepath.Join(certs, "ca.pem"))...)
	rep = conformReport(t, stdout)
	for _, id := range []string{"lm.register.order", "lm.register.referee", "lm.register.player", "lm.league.start"} {
		if rep[id].Status != "pass" {
			t.Errorf("with --tls-ca: %s %+v, want pass", id, rep[id])
		}
	}
	if code != 0 {
		t.Errorf("with --tls-ca: exit %d, want 0; report:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

type conformResult struct{ ID, Status, Reason string }

// conformReport reads the results of league conform --json by check id.
func conformReport(t *testing.T, stdout string) map[string]conformResult {
	t.Helper()
	var doc struct{ Results []conformResult }
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("--json output is not one JSON document: %v\n%s", err, stdout)
	}
	out := map[string]conformResult{}
	for _, r := range doc.Results {
		out[r.ID] = r
	}
	return out
}

// league serve serves nothing, and league conform and start call nothing, over plain
// HTTP off loopback without --insecure: a bad command line (2), refused before anything
// is written; an unreadable --tls-ca is an error (1).
func TestRefusesPlainHTTPOffLoopback(t *testing.T) {
	dir := t.TempDir()
	serve := []string{"serve", "--config", proctest.ConfigPath(), "--db", filepath.Join(dir, "league.db"), "--log", filepath.Join(dir, "league.log")}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{append(serve, "--addr", "10.0.0.1:8000"), 2, "--addr 10.0.0.1:8000 serves plain http off loopback"},
		{append(serve, "--addr", "0.0.0.0:8000", "--insecure"), 2, "set --advertise"},
		{append(serve, "--advertise", "league:8000"), 2, `--advertise "league:8000" is not an absolute http(s) url`},
		{append(serve, "--tls-cert", "c.pem"), 2, "--tls-cert and --tls-key go together"},
		{[]string{"start", "--league", "http://10.0.0.1:8000/mcp"}, 2, "plain http off loopback: 10.0.0.1 is not loopback, so tokens would cross the network in clear; use an https:// url (the other side with --tls-cert and --tls-key) or pass --insecure"},
		{[]string{"conform", "league-manager", "--url", "http://10.0.0.1:8000/mcp"}, 2,
			"--url http://10.0.0.1:8000/mcp is plain http off loopback: 10.0.0.1 is not loopback, so tokens would cross the network in clear; use an https:// url"},
		{[]string{"conform", "player", "--listen", "10.0.0.1:8900"}, 2, "--listen 10.0.0.1:8900 serves plain http off loopback"},
		{[]string{"conform", "league-manager", "--url", "lm:8000"}, 2, `--url "lm:8000" is not an absolute http(s) url`},
		{[]string{"conform", "league-manager", "--url", "https://127.0.0.1:1/mcp", "--tls-ca", "/nonexistent/ca.pem"}, 1, "read tls ca"},
	} {
		code, stdout, stderr := runLeague(t, []string{"LEAGUE_ADMIN_TOKEN=" + proctest.AdminToken}, tc.args...)
		if code != tc.code || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("league %v: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, stdout, stderr, tc.code, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused command lines wrote %d files", len(entries))
	}
}
