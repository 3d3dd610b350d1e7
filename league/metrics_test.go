package league

import (
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/agentleague/agentleague/protocol"
)

// scrape reads GET /metrics of the harness's League Manager.
func (h *harness) scrape() map[string]float64 {
	h.t.Helper()
	m, err := testtools.ScrapeMetrics(Routes(h.m, h.srv))
	if err != nil {
		h.t.Fatal(err)
	}
	return m
}

// Every metric of the League Manager moves during a league, as GET /metrics shows in
// the Prometheus text format: registrations, matches and the round, result processing,
// timeouts (a lease and a result deadline run out), violations, standings queries,
// active and suspended agents, move events.
func TestMetricsMove(t *testing.T) {
	clock := newFakeClock()
	// The suspension must outlast the longest legal match waited for below.
	h := newHarness(t, harnessOptions{clock: clock, cfg: func(c *config.Config) { c.Timeouts.Enforcement.SuspensionDurationSeconds = 86400 }})
	before := h.scrape()
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	h.refused(refereeRegistration(t, "ref1", "http://127.0.0.1:9/other/mcp", nil), protocol.ReasonDuplicateRegistration)
	l.start()
	h.settle()
	h.ok(standingsQuery(t, protocol.SenderAdmin, testAdminToken, ""))
	_, ms := h.round()
	mt := ms[0]
	moves, views := tttPlay(t, [2]int{0, 0})
	h.ok(h.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, 1, mt.Players[0], moves[0], views[0]))
	// Three timeouts suspend the first player of mt.
	l.reportWithMeta(mt, decided(mt, 1), violationsOf(map[string]int{mt.Players[0]: 3}))
	// ms[1]'s referee holds a lease that runs out; the match goes to the other referee,
	// whose result never comes.
	h.ok(heartbeatMsg(t, ms[1].Referee, l.refTokens[ms[1].Referee], ms[1].ID))
	clock.Advance(h.cfg.LeaseDuration())
	h.settle()
	clock.Advance(max(h.cfg.ResultReportTimeout(), h.m.e.rules.longestMatch()))
	after := h.scrape()

	tests := []struct {
		series string
		want   float64 // the least it must have moved by
	}{
		{`league_registrations_total{kind="player",result="accepted"}`, 4},
		{`league_registrations_total{kind="referee",result="accepted"}`, 2},
		{`league_registrations_total{kind="referee",result="refused"}`, 1},
		{`league_matches{status="COMPLETED"}`, 1},
		{`league_matches{status="PENDING"}`, 1},
		{`league_current_round`, 1},
		{`league_result_processing_seconds_count`, 1},
		{`league_timeouts_total{kind="lease"}`, 1},
		{`league_timeouts_total{kind="match_deadline"}`, 1},
		{`league_violations_total{kind="timeout"}`, 3},
		{`league_standings_queries_total`, 1},
		{`league_agents_active{kind="player"}`, 3},
		{`league_agents_active{kind="referee"}`, 1}, // the other one is lost
		{`league_agents_suspended{kind="player"}`, 1},
		{`league_move_events_total{result="accepted"}`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.series, func(t *testing.T) {
			series := testtools.WithLabel(tc.series, "league_id", h.cfg.League.LeagueID)
			got, ok := after[series]
			if !ok {
				t.Fatalf("GET /metrics has no %s", series)
			}
			if moved := got - before[series]; moved < tc.want {
				t.Errorf("%s moved from %v to %v, want a move of at least %v", series, before[series], got, tc.want)
			}
		})
	}
}
