package league

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

func matchQuery(tb testing.TB, playerID, token, matchID string) *protocol.Message {
	return withToken(newMsg(tb, protocol.QueryMatch, protocol.PlayerSender(playerID), map[string]any{"match_id": matchID}), token)
}

// queryMatchInfo sends QUERY_MATCH and decodes the MATCH_INFO payload as raw JSON
// values, so that a null referee_id is told from a missing one.
func (l *testLeague) queryMatchInfo(playerID, matchID string) map[string]any {
	l.t.Helper()
	ans := l.ok(matchQuery(l.t, playerID, l.playerTokens[playerID], matchID))
	if ans.Envelope.MessageType != protocol.MatchInfo || ans.Envelope.MatchID != matchID {
		l.t.Fatalf("got %s about %q, want %s about %s", ans.Envelope.MessageType, ans.Envelope.MatchID, protocol.MatchInfo, matchID)
	}
	var p map[string]any
	if err := json.Unmarshal(ans.Payload, &p); err != nil {
		l.t.Fatal(err)
	}
	return p
}

// checkInfo compares a MATCH_INFO payload with mt, the status and the referee it
// should name (nil: JSON null).
func checkInfo(tb testing.TB, p map[string]any, mt liveMatch, status string, referee any) {
	tb.Helper()
	players, _ := p["players"].([]any)
	if p["match_id"] != mt.ID || p["round_id"] != mt.RoundID || len(players) != 2 || players[0] != mt.Players[0] || players[1] != mt.Players[1] {
		tb.Errorf("got %v, want match %s of round %s between %v", p, mt.ID, mt.RoundID, mt.Players)
	}
	got, present := p["referee_id"]
	if p["status"] != status || !present || got != referee {
		tb.Errorf("got status %v referee_id %v (present %v), want %s and %v", p["status"], got, present, status, referee)
	}
}

// The League Manager announces match_query; a player of a match learns which referee
// holds it, and that none does once the match is over or back in the pool.
func TestQueryMatchAnswersThePlayersOfTheMatch(t *testing.T) {
	h := newHarness(t, harnessOptions{redispatch: 1 << 40})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(3))
	ans := h.ok(playerRegistration(t, "p04"))
	var reg struct {
		Features []string `json:"features"`
	}
	if err := ans.Decode(&reg); err != nil || !slices.Contains(reg.Features, protocol.FeatureMatchQuery) {
		t.Fatalf("registration answer announces %v (%v), want %s among them", reg.Features, err, protocol.FeatureMatchQuery)
	}
	l.playerTokens["p04"] = h.registrationToken(ans)
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	for _, id := range mt.Players {
		checkInfo(t, l.queryMatchInfo(id, mt.ID), mt, protocol.MatchStateInProgress, mt.Referee)
	}
	// Asking changes nothing.
	h.unchanged("QUERY_MATCH", func() { l.queryMatchInfo(mt.Players[0], mt.ID) })

	l.reportOK(mt, decided(mt, 0))
	checkInfo(t, l.queryMatchInfo(mt.Players[1], mt.ID), mt, protocol.MatchStateCompleted, nil)

}

// A match its referee refused is back in the pool: no referee holds it.
func TestQueryMatchOfAMatchBackInThePool(t *testing.T) {
	h := newHarness(t, harnessOptions{redispatch: 1 << 40})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
	l.refs["ref1"].setReject(true)
	l.start()
	_, ms := h.round()
	waitFor(t, "the refused match to return to the pool", func() bool { return h.match(ms[0].ID).Status == protocol.MatchStatePending })
	checkInfo(t, l.queryMatchInfo("p1", ms[0].ID), ms[0], protocol.MatchStatePending, nil)
}

// Every refused QUERY_MATCH gets its specific reason and changes nothing.
func TestQueryMatchRefusals(t *testing.T) {
	h := newHarness(t, harnessOptions{redispatch: 1 << 40})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	mt, outsider := ms[0], ms[1].Players[0]
	player := mt.Players[0]
	tests := []struct {
		name string
		msg  *protocol.Message
		want protocol.Reason
	}{
		{"match not in the schedule", matchQuery(t, player, l.playerTokens[player], "r09-m09-000000000000"), protocol.ReasonUnknownMatch},
		{"a player who is not in the match", matchQuery(t, outsider, l.playerTokens[outsider], mt.ID), protocol.ReasonUnauthorized},
		{"a wrong token", matchQuery(t, player, uuid.NewString(), mt.ID), protocol.ReasonUnauthorized},
		{"no token", matchQuery(t, player, "", mt.ID), protocol.ReasonSchemaViolation},
		{"another player's token", matchQuery(t, player, l.playerTokens[mt.Players[1]], mt.ID), protocol.ReasonSenderMismatch},
		{"the match credential instead of the token", matchQuery(t, player, protocol.MatchCredential(l.playerTokens[player], mt.ID), mt.ID), protocol.ReasonUnauthorized},
		{"a referee asking", func() *protocol.Message {
			m := matchQuery(t, player, l.refTokens[mt.Referee], mt.ID)
			m.Envelope.Sender = protocol.RefereeSender(mt.Referee)
			return m
		}(), protocol.ReasonSchemaViolation},
		{"envelope and payload name different matches", func() *protocol.Message {
			m := matchQuery(t, player, l.playerTokens[player], mt.ID)
			m.Envelope.MatchID = ms[1].ID
			return m
		}(), protocol.ReasonSchemaViolation},
		{"another league", func() *protocol.Message {
			m := matchQuery(t, player, l.playerTokens[player], mt.ID)
			m.Envelope.LeagueID = "league-1999"
			return m
		}(), protocol.ReasonWrongLeague},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			h.unchanged(tc.name, func() { h.refused(tc.msg, tc.want) })
		})
	}
}

// QUERY_MATCH has the standings rate per player, in a bucket of its own.
func TestQueryMatchRateLimit(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock, redispatch: 1 << 40, cfg: func(c *config.Config) { c.RateLimits.StandingsPerMinute = 2 }})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	a, b := ms[0].Players[0], ms[0].Players[1]
	q := func(id string) *protocol.Message { return matchQuery(t, id, l.playerTokens[id], ms[0].ID) }
	h.ok(q(a))
	h.refused(matchQuery(t, a, l.playerTokens[a], "r09-m09-000000000000"), protocol.ReasonUnknownMatch)
	h.limited(q(a))
	// Standings and the other player have buckets of their own.
	h.ok(standingsQuery(t, protocol.PlayerSender(a), l.playerTokens[a], ""))
	h.ok(q(b))
	clock.Advance(30 * time.Second) // 2 a minute: one token every 30 s
	h.ok(q(a))
	h.limited(q(a))
}
