package league

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

// tttPlay plays cells on a tic-tac-toe board from the start and returns each move as
// the referee records it and the state after it, as JSON reads it back.
func tttPlay(tb testing.TB, cells ...[2]int) ([]json.RawMessage, []map[string]any) {
	tb.Helper()
	g, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		tb.Fatal(err)
	}
	state := g.NewState(0)
	var moves []json.RawMessage
	var views []map[string]any
	for _, c := range cells {
		mv := json.RawMessage(fmt.Sprintf(`{"row":%d,"col":%d}`, c[0], c[1]))
		next, err := state.Apply([]json.RawMessage{mv})
		if err != nil {
			tb.Fatal(err)
		}
		state = next
		moves = append(moves, mv)
		views = append(views, asJSON(tb, state.Final()))
	}
	return moves, views
}

// asJSON is v as encoding/json reads it back.
func asJSON(tb testing.TB, v any) map[string]any {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// moveEventMsg is referee refID's MOVE_EVENT for step of mt.
func (h *harness) moveEventMsg(refID, token string, mt liveMatch, step int, player string, move json.RawMessage, state any) *protocol.Message {
	h.t.Helper()
	msg := newMsg(h.t, protocol.MoveEvent, protocol.RefereeSender(refID), map[string]any{
		"step_number": step, "player_id": player, "move": move, "outcome": "SUCCESS", "state": state,
	})
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = token, h.cfg.League.LeagueID, mt.RoundID, mt.ID, h.cfg.League.GameType
	return msg
}

// hubEvents is every event the League Manager published so far.
func (h *harness) hubEvents() []events.Event { return h.m.hub.Since(0, nil) }

// MOVE_EVENT is taken only from the referee of a match in progress, with its own token,
// for the match's players and in step order; a refusal changes nothing and publishes
// nothing. Events that arrive after the result are acknowledged and ignored.
func TestMoveEventRules(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	mt, other := ms[0], ms[1]
	ref, tok := mt.Referee, l.refTokens[mt.Referee]
	moves, views := tttPlay(t, [2]int{0, 0}, [2]int{1, 1}, [2]int{0, 1}, [2]int{2, 2}, [2]int{0, 2})
	x, o := mt.Players[0], mt.Players[1]
	var later liveMatch // a match of round 2: PENDING, no referee yet
	h.m.e.mu.Lock()
	for _, lm := range h.m.e.fx.rounds[1].matches {
		later = liveMatch{ID: lm.id, RoundID: lm.roundID, Players: lm.players}
	}
	h.m.e.mu.Unlock()

	ev := func(step int, player string) *protocol.Message {
		return h.moveEventMsg(ref, tok, mt, step, player, moves[step-1], views[step-1])
	}
	tests := []struct {
		name string
		msg  func() *protocol.Message
		want protocol.Reason
	}{
		{"no token", func() *protocol.Message { return withToken(ev(1, x), "") }, protocol.ReasonSchemaViolation},
		{"wrong token", func() *protocol.Message { return withToken(ev(1, x), uuid.NewString()) }, protocol.ReasonUnauthorized},
		{"another referee's token", func() *protocol.Message { return withToken(ev(1, x), l.refTokens[other.Referee]) }, protocol.ReasonSenderMismatch},
		{"from a player", func() *protocol.Message {
			m := withToken(ev(1, x), l.playerTokens[x])
			m.Envelope.Sender = protocol.PlayerSender(x)
			return m
		}, protocol.ReasonSchemaViolation},
		{"match not in the schedule", func() *protocol.Message {
			m := ev(1, x)
			m.Envelope.MatchID = "r01-m09-000000000000"
			return m
		}, protocol.ReasonUnknownMatch},
		{"match of another referee", func() *protocol.Message {
			return h.moveEventMsg(other.Referee, l.refTokens[other.Referee], mt, 1, x, moves[0], views[0])
		}, protocol.ReasonNotAssignedReferee},
		{"match not assigned yet", func() *protocol.Message {
			return h.moveEventMsg(ref, tok, later, 1, later.Players[0], moves[0], views[0])
		}, protocol.ReasonNotAssignedReferee},
		{"player not in the match", func() *protocol.Message { return ev(1, other.Players[0]) }, protocol.ReasonSchemaViolation},
		{"another league", func() *protocol.Message {
			m := ev(1, x)
			m.Envelope.LeagueID = "league-1999"
			return m
		}, protocol.ReasonWrongLeague},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			last := h.m.hub.LastID()
			h.unchanged(tc.name, func() { h.refused(tc.msg(), tc.want) })
			if got := h.m.hub.LastID(); got != last {
				t.Errorf("a refused move event published %d events", got-last)
			}
		})
	}

	// Accepted: acknowledged, published as move_made, shown on the match page.
	last := h.m.hub.LastID()
	for step, player := range []string{x, o} {
		ans := h.ok(ev(step+1, player))
		var ack struct {
			Status string `json:"status"`
		}
		if err := ans.Decode(&ack); err != nil || ans.Envelope.MessageType != protocol.MoveEventAck || ack.Status != "acknowledged" || ans.Envelope.MatchID != mt.ID {
			t.Fatalf("got %s %s, want MOVE_EVENT_ACK acknowledged for %s", ans.Envelope.MessageType, ans.Payload, mt.ID)
		}
	}
	got := h.m.hub.Since(last, nil)
	if len(got) != 2 {
		t.Fatalf("got %d events for 2 move events", len(got))
	}
	for i, e := range got {
		var d struct {
			Step    int             `json:"step"`
			Player  string          `json:"player"`
			Move    json.RawMessage `json:"move"`
			Outcome string          `json:"outcome"`
			View    map[string]any  `json:"view"`
		}
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		if e.Type != events.MoveMade || e.MatchID != mt.ID || d.Step != i+1 || d.Player != []string{x, o}[i] || string(d.Move) != string(moves[i]) || d.Outcome != "SUCCESS" || !reflect.DeepEqual(d.View, views[i]) {
			t.Errorf("event %d: %+v %+v", i, e, d)
		}
	}
	h.unchanged("a step before the last one", func() { h.refused(ev(1, x), protocol.ReasonStaleStep) })

	// After the result, a late event of its referee is acknowledged and ignored.
	l.reportOK(mt, decided(mt, 0))
	last = h.m.hub.LastID()
	h.unchanged("a late move event", func() { h.ok(ev(3, x)) })
	if got := h.m.hub.LastID(); got != last {
		t.Errorf("a late move event published %d events", got-last)
	}
}

// stepsOf renders the steps of a match view for comparison.
func stepsOf(tb testing.TB, steps []web.Step) string {
	tb.Helper()
	b, err := json.Marshal(steps)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// wantSteps is one step per move, each with the state after it.
func wantSteps(tb testing.TB, players [2]string, moves []json.RawMessage, views []map[string]any) string {
	tb.Helper()
	steps := []web.Step{}
	for i, mv := range moves {
		steps = append(steps, web.Step{Step: i + 1, Moves: []web.Move{{Player: players[i%2], Move: mv, Outcome: "SUCCESS"}}, View: views[i]})
	}
	return stepsOf(tb, steps)
}

// The match page of a running match shows the move events received so far; a finished
// match is re-played from its stored moves through the rules; forfeits and no-shows have
// no steps. No view carries a token.
func TestMatchViews(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	mt, noShow := ms[0], ms[1]
	moves, views := tttPlay(t, [2]int{0, 0}, [2]int{1, 1}, [2]int{0, 1}, [2]int{2, 2}, [2]int{0, 2})
	empty := asJSON(t, map[string]any{"board": [3][3]string{}, "winner": "", "outcome": "IN_PROGRESS", "move_count": 0})

	view := func(id string) web.MatchView {
		t.Helper()
		v, err := h.m.MatchView(id)
		if err != nil {
			t.Fatalf("MatchView(%s): %v", id, err)
		}
		b, _ := json.Marshal(v)
		h.checkNoSecret("match view", b)
		return v
	}
	for i := range 3 {
		h.ok(h.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, i+1, mt.Players[i%2], moves[i], views[i]))
	}
	running := view(mt.ID)
	if running.Status != protocol.MatchStateInProgress || running.Referee != mt.Referee || running.Outcome != nil || running.LastEventID != h.m.hub.LastID() {
		t.Errorf("running match view %+v", running)
	}
	if got, want := stepsOf(t, running.Steps), wantSteps(t, mt.Players, moves[:3], views[:3]); got != want {
		t.Errorf("running match steps\n got %s\nwant %s", got, want)
	}
	if got := asJSON(t, running.Initial); !reflect.DeepEqual(got, empty) {
		t.Errorf("initial view %v, want %v", got, empty)
	}

	// Finished: the stored moves re-played, whatever the move events said.
	var recorded []map[string]any
	for i, mv := range moves {
		recorded = append(recorded, map[string]any{"step": i + 1, "player": mt.Players[i%2], "move": mv, "outcome": "SUCCESS", "elapsed_ms": 3})
	}
	l.reportWithMeta(mt, decided(mt, 0), map[string]any{"match_seed": mt.Seed, "game_params": map[string]any{}, "moves": recorded, "termination": "normal", "violations": []any{}})
	l.reportWithMeta(noShow, decided(noShow, 1), map[string]any{"moves": []any{}, "termination": "no_show", "loser": noShow.Players[0], "violations": []any{}})
	for _, tc := range []struct {
		name        string
		mt          liveMatch
		termination string
		steps       string
		winner      int
	}{
		{"played", mt, "normal", wantSteps(t, mt.Players, moves, views), 0},
		{"no-show", noShow, "no_show", "[]", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := view(tc.mt.ID)
			want := decided(tc.mt, tc.winner)
			if v.Status != protocol.MatchStateCompleted || v.Termination != tc.termination || !maps.Equal(v.Outcome, want.Outcome) || !maps.Equal(v.Points, want.Points) {
				t.Errorf("finished match view %+v", v)
			}
			if got := stepsOf(t, v.Steps); got != tc.steps {
				t.Errorf("steps\n got %s\nwant %s", got, tc.steps)
			}
			if got := asJSON(t, v.Initial); !reflect.DeepEqual(got, empty) {
				t.Errorf("initial view %v, want %v", got, empty)
			}
		})
	}
	// A pending match (of the last round) shows its start; an unknown one is not found.
	var pending string
	h.m.e.mu.Lock()
	pending = h.m.e.fx.rounds[len(h.m.e.fx.rounds)-1].matches[0].id
	h.m.e.mu.Unlock()
	if v := view(pending); v.Status != protocol.MatchStatePending || len(v.Steps) != 0 || !reflect.DeepEqual(asJSON(t, v.Initial), empty) {
		t.Errorf("pending match view %+v", v)
	}
	if _, err := h.m.MatchView("r09-m09-000000000000"); !errors.Is(err, web.ErrNotFound) {
		t.Errorf("unknown match: got %v, want web.ErrNotFound", err)
	}
}

// Forfeits have no moves: their page has no steps and says forfeit.
func TestMatchViewOfAForfeit(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, map[string]any{"max_concurrent_matches": 2}, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	// Three violations suspend a player; its next match is forfeited.
	p := ms[0].Players[0]
	l.reportWithMeta(ms[0], decided(ms[0], 1), violationsOf(map[string]int{p: 3}))
	l.reportOK(ms[1], decided(ms[1], 0))
	var forfeited string
	waitFor(t, "a forfeit", func() bool {
		h.m.e.mu.Lock()
		defer h.m.e.mu.Unlock()
		for _, mt := range h.m.e.fx.rounds[1].matches {
			if mt.result != nil && slices.Contains(mt.players[:], p) {
				forfeited = mt.id
			}
		}
		return forfeited != ""
	})
	v, err := h.m.MatchView(forfeited)
	if err != nil {
		t.Fatal(err)
	}
	if v.Termination != "forfeit" || len(v.Steps) != 0 || v.Outcome[p] != "loss" {
		t.Errorf("forfeit view %+v", v)
	}
}

// The league view is the league as /status and the standings show it, with the active
// round's matches, and the id of the last event it reflects.
func TestLeagueView(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	rid, ms := h.round()
	l.reportOK(ms[0], decided(ms[0], 0))
	v, err := h.m.LeagueView(web.Page{})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	h.checkNoSecret("league view", b)
	st := h.m.Status()
	if v.State != StateActive || v.CurrentRound != 1 || v.TotalRounds != st.TotalRounds || v.Players != 4 || v.Referees != 2 ||
		!maps.Equal(v.ByStatus, st.MatchesByStatus) || v.MatchesTotal != 6 || v.LastEventID != h.m.hub.LastID() {
		t.Errorf("league view %s", b)
	}
	h.m.e.mu.Lock()
	rows := h.m.e.fx.table.Detailed()
	h.m.e.mu.Unlock()
	if !slices.Equal(v.Standings, rows) {
		t.Errorf("standings %v, want %v", v.Standings, rows)
	}
	if v.Round == nil || v.Round.ID != rid || len(v.Round.Matches) != 2 {
		t.Fatalf("round %+v", v.Round)
	}
	first := v.Round.Matches[0]
	if first.MatchID != ms[0].ID || first.Status != protocol.MatchStateCompleted || first.Referee != ms[0].Referee || !maps.Equal(first.Outcome, decided(ms[0], 0).Outcome) {
		t.Errorf("first match %+v", first)
	}
	if second := v.Round.Matches[1]; second.Status != protocol.MatchStateInProgress || second.Outcome != nil {
		t.Errorf("second match %+v", second)
	}
}

// An oversized state view is acknowledged but not kept, so move events cannot grow the
// League Manager's memory without bound.
func TestMoveEventKeepsNoOversizedView(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	moves, views := tttPlay(t, [2]int{0, 0}, [2]int{1, 1})
	big := map[string]any{}
	for i := range 4 {
		big[fmt.Sprintf("pad%d", i)] = strings.Repeat("x", 5000)
	}
	h.ok(h.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, 1, mt.Players[0], moves[0], views[0]))
	h.ok(h.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, 2, mt.Players[1], moves[1], big))
	v, err := h.m.MatchView(mt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Steps) != 2 || v.Steps[0].View == nil || v.Steps[1].View != nil {
		t.Errorf("got steps %+v: want the first view kept and the oversized one dropped", v.Steps)
	}
}

// TestMoveMadeEncoding checks that move_made data is encoded as the map it replaced
// was: the same members in the same order, a missing view or move as null.
func TestMoveMadeEncoding(t *testing.T) {
	for _, mv := range []moveMade{
		{Step: 3, Player: "p01", Move: json.RawMessage(`{"row": 1, "col": 2}`), Outcome: "SUCCESS", View: json.RawMessage(`{"board":[["X","",""]]}`)},
		{Step: 1, Player: "<p&02>", Outcome: "INVALID"},
	} {
		got, err := json.Marshal(mv)
		if err != nil {
			t.Fatalf("marshal %+v: %v", mv, err)
		}
		want, _ := json.Marshal(map[string]any{"step": mv.Step, "player": mv.Player, "move": mv.Move, "outcome": mv.Outcome, "view": mv.View})
		if string(got) != string(want) {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

// A move event under a clock carries the mover's clock after the move: the live view
// shows it as the match page does once the result is in, and move_made passes it on. A
// negative clock is refused by the schema.
func TestMoveEventClock(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	moves, views := tttPlay(t, [2]int{0, 0})
	clocked := func(ms int64) *protocol.Message {
		msg := h.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, 1, mt.Players[0], moves[0], views[0])
		var p map[string]any
		if err := msg.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p["clock_ms"] = ms
		b, _ := json.Marshal(p)
		msg.Payload = b
		return msg
	}
	h.unchanged("a negative clock", func() { h.refused(clocked(-1), protocol.ReasonSchemaViolation) })
	h.ok(clocked(9850))
	v, err := h.m.MatchView(mt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Steps) != 1 || v.Steps[0].Moves[0].ClockMS == nil || *v.Steps[0].Moves[0].ClockMS != 9850 {
		t.Errorf("live steps %+v, want the move with clock_ms 9850", v.Steps)
	}
	evs := h.hubEvents()
	if d, _ := json.Marshal(evs[len(evs)-1].Data); evs[len(evs)-1].Type != events.MoveMade || !strings.Contains(string(d), `"clock_ms":9850`) {
		t.Errorf("last event %s %s, want move_made with clock_ms 9850", evs[len(evs)-1].Type, d)
	}
}
