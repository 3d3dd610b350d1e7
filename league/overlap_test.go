package league

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
)

// overlapConfig sets scheduling.overlap_rounds (nil leaves the default).
func overlapConfig(v *bool) func(*config.Config) {
	return func(c *config.Config) { c.Scheduling.OverlapRounds = v }
}

// running lists the matches of every round that wait for their referee, in schedule order.
func (h *harness) running() []liveMatch {
	h.m.e.mu.Lock()
	defer h.m.e.mu.Unlock()
	var out []liveMatch
	for _, r := range h.m.e.fx.rounds {
		for _, mt := range r.matches {
			if mt.inFlight() {
				out = append(out, liveMatch{ID: mt.id, RoundID: mt.roundID, Referee: mt.referee, Status: mt.status, Players: mt.players, Seed: mt.seed})
			}
		}
	}
	return out
}

// checkPlayerOrder fails when a player has two matches in flight, or one while an
// earlier match of theirs (in schedule order) is not finished.
func (h *harness) checkPlayerOrder() {
	h.t.Helper()
	h.m.e.mu.Lock()
	defer h.m.e.mu.Unlock()
	open := map[string]string{} // player -> an earlier unfinished match
	for _, r := range h.m.e.fx.rounds {
		for _, mt := range r.matches {
			for _, p := range mt.players {
				if mt.inFlight() && open[p] != "" {
					h.t.Errorf("%s of %s is in flight before %s is finished", mt.id, p, open[p])
				}
				if !mt.finished() && open[p] == "" {
					open[p] = mt.id
				}
			}
		}
	}
}

func involves(mt liveMatch, players ...string) bool {
	return slices.Contains(players, mt.Players[0]) || slices.Contains(players, mt.Players[1])
}

// In a round robin a match starts once its players are free, without waiting for the
// slowest match of the round before; the round's snapshot is still taken when its last
// match ends and counts that round and the earlier ones only, as replay recounts them.
func TestRoundsOverlapWhenPairingsAreFixed(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2", "ref3"}, map[string]any{"max_concurrent_matches": 3}, playerIDs(6))
	l.start()
	h.settle()
	r1, first := h.round()
	if len(first) != 3 {
		t.Fatalf("round 1 has %d matches, want 3", len(first))
	}
	slow := first[0]
	l.reportOK(h.match(first[1].ID), decided(h.match(first[1].ID), 0))
	l.reportOK(h.match(first[2].ID), drawn(h.match(first[2].ID)))
	h.settle()
	h.checkPlayerOrder()
	if rid, _ := h.round(); rid != r1 {
		t.Fatalf("active round %s while %s is still played, want %s", rid, slow.ID, r1)
	}
	var early []liveMatch
	for _, mt := range h.running() {
		switch {
		case mt.ID == slow.ID:
		case mt.RoundID == r1 || involves(mt, slow.Players[:]...):
			t.Errorf("%s (%s, %v) is in flight", mt.ID, mt.RoundID, mt.Players)
		default:
			early = append(early, mt)
		}
	}
	if len(early) == 0 {
		t.Fatalf("no match of a later round started while %s runs: in flight %v", slow.ID, h.running())
	}
	l.refused(standingsQuery(t, protocol.PlayerSender("p01"), l.playerTokens["p01"], r1), protocol.ReasonUnknownRound)

	// A restart while two rounds are in flight assigns both again.
	h.restart()
	h.settle()
	if got := len(h.running()); got != 1+len(early) {
		t.Fatalf("after a restart %d matches in flight, want %d: %v", got, 1+len(early), h.running())
	}
	for _, mt := range early {
		mt = h.match(mt.ID)
		l.reportOK(mt, decided(mt, 1))
	}
	h.settle()
	mt := h.match(slow.ID)
	l.reportOK(mt, drawn(mt))
	h.settle()
	rows, _, found, err := h.store.Snapshot(r1)
	if err != nil || !found {
		t.Fatalf("snapshot of %s: found %v, %v", r1, found, err)
	}
	played := 0
	for _, r := range rows {
		played += r.MatchesPlayed
	}
	if played != 6 {
		t.Errorf("snapshot of %s counts %d games, want 6 (its 3 matches, not the later ones): %+v", r1, played, rows)
	}

	// The rest in an arbitrary order, each match as soon as it is in flight.
	rng := rand.New(rand.NewPCG(3, 4))
	for h.m.State() == StateActive {
		live := h.running()
		if len(live) == 0 {
			t.Fatalf("league active with no match in flight: %+v", h.m.Status())
		}
		mt := h.match(live[rng.IntN(len(live))].ID)
		l.reportOK(mt, decided(mt, rng.IntN(2)))
		h.settle()
		h.checkPlayerOrder()
	}
	if got := h.m.State(); got != StateCompleted {
		t.Fatalf("state %s, want COMPLETED", got)
	}
	lg := h.rebuild()
	if err := lg.CheckDB(h.store); err != nil {
		t.Errorf("CheckDB: %v", err)
	}
}

// With overlap_rounds off, and always in formats that pair from results, a round's
// matches wait for the whole round before.
func TestRoundBarrierWhenOverlapIsOff(t *testing.T) {
	off := false
	h := newHarness(t, harnessOptions{cfg: overlapConfig(&off)})
	l := h.register([]string{"ref1", "ref2", "ref3"}, map[string]any{"max_concurrent_matches": 3}, playerIDs(6))
	l.start()
	h.settle()
	r1, first := h.round()
	for _, mt := range first[1:] {
		mt = h.match(mt.ID)
		l.reportOK(mt, decided(mt, 0))
	}
	h.settle()
	if live := h.running(); len(live) != 1 || live[0].ID != first[0].ID {
		t.Fatalf("in flight %v, want only %s of %s", live, first[0].ID, r1)
	}
	mt := h.match(first[0].ID)
	l.reportOK(mt, decided(mt, 0))
	h.settle()
	if rid, ms := h.round(); rid == r1 || len(h.running()) != len(ms) {
		t.Errorf("after %s: active %s with %d matches, %d in flight", r1, rid, len(ms), len(h.running()))
	}
}
