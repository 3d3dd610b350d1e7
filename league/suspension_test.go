package league

import (
	"database/sql"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
)

func TestReportedViolations(t *testing.T) {
	mt := &match{players: [2]string{"p1", "p2"}}
	tests := []struct {
		name string
		meta string
		want map[string]int
	}{
		{"no metadata", ``, map[string]int{}},
		{"no violations", `{"total_moves": 5}`, map[string]int{}},
		{"one per entry", `{"violations": [
			{"step": 1, "player": "p1", "kind": "timeout", "action": "warning"},
			{"step": 2, "player": "p1", "kind": "timeout", "action": "forced_move"},
			{"step": 3, "player": "p2", "kind": "invalid_move", "action": "technical_loss"}]}`, map[string]int{"p1": 2, "p2": 1}},
		{"every known kind", `{"violations": [{"player": "p1", "kind": "timeout"}, {"player": "p1", "kind": "invalid_move"},
			{"player": "p1", "kind": "malformed_move"}, {"player": "p1", "kind": "stale_answer"}, {"player": "p1", "kind": "unreachable"},
			{"player": "p1", "kind": "malformed_answer"}, {"player": "p1", "kind": "refused"}, {"player": "p1", "kind": "no_join"}]}`, map[string]int{"p1": 8}},
		{"unknown kind", `{"violations": [{"player": "p1", "kind": "slow_typing"}]}`, map[string]int{}},
		{"a player not in the match", `{"violations": [{"player": "p3", "kind": "timeout"}]}`, map[string]int{}},
		{"entries that are not objects", `{"violations": [1, "p1", null, {"player": "p2", "kind": "no_join"}]}`, map[string]int{"p2": 1}},
		{"keys in another case", `{"violations": [{"Player": "p1", "KIND": "timeout"}], "VIOLATIONS": [{"player": "p1", "kind": "timeout"}]}`, map[string]int{}},
		{"violations not a list", `{"violations": {"player": "p1", "kind": "timeout"}}`, map[string]int{}},
		{"metadata not an object", `[{"player": "p1", "kind": "timeout"}]`, map[string]int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := readFacts(mt.players, storedMetadata(json.RawMessage(tc.meta)))
			got := map[string]int{}
			for _, p := range mt.players {
				if n := f.count(p); n > 0 {
					got[p] = n
				}
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAddViolations(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	earlier := now.Add(-time.Minute)
	tests := []struct {
		name           string
		durationS      int
		status         string
		before, add    int
		wantStatus     string
		wantViolations int
		wantUntil      time.Time
	}{
		{"below the threshold", 300, AgentActive, 1, 1, AgentActive, 2, time.Time{}},
		{"at the threshold", 300, AgentRegistered, 2, 1, AgentSuspended, 3, now.Add(300 * time.Second)},
		{"past the threshold at once", 300, AgentActive, 0, 5, AgentSuspended, 5, now.Add(300 * time.Second)},
		{"already suspended: counted, not extended", 300, AgentSuspended, 3, 2, AgentSuspended, 5, earlier},
		{"suspensions off", 0, AgentActive, 2, 1, AgentActive, 0, time.Time{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, func(c *config.Config) { c.Timeouts.Enforcement.SuspensionDurationSeconds = tc.durationS })
			a := &agent{id: "p1", kind: "player", status: tc.status, violations: tc.before}
			if tc.status == AgentSuspended {
				a.suspendedUntil = earlier
			}
			u := addViolations(cfg, a, tc.add, now)
			if u.status != tc.wantStatus || u.violations != tc.wantViolations || !u.until.Equal(tc.wantUntil) {
				t.Errorf("got %s with %d violations until %v, want %s with %d until %v", u.status, u.violations, u.until, tc.wantStatus, tc.wantViolations, tc.wantUntil)
			}
		})
	}
}

// violationsOf is the game_metadata of a result with n timeouts of each player named.
func violationsOf(n map[string]int) map[string]any {
	var vs []map[string]any
	for _, p := range slices.Sorted(maps.Keys(n)) {
		for i := range n[p] {
			vs = append(vs, map[string]any{"step": i + 1, "player": p, "kind": "timeout", "action": "warning"})
		}
	}
	return map[string]any{"violations": vs}
}

// reportWithMeta sends mt's result with game_metadata meta and expects the ack.
func (l *testLeague) reportWithMeta(mt liveMatch, r result, meta map[string]any) {
	l.t.Helper()
	msg := l.report(mt.Referee, l.refTokens[mt.Referee], mt, r)
	p := resultPayload(mt, r)
	p["game_metadata"] = meta
	if ans := l.ok(withPayload(l.t, msg, p)); ans.Envelope.MessageType != protocol.MatchResultAck {
		l.t.Fatalf("got %s, want %s", ans.Envelope.MessageType, protocol.MatchResultAck)
	}
}

type storedAgent struct {
	status, until string
	violations    int
}

func storedPlayer(t *testing.T, db *sql.DB, id string) storedAgent {
	t.Helper()
	var s storedAgent
	if err := db.QueryRow(`SELECT status, violations, coalesce(suspended_until, '') FROM players WHERE player_id = ?`, id).Scan(&s.status, &s.violations, &s.until); err != nil {
		t.Fatal(err)
	}
	return s
}

// Players who collect suspend_after_violations violations are suspended: refused with
// SUSPENDED, shown in /status and the standings, and their remaining matches are
// forfeited (both suspended: both lose). The suspension survives a restart and ends
// after suspension_duration_seconds.
func TestSuspendedPlayersForfeit(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock})
	l := h.register([]string{"ref1"}, map[string]any{"max_concurrent_matches": 2}, []string{"a", "b", "c", "d"})
	l.start()
	h.settle()
	_, ms := h.round()
	var results []result
	// Round 1: a and c each reach 3 violations; b gets 2 (below the threshold).
	for _, mt := range ms {
		r := drawn(mt)
		counts := map[string]int{}
		for _, p := range mt.Players {
			counts[p] = map[string]int{"a": 3, "b": 2, "c": 3}[p]
		}
		l.reportWithMeta(mt, r, violationsOf(counts))
		results = append(results, r)
	}
	h.settle()
	suspendedAt := clock.Now()
	db := h.store.DB()
	until := protocol.Now(suspendedAt.Add(300 * time.Second))
	for id, want := range map[string]storedAgent{
		"a": {AgentSuspended, until, 3}, "b": {AgentRegistered, "", 2}, "c": {AgentSuspended, until, 3}, "d": {AgentRegistered, "", 0},
	} {
		if got := storedPlayer(t, db, id); got != want {
			t.Errorf("player %s stored as %+v, want %+v", id, got, want)
		}
		if s := h.agentStatus("player", id); s.Status != want.status || s.SuspendedUntil != want.until || s.Violations != want.violations {
			t.Errorf("/status of %s: %+v, want %+v", id, s, want)
		}
	}
	h.unchanged("suspended player", func() {
		h.refused(standingsQuery(t, "player:a", l.playerTokens["a"], ""), protocol.ReasonSuspended)
	})

	// Rounds 2 and 3: every match of a or c is forfeited as soon as its round starts,
	// without a referee; the others are played.
	for h.m.State() == StateActive {
		var ms []liveMatch
		waitFor(t, "a match in progress", func() bool {
			_, all := h.round()
			ms = slices.DeleteFunc(all, func(mt liveMatch) bool { return mt.Status != protocol.MatchStateInProgress })
			return len(ms) > 0 || h.m.State() != StateActive
		})
		for _, mt := range ms {
			if slices.Contains(mt.Players[:], "a") || slices.Contains(mt.Players[:], "c") {
				t.Fatalf("match %v was assigned although a player is suspended", mt.Players)
			}
			r := decided(mt, 0)
			l.reportOK(mt, r)
			results = append(results, r)
		}
	}
	sched, err := schedule.Build(l.players, 1, h.cfg.League.Seed)
	if err != nil {
		t.Fatal(err)
	}
	forfeits := 0
	for _, rd := range sched.Rounds[1:] {
		for _, sm := range rd.Matches {
			suspended := slices.DeleteFunc(slices.Clone(sm.Players[:]), func(p string) bool { return p != "a" && p != "c" })
			if len(suspended) == 0 {
				continue
			}
			forfeits++
			got := h.storedResult(sm.ID)
			want := result{Outcome: map[string]string{}, Points: map[string]int{}}
			for _, p := range sm.Players {
				want.Outcome[p], want.Points[p] = "win", 3
				if slices.Contains(suspended, p) {
					want.Outcome[p], want.Points[p] = "loss", 0
				}
			}
			wantMeta, _ := json.Marshal(map[string]any{"forfeit": "suspended", "suspended": suspended})
			if !maps.Equal(got.result.Outcome, want.Outcome) || !maps.Equal(got.result.Points, want.Points) || got.referee != "" || got.meta != string(wantMeta) {
				t.Errorf("forfeit of %v: %+v, want %+v with no referee and metadata %s", sm.Players, got, want, wantMeta)
			}
			results = append(results, want)
		}
	}
	if forfeits != 3 {
		t.Fatalf("%d forfeits scheduled, want 3 (a-c both suspended, and one each of a and c against b or d)", forfeits)
	}
	if n := auditEvents(t, h, audit.EventResultRecorded); n != forfeits {
		t.Errorf("%d %s events in the audit log, want %d", n, audit.EventResultRecorded, forfeits)
	}

	// The standings count the forfeits and mark the suspended players.
	p := decodeStandings(t, h.ok(standingsQuery(t, protocol.SenderAdmin, testAdminToken, "")))
	if got, want := rowsString(p.Standings), rowsString(expectedRows(l.players, results)); got != want {
		t.Errorf("standings %s, want %s", got, want)
	}
	raw := h.ok(standingsQuery(t, protocol.SenderAdmin, testAdminToken, ""))
	var flags struct {
		Standings []struct {
			PlayerID  string `json:"player_id"`
			Suspended *bool  `json:"suspended"`
		} `json:"standings"`
	}
	if err := raw.Decode(&flags); err != nil {
		t.Fatal(err)
	}
	for _, r := range flags.Standings {
		want := r.PlayerID == "a" || r.PlayerID == "c"
		if (r.Suspended != nil && *r.Suspended) != want || (r.Suspended != nil && !*r.Suspended) {
			t.Errorf("row %s: suspended %v, want %v (and absent when false)", r.PlayerID, r.Suspended, want)
		}
	}

	// Suspensions are stored: they hold across a restart and end on time.
	h.restart()
	if s := h.agentStatus("player", "a"); s.Status != AgentSuspended {
		t.Errorf("after restart a is %s, want %s", s.Status, AgentSuspended)
	}
	clock.Advance(suspendedAt.Add(300 * time.Second).Sub(clock.Now()))
	for _, id := range []string{"a", "c"} {
		if got, want := storedPlayer(t, h.store.DB(), id), (storedAgent{AgentActive, "", 0}); got != want {
			t.Errorf("player %s after the suspension: %+v, want %+v", id, got, want)
		}
	}
	h.ok(standingsQuery(t, "player:a", l.playerTokens["a"], ""))
}

type stored struct {
	result        result
	referee, meta string
}

// storedResult reads the stored result of a match.
func (h *harness) storedResult(matchID string) stored {
	h.t.Helper()
	var outcome, points string
	var s stored
	if err := h.store.DB().QueryRow(`SELECT outcome, points, coalesce(referee_id, ''), game_metadata FROM match_results WHERE match_id = ?`, matchID).Scan(&outcome, &points, &s.referee, &s.meta); err != nil {
		h.t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(outcome), &s.result.Outcome); err != nil {
		h.t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(points), &s.result.Points); err != nil {
		h.t.Fatal(err)
	}
	return s
}

// A referee whose assignments cannot be delivered collects violations, is suspended at
// the threshold and then gets no match; a refusal is no violation.
func TestUndeliverableRefereeIsSuspended(t *testing.T) {
	tests := []struct {
		name           string
		breakIt        func(f *fakeReferee)
		wantViolations int
		wantStatus     string
	}{
		{"endpoint down", func(f *fakeReferee) { f.srv.Close() }, 2, AgentSuspended},
		{"assignments refused", func(f *fakeReferee) { f.setReject(true) }, 0, AgentRegistered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Never offered again on its own: each match fails at ref1 exactly once.
			h := newHarness(t, harnessOptions{clock: newFakeClock(), redispatch: 1 << 40, cfg: func(c *config.Config) {
				c.Timeouts.Enforcement.SuspendAfterViolations = 2
			}})
			l := h.register([]string{"ref1"}, map[string]any{"max_concurrent_matches": 2}, playerIDs(4))
			tc.breakIt(l.refs["ref1"])
			l.start()
			_, ms := h.round()
			waitFor(t, "both assignments to fail", func() bool {
				for _, mt := range ms {
					if got := h.match(mt.ID); got.Status != protocol.MatchStatePending {
						return false
					}
				}
				return true
			})
			if s := h.agentStatus("referee", "ref1"); s.Status != tc.wantStatus || s.Violations != tc.wantViolations {
				t.Fatalf("ref1 %+v, want %s with %d violations", s, tc.wantStatus, tc.wantViolations)
			}
			if tc.wantStatus != AgentSuspended {
				return
			}
			// ref2 takes one match; the other waits for it rather than go to ref1.
			f2 := newFakeReferee(t, "ref2")
			l.refs["ref2"] = f2
			l.refTokens["ref2"] = h.registrationToken(h.ok(refereeRegistration(t, "ref2", f2.url(), nil)))
			h.settle()
			var playing, waiting liveMatch
			for _, mt := range ms {
				if got := h.match(mt.ID); got.Referee == "ref2" {
					playing = got
				} else {
					waiting = got
				}
			}
			if playing.ID == "" || waiting.Status != protocol.MatchStatePending || h.assignments(waiting.ID) != 1 {
				t.Fatalf("after ref2 registered: %+v and %+v (assigned %d times), want one at ref2 and one pending, never offered to ref1 again",
					playing, waiting, h.assignments(waiting.ID))
			}
			l.reportOK(playing, decided(playing, 0))
			h.settle()
			if got := h.match(waiting.ID); got.Referee != "ref2" || h.assignments(waiting.ID) != 2 {
				t.Errorf("second match went to %s (assigned %d times), want ref2 (twice in all)", got.Referee, h.assignments(waiting.ID))
			}
		})
	}
}

// assignments is how many times a match was handed to a referee.
func (h *harness) assignments(matchID string) int {
	h.t.Helper()
	var n int
	if err := h.store.DB().QueryRow(`SELECT assignments FROM matches WHERE match_id = ?`, matchID).Scan(&n); err != nil {
		h.t.Fatal(err)
	}
	return n
}
