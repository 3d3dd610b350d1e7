package league

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/protocol"
)

// moveItem is one move of a batch: step of mt's tic-tac-toe game from tttPlay.
func moveItem(mt liveMatch, moves []json.RawMessage, views []map[string]any, step int) map[string]any {
	return map[string]any{
		"step_number": step, "player_id": mt.Players[(step-1)%2], "move": moves[step-1], "outcome": "SUCCESS", "state": views[step-1],
	}
}

// moveBatchMsg is a MOVE_EVENT of mt's referee carrying payload, a batch or anything else.
func (l *testLeague) moveBatchMsg(mt liveMatch, payload map[string]any) *protocol.Message {
	l.t.Helper()
	msg := l.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, 1, mt.Players[0], json.RawMessage(`1`), nil)
	return withPayload(l.t, msg, payload)
}

// batchOf is the batch payload of the given steps.
func batchOf(mt liveMatch, moves []json.RawMessage, views []map[string]any, steps ...int) map[string]any {
	items := []any{}
	for _, s := range steps {
		items = append(items, moveItem(mt, moves, views, s))
	}
	return map[string]any{"moves": items}
}

// movePublished is a move_made event as a client reads it.
type movePublished struct {
	Step    int             `json:"step"`
	Player  string          `json:"player"`
	Move    json.RawMessage `json:"move"`
	Outcome string          `json:"outcome"`
	View    map[string]any  `json:"view"`
}

// movesMade decodes the move_made events among evs, and fails on any other type unless
// allowed.
func movesMade(t *testing.T, evs []events.Event, allowed ...string) []movePublished {
	t.Helper()
	var out []movePublished
	for _, e := range evs {
		if e.Type != events.MoveMade {
			if !slices.Contains(allowed, e.Type) {
				t.Errorf("unexpected %s event", e.Type)
			}
			continue
		}
		var d movePublished
		if err := json.Unmarshal(e.Data, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// checkMovesMade fails unless got are the moves of steps, in order, each with its view.
func checkMovesMade(t *testing.T, mt liveMatch, moves []json.RawMessage, views []map[string]any, got []movePublished, steps ...int) {
	t.Helper()
	if len(got) != len(steps) {
		t.Fatalf("got %d move_made events %+v, want steps %v", len(got), got, steps)
	}
	for i, s := range steps {
		d := got[i]
		if d.Step != s || d.Player != mt.Players[(s-1)%2] || string(d.Move) != string(moves[s-1]) || d.Outcome != "SUCCESS" || !reflect.DeepEqual(d.View, views[s-1]) {
			t.Errorf("move_made %d is %+v, want step %d with its view", i, d, s)
		}
	}
}

// The League Manager announces move_batches. A batch is taken whole: one move_made per
// move, in order. Moves already received are passed over, so a batch sent again after a
// lost answer, or overlapping the last one, publishes only what is new; a single move
// before the last step is still STALE_STEP, a single move received already is
// acknowledged and ignored.
func TestMoveBatches(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	ans := h.ok(playerRegistration(t, "p03"))
	var reg struct {
		Features []string `json:"features"`
	}
	// result_moves is the promise TestResultFillsTheLiveView holds it to.
	if err := ans.Decode(&reg); err != nil || !slices.Contains(reg.Features, protocol.FeatureMoveBatches) || !slices.Contains(reg.Features, protocol.FeatureResultMoves) {
		t.Fatalf("registration answer announces %v (%v), want %s and %s among them", reg.Features, err, protocol.FeatureMoveBatches, protocol.FeatureResultMoves)
	}
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	moves, views := tttPlay(t, [2]int{0, 0}, [2]int{1, 1}, [2]int{0, 1}, [2]int{2, 2}, [2]int{0, 2})

	steps := []struct {
		name    string
		msg     *protocol.Message
		publish []int // the steps published
	}{
		{"a batch", l.moveBatchMsg(mt, batchOf(mt, moves, views, 1, 2)), []int{1, 2}},
		{"the same batch again", l.moveBatchMsg(mt, batchOf(mt, moves, views, 1, 2)), nil},
		{"a batch overlapping the last", l.moveBatchMsg(mt, batchOf(mt, moves, views, 2, 3, 4)), []int{3, 4}},
		{"a single move already received", l.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, 4, mt.Players[1], moves[3], views[3]), nil},
		{"a single move", l.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, 5, mt.Players[0], moves[4], views[4]), []int{5}},
	}
	for _, s := range steps {
		last := h.m.hub.LastID()
		if ans := h.ok(s.msg); ans.Envelope.MessageType != protocol.MoveEventAck || ans.Envelope.MatchID != mt.ID {
			t.Fatalf("%s: answered %s about %s", s.name, ans.Envelope.MessageType, ans.Envelope.MatchID)
		}
		checkMovesMade(t, mt, moves, views, movesMade(t, h.m.hub.Since(last, nil)), s.publish...)
	}
	h.unchanged("a single move before the last step", func() {
		h.refused(l.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, 3, mt.Players[0], moves[2], views[2]), protocol.ReasonStaleStep)
	})
	v, err := h.m.MatchView(mt.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := stepsOf(t, v.Steps), wantSteps(t, mt.Players, moves, views); got != want {
		t.Errorf("match page\n got %s\nwant %s", got, want)
	}
}

// A batch is refused whole, publishing nothing, when any of it breaks a rule: the
// checks of a single move (token, referee, match, players), moves out of step order, and
// the schema, whose violations name the item at fault by its path.
func TestMoveBatchRefusals(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	mt, other := ms[0], ms[1]
	moves, views := tttPlay(t, [2]int{0, 0}, [2]int{1, 1}, [2]int{0, 1})
	h.ok(l.moveBatchMsg(mt, batchOf(mt, moves, views, 1)))

	intruder := moveItem(mt, moves, views, 3)
	intruder["player_id"] = other.Players[0]
	noOutcome := moveItem(mt, moves, views, 3)
	delete(noOutcome, "outcome")
	beside := batchOf(mt, moves, views, 2)
	beside["step_number"] = 2
	tests := []struct {
		name      string
		msg       *protocol.Message
		want      protocol.Reason
		violation string // a schema violation the error lists, if any
	}{
		{"another referee's match", func() *protocol.Message {
			m := l.moveBatchMsg(mt, batchOf(mt, moves, views, 2))
			m.Envelope.Sender, m.Envelope.AuthToken = protocol.RefereeSender(other.Referee), l.refTokens[other.Referee]
			return m
		}(), protocol.ReasonNotAssignedReferee, ""},
		{"another referee's token", withToken(l.moveBatchMsg(mt, batchOf(mt, moves, views, 2)), l.refTokens[other.Referee]), protocol.ReasonSenderMismatch, ""},
		{"a player not in the match", l.moveBatchMsg(mt, map[string]any{"moves": []any{moveItem(mt, moves, views, 2), intruder}}), protocol.ReasonSchemaViolation, ""},
		{"steps out of order", l.moveBatchMsg(mt, batchOf(mt, moves, views, 3, 2)), protocol.ReasonSchemaViolation, ""},
		{"an item without outcome", l.moveBatchMsg(mt, map[string]any{"moves": []any{moveItem(mt, moves, views, 2), noOutcome}}),
			protocol.ReasonSchemaViolation, "/payload/moves/1: missing properties: 'outcome'"},
		{"an empty batch", l.moveBatchMsg(mt, map[string]any{"moves": []any{}}), protocol.ReasonSchemaViolation, "/payload/moves: minimum 1 items required, but found 0 items"},
		{"a batch beside a single move", l.moveBatchMsg(mt, beside), protocol.ReasonSchemaViolation, "/payload/step_number: not allowed"},
		{"a batch too large", l.moveBatchMsg(mt, batchOf(mt, moves, views, slices.Repeat([]int{2}, protocol.MaxMoveBatch+1)...)),
			protocol.ReasonSchemaViolation, fmt.Sprintf("/payload/moves: maximum %d items required, but found %d items", protocol.MaxMoveBatch, protocol.MaxMoveBatch+1)},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			last := h.m.hub.LastID()
			h.unchanged(tc.name, func() {
				perr := h.refused(tc.msg, tc.want)
				if tc.violation != "" && !slices.Contains(perr.Data.Violations, tc.violation) {
					t.Errorf("violations %q, want %q among them", perr.Data.Violations, tc.violation)
				}
				if tc.name == "a player not in the match" && !strings.Contains(perr.Message, "moves/1") {
					t.Errorf("error %q does not name the item at fault", perr.Message)
				}
			})
			if got := h.m.hub.LastID(); got != last {
				t.Errorf("a refused batch published %d events", got-last)
			}
		})
	}
	// Nothing of the refused batches was taken: the next move is still step 2.
	last := h.m.hub.LastID()
	h.ok(l.moveBatchMsg(mt, batchOf(mt, moves, views, 2, 3)))
	checkMovesMade(t, mt, moves, views, movesMade(t, h.m.hub.Since(last, nil)), 2, 3)
}

// The result fills the gaps of the live view: the moves no MOVE_EVENT brought are
// published as move_made, in the match's order and with the views the rules give, before
// match_finished, so a client sees every move of the match exactly once (in order unless
// a move in the middle was lost). Events after the result are acknowledged and publish
// nothing.
func TestResultFillsTheLiveView(t *testing.T) {
	moves, views := tttPlay(t, [2]int{0, 0}, [2]int{1, 1}, [2]int{0, 1}, [2]int{2, 2}, [2]int{0, 2})
	for _, tc := range []struct {
		name string
		sent []int // the steps MOVE_EVENTs brought before the result
		want []int // the steps of move_made, in order
	}{
		{"no event", nil, []int{1, 2, 3, 4, 5}},
		{"the first moves", []int{1, 2}, []int{1, 2, 3, 4, 5}},
		{"a gap in the middle", []int{1, 2, 4}, []int{1, 2, 4, 3, 5}},
		{"every move", []int{1, 2, 3, 4, 5}, []int{1, 2, 3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			l := h.register([]string{"ref1"}, nil, playerIDs(2))
			l.start()
			h.settle()
			_, ms := h.round()
			mt := ms[0]
			start := h.m.hub.LastID()
			for _, s := range tc.sent {
				h.ok(l.moveBatchMsg(mt, batchOf(mt, moves, views, s)))
			}
			var recorded []map[string]any
			for i, mv := range moves {
				recorded = append(recorded, map[string]any{"step": i + 1, "player": mt.Players[i%2], "move": mv, "outcome": "SUCCESS", "elapsed_ms": 3})
			}
			l.reportWithMeta(mt, decided(mt, 0), map[string]any{"match_seed": mt.Seed, "moves": recorded, "termination": "normal", "violations": []any{}})
			h.ok(l.moveBatchMsg(mt, batchOf(mt, moves, views, 5)))

			all := h.m.hub.Since(start, nil)
			finished := slices.IndexFunc(all, func(e events.Event) bool { return e.Type == events.MatchFinished })
			if finished < 0 {
				t.Fatal("no match_finished")
			}
			// Every move once, all before match_finished.
			checkMovesMade(t, mt, moves, views, movesMade(t, all[:finished]), tc.want...)
			if after := movesMade(t, all[finished:], events.MatchFinished, events.StandingsChanged, events.RoundStarted, events.MatchAssigned, events.LeagueCompleted); len(after) != 0 {
				t.Errorf("%d move_made after match_finished", len(after))
			}
		})
	}
}

// A forfeit has no moves, so it publishes none, whatever the live view showed.
func TestForfeitFillsNothing(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	moves, views := tttPlay(t, [2]int{0, 0})
	h.ok(l.moveBatchMsg(mt, batchOf(mt, moves, views, 1)))
	last := h.m.hub.LastID()
	l.reportWithMeta(mt, decided(mt, 1), map[string]any{"moves": []any{}, "termination": "no_show", "loser": mt.Players[0], "violations": []any{}})
	if got := movesMade(t, h.m.hub.Since(last, nil), events.MatchFinished, events.StandingsChanged, events.RoundStarted, events.MatchAssigned, events.LeagueCompleted); len(got) != 0 {
		t.Errorf("a result without moves published %d move_made", len(got))
	}
}

// BenchmarkMoveEvent measures MOVE_EVENT at the League Manager, one move or a batch of
// 9, through protocol.Server.Process as served (schema validation, audit) and through
// Manager.Handle alone. The match's live view is emptied every 100 messages so that it
// never reaches maxLiveMoves.
func BenchmarkMoveEvent(b *testing.B) {
	ctx := context.Background()
	h := newHarness(b, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	moves, views := tttPlay(b, [2]int{0, 0})
	item := func(step int) map[string]any {
		return map[string]any{"step_number": step, "player_id": mt.Players[(step-1)%2], "move": moves[0], "outcome": "SUCCESS", "state": views[0]}
	}
	const cycle = 100
	for _, bc := range []struct {
		name  string
		batch int
	}{{"single", 1}, {"batch9", 9}} {
		msgs := make([]*protocol.Message, cycle)
		bodies := make([][]byte, cycle)
		for i := range cycle {
			var p map[string]any
			if bc.batch == 1 {
				p = item(i + 1)
			} else {
				var items []any
				for k := range bc.batch {
					items = append(items, item(i*bc.batch+k+1))
				}
				p = map[string]any{"moves": items}
			}
			msgs[i] = l.moveBatchMsg(mt, p)
			bodies[i] = requestBody(b, msgs[i])
		}
		reset := func() {
			h.m.e.mu.Lock()
			defer h.m.e.mu.Unlock()
			m := h.m.e.fx.matches[mt.ID]
			m.live, m.liveMoves = nil, 0
		}
		b.Run(bc.name+"/served", func(b *testing.B) {
			reset()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%cycle == 0 {
					reset()
				}
				if out := h.srv.Process(ctx, bodies[i%cycle]); !strings.Contains(string(out), protocol.MoveEventAck) {
					b.Fatalf("bad answer: %.300s", out)
				}
			}
		})
		b.Run(bc.name+"/handler", func(b *testing.B) {
			reset()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%cycle == 0 {
					reset()
				}
				if _, err := h.m.Handle(ctx, msgs[i%cycle]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
