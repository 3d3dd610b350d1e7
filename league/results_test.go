package league

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// withPayload replaces the payload of msg with p.
func withPayload(tb testing.TB, msg *protocol.Message, p map[string]any) *protocol.Message {
	tb.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		tb.Fatal(err)
	}
	msg.Payload = raw
	return msg
}

func resultPayload(mt liveMatch, r result) map[string]any {
	return map[string]any{"game_type": "tic_tac_toe", "players": []string{mt.Players[0], mt.Players[1]}, "outcome": r.Outcome, "points": r.Points}
}

// Every rule MATCH_RESULT_REPORT is checked against, each refused with its reason and
// without changing anything.
func TestResultReportRefusals(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	ref, tok := mt.Referee, l.refTokens[mt.Referee]
	other := ms[1].Referee
	a, b := mt.Players[0], mt.Players[1]
	third := ms[1].Players[0]
	good := decided(mt, 0)

	rep := func(mutate func(m *protocol.Message, p map[string]any)) func() *protocol.Message {
		return func() *protocol.Message {
			m := h.report(ref, tok, mt, good)
			p := resultPayload(mt, good)
			mutate(m, p)
			return withPayload(t, m, p)
		}
	}
	set := func(key string, v any) func() *protocol.Message {
		return rep(func(_ *protocol.Message, p map[string]any) { p[key] = v })
	}
	tests := []struct {
		name string
		msg  func() *protocol.Message
		want protocol.Reason
	}{
		{"match not in the schedule", rep(func(m *protocol.Message, _ map[string]any) { m.Envelope.MatchID = "r01-m09-000000000000" }), protocol.ReasonUnknownMatch},
		{"match of another referee", func() *protocol.Message { return h.report(other, l.refTokens[other], mt, good) }, protocol.ReasonNotAssignedReferee},
		{"another league", rep(func(m *protocol.Message, _ map[string]any) { m.Envelope.LeagueID = "league-1999" }), protocol.ReasonWrongLeague},
		{"round_id of another round", rep(func(m *protocol.Message, _ map[string]any) { m.Envelope.RoundID = "round-2" }), protocol.ReasonInvalidResult},
		{"game_type of another game", set("game_type", "even_odd"), protocol.ReasonInvalidResult},
		{"envelope game_type of another game", rep(func(m *protocol.Message, _ map[string]any) { m.Envelope.GameType = "even_odd" }), protocol.ReasonInvalidResult},
		{"a player who is not in the match", set("players", []string{a, third}), protocol.ReasonInvalidResult},
		{"outcome of a player who is not in the match", set("outcome", map[string]string{a: "win", third: "loss"}), protocol.ReasonInvalidResult},
		{"points of a player who is not in the match", set("points", map[string]int{a: 3, third: 0}), protocol.ReasonInvalidResult},
		{"two winners", rep(func(_ *protocol.Message, p map[string]any) {
			p["outcome"], p["points"] = map[string]string{a: "win", b: "win"}, map[string]int{a: 3, b: 3}
		}), protocol.ReasonInvalidResult},
		{"a win against a draw", rep(func(_ *protocol.Message, p map[string]any) {
			p["outcome"], p["points"] = map[string]string{a: "win", b: "draw"}, map[string]int{a: 3, b: 1}
		}), protocol.ReasonInvalidResult},
		{"a draw against a loss", rep(func(_ *protocol.Message, p map[string]any) {
			p["outcome"], p["points"] = map[string]string{a: "draw", b: "loss"}, map[string]int{a: 1, b: 0}
		}), protocol.ReasonInvalidResult},
		{"win worth 2 points", set("points", map[string]int{a: 2, b: 0}), protocol.ReasonInvalidResult},
		{"loss worth 1 point", set("points", map[string]int{a: 3, b: 1}), protocol.ReasonInvalidResult},
		{"draw worth 0 points", rep(func(_ *protocol.Message, p map[string]any) {
			p["outcome"], p["points"] = map[string]string{a: "draw", b: "draw"}, map[string]int{a: 0, b: 0}
		}), protocol.ReasonInvalidResult},
		{"double forfeit with points", rep(func(_ *protocol.Message, p map[string]any) {
			p["outcome"], p["points"] = map[string]string{a: "loss", b: "loss"}, map[string]int{a: 1, b: 0}
		}), protocol.ReasonInvalidResult},
		{"outcome spelled in other case beside the real one", set("Outcome", map[string]string{a: "loss", b: "win"}), protocol.ReasonInvalidResult},
		// The schema refuses these before the League Manager looks at them.
		{"unknown outcome", set("outcome", map[string]string{a: "victory", b: "loss"}), protocol.ReasonSchemaViolation},
		{"negative points", set("points", map[string]int{a: 3, b: -1}), protocol.ReasonSchemaViolation},
		{"points above 1000", set("points", map[string]int{a: 1001, b: 0}), protocol.ReasonSchemaViolation},
		{"three players", set("players", []string{a, b, third}), protocol.ReasonSchemaViolation},
		{"the same player twice", set("players", []string{a, a}), protocol.ReasonSchemaViolation},
		{"three outcomes", set("outcome", map[string]string{a: "win", b: "loss", third: "loss"}), protocol.ReasonSchemaViolation},
		{"fractional points", set("points", map[string]any{a: 2.5, b: 0}), protocol.ReasonSchemaViolation},
		{"no outcome", rep(func(_ *protocol.Message, p map[string]any) { delete(p, "outcome") }), protocol.ReasonSchemaViolation},
		{"no points", rep(func(_ *protocol.Message, p map[string]any) { delete(p, "points") }), protocol.ReasonSchemaViolation},
		{"no game_type", rep(func(_ *protocol.Message, p map[string]any) { delete(p, "game_type") }), protocol.ReasonSchemaViolation},
		{"no match_id", rep(func(m *protocol.Message, _ map[string]any) { m.Envelope.MatchID = "" }), protocol.ReasonSchemaViolation},
		{"no auth_token", rep(func(m *protocol.Message, _ map[string]any) { m.Envelope.AuthToken = "" }), protocol.ReasonSchemaViolation},
		{"sent by a player", rep(func(m *protocol.Message, _ map[string]any) { m.Envelope.Sender = protocol.PlayerSender(a) }), protocol.ReasonSchemaViolation},
		{"game_metadata not an object", set("game_metadata", "moves"), protocol.ReasonSchemaViolation},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			h.unchanged(tc.name, func() { h.refused(tc.msg(), tc.want) })
		})
	}

	// The good report is acknowledged; players may be listed in either order.
	msg := withPayload(t, h.report(ref, tok, mt, good), map[string]any{
		"game_type": "tic_tac_toe", "players": []string{b, a}, "outcome": good.Outcome, "points": good.Points,
		"game_metadata": map[string]any{"final_state": map[string]any{"board": [][]string{{"X", "", ""}, {"", "X", ""}, {"", "", "X"}}}},
	})
	if ans := h.ok(msg); ans.Envelope.MessageType != protocol.MatchResultAck {
		t.Fatalf("got %s, want %s", ans.Envelope.MessageType, protocol.MatchResultAck)
	}

	t.Run("identical retry is acknowledged again and changes nothing", func(t *testing.T) {
		h.unchanged("identical retry", func() { l.reportOK(mt, good) })
	})
	t.Run("a different result is DUPLICATE_RESULT", func(t *testing.T) {
		h.unchanged("conflicting result", func() {
			h.refused(h.report(ref, tok, mt, decided(mt, 1)), protocol.ReasonDuplicateResult)
			h.refused(h.report(ref, tok, mt, drawn(mt)), protocol.ReasonDuplicateResult)
		})
	})
	t.Run("the same result from another referee is DUPLICATE_RESULT", func(t *testing.T) {
		h.unchanged("result from another referee", func() {
			h.refused(h.report(other, l.refTokens[other], mt, good), protocol.ReasonDuplicateResult)
		})
	})
	var stored string
	if err := h.store.DB().QueryRow(`SELECT outcome FROM match_results WHERE match_id = ?`, mt.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	var o map[string]string
	_ = json.Unmarshal([]byte(stored), &o)
	if !maps.Equal(o, good.Outcome) {
		t.Errorf("stored outcome %v, want the first result %v", o, good.Outcome)
	}
}

// Players listed second mover first, extra payload fields and the payload copies of
// match_id and round_id are accepted.
func TestResultReportAcceptedForms(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, map[string]any{"max_concurrent_matches": 2}, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	for i, mt := range ms {
		r := decided(mt, 1)
		p := resultPayload(mt, r)
		p["players"] = []string{mt.Players[1], mt.Players[0]}
		p["match_id"], p["round_id"] = mt.ID, mt.RoundID
		p["x_extension"] = map[string]any{"note": "forward compatible"}
		msg := withPayload(t, h.report(mt.Referee, l.refTokens[mt.Referee], mt, r), p)
		if i == 1 {
			msg.Envelope.RoundID, msg.Envelope.GameType = "", "" // optional in the envelope
		}
		ans := h.ok(msg)
		if ans.Envelope.MatchID != mt.ID || ans.Envelope.RoundID != mt.RoundID || ans.Envelope.LeagueID != h.cfg.League.LeagueID {
			t.Errorf("ack envelope %+v, want match %s round %s", ans.Envelope, mt.ID, mt.RoundID)
		}
	}
}

// The result, the match status and the players' violations are one transaction: when a write
// fails half-way, nothing of the result remains, and the referee's retry then succeeds.
func TestResultIsAtomic(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2", "p3"})
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	db := h.store.DB()
	if _, err := db.Exec(`CREATE TRIGGER fail_standings BEFORE UPDATE ON matches WHEN NEW.status = 'COMPLETED' BEGIN SELECT RAISE(ABORT, 'injected failure'); END`); err != nil {
		t.Fatal(err)
	}
	msg := h.report("ref1", l.refTokens["ref1"], mt, decided(mt, 0))
	h.unchanged("result whose match update fails", func() {
		perr := h.refused(msg, protocol.ReasonInternal)
		if perr.Message != "internal error" || perr.Data.Details != "" {
			t.Errorf("INTERNAL answer %+v says more than \"internal error\"", perr)
		}
	})
	if _, err := db.Exec(`DROP TRIGGER fail_standings`); err != nil {
		t.Fatal(err)
	}
	if ans := h.ok(msg); ans.Envelope.MessageType != protocol.MatchResultAck {
		t.Fatalf("retry answered %s, want MATCH_RESULT_ACK", ans.Envelope.MessageType)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM match_results`).Scan(&n); err != nil || n != 1 {
		t.Errorf("%d results stored (%v), want 1", n, err)
	}
}

// A foreign referee's report whose game_metadata violates schemas/game_metadata.json is
// refused with the path of each violation and changes nothing; mended, it is taken.
func TestResultReportWithMalformedMetadata(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, playerIDs(2))
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	r := decided(mt, 0)
	report := func(meta map[string]any) *protocol.Message {
		p := resultPayload(mt, r)
		p["game_metadata"] = meta
		return withPayload(t, h.report(mt.Referee, l.refTokens[mt.Referee], mt, r), p)
	}
	// As a referee written from the seeds alone might send it: the steps as a string,
	// a time in fractional milliseconds, beside what the schema leaves to it.
	meta := map[string]any{
		"steps": "3", "total_moves": 1, "x_engine": map[string]any{"name": "foreign"},
		"moves":       []any{map[string]any{"step": 1, "player": mt.Players[0], "move": map[string]int{"row": 0, "col": 0}, "elapsed_ms": 12.5}},
		"final_state": map[string]any{"board": [][]string{{"X", "", ""}, {"", "", ""}, {"", "", ""}}},
	}
	h.unchanged("malformed game_metadata", func() {
		perr := h.refused(report(meta), protocol.ReasonSchemaViolation)
		want := []string{
			"/payload/game_metadata/moves/0/elapsed_ms: expected integer, but got number",
			"/payload/game_metadata/steps: expected integer, but got string",
		}
		if !slices.Equal(perr.Data.Violations, want) || !strings.Contains(perr.Message, want[0]) {
			t.Errorf("got %q, violations %q; want the violations %q", perr.Message, perr.Data.Violations, want)
		}
	})
	meta["steps"] = 3
	meta["moves"].([]any)[0].(map[string]any)["elapsed_ms"] = 12
	if ans := h.ok(report(meta)); ans.Envelope.MessageType != protocol.MatchResultAck {
		t.Fatalf("got %s, want %s", ans.Envelope.MessageType, protocol.MatchResultAck)
	}
}
