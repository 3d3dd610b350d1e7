package player

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
)

// Both players think 40 ms before each move: every answer takes exactly that long on
// synctest's clock, and so does the match, move by move.
func TestThinkDelaysEveryAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, p1, p2 := inProcessMatch(t, game.TypeTicTacToe, "")
		p1.cfg.Think, p2.cfg.Think = 40*time.Millisecond, 40*time.Millisecond
		start := time.Now()
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Metadata.Termination != protocol.TerminationNormal || len(rep.Metadata.Violations) != 0 {
			t.Errorf("termination %s, violations %v; want a normal match", rep.Metadata.Termination, ladder(rep))
		}
		if len(rep.Metadata.Moves) == 0 {
			t.Fatal("got no moves")
		}
		for _, m := range rep.Metadata.Moves {
			if m.ElapsedMS != 40 {
				t.Errorf("%s answered step %d in %d ms, want 40", m.Player, m.Step, m.ElapsedMS)
			}
		}
		if got, want := time.Since(start), time.Duration(len(rep.Metadata.Moves))*40*time.Millisecond; got != want {
			t.Errorf("match took %v of fake time, want %v for %d moves", got, want, len(rep.Metadata.Moves))
		}
	})
}

// A player that thinks longer than the move deadline stops thinking when the referee
// gives up, so nothing is left running, and loses on the timeout ladder.
func TestThinkStopsWhenTheRefereeGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, p1, _ := inProcessMatch(t, game.TypeTicTacToe, "")
		p1.cfg.Think = time.Hour
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		wantTechnicalLoss(t, rep, protocol.TerminationTimeout, "timeout/warning", "timeout/forced_move", "timeout/technical_loss")
		synctest.Wait()
	})
}

func TestPause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := registeredPlayer(t, "p1", "")
		start := time.Now()
		if err := p.pause(context.Background(), 0); err != nil || time.Since(start) != 0 {
			t.Errorf("pause 0: got %v after %v, want nil at once", err, time.Since(start))
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := p.pause(ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("pause past the deadline: got %v after %v, want the deadline after 1s", err, time.Since(start))
		}
		close(p.stopping)
		if err := p.pause(context.Background(), time.Minute); !errors.Is(err, errStopping) {
			t.Errorf("pause of a stopping player: got %v, want errStopping", err)
		}
	})
}

func TestThinkMustNotBeNegative(t *testing.T) {
	cfg := Config{ID: "p01", Addr: "127.0.0.1:0", LeagueURL: "http://127.0.0.1:8000/mcp", Strategy: "random", Think: -time.Second}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "think") {
		t.Errorf("Validate with a negative think time: got %v, want an error about it", err)
	}
}
