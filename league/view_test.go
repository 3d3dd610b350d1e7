package league

import (
	"encoding/json"
	"errors"
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

// A page of the view is that part of the whole: the standings' rows from the offset, the
// crosstable among their players (the whole table's cells among them), the ratings' rows
// from the same offset in their own order; a player's page is the one that holds it, and
// an unknown player is not found.
func TestLeagueViewPages(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(6))
	l.start()
	l.playOut()
	all, err := h.m.LeagueView(web.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if all.Page != nil || all.RatingsPage != nil || len(all.Standings) != 6 || len(all.Ratings) != 6 {
		t.Fatalf("the whole view: page %v, %d standings, %d ratings", all.Page, len(all.Standings), len(all.Ratings))
	}
	at := map[string]int{}
	for i, id := range all.Crosstable.Players {
		at[id] = i
	}
	check := func(p web.Page, wantOffset int) {
		t.Helper()
		v, err := h.m.LeagueView(p)
		if err != nil {
			t.Fatal(err)
		}
		end := min(wantOffset+p.Limit, 6)
		if !reflect.DeepEqual(v.Standings, all.Standings[wantOffset:end]) || *v.Page != (web.PageView{Offset: wantOffset, Limit: p.Limit, Total: 6}) {
			t.Errorf("page %+v: standings page %+v, want rows %d to %d", p, v.Page, wantOffset, end)
		}
		for i, id := range v.Crosstable.Players {
			if id != all.Standings[wantOffset+i].PlayerID {
				t.Errorf("page %+v: crosstable player %d is %s, want %s", p, i, id, all.Standings[wantOffset+i].PlayerID)
			}
			for j, opp := range v.Crosstable.Players {
				if !slices.Equal(v.Crosstable.Cells[i][j], all.Crosstable.Cells[at[id]][at[opp]]) {
					t.Errorf("page %+v: cell %s v %s is %v, want %v", p, id, opp, v.Crosstable.Cells[i][j], all.Crosstable.Cells[at[id]][at[opp]])
				}
			}
		}
		if p.Player == "" && !reflect.DeepEqual(v.Ratings, all.Ratings[wantOffset:end]) {
			t.Errorf("page %+v: ratings %+v, want rows %d to %d", p, v.Ratings, wantOffset, end)
		}
	}
	check(web.Page{Offset: 2, Limit: 2}, 2)
	check(web.Page{Offset: 4, Limit: 4}, 4)
	check(web.Page{Limit: 4, Player: all.Standings[5].PlayerID}, 4)
	check(web.Page{Limit: 2, Player: all.Standings[1].PlayerID}, 0)
	if _, err := h.m.LeagueView(web.Page{Limit: 2, Player: "nobody"}); !errors.Is(err, web.ErrNotFound) {
		t.Errorf("an unknown player's page: %v, want not found", err)
	}
}
