package e2e

import (
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/proctest"
)

// network is three network namespaces on one bridge, as three machines on one LAN:
// the League Manager's, the referees' and the players'. The bridge lives in a fourth
// namespace, so the test touches nothing of the host's own network.
type network struct {
	lm, ref, pl string // namespace names
}

// Addresses of the three hosts.
const (
	lmIP  = "10.77.0.1"
	refIP = "10.77.0.2"
	plIP  = "10.77.0.3"
)

// needNetns skips the test when this machine cannot build network namespaces: that
// takes root and the ip command (iproute2) with netns support.
func needNetns(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces (ip netns add); run as root to run the league across namespaces")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs the ip command (iproute2) to create network namespaces")
	}
	probe := "al-probe-" + randomHex(t)
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("no network namespace support here: ip netns add: %v: %s", err, bytes.TrimSpace(out))
	}
	if out, err := exec.Command("ip", "netns", "del", probe).CombinedOutput(); err != nil {
		t.Fatalf("ip netns del %s: %v: %s", probe, err, out)
	}
}

func randomHex(t *testing.T) string {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// ipCmd runs ip with args and fails the test on error.
func ipCmd(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}

// newNetwork builds the namespaces with names unique to this run; t.Cleanup removes
// them (and with them every interface inside), also when the test fails half-way.
func newNetwork(t *testing.T) *network {
	t.Helper()
	id := randomHex(t)
	ns := func(role string) string {
		name := "al-" + id + "-" + role
		ipCmd(t, "netns", "add", name)
		t.Cleanup(func() {
			if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
				t.Errorf("remove namespace %s: %v: %s", name, err, out)
			}
		})
		return name
	}
	sw := ns("sw")
	n := &network{lm: ns("lm"), ref: ns("ref"), pl: ns("pl")}
	ipCmd(t, "-n", sw, "link", "add", "br0", "type", "bridge")
	ipCmd(t, "-n", sw, "link", "set", "br0", "up")
	for _, h := range []struct{ ns, port, ip string }{{n.lm, "lm", lmIP}, {n.ref, "ref", refIP}, {n.pl, "pl", plIP}} {
		// Each end is made inside its namespace: no name is taken in the host's.
		ipCmd(t, "link", "add", "eth0", "netns", h.ns, "type", "veth", "peer", "name", h.port, "netns", sw)
		ipCmd(t, "-n", sw, "link", "set", h.port, "master", "br0")
		ipCmd(t, "-n", sw, "link", "set", h.port, "up")
		ipCmd(t, "-n", h.ns, "addr", "add", h.ip+"/24", "dev", "eth0")
		ipCmd(t, "-n", h.ns, "link", "set", "eth0", "up")
		ipCmd(t, "-n", h.ns, "link", "set", "lo", "up")
	}
	return n
}

// in is the command line that runs bin with args inside namespace ns.
func in(ns, bin string, args ...string) []string {
	return append([]string{"netns", "exec", ns, bin}, args...)
}

// runIn runs bin inside ns to its end and returns its exit code and output.
func runIn(t *testing.T, env []string, ns, bin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return proctest.Run(t, "ip", env, in(ns, bin, args...)...)
}

// pollDB waits until query (one integer) returns want, or the League Manager exits.
func pollDB(t *testing.T, db *sql.DB, lm *proc, limit time.Duration, query string, want int) {
	t.Helper()
	deadline := time.Now().Add(limit)
	got := -1
	for time.Now().Before(deadline) {
		if err := db.QueryRow(query).Scan(&got); err == nil && got == want {
			return
		}
		select {
		case <-lm.done:
			t.Fatalf("league manager exited; stderr:\n%s", lm.out.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("%s: got %d after %v, want %d; league manager stderr:\n%s", query, got, limit, want, lm.out.String())
}

// A league across three hosts over TLS: the League Manager on 10.77.0.1, two referees on
// 10.77.0.2 (listening on every interface, advertising their address) and four players
// on 10.77.0.3, each with a certificate of `league certs` and trusting its CA; the
// league is started from the players' host and completes. Then plain HTTP off loopback
// is refused: by each command without --insecure, and by the League Manager at
// registration.
func TestLeagueAcrossNetworkNamespacesOverTLS(t *testing.T) {
	needNetns(t)
	begin := time.Now()
	n := newNetwork(t)
	dir := t.TempDir()
	league, referee, player := filepath.Join(binDir, "league"), filepath.Join(binDir, "referee"), filepath.Join(binDir, "player")
	certs := filepath.Join(dir, "certs")
	if out, err := exec.Command(league, "certs", "--out", certs, "--hosts", strings.Join([]string{lmIP, refIP, plIP}, ","), "--days", "1").CombinedOutput(); err != nil {
		t.Fatalf("league certs: %v\n%s", err, out)
	}
	ca := filepath.Join(certs, "ca.pem")
	tlsFlags := func(host string) []string {
		return []string{"--tls-cert", filepath.Join(certs, host+".pem"), "--tls-key", filepath.Join(certs, host+"-key.pem"), "--tls-ca", ca}
	}
	const token = "admin-token-for-the-netns-test"
	env := []string{"LEAGUE_ADMIN_TOKEN=" + token}
	dbPath, audit, logs := filepath.Join(dir, "league.db"), filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "logs")
	lmURL := "https://" + lmIP + ":8000/mcp"
	lm := startProc(t, "league", env, "ip", in(n.lm, league, append([]string{"serve", "--config", filepath.Join(moduleRoot(), "config", "league.yaml"),
		"--addr", lmIP + ":8000", "--advertise", lmURL, "--db", dbPath, "--audit", audit, "--log", filepath.Join(logs, "league_manager.log"),
		"--game", "tic_tac_toe", "--seed", "7", "--window", "3600"}, tlsFlags(lmIP)...)...)...)
	if lm.url != lmURL {
		t.Fatalf("league manager announces %s, want %s", lm.url, lmURL)
	}
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	var endpoints []string
	for i := 1; i <= 2; i++ {
		url := fmt.Sprintf("https://%s:800%d/mcp", refIP, i)
		endpoints = append(endpoints, url)
		startProc(t, fmt.Sprintf("ref%d", i), nil, "ip", in(n.ref, referee, append([]string{"--id", fmt.Sprintf("ref%d", i),
			"--addr", fmt.Sprintf("0.0.0.0:800%d", i), "--advertise", url, "--league", lmURL, "--log-dir", logs}, tlsFlags(refIP)...)...)...)
	}
	pollDB(t, db, lm, 20*time.Second, `SELECT count(*) FROM referees`, 2)
	for i := 1; i <= 4; i++ {
		url := fmt.Sprintf("https://%s:900%d/mcp", plIP, i)
		endpoints = append(endpoints, url)
		startProc(t, fmt.Sprintf("p%02d", i), nil, "ip", in(n.pl, player, append([]string{"--id", fmt.Sprintf("p%02d", i),
			"--addr", fmt.Sprintf("%s:900%d", plIP, i), "--advertise", url, "--league", lmURL, "--strategy", "random",
			"--seed", fmt.Sprint(i), "--log-dir", logs}, tlsFlags(plIP)...)...)...)
	}
	pollDB(t, db, lm, 20*time.Second, `SELECT count(*) FROM players`, 4)

	// A player told --insecure offers a plain-http endpoint off loopback: the League
	// Manager, not insecure, refuses it and stores nothing.
	code, _, stderr := runIn(t, nil, n.pl, player, append([]string{"--id", "p09", "--addr", plIP + ":9009", "--insecure",
		"--league", lmURL, "--log-dir", logs, "--register-for", "5s"}, "--tls-ca", ca)...)
	if code != 1 || !strings.Contains(stderr, "INSECURE_ENDPOINT") || !strings.Contains(stderr, "http://"+plIP+":9009/mcp is plain http off loopback") {
		t.Errorf("plain-http player: exit %d, stderr:\n%s\nwant exit 1 and the League Manager's INSECURE_ENDPOINT refusal", code, stderr)
	}

	// The admin starts the league from the players' host, over TLS.
	code, stdout, stderr := runIn(t, env, n.pl, league, "start", "--league", lmURL, "--tls-ca", ca)
	if code != 0 {
		t.Fatalf("league start: exit %d\n%s%s", code, stdout, stderr)
	}
	pollDB(t, db, lm, 90*time.Second, `SELECT count(*) FROM leagues WHERE status = 'COMPLETED'`, 1)
	t.Logf("league of 6 matches across 3 namespaces over TLS completed %v after the test began", time.Since(begin).Round(time.Millisecond))

	var matches, completed, players int
	if err := db.QueryRow(`SELECT count(*), count(*) FILTER (WHERE m.status = 'COMPLETED' AND r.match_id IS NOT NULL) FROM matches m LEFT JOIN match_results r ON r.match_id = m.match_id`).Scan(&matches, &completed); err != nil {
		t.Fatal(err)
	}
	if matches != 6 || completed != 6 {
		t.Errorf("%d matches, %d completed with a result; want 6 and 6 (4 players, round robin)", matches, completed)
	}
	if err := db.QueryRow(`SELECT count(*) FROM players`).Scan(&players); err != nil || players != 4 {
		t.Errorf("%d players stored (%v), want 4: the refused one is not", players, err)
	}
	rows, err := db.Query(`SELECT endpoint_url FROM referees UNION ALL SELECT endpoint_url FROM players ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, u)
	}
	rows.Close()
	if fmt.Sprint(stored) != fmt.Sprint(endpoints) {
		t.Errorf("stored endpoints %v, want the advertised %v", stored, endpoints)
	}
	code, stdout, stderr = runIn(t, env, n.ref, league, "standings", "--league", lmURL, "--tls-ca", ca)
	if code != 0 || !strings.Contains(stdout, "state COMPLETED") || strings.Count(stdout, "p0") != 4 {
		t.Errorf("league standings from the referees' host: exit %d\n%s%s", code, stdout, stderr)
	}
	checkReplayAndVerify(t, audit, dbPath)

	// Without TLS and without --insecure, plain HTTP off loopback is refused by each
	// command, before it listens or sends anything.
	for _, tc := range []struct {
		name, ns, bin string
		args          []string
		want          string
	}{
		{"league manager", n.lm, league, []string{"serve", "--config", filepath.Join(moduleRoot(), "config", "league.yaml"), "--addr", lmIP + ":8100",
			"--db", filepath.Join(dir, "plain", "league.db"), "--log", filepath.Join(dir, "plain", "lm.log")},
			"--addr " + lmIP + ":8100 serves plain http off loopback"},
		{"referee", n.ref, referee, []string{"--id", "ref9", "--addr", refIP + ":8109", "--league", lmURL, "--tls-ca", ca, "--log-dir", logs},
			"--addr " + refIP + ":8109 serves plain http off loopback"},
		{"referee on every interface", n.ref, referee, []string{"--id", "ref9", "--addr", "0.0.0.0:8109", "--league", lmURL, "--tls-ca", ca, "--log-dir", logs},
			"set --advertise"},
		{"player calling plain http", n.pl, player, []string{"--id", "p09", "--addr", "127.0.0.1:0", "--league", "http://" + lmIP + ":8000/mcp", "--log-dir", logs},
			"--league http://" + lmIP + ":8000/mcp is plain http off loopback"},
		{"player advertising plain http", n.pl, player, []string{"--id", "p09", "--addr", "127.0.0.1:9009", "--advertise", "http://" + plIP + ":9009/mcp",
			"--league", lmURL, "--tls-ca", ca, "--log-dir", logs}, "--advertise http://" + plIP + ":9009/mcp is plain http off loopback"},
	} {
		code, stdout, stderr := runIn(t, nil, tc.ns, tc.bin, tc.args...)
		if code != 2 || strings.Contains(stdout, "listening") || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.name, code, stdout, stderr, tc.want)
		}
		if strings.Contains(tc.want, "plain http") && !strings.Contains(stderr, "or pass --insecure") {
			t.Errorf("%s: stderr %q does not say how to allow it (--insecure)", tc.name, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "plain", "league.db")); err == nil {
		t.Error("the refused League Manager created a database")
	}
	t.Logf("whole test: %v", time.Since(begin).Round(time.Millisecond))
}
