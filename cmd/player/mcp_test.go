package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/player/mcpgw"
	"github.com/agentleague/agentleague/protocol"
	_ "github.com/mattn/go-sqlite3"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// inspector is the independent MCP client of the end-to-end tests, run through npx.
const inspector = "@modelcontextprotocol/inspector@2.12.0"

// needNpx fails, not skips, the test when npx is missing: these tests are part of the
// suite (.ci/deps.sh installs nodejs and npm).
func needNpx(t *testing.T) string {
	t.Helper()
	npx, err := exec.LookPath("npx")
	if err != nil {
		t.Fatalf("npx is not installed, and this test runs an MCP client from npm: install nodejs and npm (make deps): %v", err)
	}
	return npx
}

// buildAll builds league, referee and player into a folder of the test.
func buildAll(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(moduleDir(), "..", "..")
	for _, name := range []string{"league", "referee", "player"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name), "./cmd/"+name)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, out)
		}
	}
	return dir
}

func moduleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// proc is a child process whose first stdout line ends with "listening on URL".
type proc struct {
	name string
	cmd  *exec.Cmd
	url  string
	errs *lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startProc starts bin and waits for its listening line; the process is stopped with
// SIGTERM when the test ends.
func startProc(t *testing.T, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), protocol.SelfCheckEnv+"=1"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, errs: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.errs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	lines := make(chan string, 1)
	// Reads until the child's stdout closes at its exit.
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
		_, url, ok := strings.Cut(line, "listening on ")
		if !ok {
			t.Fatalf("%s: first line %q; stderr:\n%s", name, line, p.errs)
		}
		p.url = strings.TrimSpace(url)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start; stderr:\n%s", name, p.errs)
	}
	return p
}

// stop ends the process with SIGTERM and returns its exit code.
func (p *proc) stop(t *testing.T) int {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			t.Errorf("%s ignored SIGTERM; killing it", p.name)
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	return p.cmd.ProcessState.ExitCode()
}

// leagueStatus is the part of the League Manager's GET /status the tests read.
type leagueStatus struct {
	State    string `json:"state"`
	Referees int    `json:"referees"`
	Players  int    `json:"players"`
}

func waitStatus(t *testing.T, lm *proc, limit time.Duration, cond func(leagueStatus) bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var last leagueStatus
	for time.Now().Before(deadline) {
		res, err := http.Get(strings.TrimSuffix(lm.url, "/mcp") + "/status")
		if err == nil {
			err = json.NewDecoder(res.Body).Decode(&last)
			res.Body.Close()
			if err == nil && cond(last) {
				return
			}
		}
		select {
		case <-lm.done:
			t.Fatalf("league manager exited; stderr:\n%s", lm.errs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("condition not reached in %v; last status %+v", limit, last)
}

// admin sends an admin message to the League Manager and returns the answer's payload.
func admin(t *testing.T, lm *proc, token, messageType string, payload any) json.RawMessage {
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
	msg.Envelope.AuthToken = token
	ans, err := c.Call(context.Background(), lm.url, msg, protocol.CallOptions{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("%s: %v", messageType, err)
	}
	return ans.Payload
}

// runInspector runs the MCP Inspector's CLI against url and returns its stdout.
func runInspector(t *testing.T, npx, url string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npx, append([]string{"-y", inspector, "--cli", url, "--transport", "http"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("inspector %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// script plays one MCP session's seat until the league ends: the first legal move each
// turn, after one illegal try in its first turn. It returns how its matches ended.
func script(ctx context.Context, url, id string) ([]mcpgw.GameOver, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	c := sdk.NewClient(&sdk.Implementation{Name: "script-" + id, Version: "v0"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	tool := func(name string, args map[string]any, out any) (string, error) {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			return res.Content[0].(*sdk.TextContent).Text, nil
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return "", err
		}
		return "", json.Unmarshal(b, out)
	}
	var j mcpgw.JoinOutput
	if msg, err := tool("join_league", map[string]any{"player_id": id}, &j); msg != "" || err != nil {
		return nil, fmt.Errorf("join_league: %s %v", msg, err)
	}
	var over []mcpgw.GameOver
	tried := false
	for {
		var w mcpgw.WaitResult
		if msg, err := tool("wait_for_turn", map[string]any{"timeout_s": 30}, &w); msg != "" || err != nil {
			return over, fmt.Errorf("wait_for_turn: %s %v", msg, err)
		}
		switch w.Status {
		case mcpgw.StatusYourTurn:
			if !tried {
				tried = true
				if msg, err := tool("make_move", map[string]any{"move": "9,9"}, &mcpgw.MoveResult{}); err != nil || !strings.Contains(msg, "illegal move") {
					return over, fmt.Errorf("an illegal move was not refused: %q %v", msg, err)
				}
			}
			if msg, err := tool("make_move", map[string]any{"move": w.Turn.LegalMoves[0]}, &mcpgw.MoveResult{}); msg != "" || err != nil {
				return over, fmt.Errorf("make_move: %s %v", msg, err)
			}
		case mcpgw.StatusGameOver:
			over = append(over, *w.GameOver)
		case mcpgw.StatusLeagueOver:
			return over, nil
		}
	}
}

// TestMCPLeague: a league of the real binaries where two of four players are MCP sessions
// driven by a script through the gateway; the MCP Inspector's CLI, an independent client,
// lists the tools and reads the standings.
func TestMCPLeague(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and runs a league")
	}
	npx := needNpx(t)
	bin := buildAll(t)
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	const token = "admin-token-for-tests"
	db := filepath.Join(dir, "league.db")
	lm := startProc(t, "league", []string{"LEAGUE_ADMIN_TOKEN=" + token}, filepath.Join(bin, "league"), "serve",
		"--config", filepath.Join(moduleDir(), "..", "..", "config", "league.yaml"), "--addr", "127.0.0.1:0", "--db", db,
		"--audit", filepath.Join(dir, "audit.jsonl"), "--log", filepath.Join(logs, "league_manager.log"), "--game", "tic_tac_toe", "--seed", "1", "--window", "3600")
	startProc(t, "ref1", nil, filepath.Join(bin, "referee"), "--id", "ref1", "--addr", "127.0.0.1:0", "--league", lm.url, "--log-dir", logs, "--max-matches", "2")
	waitStatus(t, lm, 30*time.Second, func(s leagueStatus) bool { return s.Referees == 1 })
	for _, id := range []string{"p01", "p02"} {
		startProc(t, id, nil, filepath.Join(bin, "player"), "--id", id, "--addr", "127.0.0.1:0", "--league", lm.url, "--strategy", "random", "--log-dir", logs)
	}
	gw := startProc(t, "gateway", nil, filepath.Join(bin, "player"), "mcp", "--addr", "127.0.0.1:0", "--league", lm.url, "--log-dir", logs)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	type outcome struct {
		id   string
		over []mcpgw.GameOver
		err  error
	}
	results := make(chan outcome, 2)
	for _, id := range []string{"p03", "p04"} {
		go func() {
			over, err := script(ctx, gw.url, id)
			results <- outcome{id, over, err}
		}()
	}
	waitStatus(t, lm, 30*time.Second, func(s leagueStatus) bool { return s.Players == 4 })

	out := runInspector(t, npx, gw.url, "--method", "tools/list")
	for _, name := range []string{"join_league", "wait_for_turn", "make_move", "get_standings", "get_match", "leave_league"} {
		if !strings.Contains(out, `"name": "`+name+`"`) {
			t.Errorf("the inspector's tools/list lacks %s:\n%s", name, out)
		}
	}
	admin(t, lm, token, protocol.AdminStartLeagueRequest, map[string]any{})
	waitStatus(t, lm, 3*time.Minute, func(s leagueStatus) bool { return s.State == "COMPLETED" })

	// The inspector's session holds no seat: it reads the table through the gateway.
	out = runInspector(t, npx, gw.url, "--method", "tools/call", "--tool-name", "get_standings")
	var viaInspector struct {
		StructuredContent mcpgw.StandingsOutput `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(out), &viaInspector); err != nil {
		t.Fatalf("the inspector's get_standings: %v\n%s", err, out)
	}
	table := viaInspector.StructuredContent
	if !table.Final || len(table.Standings) != 4 {
		t.Errorf("standings through the inspector: %+v, want the final table of 4", table)
	}
	want := recount(t, db)
	if fmt.Sprint(table.Standings) != fmt.Sprint(want) {
		t.Errorf("standings through the inspector do not agree with a recount of the results:\n got %v\nwant %v", table.Standings, want)
	}

	// LEAGUE_SHUTDOWN ends the scripts: each saw its three matches end.
	admin(t, lm, token, protocol.AdminShutdownRequest, map[string]any{"reason": "test over"})
	for range 2 {
		r := <-results
		if r.err != nil {
			t.Errorf("script %s: %v", r.id, r.err)
			continue
		}
		var row protocol.StandingsRow
		for _, s := range want {
			if s.PlayerID == r.id {
				row = s
			}
		}
		counts := map[string]int{}
		for _, o := range r.over {
			counts[o.Outcome]++
		}
		if len(r.over) != 3 || counts["win"] != row.Wins || counts["draw"] != row.Draws || counts["loss"] != row.Losses {
			t.Errorf("script %s saw %d matches end (%v); the standings say %+v", r.id, len(r.over), counts, row)
		}
	}
	if code := gw.stop(t); code != 0 {
		t.Errorf("gateway exit code %d; stderr:\n%s", code, gw.errs)
	}
}

// recount is the table the results in the database give.
func recount(t *testing.T, path string) []protocol.StandingsRow {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT m.players, r.outcome, r.points FROM matches m JOIN match_results r ON r.match_id = m.match_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var results []standings.Result
	var ids []string
	for rows.Next() {
		var players, outcomes, points string
		if err := rows.Scan(&players, &outcomes, &points); err != nil {
			t.Fatal(err)
		}
		var ps []string
		var res standings.Result
		if json.Unmarshal([]byte(players), &ps) != nil || json.Unmarshal([]byte(outcomes), &res.Outcomes) != nil || json.Unmarshal([]byte(points), &res.Points) != nil {
			t.Fatalf("result row %s %s %s", players, outcomes, points)
		}
		results = append(results, res)
		ids = append(ids, ps...)
	}
	if len(results) != 6 {
		t.Fatalf("%d results, want 6", len(results))
	}
	slices.Sort(ids)
	want, err := standings.Recount(slices.Compact(ids), results)
	if err != nil {
		t.Fatal(err)
	}
	return want
}

// TestMCPStdio runs the gateway as an MCP client starts it, as a subprocess speaking on
// stdin and stdout, and joins the league through it.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "player")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	lg := startLeague(t, "")
	cmd := exec.Command(bin, "mcp", "--stdio", "--addr", "127.0.0.1:0", "--league", lg.url, "--log-dir", t.TempDir())
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "join_league", Arguments: map[string]any{"player_id": "p01"}})
	if err != nil || res.IsError {
		t.Fatalf("join_league: %+v, %v; stderr:\n%s", res, err, stderr)
	}
	select {
	case <-lg.ready:
	case <-time.After(5 * time.Second):
		t.Fatal("the seat did not announce AGENT_READY")
	}
	// Closing stdin ends the session, and the gateway with it.
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v; stderr:\n%s", err, stderr)
	}
	if cmd.ProcessState == nil {
		t.Fatal("the gateway is still running after its session closed")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, stderr)
	}
}

func TestMCPCommandLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"help", []string{"-h"}, 0, "-stdio"},
		{"league that is not http", []string{"--league", "ftp://league"}, 2, "must be an http(s) url"},
		{"stray argument", []string{"extra"}, 2, "unexpected argument"},
		{"negative duration", []string{"--register-for", "-1s"}, 2, "must not be negative"},
		{"address taken by nothing valid", []string{"--addr", "256.0.0.1:1"}, 1, "listen on 256.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			args := append([]string{"mcp", "--log-dir", t.TempDir()}, tt.args...)
			code := run(context.Background(), args, io.Discard, &stderr)
			if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("run: code %d, stderr %q; want code %d and stderr mentioning %q", code, stderr.String(), tt.wantCode, tt.wantStderr)
			}
		})
	}
}
