package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// seedRecord is GET /received of testdata/seed_league.py.
type seedRecord struct {
	Schedule []struct {
		MatchID string   `json:"match_id"`
		Players []string `json:"players"`
	} `json:"schedule"`
	AssignmentAnswers []struct {
		MatchID string          `json:"match_id"`
		Answer  json.RawMessage `json:"answer"`
	} `json:"assignment_answers"`
	Results  map[string][]map[string]any `json:"results"`
	Received []struct {
		MessageType string `json:"message_type"`
		Sender      string `json:"sender"`
	} `json:"received"`
}

// Our referee and players play a whole league under a League Manager that, like the
// Python implementation, knows only the seeds: it announces no features, signs nothing,
// sends a round's assignments all at once (more than the referee's one slot) and answers
// message types it does not know with an error of its own. Every match gets exactly one
// result, and the referee sends none of the extensions (no MOVE_EVENT, no heartbeat).
func TestOurAgentsPlayUnderASeedOnlyLeagueManager(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the interop test (make deps installs it): %v", err)
	}
	script := filepath.Join(moduleRoot(), "internal", "e2e", "testdata", "seed_league.py")
	logs := filepath.Join(t.TempDir(), "logs")
	lm := startProc(t, "seed-league", nil, python, script, "--players", "4", "--game", "tic_tac_toe")
	ref := startProc(t, "ref1", nil, filepath.Join(binDir, "referee"), "--id", "ref1", "--addr", "127.0.0.1:0",
		"--league", lm.url, "--log-dir", logs, "--max-matches", "1")
	// Like the Python implementation, it refuses a player before any referee, with an error
	// of its own that our players do not retry: the referee registers first.
	waitStatus(t, lm, 20*time.Second, func(s statusDoc) bool { return s.Referees == 1 })
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("p%02d", i)
		startProc(t, id, nil, filepath.Join(binDir, "player"), "--id", id, "--addr", "127.0.0.1:0", "--league", lm.url,
			"--strategy", "random", "--seed", fmt.Sprint(i), "--log-dir", logs)
	}
	st := waitStatus(t, lm, 120*time.Second, func(s statusDoc) bool { return s.State == "COMPLETED" || s.State == "FAILED" })
	if st.State != "COMPLETED" {
		t.Fatalf("the league ended %s; League Manager stderr:\n%s\nreferee stderr:\n%s", st.State, lm.out.String(), ref.out.String())
	}

	var rec seedRecord
	getJSON(t, lm.base()+"/received", &rec)
	if len(rec.Schedule) != 6 {
		t.Fatalf("got %d scheduled matches, want 6 for 4 players", len(rec.Schedule))
	}
	for _, a := range rec.AssignmentAnswers {
		var ans struct {
			Result struct {
				Envelope struct {
					MessageType string `json:"message_type"`
				} `json:"envelope"`
			} `json:"result"`
		}
		if err := json.Unmarshal(a.Answer, &ans); err != nil || ans.Result.Envelope.MessageType != "MATCH_ASSIGNMENT_ACK" {
			t.Errorf("assignment of %s answered %s, want MATCH_ASSIGNMENT_ACK", a.MatchID, a.Answer)
		}
	}
	for _, m := range rec.Schedule {
		results := rec.Results[m.MatchID]
		if len(results) != 1 {
			t.Errorf("match %s got %d results, want exactly 1", m.MatchID, len(results))
			continue
		}
		outcome, _ := results[0]["outcome"].(map[string]any)
		if len(outcome) != 2 || outcome[m.Players[0]] == nil || outcome[m.Players[1]] == nil {
			t.Errorf("match %s between %v: outcome %v", m.MatchID, m.Players, outcome)
		}
	}
	if len(rec.Results) != len(rec.Schedule) {
		t.Errorf("got results for %d matches, %d scheduled", len(rec.Results), len(rec.Schedule))
	}
	seedTypes := []string{"REGISTER_REFEREE_REQUEST", "REGISTER_PLAYER_REQUEST", "AGENT_READY_REQUEST", "MATCH_RESULT_REPORT"}
	for _, r := range rec.Received {
		if !slices.Contains(seedTypes, r.MessageType) {
			t.Errorf("the seed League Manager got %s from %s, which it never announced", r.MessageType, r.Sender)
		}
	}

	// The referee queued what its one slot could not take, and holds nothing now.
	var rst struct {
		Matches         []any `json:"matches"`
		ResultsReported int   `json:"results_reported"`
	}
	getJSON(t, ref.base()+"/status", &rst)
	if rst.ResultsReported != 6 || len(rst.Matches) != 0 {
		t.Errorf("referee status: %d results reported, holding %v; want 6 and nothing", rst.ResultsReported, rst.Matches)
	}
	if n := countLogLines(t, filepath.Join(logs, "referee_ref1.log"), "match queued"); n == 0 {
		t.Error("the referee never queued a match: the test did not exercise its queue")
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// countLogLines counts the JSON log lines whose message is msg.
func countLogLines(t *testing.T, path, msg string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && strings.TrimSpace(e.Message) == msg {
			n++
		}
	}
	return n
}
