package league

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

func swissConfig(rounds, byePoints int) func(*config.Config) {
	return func(c *config.Config) {
		c.Scheduling.Algorithm, c.Scheduling.Rounds, c.Scheduling.ByePoints = schedule.Swiss, rounds, &byePoints
		c.Ranking.Tiebreaks, c.Ranking.RatingSamples = []string{"sonneborn_berger", "head_to_head"}, 20
		c.League.Seed = 77
	}
}

// storedRounds lists the round ids in the database, in order.
func (h *harness) storedRounds() []string {
	h.t.Helper()
	return queryStrings(h.t, h.store.DB(), `SELECT round_id FROM rounds ORDER BY round_number`)
}

// auditLine is the first line of the audit log containing every one of parts.
func (h *harness) auditLine(parts ...string) int {
	h.t.Helper()
	entries, err := audit.Read(h.auditPath())
	if err != nil {
		h.t.Fatal(err)
	}
	for _, e := range entries {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(string(e.Message), p)
		}
		if all {
			return e.Line
		}
	}
	return 0
}

// auditCount counts the lines of the audit log that contain part.
func (h *harness) auditCount(part string) int {
	h.t.Helper()
	entries, err := audit.Read(h.auditPath())
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if strings.Contains(string(e.Message), part) {
			n++
		}
	}
	return n
}

// A Swiss round is paired only when the round before is complete, from its results; it
// is stored and noted in the audit log before any of its matches is assigned, the bye
// scores bye_points, a restart goes on with the same rounds, and the audit log alone
// pairs every round again identically.
func TestSwissRoundsArePairedFromResults(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: swissConfig(3, 2)})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(5))
	l.start()
	h.settle()
	if got := h.storedRounds(); len(got) != 1 {
		t.Fatalf("rounds stored at the start: %v, want round 1 only", got)
	}
	var f schedule.Format
	h.m.e.mu.Lock()
	f = h.m.e.format
	bye := h.m.e.fx.rounds[0].bye
	h.m.e.mu.Unlock()
	if f.Algorithm != schedule.Swiss || f.Rounds != 3 || f.ByeScore() != 2 || bye == "" {
		t.Fatalf("format %+v, bye %q", f, bye)
	}
	if rows, _ := h.store.Standings(); rows[0].PlayerID != bye || rows[0].Points != 2 || rows[0].MatchesPlayed != 0 {
		t.Errorf("standings %+v: the bye of %s scores 2 without a match", rows, bye)
	}
	for round := 1; round <= 3; round++ {
		rid, ms := h.round()
		if rid != fmt.Sprintf("round-%d", round) || len(ms) != 2 {
			t.Fatalf("round %d: active %s with %d matches", round, rid, len(ms))
		}
		for i, mt := range ms {
			h.settle()
			mt = h.match(mt.ID)
			if i == len(ms)-1 && round < 3 && len(h.storedRounds()) != round {
				t.Fatalf("round %d was paired before round %d was complete", round+1, round)
			}
			l.reportOK(mt, decided(mt, i%2))
		}
		if round == 2 {
			// A restart in the middle of the league goes on with what is stored.
			h.settle()
			h.restart()
		}
		if round < 3 {
			h.settle()
			next := fmt.Sprintf("round-%d", round+1)
			paired := h.auditLine(`"ROUND_PAIRED"`, `"round_id":"`+next+`"`)
			_, nextMs := h.round()
			assigned := h.auditLine(protocol.MatchAssignment, `"match_id":"`+nextMs[0].ID+`"`)
			if paired == 0 || assigned == 0 || paired > assigned {
				t.Errorf("%s noted at audit line %d, its first assignment at %d: the round must be stored and noted first", next, paired, assigned)
			}
		}
	}
	if got := h.m.State(); got != StateCompleted {
		t.Fatalf("state %s after three rounds, want COMPLETED", got)
	}
	if got := h.storedRounds(); len(got) != 3 {
		t.Errorf("rounds %v, want 3", got)
	}
	lg := h.rebuild()
	if n, err := lg.CheckPairings(); err != nil || n != 3 {
		t.Errorf("CheckPairings = %d, %v; want 3 rounds rebuilt", n, err)
	}
	if err := lg.CheckDB(h.store); err != nil {
		t.Errorf("CheckDB: %v", err)
	}
	v, err := h.m.LeagueView(web.Page{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := lg.Ratings()
	if err != nil {
		t.Fatal(err)
	}
	if b1, b2 := mustJSON(t, v.Ratings), mustJSON(t, want); b1 != b2 {
		t.Errorf("live ratings %s, replayed %s", b1, b2)
	}
}

// A log whose paired round differs from what its results decide is refused, at the line
// of that round.
func TestReplayRefusesARoundTheResultsDoNotPair(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: swissConfig(2, 3)})
	l := h.register([]string{"ref1"}, nil, playerIDs(4))
	l.start()
	for range 2 {
		h.settle()
		_, ms := h.round()
		for _, mt := range ms {
			h.settle()
			l.reportOK(h.match(mt.ID), decided(h.match(mt.ID), 0))
		}
	}
	lg := h.rebuild()
	// Swap the players of the first board of round 2 as if the log said otherwise.
	m := &lg.Rounds[1].Matches[0]
	m.Players[0], m.Players[1] = m.Players[1], m.Players[0]
	_, err := lg.CheckPairings()
	var le *audit.LineError
	if err == nil || !errors.As(err, &le) || le.Line != lg.Rounds[1].Line || !strings.Contains(err.Error(), "the format pairs") {
		t.Errorf("CheckPairings of a changed round 2 = %v, want an error at line %d", err, lg.Rounds[1].Line)
	}
}

// A league keeps the format it started with: a configuration of another algorithm is
// refused on restart, and the database is left as it was.
func TestRestartWithAnotherFormatIsRefused(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: swissConfig(3, 3)})
	l := h.register([]string{"ref1"}, nil, playerIDs(4))
	l.start()
	h.settle()
	h.stop()
	db, err := store.Open(h.dbPath())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := testConfig(t, func(c *config.Config) { c.League.Seed = 77 })
	a, err := audit.Open(h.auditPath(), protocol.SenderLeagueManager)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	_, err = NewManager(Options{Config: cfg, Store: db, Audit: a, Client: protocol.NewClient(testValidator(t), a), Log: zerolog.Nop()})
	if err == nil || !strings.Contains(err.Error(), "the league in the database is a swiss, config says round_robin") {
		t.Errorf("NewManager with a round robin config on a Swiss = %v", err)
	}
}

// A gauntlet does not start before its candidates are registered: the admin is told
// why, and registration stays open.
func TestGauntletWaitsForItsCandidates(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *config.Config) {
		c.Scheduling.Algorithm, c.Scheduling.Candidates = schedule.Gauntlet, []string{"p09"}
	}})
	h.register([]string{"ref1"}, nil, playerIDs(4))
	e := h.refused(adminStart(t, testAdminToken), protocol.ReasonLeagueNotActive)
	if text := fmt.Sprintf("%s %+v", e.Message, *e.Data); !strings.Contains(text, `"p09" is not a registered player`) {
		t.Errorf("refusal %s does not name the missing candidate", text)
	}
	if got := h.m.State(); got != StateRegistration {
		t.Errorf("state %s, want REGISTRATION", got)
	}
	h.ok(playerRegistration(t, "p09"))
	h.ok(adminStart(t, testAdminToken))
	h.settle()
	if n := queryStrings(t, h.store.DB(), `SELECT count(*) FROM matches`); n[0] != "8" {
		t.Errorf("%s matches, want p09 against four players twice", n[0])
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
