package league

import (
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/web"
)

// An arena of 4 players is paired a round at a time from the results, the better id
// winning every game, until it stops (settled or at its budget of 10 games): the league
// completes, /api/league shows why it stopped, and the audit log alone pairs every round
// again identically.
func TestArenaLeague(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *config.Config) {
		c.Scheduling.Algorithm, c.Scheduling.Arena = schedule.Arena, &schedule.ArenaRules{MaxGames: 10}
		c.Ranking.RatingSamples = 20
		c.League.Seed = 39
	}})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	games, rounds := 0, 0
	for {
		h.settle()
		_, ms := h.round()
		if len(ms) == 0 {
			break
		}
		rounds++
		for _, mt := range ms {
			winner := 0
			if mt.Players[1] < mt.Players[0] {
				winner = 1
			}
			l.reportOK(mt, decided(mt, winner))
			games++
		}
		if games > 10 {
			t.Fatal("the arena went past its budget")
		}
	}
	if got := h.m.State(); got != StateCompleted {
		t.Fatalf("state %s, want COMPLETED once the arena stopped", got)
	}
	v, err := h.m.LeagueView(web.Page{})
	if err != nil {
		t.Fatal(err)
	}
	if v.Arena == nil || v.Arena.Games != games || v.Arena.Budget != 10 || v.Arena.Stopped == "" || v.Arena.Reason == "" {
		t.Fatalf("after %d games the view's arena is %+v: want it stopped, every game counted", games, v.Arena)
	}
	t.Logf("%d rounds, %+v", rounds, *v.Arena)
	lg := h.rebuild()
	if n, err := lg.CheckPairings(); err != nil || n != rounds {
		t.Errorf("CheckPairings = %d, %v; want %d rounds paired again", n, err, rounds)
	}
}
