package league

import (
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
)

// A gauntlet under an SPRT (elo0 0, elo1 50) is scheduled a game pair at a time; the
// candidate wins every game, so the test accepts H1 long before games_per_pair: the
// league completes there, /api/league shows the test's state, the audit log notes the
// decision, and replay re-runs the test to the same decision after the same pairs.
func TestSPRTStopsTheGauntlet(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *config.Config) {
		c.Scheduling.Algorithm, c.Scheduling.Candidates, c.Scheduling.GamesPerPair = schedule.Gauntlet, []string{"p01"}, 200
		c.Scheduling.SPRT = &schedule.SPRT{Elo0: 0, Elo1: 50, Alpha: 0.05, Beta: 0.05}
	}})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	l.start()
	games := 0
	for {
		h.settle()
		_, ms := h.round()
		if len(ms) == 0 {
			break
		}
		if len(ms) != 1 {
			t.Fatalf("a round of %d matches, want one game", len(ms))
		}
		winner := 0
		if ms[0].Players[1] == "p01" {
			winner = 1
		}
		l.reportOK(ms[0], decided(ms[0], winner))
		games++
		if games > 200 {
			t.Fatal("the gauntlet went past games_per_pair")
		}
	}
	if got := h.m.State(); got != StateCompleted {
		t.Fatalf("state %s, want COMPLETED once the SPRT decided", got)
	}
	v, err := h.m.LeagueView(web.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if v.SPRT == nil || v.SPRT.Decision != schedule.AcceptH1 || v.SPRT.Pairs*2 != games || games >= 200 || v.SPRT.LLR < v.SPRT.Upper {
		t.Fatalf("after %d games the view's SPRT is %+v: want H1 accepted, every game counted", games, v.SPRT)
	}
	t.Logf("H1 after %d games: %+v", games, *v.SPRT)
	if h.auditLine(`"SPRT_DECIDED"`, `"decision":"H1"`) == 0 {
		t.Error("the audit log does not note the decision")
	}
	lg := h.rebuild()
	if n, err := lg.CheckPairings(); err != nil || n != games || lg.SPRT == nil || lg.SPRT.Pairs != v.SPRT.Pairs {
		t.Errorf("CheckPairings = %d, %v (logged %+v); want %d rounds rebuilt and the decision reproduced", n, err, lg.SPRT, games)
	}
	// A forged decision is found.
	lg.SPRT.Decision = schedule.AcceptH0
	if _, err := lg.CheckPairings(); err == nil {
		t.Error("a forged SPRT decision passes CheckPairings")
	}
}

// The SPRT's decision is written to the audit log before the store completes the league:
// while the store refuses the completion (as a crash right after the decision would leave
// it), the log already holds the decision, once however often the completion is retried;
// after a restart the league completes and replay reproduces the decision.
func TestSPRTDecisionNotedBeforeTheLeagueCompletes(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *config.Config) {
		c.Scheduling.Algorithm, c.Scheduling.Candidates, c.Scheduling.GamesPerPair = schedule.Gauntlet, []string{"p01"}, 200
		c.Scheduling.SPRT = &schedule.SPRT{Elo0: 0, Elo1: 50, Alpha: 0.05, Beta: 0.05}
	}})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	if _, err := h.store.DB().Exec(`CREATE TRIGGER refuse_completion BEFORE UPDATE OF status ON leagues WHEN NEW.status = 'COMPLETED'
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	l.start()
	for range 200 {
		h.settle()
		_, ms := h.round()
		if len(ms) != 1 || ms[0].Status == protocol.MatchStateCompleted {
			break
		}
		winner := 0
		if ms[0].Players[1] == "p01" {
			winner = 1
		}
		l.reportOK(ms[0], decided(ms[0], winner))
	}
	h.settle()
	h.settle()
	if got := h.m.State(); got == StateCompleted {
		t.Fatal("the league completed although the store refused it")
	}
	if n := h.auditCount(`"SPRT_DECIDED"`); n != 1 {
		t.Fatalf("%d SPRT_DECIDED in the log before the league completes, want 1", n)
	}
	if _, err := h.store.DB().Exec(`DROP TRIGGER refuse_completion`); err != nil {
		t.Fatal(err)
	}
	h.restart()
	h.settle()
	if got := h.m.State(); got != StateCompleted {
		t.Fatalf("state %s after the restart, want COMPLETED", got)
	}
	lg := h.rebuild()
	if _, err := lg.CheckPairings(); err != nil || lg.SPRT == nil || lg.SPRT.Decision != schedule.AcceptH1 {
		t.Errorf("CheckPairings: %v, logged %+v: want H1 reproduced", err, lg.SPRT)
	}
}
