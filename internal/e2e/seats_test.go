package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeSeatsFile writes a seats file of the players from..to (p05 and so on) and returns
// its path.
func writeSeatsFile(t *testing.T, dir, name string, from, to int) string {
	t.Helper()
	strategies := []string{"random", "first", "perfect"}
	var b strings.Builder
	for n := from; n <= to; n++ {
		fmt.Fprintf(&b, "- {id: p%02d, strategy: %s, seed: %d}\n", n, strategies[n%len(strategies)], n)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Twelve players, every one a seat of two player --seats processes (six served by one
// server at /seats/<player_id>, six outbound through the League Manager's relay), play a
// round robin: every pair plays once, the standings agree with a recount, replay and
// verify pass, each inbound seat's status shows its eleven matches, and both processes
// leave on LEAGUE_SHUTDOWN with exit code 0.
func TestSeatsProcessesPlayALeague(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	var inbound, outbound *proc
	run := runLeague(t, leagueOpts{referees: 3, maxMatches: 2, seed: 40,
		extraPlayers: func(t *testing.T, lmURL string) int {
			player := filepath.Join(binDir, "player")
			inbound = startProc(t, "seats-inbound", nil, player, "--seats", writeSeatsFile(t, dir, "inbound.yaml", 1, 6),
				"--addr", "127.0.0.1:0", "--league", lmURL, "--log-dir", logs)
			outbound = startProc(t, "seats-outbound", nil, player, "--seats", writeSeatsFile(t, dir, "outbound.yaml", 7, 12),
				"--outbound", "--league", lmURL, "--log-dir", logs)
			return 12
		}})
	run.checkLeague(t, 1)
	if outbound.url != run.lm.url {
		t.Errorf("outbound seats announced %s, want the League Manager %s", outbound.url, run.lm.url)
	}
	for n := 1; n <= 6; n++ {
		var st struct {
			MatchesPlayed int `json:"matches_played"`
		}
		res, err := http.Get(fmt.Sprintf("%s/seats/p%02d/status", inbound.url, n))
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(res.Body).Decode(&st)
		res.Body.Close()
		if err != nil || st.MatchesPlayed != 11 {
			t.Errorf("p%02d status: %d matches played (%v), want 11", n, st.MatchesPlayed, err)
		}
	}
	if code := run.lm.stop(t); code != 0 {
		t.Errorf("league manager exited %d on SIGTERM, want 0", code)
	}
	for _, p := range []*proc{inbound, outbound} {
		select {
		case <-p.done:
			if code := p.cmd.ProcessState.ExitCode(); code != 0 {
				t.Errorf("%s exited %d, want 0; stderr:\n%s", p.name, code, p.out.String())
			}
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not leave after LEAGUE_SHUTDOWN", p.name)
		}
	}
	for _, name := range []string{"inbound", "outbound"} {
		if _, err := os.Stat(filepath.Join(logs, "player_seats_"+name+".log")); err != nil {
			t.Errorf("log file of the %s seats: %v", name, err)
		}
	}
}

// A seats file with a bad seat is refused with exit code 2 and a message naming the seat,
// and none of its players registers, the good ones included.
func TestSeatsProcessRefusesABadFile(t *testing.T) {
	run := startLeague(t, leagueOpts{players: 2, referees: 1, seed: 41, hold: true})
	dir := t.TempDir()
	for _, tt := range []struct{ name, file, want string }{
		{"duplicate id", "- {id: s1, strategy: random}\n- {id: s2, strategy: first}\n- {id: s1, strategy: first}\n", "seat s1 (line 3): duplicate id s1"},
		{"unknown strategy", "- {id: s1, strategy: random}\n- {id: s2, strategy: clairvoyant}\n", `seat s2 (line 2): unknown strategy "clairvoyant"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_")+".yaml")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(filepath.Join(binDir, "player"), "--seats", path, "--league", run.lm.url, "--log-dir", filepath.Join(dir, "logs"))
			out, err := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), tt.want) {
				t.Errorf("exit code %d (%v), output %q; want 2 and a message containing %q", code, err, out, tt.want)
			}
		})
	}
	st, err := getStatus(run.lm)
	if err != nil {
		t.Fatal(err)
	}
	if st.Players != 2 {
		t.Errorf("%d players registered, want the league's 2 only", st.Players)
	}
}
