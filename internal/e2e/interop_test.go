package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// python returns the python3 interpreter and the path of a script in testdata.
func python(t *testing.T, script string) (string, string) {
	t.Helper()
	return interpreter(t, "python3"), filepath.Join(moduleRoot(), "internal", "e2e", "testdata", script)
}

// pythonExample returns the python3 interpreter and the path of a script in the
// repository's examples folder.
func pythonExample(t *testing.T, script string) (string, string) {
	t.Helper()
	return interpreter(t, "python3"), filepath.Join(moduleRoot(), "examples", script)
}

// interpreter finds name on PATH; the tests fail without it, since make deps installs it.
func interpreter(t *testing.T, name string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is needed for the tests of other-language agents and clients (make deps installs it): %v", name, err)
	}
	return bin
}

// playedResult is a stored result as these tests read it.
type playedResult struct {
	players     []string
	referee     string
	outcome     map[string]string
	termination string
	loser       string
	forfeit     string // "suspended": decided by the League Manager without a referee
	metadata    map[string]any
}

func results(t *testing.T, run *leagueRun) []playedResult {
	t.Helper()
	rows, err := run.openDB(t).Query(`SELECT m.players, coalesce(r.referee_id, ''), r.outcome, r.game_metadata FROM matches m JOIN match_results r ON r.match_id = m.match_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []playedResult
	for rows.Next() {
		var players, outcome, meta string
		var r playedResult
		if err := rows.Scan(&players, &r.referee, &outcome, &meta); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(players), &r.players); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(outcome), &r.outcome); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(meta), &r.metadata); err != nil {
			t.Fatal(err)
		}
		r.termination, _ = r.metadata["termination"].(string)
		r.loser, _ = r.metadata["loser"].(string)
		r.forfeit, _ = r.metadata["forfeit"].(string)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Python players answering our referee with no token, their own league token (seed 004
// §8.2) or a wrong one: the first two play every match, the third loses them all as a
// no-show (or, once its no-shows got it suspended, by forfeit).
func TestPythonPlayersAnswerWithOwnNoOrWrongToken(t *testing.T) {
	bin, script := python(t, "python_player.py")
	auth := map[string]string{"py-none": "none", "py-own": "own", "py-wrong": "wrong"}
	run := runLeague(t, leagueOpts{players: 2, referees: 1, seed: 9, extraPlayers: func(t *testing.T, lmURL string) int {
		for id, a := range auth {
			startProc(t, id, nil, bin, script, "--id", id, "--league", lmURL, "--auth", a)
		}
		return len(auth)
	}})
	run.checkLeague(t, 1)
	played, noShows := map[string]int{}, 0
	for _, r := range results(t, run) {
		for _, p := range r.players {
			played[p]++
		}
		against := r.players[0] == "py-wrong" || r.players[1] == "py-wrong"
		noShow := r.termination == "no_show" && r.loser == "py-wrong"
		if noShow {
			noShows++
		}
		switch {
		case against && (r.outcome["py-wrong"] != "loss" || !(noShow || r.forfeit == "suspended")):
			t.Errorf("match %v: termination %q loser %q forfeit %q outcome %v, want py-wrong to lose as a no-show or by forfeit", r.players, r.termination, r.loser, r.forfeit, r.outcome)
		case !against && r.termination != "normal":
			t.Errorf("match %v ended %q (loser %q), want normal", r.players, r.termination, r.loser)
		}
	}
	for id := range auth {
		if played[id] != 4 {
			t.Errorf("%s has %d results, want 4", id, played[id])
		}
	}
	if noShows == 0 {
		t.Error("py-wrong never lost as a no-show: its wrong token was not refused by the referee")
	}
}

// A referee written from the seeds alone (no features, no heartbeats, no credentials
// shown, only seed messages) referees a whole league of our League Manager and players:
// the players confirm it with QUERY_MATCH and play every match to its end.
func TestSeedOnlyRefereeRunsALeague(t *testing.T) {
	bin, script := python(t, "seed_referee.py")
	run := runLeague(t, leagueOpts{players: 4, seed: 31, extraReferees: func(t *testing.T, lmURL string) int {
		startProc(t, "seed-referee", nil, bin, script, "--id", "seedref", "--league", lmURL)
		return 1
	}})
	run.checkLeague(t, 1)
	rs := results(t, run)
	for _, r := range rs {
		final, _ := r.metadata["final_state"].(map[string]any)
		if r.referee != "seedref" || r.forfeit != "" || final == nil || final["outcome"] == "IN_PROGRESS" {
			t.Errorf("match %v: referee %q, forfeit %q, final state %v; want seedref's result of a game played to its end", r.players, r.referee, r.forfeit, final)
		}
	}
	if len(rs) != 6 {
		t.Errorf("%d results, want 6", len(rs))
	}
	// Each player confirmed each of its invitations once.
	kinds := auditKinds(t, run.audit)
	if kinds[protocol.QueryMatch] != 12 || kinds[protocol.MatchInfo] != 12 {
		t.Errorf("the audit log has %d QUERY_MATCH and %d MATCH_INFO, want 12 of each", kinds[protocol.QueryMatch], kinds[protocol.MatchInfo])
	}
	out, err := exec.Command(filepath.Join(binDir, "league"), "verify", run.audit).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "6 matches record no moves") {
		t.Errorf("league verify: %v\n%s\nwant the 6 matches without moves listed", err, out)
	}
}

// auditKinds counts the messages of each type in an audit log, requests and answers.
func auditKinds(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var e struct {
			Message struct {
				Params *protocol.Message `json:"params"`
				Result *protocol.Message `json:"result"`
			} `json:"message"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("audit line: %v", err)
		}
		for _, m := range []*protocol.Message{e.Message.Params, e.Message.Result} {
			if m != nil {
				kinds[m.Envelope.MessageType]++
			}
		}
	}
	return kinds
}
