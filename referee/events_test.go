package referee

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/agentleague/agentleague/protocol"
)

// moveEventAck acknowledges a MOVE_EVENT as the League Manager does.
func moveEventAck(m *protocol.Message) (*protocol.Message, error) {
	out, err := leagueReply(m, protocol.MoveEventAck, map[string]string{"status": "acknowledged"})
	if err == nil {
		out.Envelope.MatchID = m.Envelope.MatchID
	}
	return out, err
}

// playWithMoveEvents plays a tic-tac-toe match between two instant scripted players, under
// tc when it is not nil, its moves going to r's move events, which the caller flushes or
// finishes.
func playWithMoveEvents(t *testing.T, r *Referee, tc *protocol.TimeControl) (game.Game, *MatchRunner, *moveEvents, *Report) {
	t.Helper()
	g := ttt(t)
	runner := newRunner(t, game.TypeTicTacToe, newFakeCaller(t, map[string]fakePlayer{
		"http://p1": scripted(g, "p1", firstLegal(g)),
		"http://p2": scripted(g, "p2", firstLegal(g)),
	}))
	runner.A.TimeControl = tc
	ev := r.startMoveEvents(t.Context(), runner.A, zerolog.Nop())
	runner.OnMove = ev.add
	rep, err := runner.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return g, runner, ev, rep
}

// To a League Manager without move_batches, every applied move of a match becomes one
// MOVE_EVENT, in order, with the referee's token, the match context and the state after
// the move; under a clock, with the mover's clock after it.
func TestMoveEventsFollowTheMatch(t *testing.T) {
	t.Run("no clock", func(t *testing.T) { moveEventsFollowTheMatch(t, nil) })
	t.Run("5+0.1", func(t *testing.T) { moveEventsFollowTheMatch(t, &protocol.TimeControl{BaseMS: 5000, IncrementMS: 100}) })
}

func moveEventsFollowTheMatch(t *testing.T, tc *protocol.TimeControl) {
	synctest.Test(t, func(t *testing.T) {
		fl := newFakeLeagueCaller(t, func(_ context.Context, m *protocol.Message, _ int) (*protocol.Message, error) {
			return moveEventAck(m)
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		g, runner, ev, rep := playWithMoveEvents(t, r, tc)
		ev.finish()
		<-ev.done // the queue is sent
		ev.stop()

		sent := fl.sent(protocol.MoveEvent)
		if len(sent) != len(rep.Metadata.Moves) {
			t.Fatalf("got %d move events for %d moves", len(sent), len(rep.Metadata.Moves))
		}
		state := g.NewState(runner.A.MatchSeed)
		for i, c := range sent {
			mv := rep.Metadata.Moves[i]
			next, err := state.Apply([]json.RawMessage{mv.Move})
			if err != nil {
				t.Fatal(err)
			}
			state = next
			e := c.Msg.Envelope
			if e.AuthToken != r.token || e.MatchID != runner.A.MatchID || e.RoundID != runner.A.RoundID || e.LeagueID != "league-1" || e.Sender != "referee:ref1" {
				t.Errorf("event %d envelope %+v, want the referee's token and the match context", i, e)
			}
			if c.Opt.Timeout != moveEventTimeout || c.Opt.Retry.Attempts != 1 {
				t.Errorf("event %d options %+v, want one attempt with a %v deadline", i, c.Opt, moveEventTimeout)
			}
			var p struct {
				Step    int             `json:"step_number"`
				Player  string          `json:"player_id"`
				Move    json.RawMessage `json:"move"`
				Outcome string          `json:"outcome"`
				State   map[string]any  `json:"state"`
				ClockMS *int64          `json:"clock_ms"`
			}
			if err := c.Msg.Decode(&p); err != nil {
				t.Fatal(err)
			}
			if tc == nil && p.ClockMS != nil {
				t.Errorf("event %d has clock_ms %d without a clock", i, *p.ClockMS)
			}
			if tc != nil && (p.ClockMS == nil || mv.ClockMS == nil || *p.ClockMS != *mv.ClockMS || *p.ClockMS <= 5000) {
				t.Errorf("event %d clock_ms %v, want the move record's %v: more than 5000 ms after an instant move under 5+0.1", i, p.ClockMS, mv.ClockMS)
			}
			want := jsonValue(t, state.Final())
			if p.Step != mv.Step || p.Player != mv.Player || string(p.Move) != string(mv.Move) || p.Outcome != string(mv.Outcome) || !reflect.DeepEqual(p.State, want) {
				t.Errorf("event %d is %+v, want move %+v with state %v", i, p, mv, want)
			}
		}
		if got := scrape(t, r)[`referee_move_events_total{result="sent"}`]; got != float64(len(sent)) {
			t.Errorf("referee_move_events_total{result=sent} is %v, want %d", got, len(sent))
		}
	})
}

// scrape reads the referee's GET /metrics.
func scrape(t *testing.T, r *Referee) map[string]float64 {
	t.Helper()
	m, err := testtools.ScrapeMetrics(r.routes(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// jsonValue is v as encoding/json reads it back.
func jsonValue(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// movesOf decodes the moves a MOVE_EVENT carries: its batch, or its one move.
func movesOf(t *testing.T, m *protocol.Message) (moves []protocol.MoveNotice, batch bool) {
	t.Helper()
	var p struct {
		protocol.MoveNotice
		Moves []protocol.MoveNotice `json:"moves"`
	}
	if err := m.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.Moves != nil {
		return p.Moves, true
	}
	return []protocol.MoveNotice{p.MoveNotice}, false
}

// checkMoves fails unless got are the recorded moves, in order, each with the state after
// its step.
func checkMoves(t *testing.T, g game.Game, seed int64, got []protocol.MoveNotice, recorded []protocol.MoveRecord) {
	t.Helper()
	if len(got) != len(recorded) {
		t.Fatalf("the League Manager got %d moves, want the %d recorded", len(got), len(recorded))
	}
	state := g.NewState(seed)
	for i, mv := range recorded {
		next, err := state.Apply([]json.RawMessage{mv.Move})
		if err != nil {
			t.Fatal(err)
		}
		state = next
		var view map[string]any
		if err := json.Unmarshal(got[i].State, &view); err != nil {
			t.Fatal(err)
		}
		if g := got[i]; g.StepNumber != mv.Step || g.PlayerID != mv.Player || string(g.Move) != string(mv.Move) || g.Outcome != mv.Outcome ||
			!reflect.DeepEqual(view, jsonValue(t, state.Final())) {
			t.Errorf("move %d is %+v, want %+v", i, g, mv)
		}
	}
}

// metricCounts reads referee_move_events_total by result.
func metricCounts(t *testing.T, r *Referee) map[string]float64 {
	t.Helper()
	counts := map[string]float64{}
	metrics := scrape(t, r)
	for _, result := range []string{"sent", "failed", "dropped", "with_result"} {
		counts[result] = metrics[`referee_move_events_total{result="`+result+`"}`]
	}
	return counts
}

// To a League Manager that announced move_batches, a batch waits moveEventLinger for
// more moves, and the end of play sends it at once: instant players finish within the
// linger, so the whole match goes in one MOVE_EVENT, in order, each move with its state.
func TestMoveEventsBatchAFastMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fl := newFakeLeagueCaller(t, func(_ context.Context, m *protocol.Message, _ int) (*protocol.Message, error) {
			return moveEventAck(m)
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		r.leagueFeatures = []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches}
		g, runner, ev, rep := playWithMoveEvents(t, r, nil)
		ev.flush(time.Hour)

		sent := fl.sent(protocol.MoveEvent)
		var got []protocol.MoveNotice
		for i, c := range sent {
			moves, batch := movesOf(t, c.Msg)
			if !batch {
				t.Errorf("event %d carries one move outside a batch, want a batch", i)
			}
			got = append(got, moves...)
		}
		if len(sent) != 1 {
			t.Errorf("got %d MOVE_EVENTs for %d moves, want 1", len(sent), len(rep.Metadata.Moves))
		}
		checkMoves(t, g, runner.A.MatchSeed, got, rep.Metadata.Moves)
		if c := metricCounts(t, r); c["sent"] != float64(len(rep.Metadata.Moves)) || c["failed"] != 0 || c["dropped"] != 0 {
			t.Errorf("got counts %v, want every move sent", c)
		}
	})
}

// batchingSender starts the move-event sender of match m1 for a referee whose League
// Manager (fl) announced move_events and move_batches; add makes a move of p1 pending.
func batchingSender(t *testing.T, fl *fakeLeagueCaller) (ev *moveEvents, add func(step int)) {
	r := registeredReferee(t, fl, zerolog.Nop(), nil)
	r.leagueFeatures = []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches}
	g := ttt(t)
	ev = r.startMoveEvents(t.Context(), protocol.Assignment{MatchID: "m1", RoundID: "round-1", GameType: game.TypeTicTacToe, Players: []string{"p1", "p2"}}, zerolog.Nop())
	return ev, func(step int) {
		ev.add(protocol.MoveRecord{Step: step, Player: "p1", Move: json.RawMessage(`{"row":0,"col":0}`), Outcome: protocol.MoveSuccess}, g.NewState(1))
	}
}

// A batch waits moveEventLinger after its first move, so moves that follow within it go
// together; the end of play sends what is pending at once. Each MOVE_EVENT leaves at the
// time it should, on the fake clock.
func TestMoveEventsLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fl := newFakeLeagueCaller(t, func(_ context.Context, m *protocol.Message, _ int) (*protocol.Message, error) {
			return moveEventAck(m)
		})
		ev, add := batchingSender(t, fl)
		gap := moveEventLinger / 4
		for step := 1; step <= 3; step++ { // at 0, gap and 2*gap: one batch
			add(step)
			time.Sleep(gap)
		}
		time.Sleep(moveEventLinger) // the batch went; nothing is pending
		add(4)
		time.Sleep(gap)
		add(5)
		ev.flush(time.Hour) // play is over: no linger left to wait

		sent := fl.sent(protocol.MoveEvent)
		var counts []int
		var at []time.Duration
		for _, c := range sent {
			moves, _ := movesOf(t, c.Msg)
			counts = append(counts, len(moves))
			at = append(at, c.At.Sub(start))
		}
		wantAt := []time.Duration{moveEventLinger, 3*gap + moveEventLinger + gap}
		if !slices.Equal(counts, []int{3, 2}) || !slices.Equal(at, wantAt) {
			t.Errorf("MOVE_EVENTs carried %v moves at %v, want [3 2] at %v", counts, at, wantAt)
		}
	})
}

// A batch the League Manager refused is dropped, and the next batch waits its own
// moveEventLinger.
func TestMoveEventsLingerAfterARefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		fl := newFakeLeagueCaller(t, func(_ context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			if n == 0 {
				return nil, protocol.Errorf(protocol.ReasonNotAssignedReferee, "not yours")
			}
			return moveEventAck(m)
		})
		ev, add := batchingSender(t, fl)
		add(1)
		time.Sleep(moveEventLinger * 3 / 2) // the first batch went and was refused
		add(2)
		time.Sleep(moveEventLinger / 4)
		add(3)
		time.Sleep(moveEventLinger)
		ev.flush(time.Hour)

		var counts []int
		var at []time.Duration
		for _, c := range fl.sent(protocol.MoveEvent) {
			moves, _ := movesOf(t, c.Msg)
			counts = append(counts, len(moves))
			at = append(at, c.At.Sub(start))
		}
		wantAt := []time.Duration{moveEventLinger, moveEventLinger*3/2 + moveEventLinger}
		if !slices.Equal(counts, []int{1, 2}) || !slices.Equal(at, wantAt) {
			t.Errorf("MOVE_EVENTs carried %v moves at %v, want [1 2] at %v", counts, at, wantAt)
		}
	})
}

// finalOnly is a state that only encodes: encodeBatch needs nothing else.
type finalOnly struct {
	game.State
	final map[string]any
}

func (s finalOnly) Final() map[string]any { return s.final }

// A batch is bounded by moveBatchBytes, but always carries the oldest pending move. A
// state that cannot be encoded ends the batch before it, and fails it only when first.
func TestEncodeBatch(t *testing.T) {
	move := func(state map[string]any) pendingMove {
		return pendingMove{notice: protocol.MoveNotice{PlayerID: "p1", Move: json.RawMessage(`1`)}, state: finalOnly{final: state}}
	}
	small := move(map[string]any{})
	big := move(map[string]any{"x": strings.Repeat("x", moveBatchBytes)})
	broken := move(map[string]any{"x": func() {}})
	tests := []struct {
		name    string
		pending []pendingMove
		want    int // -1: an error
	}{
		{"one", []pendingMove{small}, 1},
		{"a few", slices.Repeat([]pendingMove{small}, 10), 10},
		{"one oversized", []pendingMove{big, small}, 1},
		{"an oversized after a small", []pendingMove{small, big}, 1},
		{"an unencodable after a small", []pendingMove{small, broken, small}, 1},
		{"an unencodable first", []pendingMove{broken, small}, -1},
	}
	for _, tc := range tests {
		got, err := encodeBatch(tc.pending)
		switch {
		case tc.want < 0 && err == nil:
			t.Errorf("%s: encoded %d moves, want an error", tc.name, len(got))
		case tc.want >= 0 && (err != nil || len(got) != tc.want):
			t.Errorf("%s: encoded %d moves (%v), want %d", tc.name, len(got), err, tc.want)
		case tc.want > 0:
			if want, _ := json.Marshal(tc.pending[0].state.Final()); string(got[0].State) != string(want) {
				t.Errorf("%s: first state %.40s, want %.40s", tc.name, got[0].State, want)
			}
		}
	}
}

// One MOVE_EVENT carries at most protocol.MaxMoveBatch moves, the oldest.
func TestMoveBatchBound(t *testing.T) {
	r, err := New(Config{ID: "ref1", Addr: "127.0.0.1:0", LeagueURL: "http://league.test/mcp", Stdout: io.Discard}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ev := &moveEvents{r: r, batches: true, log: zerolog.Nop()}
	for i := range protocol.MaxMoveBatch + 5 {
		ev.pending = append(ev.pending, pendingMove{notice: protocol.MoveNotice{StepNumber: i + 1, PlayerID: "p1", Move: json.RawMessage(`1`)},
			state: finalOnly{final: map[string]any{}}})
	}
	msg, n, _ := ev.next()
	if msg == nil || n != protocol.MaxMoveBatch {
		t.Fatalf("next built %v with %d moves, want %d", msg, n, protocol.MaxMoveBatch)
	}
	if moves, _ := movesOf(t, msg); len(moves) != n || moves[0].StepNumber != 1 || moves[n-1].StepNumber != n {
		t.Errorf("the batch carries %d moves, steps %d to %d, want 1 to %d", len(moves), moves[0].StepNumber, moves[len(moves)-1].StepNumber, n)
	}
}

// Move events never slow a match and no move is dropped while the League Manager is slow:
// queueing 101 moves takes no time. To a League Manager without move_batches each move is
// one MOVE_EVENT with one attempt, and an error answer of any reason (even
// UNSUPPORTED_MESSAGE) only counts as a failure. With move_batches, a batch without an
// answer goes again with the moves that joined it, up to moveEventAttempts times; a
// refused one is not sent again.
func TestMoveEventsAreBestEffort(t *testing.T) {
	silent := func(ctx context.Context, _ *protocol.Message) (*protocol.Message, error) { return nil, hang(ctx) }
	refusing := func(context.Context, *protocol.Message) (*protocol.Message, error) {
		return nil, protocol.Errorf(protocol.ReasonNotAssignedReferee, "not yours")
	}
	unsupported := func(context.Context, *protocol.Message) (*protocol.Message, error) {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "the League Manager does not accept MOVE_EVENT")
	}
	acking := func(_ context.Context, m *protocol.Message) (*protocol.Message, error) { return moveEventAck(m) }
	const moves = 101
	tests := []struct {
		name    string
		batches bool
		answer  func(ctx context.Context, m *protocol.Message) (*protocol.Message, error)
		// wantCalls is how many MOVE_EVENTs reach the League Manager, wantCarried how
		// many moves they carry in all, wantSent and wantFailed how many moves each counts.
		wantCalls, wantCarried, wantSent, wantFailed int
	}{
		{"silent league", false, silent, moves, moves, 0, moves},
		{"league refusing", false, refusing, moves, moves, 0, moves},
		{"league answering unsupported", false, unsupported, moves, moves, 0, moves},
		{"league acknowledging", false, acking, moves, moves, moves, 0},
		// The first move alone, then all of them twice more.
		{"silent league, batches", true, silent, moveEventAttempts, 1 + 2*moves, 0, moves},
		// The first move alone, then the others once.
		{"league refusing, batches", true, refusing, 2, moves, 0, moves},
		{"league acknowledging, batches", true, acking, 2, moves, moves, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				fl := newFakeLeagueCaller(t, func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
					if n == 0 {
						// The first event is held until every move is pending.
						select {
						case <-release:
						case <-ctx.Done():
						}
					}
					return tc.answer(ctx, m)
				})
				r := registeredReferee(t, fl, zerolog.Nop(), nil)
				if tc.batches {
					r.leagueFeatures = []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches}
				}
				g := ttt(t)
				ev := r.startMoveEvents(t.Context(), protocol.Assignment{MatchID: "m1", RoundID: "round-1", GameType: game.TypeTicTacToe, Players: []string{"p1", "p2"}}, zerolog.Nop())
				rec := protocol.MoveRecord{Step: 1, Player: "p1", Move: json.RawMessage(`{"row":0,"col":0}`), Outcome: protocol.MoveSuccess}
				ev.add(rec, g.NewState(1))
				if tc.batches {
					time.Sleep(moveEventLinger) // the first batch is due
				}
				synctest.Wait() // the sender holds the first event
				start := time.Now()
				for range moves - 1 {
					ev.add(rec, g.NewState(1))
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("queueing %d events took %v, want no time at all", moves, d)
				}
				close(release)
				ev.flush(time.Hour)
				sent := fl.sent(protocol.MoveEvent)
				if len(sent) != tc.wantCalls {
					t.Errorf("the League Manager got %d MOVE_EVENTs, want %d", len(sent), tc.wantCalls)
				}
				carried := 0
				for _, c := range sent {
					if c.Opt.Retry.Attempts != 1 || c.Opt.Timeout != moveEventTimeout {
						t.Errorf("a move event was sent with options %+v, want one attempt with a %v deadline", c.Opt, moveEventTimeout)
					}
					ms, batch := movesOf(t, c.Msg)
					if batch != tc.batches {
						t.Errorf("a MOVE_EVENT is a batch: %v, want %v", batch, tc.batches)
					}
					carried += len(ms)
				}
				if carried != tc.wantCarried {
					t.Errorf("the MOVE_EVENTs carried %d moves, want %d", carried, tc.wantCarried)
				}
				want := map[string]float64{"sent": float64(tc.wantSent), "failed": float64(tc.wantFailed), "dropped": 0, "with_result": 0}
				if got := metricCounts(t, r); !maps.Equal(got, want) {
					t.Errorf("got counts %v, want %v", got, want)
				}
			})
		})
	}
}

// The pending list drops nothing below its safety bound, maxPendingMoves; beyond it a
// move is counted dropped.
func TestMoveEventsSafetyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		fl := newFakeLeagueCaller(t, func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			if n == 0 {
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
			return moveEventAck(m)
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		r.leagueFeatures = []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches}
		ev := r.startMoveEvents(t.Context(), protocol.Assignment{MatchID: "m1", RoundID: "round-1", GameType: game.TypeTicTacToe, Players: []string{"p1", "p2"}}, zerolog.Nop())
		rec := protocol.MoveRecord{Step: 1, Player: "p1", Move: json.RawMessage(`1`), Outcome: protocol.MoveSuccess}
		st := ttt(t).NewState(1)
		ev.add(rec, st)
		synctest.Wait() // the first is in flight, pending until acknowledged
		for range maxPendingMoves + 1 {
			ev.add(rec, st)
		}
		close(release)
		ev.flush(time.Hour)
		want := map[string]float64{"sent": maxPendingMoves, "failed": 0, "dropped": 2, "with_result": 0}
		if got := metricCounts(t, r); !maps.Equal(got, want) {
			t.Errorf("got counts %v, want %v", got, want)
		}
	})
}

// A played match flushes its moves before it reports the result: the report goes once
// the last MOVE_EVENT is acknowledged, and the League Manager has every move by then.
func TestMoveEventsFlushBeforeTheResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slow = 300 * time.Millisecond
		league := func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			if m.Envelope.MessageType == protocol.MoveEvent {
				time.Sleep(slow)
			}
			return leagueAcks(ctx, m, n)
		}
		g := ttt(t)
		b := newBench(t, []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches}, nil, league, map[string]fakePlayer{
			"http://p1": scripted(g, "p1", firstLegal(g)),
			"http://p2": scripted(g, "p2", firstLegal(g)),
		})
		b.ok(assignMsg(t, "m-1"), protocol.MatchAssignmentAck)
		time.Sleep(time.Minute)
		synctest.Wait()

		report, md := b.onlyReport("m-1")
		events := b.league.sent(protocol.MoveEvent)
		checkMoves(t, g, 0, b.sentMoves(), md.Moves)
		if last := events[len(events)-1]; report.At.Before(last.At.Add(slow)) {
			t.Errorf("the result went at %v, before the last MOVE_EVENT (sent at %v) was acknowledged", report.At, last.At)
		}
	})
}

// A League Manager that never answers MOVE_EVENT holds the result at most
// moveEventFlush, and the moves it did not take count as failed.
func TestMoveEventsNeverHoldTheResultLong(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		league := func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			if m.Envelope.MessageType == protocol.MoveEvent {
				return nil, hang(ctx)
			}
			return leagueAcks(ctx, m, n)
		}
		g := ttt(t)
		b := newBench(t, []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches}, nil, league, map[string]fakePlayer{
			"http://p1": scripted(g, "p1", firstLegal(g)),
			"http://p2": scripted(g, "p2", firstLegal(g)),
		})
		start := time.Now()
		b.ok(assignMsg(t, "m-1"), protocol.MatchAssignmentAck)
		time.Sleep(time.Minute)
		synctest.Wait()

		report, md := b.onlyReport("m-1")
		// The players answer at once, so play ends when it starts.
		if d := report.At.Sub(start); d != moveEventFlush {
			t.Errorf("the result went %v after play ended, want %v", d, moveEventFlush)
		}
		want := map[string]float64{"sent": 0, "failed": float64(len(md.Moves)), "dropped": 0, "with_result": 0}
		if got := metricCounts(t, b.r); !maps.Equal(got, want) {
			t.Errorf("got counts %v, want %v", got, want)
		}
	})
}

// sentMoves is every move the MOVE_EVENTs sent so far carried, in order.
func (b *bench) sentMoves() []protocol.MoveNotice {
	b.t.Helper()
	var out []protocol.MoveNotice
	for _, c := range b.league.sent(protocol.MoveEvent) {
		moves, _ := movesOf(b.t, c.Msg)
		out = append(out, moves...)
	}
	return out
}

// ackingCaller acknowledges every MOVE_EVENT at once, without the schema checks of
// fakeLeagueCaller, so a benchmark measures the referee's side.
type ackingCaller struct{}

func (ackingCaller) Call(_ context.Context, _ string, m *protocol.Message, _ protocol.CallOptions) (*protocol.Message, error) {
	return moveEventAck(m)
}

// BenchmarkMoveEventBatching measures a match's move events to a League Manager that
// announced move_batches: 60 moves (a long tic-tac-toe series' worth) added as play
// applies them, then flushed.
func BenchmarkMoveEventBatching(b *testing.B) {
	benchMoveEvents(b, 60, []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches}, func(ev *moveEvents) { ev.flush(time.Minute) })
}

// BenchmarkMoveEventsWithResult is a fast tic-tac-toe match's move events to a League
// Manager that announced result_moves: its 9 moves go with the result, no MOVE_EVENT.
func BenchmarkMoveEventsWithResult(b *testing.B) {
	benchMoveEvents(b, 9, []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches, protocol.FeatureResultMoves}, (*moveEvents).end)
}

// benchMoveEvents measures one match's move events: moves tic-tac-toe moves to a League
// Manager that announced features and acknowledges every MOVE_EVENT, then end.
func benchMoveEvents(b *testing.B, moves int, features []string, end func(*moveEvents)) {
	r, err := New(Config{ID: "ref1", Addr: "127.0.0.1:0", LeagueURL: "http://league.test/mcp", Stdout: io.Discard}, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	r.league = ackingCaller{}
	r.token, r.leagueID = "6f1c3b1e-7a55-4b8e-9a55-3c1d2e4f5a6b", "league-1"
	r.leagueFeatures = features
	g, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		b.Fatal(err)
	}
	st := g.NewState(1)
	rec := protocol.MoveRecord{Step: 1, Player: "p1", Move: json.RawMessage(`{"row":0,"col":0}`), Outcome: protocol.MoveSuccess}
	a := protocol.Assignment{MatchID: "m1", RoundID: "round-1", GameType: game.TypeTicTacToe, Players: []string{"p1", "p2"}}
	b.ReportAllocs()
	for b.Loop() {
		ev := r.startMoveEvents(context.Background(), a, zerolog.Nop())
		for range moves {
			ev.add(rec, st)
		}
		end(ev)
	}
}

// To a League Manager that announced result_moves, the moves pending when play ends go
// with the result: a match that ends within the linger sends no MOVE_EVENT and reports
// at once; a slower one sends what play left behind it during the match, and only the
// rest goes with the result. Either way every move is counted once.
func TestMoveEventsLeftToTheResult(t *testing.T) {
	for _, tc := range []struct {
		name      string
		think     time.Duration // each player's time per move
		wantSends bool
	}{
		{"fast match", 0, false},
		{"slow match", 150 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := ttt(t)
				think := func(ctx context.Context, m *protocol.Message, p map[string]any, n int) (any, error) {
					time.Sleep(tc.think)
					return firstLegal(g)(ctx, m, p, n)
				}
				b := newBench(t, []string{protocol.FeatureMoveEvents, protocol.FeatureMoveBatches, protocol.FeatureResultMoves}, nil, leagueAcks, map[string]fakePlayer{
					"http://p1": scripted(g, "p1", think),
					"http://p2": scripted(g, "p2", think),
				})
				start := time.Now()
				b.ok(assignMsg(t, "m-1"), protocol.MatchAssignmentAck)
				time.Sleep(time.Minute)
				synctest.Wait()

				report, md := b.onlyReport("m-1")
				sent := b.sentMoves()
				if got := len(sent) > 0; got != tc.wantSends {
					t.Errorf("sent %d moves in MOVE_EVENTs, want some: %v", len(sent), tc.wantSends)
				}
				checkMoves(t, g, 0, sent, md.Moves[:len(sent)])
				want := map[string]float64{"sent": float64(len(sent)), "failed": 0, "dropped": 0, "with_result": float64(len(md.Moves) - len(sent))}
				if got := metricCounts(t, b.r); !maps.Equal(got, want) {
					t.Errorf("got counts %v, want %v", got, want)
				}
				// Play took the players' time; the result does not wait for a flush.
				if d := report.At.Sub(start); d != time.Duration(len(md.Moves))*tc.think {
					t.Errorf("the result went %v after the assignment, want %v", d, time.Duration(len(md.Moves))*tc.think)
				}
			})
		})
	}
}
