package referee

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// A player that always answers in exactly its increment never flags, however long the
// game: its clock stays where it started.
func TestClockIncrementOnlyNeverFlags(t *testing.T) {
	c := newClock(protocol.TimeControl{BaseMS: 2000, IncrementMS: 20})
	for move := 1; move <= 200; move++ {
		if _, flagged := c.charge(20 * time.Millisecond); flagged {
			t.Fatalf("flagged at move %d", move)
		}
	}
	if c.remaining != 2*time.Second {
		t.Errorf("remaining %v after 200 moves of exactly the increment, want 2s", c.remaining)
	}
}

// A player that spends its base time early flags at the right move: 10+0.1 with 3 s a
// move holds 10 s, 7.1, 4.2, 1.3, then the fourth move needs 3 s and has 1.3.
func TestClockFlagsAtTheRightMove(t *testing.T) {
	c := newClock(protocol.TimeControl{BaseMS: 10000, IncrementMS: 100})
	for move := 1; ; move++ {
		if c.deadline() < 3*time.Second {
			if move != 4 {
				t.Errorf("the clock runs out before move %d, want 4", move)
			}
			if _, flagged := c.charge(c.deadline() + time.Millisecond); !flagged {
				t.Error("a move past the deadline did not flag")
			}
			return
		}
		if _, flagged := c.charge(3 * time.Second); flagged {
			t.Fatalf("flagged at move %d with %v left", move, c.remaining)
		}
	}
}

// The bank is drawn on once the clock is spent and never refilled: the increment goes to
// the clock, not the bank.
func TestClockBankDrawnDown(t *testing.T) {
	c := newClock(protocol.TimeControl{BaseMS: 1000, IncrementMS: 100, BankMS: 5000})
	if _, flagged := c.charge(3 * time.Second); flagged {
		t.Fatal("flagged with the bank left")
	}
	if c.bank != 3*time.Second || c.remaining != 100*time.Millisecond {
		t.Errorf("after 3 s on a 1 s clock: bank %v, remaining %v; want 3s and the increment", c.bank, c.remaining)
	}
	for range 10 {
		c.charge(100 * time.Millisecond)
	}
	if c.bank != 3*time.Second {
		t.Errorf("the bank grew or shrank on moves within the increment: %v", c.bank)
	}
	if _, flagged := c.charge(4 * time.Second); !flagged {
		t.Error("4 s on 100 ms and a 3 s bank did not flag")
	}
	if c.bank != 0 {
		t.Errorf("bank %v after flagging, want 0", c.bank)
	}
}

// Measured network time is credited back: up to NetworkCreditPerMove a move and the base
// time a game; a move never gets back more than it took.
func TestClockNetworkCredit(t *testing.T) {
	c := newClock(protocol.TimeControl{BaseMS: 5000, IncrementMS: 100})
	c.observeNetwork(900 * time.Millisecond)
	c.observeNetwork(400 * time.Millisecond) // the shortest round trip counts (0 would be one too)
	if c.deadline() != 5400*time.Millisecond {
		t.Errorf("deadline %v, want the clock and the credit: 5.4s", c.deadline())
	}
	credit, flagged := c.charge(500 * time.Millisecond)
	if flagged || credit != 400*time.Millisecond || c.remaining != 5000*time.Millisecond {
		t.Errorf("a 500 ms move with 400 ms of network: credit %v, remaining %v, flagged %v; want 400ms, 5s", credit, c.remaining, flagged)
	}
	if credit, _ := c.charge(100 * time.Millisecond); credit != 100*time.Millisecond {
		t.Errorf("credit %v for a 100 ms move, want 100ms (never more than the move took)", credit)
	}
	// The game's credit stops at the base time.
	for range 20 {
		c.charge(400 * time.Millisecond)
	}
	if c.credited != 5*time.Second {
		t.Errorf("credited %v over the game, want the base time 5s", c.credited)
	}
	if credit, _ := c.charge(400 * time.Millisecond); credit != 0 {
		t.Errorf("credit %v past the game's cap", credit)
	}
	slow := newClock(protocol.TimeControl{BaseMS: 60000})
	slow.observeNetwork(3 * time.Second)
	if slow.creditFor() != protocol.NetworkCreditPerMove {
		t.Errorf("credit %v for a 3 s round trip, want the cap %v", slow.creditFor(), protocol.NetworkCreditPerMove)
	}
}

// A period gives the base time again after its moves.
func TestClockPeriods(t *testing.T) {
	c := newClock(protocol.TimeControl{BaseMS: 1000, MovesPerPeriod: 2})
	c.charge(600 * time.Millisecond)
	if got := c.show(); got.RemainingMS != 400 || got.MovesToGo != 1 {
		t.Errorf("after one move: %+v", got)
	}
	c.charge(300 * time.Millisecond)
	if got := c.show(); got.RemainingMS != 1100 || got.MovesToGo != 2 {
		t.Errorf("after the period: %+v, want 1100 ms and 2 moves to go", got)
	}
}

func TestTimeControlForms(t *testing.T) {
	for in, want := range map[string]protocol.TimeControl{
		"10+0.1":    {BaseMS: 10000, IncrementMS: 100},
		"40/60+0.5": {BaseMS: 60000, IncrementMS: 500, MovesPerPeriod: 40},
		"300":       {BaseMS: 300000},
		"2+0.02":    {BaseMS: 2000, IncrementMS: 20},
	} {
		got, err := protocol.ParseTimeControl(in)
		if err != nil || got != want {
			t.Errorf("ParseTimeControl(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if got.String() != in {
			t.Errorf("%+v.String() = %q, want %q", got, got.String(), in)
		}
	}
	for _, bad := range []string{"", "0", "-1+1", "x+1", "5+-1", "0/5+1", "5+x"} {
		if _, err := protocol.ParseTimeControl(bad); err == nil {
			t.Errorf("ParseTimeControl(%q) took it", bad)
		}
	}
}

// clocked answers an invitation after netDelay (its network) and every move after
// netDelay+think, with the first legal move.
func clocked(g game.Game, id string, netDelay, think time.Duration) fakePlayer {
	legal := firstLegal(g)
	return func(ctx context.Context, m *protocol.Message, call int) (*protocol.Message, error) {
		wait := netDelay
		if m.Envelope.MessageType == protocol.RequestMove {
			wait += think
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return scripted(g, id, legal)(ctx, m, call)
	}
}

// A match under 5+0.1 on fake time: REQUEST_MOVE shows both clocks and the whole clock as
// its deadline, each move record keeps the clock and the credit, and a player whose
// network takes 300 ms each way round is credited it: thinking nothing, it ends with its
// clock full, while one thinking 300 ms beside the referee is charged them.
func TestClockedMatchCreditsTheNetwork(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		fc := newFakeCaller(t, map[string]fakePlayer{
			"http://p1": clocked(g, "p1", 300*time.Millisecond, 0),
			"http://p2": clocked(g, "p2", 0, 300*time.Millisecond),
		})
		r := newRunner(t, game.TypeTicTacToe, fc)
		r.JoinTimeout = time.Second
		r.A.TimeControl = &protocol.TimeControl{BaseMS: 5000, IncrementMS: 100}
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Metadata.Termination != protocol.TerminationNormal {
			t.Fatalf("termination %s, loser %s: nobody ran out of time", rep.Metadata.Termination, rep.Metadata.Loser)
		}
		for _, mv := range rep.Metadata.Moves {
			if mv.ClockMS == nil || mv.NetworkMS == nil {
				t.Fatalf("move %+v has no clock", mv)
			}
			switch mv.Player {
			case "p1": // 300 ms of network, credited: the increment is a gain
				if *mv.NetworkMS != 300 || mv.ElapsedMS != 300 || mv.RTTMS == nil || *mv.RTTMS != 300 {
					t.Errorf("p1's move %d: network %d of %d ms, round trip %v; want 300 of 300, round trip 300", mv.Step, *mv.NetworkMS, mv.ElapsedMS, mv.RTTMS)
				}
			case "p2": // 300 ms of thinking on a 0 ms network: charged, less the increment
				if *mv.NetworkMS != 0 || mv.ElapsedMS != 300 || mv.RTTMS == nil || *mv.RTTMS != 0 {
					t.Errorf("p2's move %d: network %d of %d ms, round trip %v; want 0 of 300, round trip 0", mv.Step, *mv.NetworkMS, mv.ElapsedMS, mv.RTTMS)
				}
			}
		}
		first := map[string]int64{}
		for _, mv := range rep.Metadata.Moves {
			if _, seen := first[mv.Player]; !seen {
				first[mv.Player] = *mv.ClockMS
			}
		}
		if first["p1"] != 5100 || first["p2"] != 4800 {
			t.Errorf("clocks after the first move: %v, want p1 5100 (credited) and p2 4800 (charged)", first)
		}
		reqs := fc.sent(protocol.RequestMove, "c2")
		var p protocol.MoveRequest
		if err := reqs[0].Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Clocks == nil || p.Clocks.You.RemainingMS != 5000 || p.Clocks.Opponent.RemainingMS != 5100 || p.Clocks.IncrementMS != 100 || p.DeadlineMS != 5000 {
			t.Errorf("p2's first REQUEST_MOVE: clocks %+v, deadline %d; want 5000 against 5100, increment 100, deadline 5000", p.Clocks, p.DeadlineMS)
		}
	})
}

// A player that spends its clock flags at the right move under 1+0: 400 ms a move leaves
// 600, then 200; the third move runs out. It loses on time, without a warning ladder.
func TestClockedMatchFlags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		fc := newFakeCaller(t, map[string]fakePlayer{
			"http://p1": clocked(g, "p1", 0, 400*time.Millisecond),
			"http://p2": clocked(g, "p2", 0, 0),
		})
		r := newRunner(t, game.TypeTicTacToe, fc)
		r.A.TimeControl = &protocol.TimeControl{BaseMS: 1000}
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Metadata.Termination != protocol.TerminationTimeout || rep.Metadata.Loser != "p1" || rep.Outcome["p1"] != "loss" {
			t.Fatalf("termination %s, loser %s, outcome %v; want p1 lost on time", rep.Metadata.Termination, rep.Metadata.Loser, rep.Outcome)
		}
		var p1Moves int
		for _, mv := range rep.Metadata.Moves {
			if mv.Player == "p1" {
				p1Moves++
			}
		}
		if p1Moves != 2 || len(rep.Metadata.Violations) != 1 || rep.Metadata.Violations[0].Step != 5 {
			t.Errorf("p1 made %d moves, violations %+v; want 2 moves and one loss on time at step 5", p1Moves, rep.Metadata.Violations)
		}
		if n := len(fc.sent(protocol.RequestMove, "c1")); n != 3 {
			t.Errorf("%d requests to p1, want 3: no request again after running out", n)
		}
	})
}

// A player of someone else's that answers its invitation slowly (900 ms) to be credited
// as if its network were slow gains nothing once it has answered a move fast: its first
// move takes 10 ms, and its later 500 ms moves are credited 10 ms, not 500.
func TestClockCreditFollowsTheFastestAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		legal := firstLegal(g)
		slowInvite := func(ctx context.Context, m *protocol.Message, call int) (*protocol.Message, error) {
			wait := 500 * time.Millisecond
			switch {
			case m.Envelope.MessageType == protocol.GameInvitation:
				wait = 900 * time.Millisecond
			case call == 1: // the first move request (call 0 is the invitation)
				wait = 10 * time.Millisecond
			case m.Envelope.MessageType == protocol.GameOver:
				wait = 0
			}
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return scripted(g, "p1", legal)(ctx, m, call)
		}
		fc := newFakeCaller(t, map[string]fakePlayer{
			"http://p1": slowInvite,
			"http://p2": clocked(g, "p2", 0, 0),
		})
		r := newRunner(t, game.TypeTicTacToe, fc)
		r.JoinTimeout = 2 * time.Second
		r.A.TimeControl = &protocol.TimeControl{BaseMS: 10000, IncrementMS: 100}
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var p1, rtt []int64
		for _, mv := range rep.Metadata.Moves {
			if mv.Player == "p1" {
				p1, rtt = append(p1, *mv.NetworkMS), append(rtt, *mv.RTTMS)
			}
		}
		// The raw round trip and the credit, side by side: 900 ms measured on the
		// invitation, 10 credited of a 10 ms move; then 10 measured and credited.
		if len(p1) < 2 || p1[0] != 10 || rtt[0] != 900 {
			t.Fatalf("p1's credits %v of round trips %v, want 10 of 900 on its first move", p1, rtt)
		}
		for i, c := range p1[1:] {
			if c != 10 || rtt[i+1] != 10 {
				t.Errorf("p1's move %d credited %d ms of a %d ms round trip, want 10 of 10: its fastest answer bounds the network", i+2, c, rtt[i+1])
			}
		}
	})
}

// Running out of time ends the match by the game's rule: a loss while the opponent could
// still win, a draw once it could not (tic-tac-toe: every line holds a mark of the
// player who flagged). X plays e, c, d, h, O plays a, g, f, b; X then thinks past its
// clock of 1 s, at move 5 (O's left column lacks one mark: a loss) or at move 9 (no line open to
// O: a draw).
func TestClockedMatchFlagByTheRules(t *testing.T) {
	cells := map[float64][2]int{1: {1, 1}, 2: {0, 0}, 3: {0, 2}, 4: {2, 0}, 5: {1, 0}, 6: {1, 2}, 7: {2, 1}, 8: {0, 1}, 9: {2, 2}}
	for _, c := range []struct {
		flagAt      float64
		termination protocol.Termination
		loser       string
		outcome     protocol.Outcome
		action      protocol.ViolationAction
	}{
		{5, protocol.TerminationTimeout, "p1", protocol.Loss, protocol.ActionTechnicalLoss},
		{9, protocol.TerminationTimeoutDraw, "", protocol.Draw, protocol.ActionDraw},
	} {
		synctest.Test(t, func(t *testing.T) {
			g := ttt(t)
			script := func(ctx context.Context, _ *protocol.Message, p map[string]any, _ int) (any, error) {
				n, _ := p["step_context"].(map[string]any)["move_number"].(float64)
				if n == c.flagAt {
					<-ctx.Done()
					return nil, ctx.Err()
				}
				return map[string]int{"row": cells[n][0], "col": cells[n][1]}, nil
			}
			fc := newFakeCaller(t, map[string]fakePlayer{"http://p1": scripted(g, "p1", script), "http://p2": scripted(g, "p2", script)})
			r := newRunner(t, game.TypeTicTacToe, fc)
			r.A.TimeControl = &protocol.TimeControl{BaseMS: 1000}
			rep, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			md := rep.Metadata
			if md.Termination != c.termination || md.Loser != c.loser || rep.Outcome["p1"] != string(c.outcome) || len(md.Moves) != int(c.flagAt)-1 {
				t.Fatalf("X out of time at move %v: termination %s, loser %q, outcome %v after %d moves; want %s, %q, p1 %s",
					c.flagAt, md.Termination, md.Loser, rep.Outcome, len(md.Moves), c.termination, c.loser, c.outcome)
			}
			if len(md.Violations) != 1 || md.Violations[0].Player != "p1" || md.Violations[0].Action != c.action {
				t.Errorf("violations %+v, want p1's timeout with action %s", md.Violations, c.action)
			}
		})
	}
}
