package referee

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/promtext"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// moveEventAck acknowledges a MOVE_EVENT as the League Manager does.
func moveEventAck(m *protocol.Message) (*protocol.Message, error) {
	out, err := leagueReply(m, protocol.MoveEventAck, map[string]string{"status": "acknowledged"})
	if err == nil {
		out.Envelope.MatchID = m.Envelope.MatchID
	}
	return out, err
}

// Every applied move of a match becomes one MOVE_EVENT, in order, with the referee's
// token, the match context and the state after the move.
func TestMoveEventsFollowTheMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fl := newFakeLeagueCaller(t, func(_ context.Context, m *protocol.Message, _ int) (*protocol.Message, error) {
			return moveEventAck(m)
		})
		r := registeredReferee(t, fl, zerolog.Nop(), nil)
		g := ttt(t)
		runner := newRunner(t, game.TypeTicTacToe, newFakeCaller(t, map[string]fakePlayer{
			"http://p1": scripted(g, "p1", firstLegal(g)),
			"http://p2": scripted(g, "p2", firstLegal(g)),
		}))
		ev := r.startMoveEvents(t.Context(), runner.A, zerolog.Nop())
		runner.OnMove = ev.add
		rep, err := runner.Run(t.Context())
		if err != nil {
			t.Fatal(err)
		}
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
			e := c.msg.Envelope
			if e.AuthToken != r.token || e.MatchID != runner.A.MatchID || e.RoundID != runner.A.RoundID || e.LeagueID != "league-1" || e.Sender != "referee:ref1" {
				t.Errorf("event %d envelope %+v, want the referee's token and the match context", i, e)
			}
			if c.opt.Timeout != moveEventTimeout || c.opt.Retry.Attempts != 1 {
				t.Errorf("event %d options %+v, want one attempt with a %v deadline", i, c.opt, moveEventTimeout)
			}
			var p struct {
				Step    int             `json:"step_number"`
				Player  string          `json:"player_id"`
				Move    json.RawMessage `json:"move"`
				Outcome string          `json:"outcome"`
				State   map[string]any  `json:"state"`
			}
			if err := c.msg.Decode(&p); err != nil {
				t.Fatal(err)
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
	m, err := promtext.Scrape(r.routes())
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

// Move events never slow a match: a League Manager that does not answer them costs the
// match nothing, the queue drops what it cannot hold, each event gets one attempt, and an
// error answer of any reason (even UNSUPPORTED_MESSAGE from a League Manager that
// announced move_events) only counts as a failure.
func TestMoveEventsAreBestEffort(t *testing.T) {
	tests := []struct {
		name   string
		answer func(ctx context.Context, m *protocol.Message) (*protocol.Message, error)
		// wantCalls is how many of the 101 events reach the League Manager.
		wantCalls            int
		wantSent, wantFailed bool
	}{
		{"silent league", func(ctx context.Context, _ *protocol.Message) (*protocol.Message, error) { return nil, hang(ctx) }, 1 + moveEventQueue, false, true},
		{"league refusing", func(context.Context, *protocol.Message) (*protocol.Message, error) {
			return nil, protocol.Errorf(protocol.ReasonNotAssignedReferee, "not yours")
		}, 1 + moveEventQueue, false, true},
		{"league answering unsupported", func(context.Context, *protocol.Message) (*protocol.Message, error) {
			return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "the League Manager does not accept MOVE_EVENT")
		}, 1 + moveEventQueue, false, true},
		{"league acknowledging", func(_ context.Context, m *protocol.Message) (*protocol.Message, error) { return moveEventAck(m) }, 1 + moveEventQueue, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				fl := newFakeLeagueCaller(t, func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
					if n == 0 {
						// The first event is held until the queue is full.
						select {
						case <-release:
						case <-ctx.Done():
						}
					}
					return tc.answer(ctx, m)
				})
				r := registeredReferee(t, fl, zerolog.Nop(), nil)
				g := ttt(t)
				ev := r.startMoveEvents(t.Context(), protocol.Assignment{MatchID: "m1", RoundID: "round-1", GameType: game.TypeTicTacToe, Players: []string{"p1", "p2"}}, zerolog.Nop())
				rec := protocol.MoveRecord{Step: 1, Player: "p1", Move: json.RawMessage(`{"row":0,"col":0}`), Outcome: protocol.MoveSuccess}
				start := time.Now()
				ev.add(rec, g.NewState(1))
				synctest.Wait() // the sender holds the first event
				for range 100 {
					ev.add(rec, g.NewState(1))
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("queueing 101 events took %v, want no time at all", d)
				}
				close(release)
				ev.finish()
				<-ev.done
				ev.stop()
				if n := len(fl.sent(protocol.MoveEvent)); n != tc.wantCalls {
					t.Errorf("the League Manager got %d move events, want %d", n, tc.wantCalls)
				}
				for _, c := range fl.sent(protocol.MoveEvent) {
					if c.opt.Retry.Attempts != 1 {
						t.Errorf("a move event was sent with %d attempts, want 1", c.opt.Retry.Attempts)
					}
				}
				counts := map[string]float64{}
				metrics := scrape(t, r)
				for _, result := range []string{"sent", "failed", "dropped"} {
					counts[result] = metrics[`referee_move_events_total{result="`+result+`"}`]
				}
				if counts["dropped"] != 100-moveEventQueue {
					t.Errorf("%v events dropped, want %d (a full queue drops)", counts["dropped"], 100-moveEventQueue)
				}
				if (counts["sent"] > 0) != tc.wantSent || (counts["failed"] > 0) != tc.wantFailed {
					t.Errorf("got counts %v", counts)
				}
			})
		})
	}
}
