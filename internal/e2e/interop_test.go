package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"
)

// python returns the python3 interpreter and the path of a script in testdata.
func python(t *testing.T, script string) (string, string) {
	t.Helper()
	bin, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the interop tests (make deps installs it): %v", err)
	}
	return bin, filepath.Join(moduleRoot(), "internal", "e2e", "testdata", script)
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
