package league

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/agentleague/agentleague/league/web"
)

// The match page never fails on a stored result. Results stored before the League
// Manager refused malformed game_metadata (written here into the database directly)
// are shown as far as they read and re-play, with what does not said; the League
// Manager starts on them, its statistics counting what reads.
func TestMatchViewOfMalformedStoredResults(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	played, garbled := ms[0], ms[1]
	l.reportOK(played, decided(played, 0))
	l.reportOK(garbled, decided(garbled, 1))
	a, b := played.Players[0], played.Players[1]
	moves, views := tttPlay(t, [2]int{0, 0})
	// The steps a string, a move timed "4", b's move on a's cell, a violation naming
	// no player.
	stored := map[string]string{
		played.ID: fmt.Sprintf(`{"steps":"3","termination":"normal","moves":[{"step":1,"player":%q,"move":%s,"outcome":"SUCCESS","elapsed_ms":"4"},`+
			`{"step":2,"player":%q,"move":%s,"outcome":"SUCCESS","elapsed_ms":5}],"violations":[{"player":%q,"kind":"timeout"},{"player":7,"kind":"timeout"}]}`,
			a, moves[0], b, moves[0], b),
		garbled.ID: `["not", "an", "object"]`,
	}
	for id, meta := range stored {
		if _, err := h.store.DB().Exec(`UPDATE match_results SET game_metadata = ? WHERE match_id = ?`, meta, id); err != nil {
			t.Fatal(err)
		}
	}
	h.restart() // it reads every stored result as it starts

	v, err := h.m.MatchView(played.ID)
	if err != nil {
		t.Fatalf("MatchView(%s): %v", played.ID, err)
	}
	wantSteps := []web.Step{
		{Step: 1, Moves: []web.Move{{Player: a, Move: moves[0], Outcome: "SUCCESS"}}, View: views[0]},
		{Step: 2, Moves: []web.Move{{Player: b, Move: moves[0], Outcome: "SUCCESS"}}},
	}
	// What is mended is read re-encoded: the moves the same JSON, not the same bytes.
	var got, want any
	_ = json.Unmarshal([]byte(stepsOf(t, v.Steps)), &got)
	_ = json.Unmarshal([]byte(stepsOf(t, wantSteps)), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps\n got %s\nwant %s", stepsOf(t, v.Steps), stepsOf(t, wantSteps))
	}
	wantUnread := []string{
		"/payload/game_metadata/moves/0/elapsed_ms: expected integer, but got string",
		"/payload/game_metadata/steps: expected integer, but got string",
		"/payload/game_metadata/violations/1/player: expected string, but got number",
		"the stored moves do not re-play through the rules of tic_tac_toe from move 2 on: listed as recorded",
	}
	if v.Termination != "normal" || v.Initial == nil || !slices.Equal(v.Unreadable, wantUnread) {
		t.Errorf("termination %q, initial %v, unreadable\n%q\nwant\n%q", v.Termination, v.Initial, v.Unreadable, wantUnread)
	}

	v, err = h.m.MatchView(garbled.ID)
	if err != nil {
		t.Fatalf("MatchView(%s): %v", garbled.ID, err)
	}
	if len(v.Steps) != 0 || v.Termination != "" || v.Outcome[garbled.Players[1]] != "win" ||
		!slices.Equal(v.Unreadable, []string{"/payload/game_metadata: expected object, but got array"}) {
		t.Errorf("view of a result whose game_metadata is not an object: %+v", v)
	}

	for _, ag := range h.m.Status().Agents {
		if ag.ID == b && (ag.Stats.Moves != 1 || ag.Stats.Violations["timeout"] != 1) {
			t.Errorf("%s: statistics %+v, want its one timed move and one timeout", b, ag.Stats)
		}
		if ag.ID == a && ag.Stats.Moves != 0 {
			t.Errorf("%s: statistics %+v, want no timed move", a, ag.Stats)
		}
	}
}
