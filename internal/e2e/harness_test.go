// Package e2e runs whole leagues with the real binaries as separate processes on
// loopback ports and checks what they leave behind: the database, the audit log and
// the standings.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/protocol"
	_ "github.com/mattn/go-sqlite3"
)

// binDir holds league, referee and player built once for the package.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentleague-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	root := moduleRoot()
	for _, name := range []string{"league", "referee", "player"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", name, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// proc is a child process whose first stdout line announces its endpoint.
type proc struct {
	name string
	cmd  *exec.Cmd
	url  string
	out  *bytes.Buffer
	done chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

// startProc starts bin and waits for its "listening on URL" line.
func startProc(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// Every process also checks what it sends, so a message our code gets wrong fails
	// where it is made.
	cmd.Env = append(append(os.Environ(), protocol.SelfCheckEnv+"=1"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: &stderr.Buffer, done: make(chan struct{})}
	lines := make(chan string, 1)
	// The reader ends at the child's exit (stdout closes).
	go func() {
		r := bufio.NewReader(stdout)
		first, _ := r.ReadString('\n')
		lines <- first
		_, _ = io.Copy(io.Discard, r)
	}()
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	select {
	case line := <-lines:
		// An outbound agent listens on nothing: its line names the League Manager it
		// polls, and url is that.
		_, url, ok := strings.Cut(line, "listening on ")
		if !ok {
			_, url, ok = strings.Cut(line, " outbound through ")
		}
		if !ok {
			t.Fatalf("%s: unexpected first line %q; stderr:\n%s", name, line, stderr.String())
		}
		p.url = strings.TrimSpace(url)
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not start; stderr:\n%s", name, stderr.String())
	}
	return p
}

// stop ends the process with SIGTERM (SIGKILL after a grace period) and returns its exit code.
func (p *proc) stop(t *testing.T) int {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s ignored SIGTERM; killing it", p.name)
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) base() string { return strings.TrimSuffix(p.url, "/mcp") }

// leagueOpts describes one league run.
type leagueOpts struct {
	players, referees int
	game, strategy    string
	seed              int64
	extraPlayers      func(t *testing.T, lmURL string) int // starts other players, returns how many
	extraReferees     func(t *testing.T, lmURL string) int // starts other referees, returns how many
	maxMatches        int
	// config is a league.yaml to use instead of the repository's.
	config string
	// faults gives some players a --fault mode, by player id.
	faults map[string]string
	// hold registers everyone but does not start the league.
	hold bool
	// playerArgs and playerEnv add command-line flags and environment to some players.
	playerArgs map[string][]string
	playerEnv  map[string][]string
}

// leagueRun is a league and where its files are.
type leagueRun struct {
	dir, db, audit string
	lm             *proc
	lmArgs         []string
	token          string
	refs, players  []*proc
	elapsed        time.Duration
	started        time.Time
	playerIDs      []string
}

func runLeague(t *testing.T, o leagueOpts) *leagueRun {
	t.Helper()
	run := startLeague(t, o)
	run.waitCompleted(t, 120*time.Second)
	return run
}

// startLeague starts every process, waits for the registrations and starts the league.
func startLeague(t *testing.T, o leagueOpts) *leagueRun {
	t.Helper()
	if o.game == "" {
		o.game = "tic_tac_toe"
	}
	if o.strategy == "" {
		o.strategy = "random"
	}
	if o.maxMatches == 0 {
		o.maxMatches = 1
	}
	if o.config == "" {
		o.config = filepath.Join(moduleRoot(), "config", "league.yaml")
	}
	dir := t.TempDir()
	run := &leagueRun{dir: dir, db: filepath.Join(dir, "league.db"), audit: filepath.Join(dir, "audit.jsonl"), token: "admin-token-for-tests"}
	logs := filepath.Join(dir, "logs")
	run.lmArgs = []string{"serve", "--config", o.config, "--addr", "127.0.0.1:0", "--db", run.db, "--audit", run.audit,
		"--log", filepath.Join(logs, "league_manager.log"), "--game", o.game, "--seed", fmt.Sprint(o.seed), "--window", "3600"}
	run.lm = startProc(t, "league", []string{"LEAGUE_ADMIN_TOKEN=" + run.token}, filepath.Join(binDir, "league"), run.lmArgs...)
	// A restart must come back on the same address, which the agents know.
	run.lmArgs[4] = strings.TrimPrefix(run.lm.base(), "http://")
	for i := 1; i <= o.referees; i++ {
		run.refs = append(run.refs, startProc(t, fmt.Sprintf("ref%d", i), nil, filepath.Join(binDir, "referee"),
			"--id", fmt.Sprintf("ref%d", i), "--addr", "127.0.0.1:0", "--league", run.lm.url, "--log-dir", logs,
			"--max-matches", fmt.Sprint(o.maxMatches)))
	}
	referees := o.referees
	if o.extraReferees != nil {
		referees += o.extraReferees(t, run.lm.url)
	}
	waitStatus(t, run.lm, 20*time.Second, func(s statusDoc) bool { return s.Referees == referees })
	for i := 1; i <= o.players; i++ {
		id := fmt.Sprintf("p%02d", i)
		run.playerIDs = append(run.playerIDs, id)
		args := []string{"--id", id, "--addr", "127.0.0.1:0", "--league", run.lm.url, "--strategy", o.strategy, "--seed", fmt.Sprint(int64(i) + o.seed), "--log-dir", logs}
		if f := o.faults[id]; f != "" {
			args = append(args, "--fault", f)
		}
		args = append(args, o.playerArgs[id]...)
		run.players = append(run.players, startProc(t, id, o.playerEnv[id], filepath.Join(binDir, "player"), args...))
	}
	total := o.players
	if o.extraPlayers != nil {
		total += o.extraPlayers(t, run.lm.url)
	}
	waitStatus(t, run.lm, 20*time.Second, func(s statusDoc) bool { return s.Players == total })
	run.started = time.Now()
	if !o.hold {
		run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	}
	return run
}

func (r *leagueRun) waitCompleted(t *testing.T, limit time.Duration) {
	t.Helper()
	waitStatus(t, r.lm, limit, func(s statusDoc) bool { return s.State == "COMPLETED" })
	r.elapsed = time.Since(r.started)
}

// killLM ends the League Manager with SIGKILL: no chance to clean up.
func (r *leagueRun) killLM(t *testing.T) {
	t.Helper()
	_ = r.lm.cmd.Process.Kill()
	<-r.lm.done
}

// restartLM starts the League Manager again on the same database, log and address.
func (r *leagueRun) restartLM(t *testing.T) {
	t.Helper()
	r.lm = startProc(t, "league-restarted", []string{"LEAGUE_ADMIN_TOKEN=" + r.token}, filepath.Join(binDir, "league"), r.lmArgs...)
}

type statusDoc struct {
	State           string         `json:"state"`
	Referees        int            `json:"referees"`
	Players         int            `json:"players"`
	CurrentRound    int            `json:"current_round"`
	TotalRounds     int            `json:"total_rounds"`
	MatchesTotal    int            `json:"matches_total"`
	MatchesByStatus map[string]int `json:"matches_by_status"`
}

func getStatus(p *proc) (statusDoc, error) {
	var s statusDoc
	res, err := http.Get(p.base() + "/status")
	if err != nil {
		return s, err
	}
	defer res.Body.Close()
	return s, json.NewDecoder(res.Body).Decode(&s)
}

// waitStatus polls GET /status until cond holds.
func waitStatus(t *testing.T, p *proc, limit time.Duration, cond func(statusDoc) bool) statusDoc {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last statusDoc
	for time.Now().Before(deadline) {
		s, err := getStatus(p)
		if err == nil {
			last = s
			if cond(s) {
				return s
			}
		}
		select {
		case <-p.done:
			t.Fatalf("league manager exited; stderr:\n%s", p.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("condition not reached in %v; last status %+v", limit, last)
	return last
}

// admin sends an admin message and returns the answer's payload.
func (r *leagueRun) admin(t *testing.T, messageType string, payload any) json.RawMessage {
	t.Helper()
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	c := protocol.NewClient(v, nil)
	defer c.Close()
	msg, err := protocol.NewMessage(messageType, protocol.SenderAdmin, payload)
	if err != nil {
		t.Fatal(err)
	}
	msg.Envelope.AuthToken = r.token
	ans, err := c.Call(context.Background(), r.lm.url, msg, protocol.CallOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("%s: %v", messageType, err)
	}
	return ans.Payload
}

// standings are the live standings without their suspension marks, which a recount of
// the results cannot know.
func (r *leagueRun) standings(t *testing.T) []protocol.StandingsRow {
	t.Helper()
	var p protocol.Standings
	if err := json.Unmarshal(r.admin(t, protocol.QueryStandings, map[string]any{}), &p); err != nil {
		t.Fatal(err)
	}
	for i := range p.Standings {
		p.Standings[i].Suspended = false
	}
	return p.Standings
}

func (r *leagueRun) openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+r.db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// checkLeague asserts what every completed league must satisfy, and returns the
// standings a recount of its results gives.
func (r *leagueRun) checkLeague(t *testing.T, cycles int) []protocol.StandingsRow {
	t.Helper()
	db := r.openDB(t)
	ids := r.allPlayers(t, db)
	n := len(ids)
	rows, err := db.Query(`SELECT m.match_id, m.players, m.status, r.outcome, r.points FROM matches m LEFT JOIN match_results r ON r.match_id = m.match_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	pairs := map[string]int{}
	var results []standings.Result
	count := 0
	for rows.Next() {
		var id, players, status string
		var outcome, points sql.NullString
		if err := rows.Scan(&id, &players, &status, &outcome, &points); err != nil {
			t.Fatal(err)
		}
		count++
		if status != "COMPLETED" || !outcome.Valid {
			t.Errorf("match %s is %s with result %v", id, status, outcome.Valid)
			continue
		}
		var ps []string
		_ = json.Unmarshal([]byte(players), &ps)
		key := ps[0] + "|" + ps[1]
		if ps[0] > ps[1] {
			key = ps[1] + "|" + ps[0]
		}
		pairs[key]++
		var res standings.Result
		_ = json.Unmarshal([]byte(outcome.String), &res.Outcomes)
		_ = json.Unmarshal([]byte(points.String), &res.Points)
		results = append(results, res)
	}
	if want := cycles * n * (n - 1) / 2; count != want {
		t.Errorf("got %d matches, want %d", count, want)
	}
	for i := range ids {
		for j := i + 1; j < n; j++ {
			if got := pairs[ids[i]+"|"+ids[j]]; got != cycles {
				t.Errorf("pair %s-%s played %d times, want %d", ids[i], ids[j], got, cycles)
			}
		}
	}
	want, err := standings.Recount(ids, results)
	if err != nil {
		t.Fatal(err)
	}
	got := r.standings(t)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("standings do not agree with a recount of the results:\n got %v\nwant %v", got, want)
	}
	var byes int
	if err := db.QueryRow(`SELECT count(*) FROM byes`).Scan(&byes); err != nil {
		t.Fatal(err)
	}
	if n%2 == 1 && byes != cycles*n {
		t.Errorf("got %d byes, want %d (one per player per cycle)", byes, cycles*n)
	}
	if n%2 == 0 && byes != 0 {
		t.Errorf("got %d byes with an even player count", byes)
	}
	r.checkAudit(t, db)
	checkReplayAndVerify(t, r.audit, r.db)
	return want
}

func (r *leagueRun) allPlayers(t *testing.T, db *sql.DB) []string {
	rows, err := db.Query(`SELECT player_id FROM players ORDER BY player_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	return ids
}

// checkAudit verifies the hash chain, that no token is in the log, and that every
// audited message satisfies its schema.
func (r *leagueRun) checkAudit(t *testing.T, db *sql.DB) {
	t.Helper()
	data, err := os.ReadFile(r.audit)
	if err != nil {
		t.Fatal(err)
	}
	tokens := []string{r.token}
	rows, err := db.Query(`SELECT auth_token FROM players UNION ALL SELECT auth_token FROM referees`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var tok string
		_ = rows.Scan(&tok)
		tokens = append(tokens, tok)
	}
	rows.Close()
	for _, tok := range tokens {
		if bytes.Contains(data, []byte(tok)) {
			t.Errorf("the audit log contains a token")
		}
	}
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	kinds := map[string]int{}
	for i, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var e struct {
			Direction string          `json:"direction"`
			PrevHash  string          `json:"prev_hash"`
			Message   json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("audit line %d: %v", i+1, err)
		}
		if e.PrevHash != prev {
			t.Fatalf("audit line %d: prev_hash %q, want %q", i+1, e.PrevHash, prev)
		}
		h := sha256.Sum256(line)
		prev = hex.EncodeToString(h[:])
		var rpc struct {
			Params *protocol.Message `json:"params"`
			Result *protocol.Message `json:"result"`
		}
		_ = json.Unmarshal(unredact(e.Message), &rpc)
		m := rpc.Params
		if m == nil {
			m = rpc.Result
		}
		if m == nil {
			continue
		}
		kinds[m.Envelope.MessageType]++
		if err := v.ValidateMessage(m); err != nil {
			t.Errorf("audit line %d: %v", i+1, err)
		}
	}
	for _, k := range []string{protocol.RegisterRefereeRequest, protocol.RegisterPlayerResponse, protocol.MatchAssignment, protocol.MatchAssignmentAck, protocol.MatchResultReport, protocol.MatchResultAck} {
		if kinds[k] == 0 {
			t.Errorf("the audit log has no %s", k)
		}
	}
}

// unredact puts schema-valid stand-ins where the audit log redacted secrets, so the
// messages can be validated.
func unredact(raw json.RawMessage) json.RawMessage {
	s := string(raw)
	s = strings.ReplaceAll(s, `"auth_token":"[REDACTED]"`, `"auth_token":"00000000-0000-4000-8000-000000000000"`)
	s = strings.ReplaceAll(s, `"match_credentials":"[REDACTED]"`, `"match_credentials":{"a":"`+strings.Repeat("0", 64)+`","b":"`+strings.Repeat("0", 64)+`"}`)
	return json.RawMessage(s)
}
