package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/agentleague/agentleague/protocol"
)

// liveEvent is an event of the League Manager's stream (GET /events) as a client reads it.
type liveEvent struct {
	ID      int64           `json:"id"`
	Type    string          `json:"type"`
	MatchID string          `json:"match_id"`
	Data    json.RawMessage `json:"data"`
}

// readStream reads the event stream at url until league_completed or the end of the
// stream, on a goroutine that ends then or when the response body is closed (cleanup).
func readStream(t *testing.T, url string) <-chan []liveEvent {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		t.Fatalf("GET %s: %s", url, res.Status)
	}
	t.Cleanup(func() { res.Body.Close() })
	out := make(chan []liveEvent, 1)
	go func() {
		var got []liveEvent
		defer func() { out <- got }()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var e liveEvent
			if json.Unmarshal([]byte(data), &e) != nil {
				continue
			}
			got = append(got, e)
			if e.Type == "league_completed" {
				return
			}
		}
	}()
	return out
}

// A client of the live view sees every stored move of every match exactly once, in the
// match's order, as move_made before the match's match_finished, in a 10-player,
// 5-referee tic-tac-toe league; and the referees lost no move: each was sent in a
// MOVE_EVENT or, pending when play ended, left to the result (result_moves), none failed
// or dropped.
func TestLiveViewShowsEveryMoveOnce(t *testing.T) {
	run := startLeague(t, leagueOpts{players: 10, referees: 5, seed: 16, hold: true})
	stream := readStream(t, run.lm.base()+"/events")
	run.started = time.Now()
	run.admin(t, protocol.AdminStartLeagueRequest, map[string]any{})
	run.waitCompleted(t, 120*time.Second)
	var got []liveEvent
	select {
	case got = <-stream:
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream did not reach league_completed")
	}
	run.checkLeague(t, 1)

	// What the stream showed of each match: its moves, then whether it finished.
	type move struct {
		Step   int             `json:"step"`
		Player string          `json:"player"`
		Move   json.RawMessage `json:"move"`
	}
	shown := map[string][]string{}
	finished := map[string]bool{}
	for _, e := range got {
		switch e.Type {
		case "move_made":
			var mv move
			if err := json.Unmarshal(e.Data, &mv); err != nil {
				t.Fatal(err)
			}
			if finished[e.MatchID] {
				t.Errorf("%s: move_made %s after match_finished", e.MatchID, e.Data)
			}
			shown[e.MatchID] = append(shown[e.MatchID], fmt.Sprintf("%d %s %s", mv.Step, mv.Player, mv.Move))
		case "match_finished":
			finished[e.MatchID] = true
		}
	}

	db := run.openDB(t)
	rows, err := db.Query(`SELECT match_id, game_metadata FROM match_results`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	matches, total := 0, 0
	for rows.Next() {
		var id, meta string
		if err := rows.Scan(&id, &meta); err != nil {
			t.Fatal(err)
		}
		md, vs := protocol.ReadGameMetadata(json.RawMessage(meta))
		if vs != nil {
			t.Fatal(vs)
		}
		var want []string
		for _, mv := range md.Moves {
			want = append(want, fmt.Sprintf("%d %s %s", mv.Step, mv.Player, mv.Move))
		}
		if strings.Join(shown[id], "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the stream showed moves\n%s\nwant the stored\n%s", id, strings.Join(shown[id], "\n"), strings.Join(want, "\n"))
		}
		if !finished[id] {
			t.Errorf("%s: no match_finished on the stream", id)
		}
		matches++
		total += len(md.Moves)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if matches != 45 {
		t.Errorf("got %d stored results, want 45", matches)
	}

	sent, withResult := 0.0, 0.0
	for _, ref := range run.refs {
		res, err := http.Get(ref.base() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, err := testtools.MetricValues(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, result := range []string{"failed", "dropped"} {
			if n := m[`referee_move_events_total{result="`+result+`"}`]; n != 0 {
				t.Errorf("%s: %v moves %s", ref.name, n, result)
			}
		}
		sent += m[`referee_move_events_total{result="sent"}`]
		withResult += m[`referee_move_events_total{result="with_result"}`]
	}
	if sent+withResult != float64(total) {
		t.Errorf("the referees sent %v moves and left %v to the results, want the %d stored", sent, withResult, total)
	}
	t.Logf("%d moves of %d matches, each shown once, in %v of league time", total, matches, run.elapsed)
}
