package e2e

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// natLeague is a league whose outbound agents sit behind NAT: in a namespace that reaches
// the League Manager while nothing can reach it.
type natLeague struct {
	// ours, python and node are outbound players: ours and the examples'.
	ours, python, node int
	// ordinary players listen on an open host, as usual.
	ordinary int
	// cuts is how many times, at random moments of play, every connection from the
	// agents' namespace to the League Manager is closed (ss -K).
	cuts int
}

// Agents behind NAT play by connecting out: the outbound players (ours and the Python
// and Node examples) and both referees can open connections to the League Manager but
// accept none, while ordinary players listen on an open host. Connections are cut mid-
// play; the agents reconnect and play on. Every pair plays exactly once, no match ends
// in a forfeit, verify and replay --check pass, and every agent leaves on LEAGUE_SHUTDOWN.
func TestOutboundAgentsBehindNAT(t *testing.T) {
	playBehindNAT(t, natLeague{ours: 3, python: 1, node: 1, ordinary: 2, cuts: 5})
}

// natThink is how long our players think a move: play lasts long enough for the cuts to
// fall in the middle of matches.
const natThink = "50ms"

func playBehindNAT(t *testing.T, o natLeague) {
	needNetns(t)
	nft, err := exec.LookPath("nft")
	if err != nil {
		t.Skip("needs nft (Debian's nftables, which make deps installs) to drop inbound connections")
	}
	begin := time.Now()
	n := newNetwork(t)
	agents, open := n.pl, n.ref // the NAT'd namespace, and an ordinary host
	// The agents' namespace takes the answers to its own connections and its own
	// loopback traffic, and drops every connection from outside.
	cmd := exec.Command("ip", "netns", "exec", agents, nft, "-f", "-")
	cmd.Stdin = strings.NewReader(`table inet nat_sim {
  chain input {
    type filter hook input priority 0; policy accept;
    ct state established,related accept
    iifname "lo" accept
    ct state new drop
  }
}
`)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nft: %v: %s", err, out)
	}
	proveUnreachable(t, n, agents)

	dir := t.TempDir()
	league, referee, player := filepath.Join(binDir, "league"), filepath.Join(binDir, "referee"), filepath.Join(binDir, "player")
	const token = "admin-token-for-the-nat-test"
	env := []string{"LEAGUE_ADMIN_TOKEN=" + token}
	dbPath, audit, logs := filepath.Join(dir, "league.db"), filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "logs")
	lmURL := "http://" + lmIP + ":8000/mcp"
	// Plain HTTP off loopback (--insecure) keeps the examples simple; TLS across hosts
	// has its own test.
	lm := startProc(t, "league", env, "ip", in(n.lm, league, "serve", "--config", filepath.Join(moduleRoot(), "config", "league.yaml"),
		"--addr", lmIP+":8000", "--insecure", "--db", dbPath, "--audit", audit, "--log", filepath.Join(logs, "league_manager.log"),
		"--game", "tic_tac_toe", "--seed", "11", "--window", "3600")...)
	db, err := sql.Open("sqlite3", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	var outbound []*proc
	for i := 1; i <= 2; i++ {
		outbound = append(outbound, startProc(t, fmt.Sprintf("ref%d", i), nil, "ip", in(agents, referee, "--id", fmt.Sprintf("ref%d", i),
			"--outbound", "--insecure", "--league", lmURL, "--max-matches", "4", "--log-dir", logs)...))
	}
	pollDB(t, db, lm, 20*time.Second, `SELECT count(*) FROM referees`, 2)
	for i := 1; i <= o.ours; i++ {
		outbound = append(outbound, startProc(t, fmt.Sprintf("o%02d", i), nil, "ip", in(agents, player, "--id", fmt.Sprintf("o%02d", i),
			"--outbound", "--insecure", "--league", lmURL, "--seed", fmt.Sprint(i), "--think", natThink, "--log-dir", logs)...))
	}
	for i := 1; i <= o.python; i++ {
		outbound = append(outbound, startProc(t, fmt.Sprintf("py%d", i), nil, "ip", in(agents, "python3",
			filepath.Join(moduleRoot(), "examples", "python", "tic_tac_toe_player.py"), "--id", fmt.Sprintf("py%d", i), "--outbound", "--league", lmURL)...))
	}
	for i := 1; i <= o.node; i++ {
		outbound = append(outbound, startProc(t, fmt.Sprintf("js%d", i), nil, "ip", in(agents, "node",
			filepath.Join(moduleRoot(), "examples", "node", "tic_tac_toe_player.js"), "--id", fmt.Sprintf("js%d", i), "--outbound", "--league", lmURL)...))
	}
	var ordinary []*proc
	for i := 1; i <= o.ordinary; i++ {
		ordinary = append(ordinary, startProc(t, fmt.Sprintf("d%02d", i), nil, "ip", in(open, player, "--id", fmt.Sprintf("d%02d", i),
			"--addr", fmt.Sprintf("%s:%d", refIP, 9100+i), "--insecure", "--league", lmURL, "--seed", fmt.Sprint(100+i), "--think", natThink, "--log-dir", logs)...))
	}
	players := o.ours + o.python + o.node + o.ordinary
	pollDB(t, db, lm, 30*time.Second, `SELECT count(*) FROM players`, players)
	var relayed int
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT endpoint_url FROM players UNION ALL SELECT endpoint_url FROM referees) WHERE endpoint_url LIKE ?`,
		"http://"+lmIP+":8000/relay/%").Scan(&relayed); err != nil || relayed != players-o.ordinary+2 {
		t.Fatalf("%d agents registered on the relay (%v), want %d", relayed, err, players-o.ordinary+2)
	}

	if code, stdout, stderr := runIn(t, env, agents, league, "start", "--league", lmURL, "--insecure"); code != 0 {
		t.Fatalf("league start: exit %d\n%s%s", code, stdout, stderr)
	}
	// Cut every connection of the agents to the League Manager at random moments while
	// the league plays.
	played := make(chan struct{})
	var cutter sync.WaitGroup
	var killed, cuts int
	cutter.Go(func() {
		for cuts < o.cuts {
			select {
			case <-played:
				return
			case <-time.After(time.Duration(100+rand.IntN(300)) * time.Millisecond):
			}
			out, err := exec.Command("ip", "netns", "exec", agents, "ss", "-tnK", "dst", lmIP).CombinedOutput()
			if err != nil {
				t.Errorf("ss -K: %v: %s", err, out)
				return
			}
			cuts++
			killed += bytes.Count(out, []byte("ESTAB"))
		}
	})
	pollDB(t, db, lm, 5*time.Minute, `SELECT count(*) FROM leagues WHERE status = 'COMPLETED'`, 1)
	close(played)
	cutter.Wait()
	t.Logf("%d players (%d outbound, %d ordinary) and 2 outbound referees: the league completed %v after the test began; %d cuts closed %d connections",
		players, players-o.ordinary, o.ordinary, time.Since(begin).Round(time.Millisecond), cuts, killed)
	if o.cuts > 0 && killed == 0 {
		t.Errorf("%d cuts closed no connection: the test cut nothing", cuts)
	}
	checkEveryPairOnce(t, db, players)
	checkReplayAndVerify(t, audit, dbPath)

	// LEAGUE_SHUTDOWN reaches the outbound agents through the relay: each leaves by itself.
	if code := lm.stop(t); code != 0 {
		t.Errorf("league manager exit %d; stderr:\n%s", code, lm.out.String())
	}
	for _, p := range append(outbound, ordinary...) {
		select {
		case <-p.done:
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s left with exit %d; stderr:\n%s", p.name, code, p.out.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not leave on LEAGUE_SHUTDOWN", p.name)
		}
	}
}

// proveUnreachable shows that the agents' namespace refuses connections from outside:
// a listener there is reached from inside and not from the League Manager's host.
func proveUnreachable(t *testing.T, n *network, agents string) {
	t.Helper()
	addr := fmt.Sprintf("('%s', 9999)", plIP)
	listener := exec.Command("ip", "netns", "exec", agents, "python3", "-c",
		"import socket\ns = socket.socket()\ns.bind("+addr+")\ns.listen()\nwhile True: s.accept()[0].close()")
	if err := listener.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = listener.Process.Kill()
		_ = listener.Wait()
	}()
	connect := "import socket\nsocket.create_connection(" + addr + ", timeout=3)"
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if exec.Command("ip", "netns", "exec", agents, "python3", "-c", connect).Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the listener in the agents' namespace never answered from inside")
		}
	}
	if exec.Command("ip", "netns", "exec", n.lm, "python3", "-c", connect).Run() == nil {
		t.Fatal("the League Manager's host reached a listener in the agents' namespace: inbound connections are not dropped")
	}
}

// checkEveryPairOnce checks a completed round robin of players: every pair met in
// exactly one match with exactly one result, and no match ended otherwise than by
// play (no forfeit, no timeout, no technical loss).
func checkEveryPairOnce(t *testing.T, db *sql.DB, players int) {
	t.Helper()
	rows, err := db.Query(`SELECT m.players, r.outcome, coalesce(json_extract(r.game_metadata, '$.termination'), ''),
		coalesce(json_array_length(json_extract(r.game_metadata, '$.violations')), 0)
		FROM matches m LEFT JOIN match_results r ON r.match_id = m.match_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	met := map[string]int{}
	var violations int
	for rows.Next() {
		var ids, termination string
		var outcome sql.NullString
		var v int
		if err := rows.Scan(&ids, &outcome, &termination, &v); err != nil {
			t.Fatal(err)
		}
		var pair []string
		if err := json.Unmarshal([]byte(ids), &pair); err != nil || len(pair) != 2 {
			t.Fatalf("match players %q: %v", ids, err)
		}
		slices.Sort(pair)
		key := strings.Join(pair, "-")
		switch {
		case !outcome.Valid:
			t.Errorf("match of %s has no result", key)
		case termination != "normal":
			t.Errorf("match of %s ended %q, not by play", key, termination)
		}
		met[key]++
		violations += v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for pair, k := range met {
		if k != 1 {
			t.Errorf("%s met %d times", pair, k)
		}
	}
	if want := players * (players - 1) / 2; len(met) != want {
		t.Errorf("%d pairs met, want %d", len(met), want)
	}
	t.Logf("%d matches, each pair once; %d violations recorded", len(met), violations)
}
