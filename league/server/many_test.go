package server_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/server"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// manyLeague writes dir/id/league.yaml, the shipped one with league_id id.
func manyLeague(t *testing.T, dir, id string) {
	t.Helper()
	cfgDir := filepath.Join("..", "..", "config")
	raw, err := os.ReadFile(filepath.Join(cfgDir, "league.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	raw = regexp.MustCompile(`(?m)^  league_id: .*$`).ReplaceAll(raw, []byte(`  league_id: "`+id+`"`))
	path := filepath.Join(dir, id)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{server.LeagueFile: raw} {
		if err := os.WriteFile(filepath.Join(path, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"game_registry.yaml", "timeout_policy.yaml"} {
		b, err := os.ReadFile(filepath.Join(cfgDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(path, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Each league of a Many has its own lifecycle: one shut down by its admin stops
// answering (410) while the other serves on, and the process ends once both have ended.
func TestManyLeaguesEndOneByOne(t *testing.T) {
	dir := t.TempDir()
	manyLeague(t, dir, "a")
	manyLeague(t, dir, "b")
	// Two folders claiming one league_id: the second is refused, the first runs.
	manyLeague(t, dir, "c")
	raw, _ := os.ReadFile(filepath.Join(dir, "c", server.LeagueFile))
	if err := os.WriteFile(filepath.Join(dir, "c", server.LeagueFile), []byte(strings.Replace(string(raw), `"c"`, `"a"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nop := zerolog.Nop()
	m, err := server.StartMany(ctx, server.ManyOptions{Dir: dir, Addr: "127.0.0.1:0", AdminToken: e2eAdminToken, Log: &nop, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ls := m.Leagues()
	if len(ls) != 3 || ls[0].State != server.LeagueRunning || ls[1].State != server.LeagueRunning ||
		ls[2].State != server.LeagueFailed || !strings.Contains(ls[2].Error, `league_id "a" is the league of folder a`) {
		t.Fatalf("leagues %+v, want a and b running and c refused", ls)
	}
	base := strings.TrimSuffix(m.URL(), "/")
	var listed strings.Builder
	if err := m.WriteLeagues(&listed); err == nil || err.Error() != "1 of 3 leagues failed to start" {
		t.Errorf("WriteLeagues: %v, want 1 of 3 failed", err)
	}
	for _, want := range []string{"league a (tic_tac_toe) at " + base + "/leagues/a/mcp\n", "league in c failed: "} {
		if !strings.Contains(listed.String(), want) {
			t.Errorf("WriteLeagues wrote no %q:\n%s", want, listed.String())
		}
	}
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	c := protocol.NewClient(v, nil)
	defer c.Close()
	msg, err := protocol.NewMessage(protocol.AdminShutdownRequest, protocol.SenderAdmin, map[string]any{"reason": "done"})
	if err != nil {
		t.Fatal(err)
	}
	msg.Envelope.AuthToken = e2eAdminToken
	if _, err := c.Call(ctx, base+"/leagues/a/mcp", msg, protocol.CallOptions{Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for m.Leagues()[0].State != server.LeagueStopped {
		if time.Now().After(deadline) {
			t.Fatalf("league a did not stop: %+v", m.Leagues())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code := statusCode(t, base+"/leagues/a/status"); code != http.StatusGone {
		t.Errorf("league a after its shutdown answers %d, want 410", code)
	}
	if code := statusCode(t, base+"/leagues/b/status"); code != http.StatusOK {
		t.Errorf("league b answers %d, want 200", code)
	}
	select {
	case <-m.Done():
		t.Fatal("the League Manager ended with league b running")
	default:
	}
	cancel()
	if err := m.Wait(); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := os.Stat(filepath.Join(dir, id, server.LeagueAuditPath)); err != nil {
			t.Errorf("league %s has no audit log of its own: %v", id, err)
		}
	}
}

func statusCode(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// An address already taken stops StartMany before any league opens: no league's
// database or audit log is written, so none records a shutdown that never happened.
func TestManyTakenAddressTouchesNoLeague(t *testing.T) {
	dir := t.TempDir()
	manyLeague(t, dir, "a")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	nop := zerolog.Nop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := server.StartMany(ctx, server.ManyOptions{Dir: dir, Addr: taken.Addr().String(), AdminToken: e2eAdminToken, Log: &nop, Stderr: io.Discard})
	if err == nil {
		cancel()
		_ = m.Wait()
		t.Fatal("StartMany on a taken address succeeded")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("StartMany: %v, want the address in use", err)
	}
	for _, name := range []string{server.LeagueAuditPath, server.LeagueDBPath} {
		if _, err := os.Stat(filepath.Join(dir, "a", name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("league a's %s exists after a failed start (%v)", name, err)
		}
	}
}
