package e2e

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/testtools"
)

// league standings --stats prints each player's statistics beside the standings: p02
// answers every move illegally and loses both its matches at its first move. The League
// Manager and the referees serve their metrics.
func TestStandingsWithStatistics(t *testing.T) {
	run := runLeague(t, leagueOpts{players: 3, referees: 1, seed: 12, faults: map[string]string{"p02": "illegal"}})
	cmd := exec.Command(filepath.Join(binDir, "league"), "standings", "--league", run.lm.url, "--stats")
	cmd.Env = append(os.Environ(), "LEAGUE_ADMIN_TOKEN="+run.token)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("league standings --stats: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 5 {
		t.Fatalf("got %d lines, want a title, a header and 3 players:\n%s", len(lines), out)
	}
	header := strings.Fields(lines[1])
	want := []string{"rank", "player", "points", "wins", "draws", "losses", "played", "illegal", "timeouts", "moves", "avg_ms", "max_ms"}
	if strings.Join(header, " ") != strings.Join(want, " ") {
		t.Fatalf("header %q, want %q", header, want)
	}
	for _, line := range lines[2:] {
		f := strings.Fields(line)
		if len(f) != len(want) {
			t.Fatalf("row %q has %d columns, want %d", line, len(f), len(want))
		}
		if f[1] == "p02" && (f[6] != "2" || f[7] != "2" || f[9] != "0") {
			t.Errorf("p02's row %q, want 2 played, 2 illegal moves and no move made", line)
		}
		if f[1] != "p02" && (f[7] != "0" || f[9] == "0") {
			t.Errorf("%s's row %q, want no illegal move and some moves", f[1], line)
		}
	}

	for _, tc := range []struct {
		p      *proc
		series string
	}{
		{run.lm, `league_matches{league_id="league-2025-01",status="COMPLETED"}`},
		{run.refs[0], "referee_matches_completed_total"},
	} {
		res, err := http.Get(tc.p.base() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, err := testtools.MetricValues(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if m[tc.series] != 3 {
			t.Errorf("%s: %s is %v, want 3", tc.p.name, tc.series, m[tc.series])
		}
	}
}
