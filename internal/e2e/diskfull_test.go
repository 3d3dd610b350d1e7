package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// outage is how long the disk stays full: long enough for several retries of every writer.
const outage = 10 * time.Second

// smallDisk mounts a tmpfs of size bytes on a new folder and returns it; it is
// unmounted when the test ends. Mounting needs root, as CI has.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI runs as root)")
	}
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v\n%s", err, out)
		}
	})
	return dir
}

// fillDisk writes a file until the disk is full and returns a func that deletes it.
func fillDisk(t *testing.T, dir string) func() {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill the disk: %v", err)
			}
			break
		}
	}
	// Smaller writes take the last bytes too.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(path); err != nil {
			t.Errorf("free the disk: %v", err)
		}
	}
}

// health reads the League Manager's GET /health.
func health(p *proc) (status, cause string) {
	res, err := http.Get(p.base() + "/health")
	if err != nil {
		return "", ""
	}
	defer res.Body.Close()
	var h struct {
		Status  string `json:"status"`
		Storage *struct {
			Cause string `json:"cause"`
		} `json:"storage"`
	}
	_ = json.NewDecoder(res.Body).Decode(&h)
	if h.Storage != nil {
		cause = h.Storage.Cause
	}
	return h.Status, cause
}

// waitDegraded waits until /health says degraded and returns the cause.
func waitDegraded(t *testing.T, lm *proc) string {
	t.Helper()
	deadline := time.Now().Add(outage)
	for time.Now().Before(deadline) {
		if st, cause := health(lm); st == "degraded" {
			return cause
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("/health never said degraded while the disk was full; stderr:\n%s", lm.out.String())
	return ""
}

// writeFailures sums league_storage_write_failures_total from GET /metrics.
func writeFailures(t *testing.T, lm *proc) float64 {
	t.Helper()
	res, err := http.Get(lm.base() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var sum float64
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "league_storage_write_failures_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}

// allAlive fails the test for every agent that exited.
func allAlive(t *testing.T, procs []*proc) {
	t.Helper()
	for _, p := range procs {
		select {
		case <-p.done:
			t.Errorf("%s exited (code %d) during the outage; stderr:\n%s", p.name, p.cmd.ProcessState.ExitCode(), p.out.String())
		default:
		}
	}
}

// diskLeague starts a League Manager whose database and audit log are on a small disk,
// and its referees.
func diskLeague(t *testing.T, disk string, referees int) *leagueRun {
	t.Helper()
	dir := t.TempDir()
	run := &leagueRun{dir: dir, db: filepath.Join(disk, "league.db"), audit: filepath.Join(disk, "audit.jsonl"), token: "admin-token-for-tests"}
	logs := filepath.Join(dir, "logs")
	run.lmArgs = []string{"serve", "--config", filepath.Join(moduleRoot(), "config", "league.yaml"), "--addr", "127.0.0.1:0", "--db", run.db, "--audit", run.audit,
		"--log", filepath.Join(logs, "league_manager.log"), "--game", "tic_tac_toe", "--seed", "7", "--window", "3600"}
	run.lm = startProc(t, "league", []string{"LEAGUE_ADMIN_TOKEN=" + run.token}, filepath.Join(binDir, "league"), run.lmArgs...)
	for i := 1; i <= referees; i++ {
		run.refs = append(run.refs, startProc(t, fmt.Sprintf("ref%d", i), nil, filepath.Join(binDir, "referee"),
			"--id", fmt.Sprintf("ref%d", i), "--addr", "127.0.0.1:0", "--league", run.lm.url, "--log-dir", logs, "--max-matches", "2"))
	}
	waitStatus(t, run.lm, 20*time.Second, func(s statusDoc) bool { return s.Referees == referees })
	return run
}

// startPlayers starts n players that think 30 ms a move, so a league lasts seconds.
func (r *leagueRun) startPlayers(t *testing.T, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("p%02d", i)
		r.playerIDs = append(r.playerIDs, id)
		r.players = append(r.players, startProc(t, id, nil, filepath.Join(binDir, "player"),
			"--id", id, "--addr", "127.0.0.1:0", "--league", r.lm.url, "--strategy", "random", "--seed", fmt.Sprint(i),
			"--think", "30ms", "--log-dir", filepath.Join(r.dir, "logs")))
	}
}

// The disk of the League Manager's database and audit log fills in the middle of a
// 12-player league and frees 10 s later: no agent exits, /health says degraded, the
// league completes with every pair played exactly once, and the audit log has no torn
// line and passes league verify and league replay --check.
func TestDiskFullMidLeague(t *testing.T) {
	disk := smallDisk(t, 32<<20)
	run := diskLeague(t, disk, 2)
	run.startPlayers(t, 12)
	waitStatus(t, run.lm, 20*time.Second, func(s statusDoc) bool { return s.Players == 12 })
	run.admin(t, "ADMIN_START_LEAGUE_REQUEST", map[string]any{})
	waitStatus(t, run.lm, 60*time.Second, func(s statusDoc) bool { return completed(s) >= 10 })

	free := fillDisk(t, disk)
	cause := waitDegraded(t, run.lm)
	if !strings.Contains(cause, "full") && !strings.Contains(cause, "no space") {
		t.Errorf("/health cause %q does not say the disk is full", cause)
	}
	time.Sleep(outage)
	if s, err := getStatus(run.lm); err != nil || s.State == "COMPLETED" {
		// Without the pause the league would be over in seconds.
		t.Errorf("status %+v (%v) after %v of a full disk, want the league paused", s, err, outage)
	}
	allAlive(t, append(append([]*proc{}, run.refs...), run.players...))
	free()

	run.waitCompleted(t, 120*time.Second)
	if st, _ := health(run.lm); st != "ok" {
		t.Errorf("/health says %q after the disk came back", st)
	}
	n := writeFailures(t, run.lm)
	if n < 1 {
		t.Errorf("league_storage_write_failures_total is %v after a full disk", n)
	}
	t.Logf("outage: %s, %v failed writes", cause, n)
	allAlive(t, append(append([]*proc{}, run.refs...), run.players...))
	run.checkLeague(t, 1)
}

// The disk fills while the players register: each registration is refused as retryable,
// no player exits, and once the disk frees every player registers and the league plays
// to its end.
func TestDiskFullDuringRegistration(t *testing.T) {
	disk := smallDisk(t, 32<<20)
	run := diskLeague(t, disk, 2)
	free := fillDisk(t, disk)
	run.startPlayers(t, 12)
	cause := waitDegraded(t, run.lm)
	if !strings.Contains(cause, "full") && !strings.Contains(cause, "no space") {
		t.Errorf("/health cause %q does not say the disk is full", cause)
	}
	time.Sleep(outage)
	allAlive(t, run.players)
	if s, err := getStatus(run.lm); err != nil || s.Players == 12 {
		t.Errorf("status %+v (%v) while the disk is full, want registrations refused", s, err)
	}
	free()

	waitStatus(t, run.lm, 60*time.Second, func(s statusDoc) bool { return s.Players == 12 })
	run.admin(t, "ADMIN_START_LEAGUE_REQUEST", map[string]any{})
	run.waitCompleted(t, 120*time.Second)
	allAlive(t, append(append([]*proc{}, run.refs...), run.players...))
	t.Logf("outage: %s, %v failed writes", cause, writeFailures(t, run.lm))
	run.checkLeague(t, 1)
}
