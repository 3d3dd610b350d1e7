package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/agentleague/agentleague/league/server"
	"github.com/agentleague/agentleague/protocol"
)

// writeLeagueFolder makes dir/folder a league of league serve --leagues: the shipped
// league.yaml with its id and game changed (patch may change more), and the game registry
// and timeout policy beside it.
func writeLeagueFolder(t *testing.T, dir, folder, id, game string) string {
	t.Helper()
	cfgDir := filepath.Join(moduleRoot(), "config")
	raw, err := os.ReadFile(filepath.Join(cfgDir, "league.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	lg := doc["league"].(map[string]any)
	lg["league_id"], lg["game_type"] = id, game
	doc["registration"].(map[string]any)["window_seconds"] = 3600
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, folder)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, server.LeagueFile), out, 0o644); err != nil {
		t.Fatal(err)
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
	return path
}

// Three leagues of three games in one league serve --leagues, played at the same time
// by their own referees and players: each completes with its own database and an audit
// log that replays and verifies, its own live view and labelled metrics; a fourth folder
// whose league.yaml is broken is listed as failed and stops nothing.
func TestManyLeaguesInOneLeagueManager(t *testing.T) {
	dir := t.TempDir()
	games := map[string]string{"class-ttt": "tic_tac_toe", "class-c4": "connect_four", "class-rps": "rock_paper_scissors"}
	folders := map[string]string{}
	for id, game := range games {
		folders[id] = writeLeagueFolder(t, dir, strings.TrimPrefix(id, "class-"), id, game)
	}
	broken := writeLeagueFolder(t, dir, "broken", "class-broken", "tic_tac_toe")
	if err := os.WriteFile(filepath.Join(broken, server.LeagueFile), []byte("league: {league_id: -bad}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "admin-token-for-tests"
	lm := startProc(t, "league", []string{"LEAGUE_ADMIN_TOKEN=" + token}, filepath.Join(binDir, "league"),
		"serve", "--leagues", dir, "--addr", "127.0.0.1:0")
	base := strings.TrimSuffix(lm.url, "/")

	var list struct {
		Leagues []server.LeagueInfo `json:"leagues"`
	}
	getJSON(t, base+"/api/leagues", &list)
	states := map[string]string{}
	for _, l := range list.Leagues {
		states[l.Folder] = l.State
		if l.Folder == "broken" && !strings.Contains(l.Error, "league.league_id") {
			t.Errorf("the broken league's error %q does not name the field", l.Error)
		}
	}
	if want := map[string]string{"ttt": "running", "c4": "running", "rps": "running", "broken": "failed"}; fmt.Sprint(states) != fmt.Sprint(want) {
		t.Fatalf("leagues %v, want %v", states, want)
	}

	runs := map[string]*leagueRun{}
	logs := filepath.Join(dir, "agent-logs")
	for id := range games {
		url := base + "/leagues/" + id + "/mcp"
		run := &leagueRun{
			lm:    &proc{name: id, cmd: lm.cmd, url: url, out: lm.out, done: lm.done},
			token: token, db: filepath.Join(folders[id], server.LeagueDBPath), audit: filepath.Join(folders[id], server.LeagueAuditPath),
		}
		runs[id] = run
		run.refs = append(run.refs, startProc(t, id+"-ref", nil, filepath.Join(binDir, "referee"),
			"--id", "ref1", "--addr", "127.0.0.1:0", "--league", url, "--log-dir", logs, "--games", games[id]))
		waitStatus(t, run.lm, 20*time.Second, func(s statusDoc) bool { return s.Referees == 1 })
		for i := 1; i <= 4; i++ {
			pid := fmt.Sprintf("p%02d", i)
			run.playerIDs = append(run.playerIDs, pid)
			run.players = append(run.players, startProc(t, id+"-"+pid, nil, filepath.Join(binDir, "player"),
				"--id", pid, "--addr", "127.0.0.1:0", "--league", url, "--strategy", "random", "--seed", fmt.Sprint(i), "--log-dir", logs))
		}
		waitStatus(t, run.lm, 20*time.Second, func(s statusDoc) bool { return s.Players == 4 })
	}
	for _, run := range runs {
		run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	}
	for id, run := range runs {
		run.waitCompleted(t, 120*time.Second)
		run.checkLeague(t, 1)
		var view struct {
			LeagueID string `json:"league_id"`
		}
		getJSON(t, base+"/leagues/"+id+"/api/league", &view)
		if view.LeagueID != id {
			t.Errorf("the live view of /leagues/%s/ is of league %q", id, view.LeagueID)
		}
	}

	getJSON(t, base+"/api/leagues", &list)
	for _, l := range list.Leagues {
		if l.State == server.LeagueRunning && (l.LeagueState != "COMPLETED" || l.MatchesDone != 6 || l.MatchesTotal != 6 || l.Players != 4) {
			t.Errorf("/api/leagues lists %+v, want COMPLETED with 6 of 6 matches and 4 players", l)
		}
	}
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := testtools.MetricValues(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for id := range games {
		if got := metrics[`league_matches{league_id="`+id+`",status="COMPLETED"}`]; got != 6 {
			t.Errorf("metrics: %s has %v completed matches, want 6", id, got)
		}
	}
	page := getText(t, base+"/")
	for id := range games {
		if !strings.Contains(page, `href="/leagues/`+id+`/"`) {
			t.Errorf("the root page does not link to league %s:\n%s", id, page)
		}
	}
	if !strings.Contains(page, "failed") {
		t.Errorf("the root page does not show the failed league:\n%s", page)
	}
	// The process reports the league that failed when it ends.
	if code := lm.stop(t); code != 1 {
		t.Errorf("league serve exited with %d after a signal with a failed league, want 1", code)
	}
}

// A folder of leagues none of which holds a league.yaml is refused at once.
func TestLeaguesFolderWithoutLeagues(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--addr", "127.0.0.1:0"}, 1, "no folder holds a league.yaml"},
		{[]string{"--db", "x.db"}, 2, "--db belong to one league"},
	} {
		out, err := exec.Command(filepath.Join(binDir, "league"), append([]string{"serve", "--leagues", dir}, tc.args...)...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code || !strings.Contains(string(out), tc.want) {
			t.Errorf("league serve --leagues %v: %v, want exit code %d and %q\n%s", tc.args, err, tc.code, tc.want, out)
		}
	}
}

func getText(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v\n%s", url, res.StatusCode, err, b)
	}
	return string(b)
}
