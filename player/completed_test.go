package player

import (
	"slices"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// LEAGUE_COMPLETED from the League Manager is acknowledged, shown in Status and told
// to Config.OnLeagueCompleted once; the player keeps serving (LEAGUE_SHUTDOWN ends it).
// One with another player's token is refused.
func TestLeagueCompleted(t *testing.T) {
	lg := startLeague(t, &fakeLeague{features: allFeatures})
	told := make(chan protocol.LeagueCompletion, 2)
	r := startPlayer(t, lg, Config{ID: "p01", OnLeagueCompleted: func(lc protocol.LeagueCompletion) { told <- lc }}, nil)
	r.waitState(t, StateActive)
	lg.mu.Lock()
	announced, _ := lg.registrations["p01"]["features"].([]any)
	lg.mu.Unlock()
	if !slices.Contains(announced, any(protocol.FeatureLeagueCompleted)) {
		t.Errorf("the player announced %v, want %s among them", announced, protocol.FeatureLeagueCompleted)
	}
	payload := map[string]any{"league_id": testLeagueID, "completed_at": protocol.Now(time.Now()), "rounds": 1, "standings": []map[string]any{
		{"rank": 1, "player_id": "p02", "points": 3, "wins": 1, "draws": 0, "losses": 0, "matches_played": 1},
		{"rank": 2, "player_id": "p01", "points": 0, "wins": 0, "draws": 0, "losses": 1, "matches_played": 1},
	}}
	s := newSender(t)
	_, err := s.send(r.url, protocol.LeagueCompleted, envelope{sender: protocol.SenderLeagueManager, auth: lg.token("p02")}, payload)
	wantReason(t, err, protocol.ReasonUnauthorized)
	if st := r.Status(); st.LeagueCompleted {
		t.Fatalf("status %+v after a refused LEAGUE_COMPLETED", st)
	}
	for i := range 2 { // sent again: acknowledged, told once
		ans, err := s.send(r.url, protocol.LeagueCompleted, envelope{sender: protocol.SenderLeagueManager, auth: lg.token("p01")}, payload)
		if err != nil {
			t.Fatalf("LEAGUE_COMPLETED %d: %v", i, err)
		}
		if e := ans.Envelope; e.MessageType != protocol.LeagueCompletedAck || e.Sender != "player:p01" || e.LeagueID != testLeagueID || decode[protocol.Ack](t, ans).Status != "acknowledged" {
			t.Errorf("answer %+v %s", e, ans.Payload)
		}
	}
	select {
	case lc := <-told:
		if lc.LeagueID != testLeagueID || len(lc.Standings) != 2 || lc.Standings[1].PlayerID != "p01" {
			t.Errorf("told %+v", lc)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnLeagueCompleted was not called")
	}
	if len(told) != 0 {
		t.Errorf("OnLeagueCompleted called again for a repeated notice")
	}
	st := r.Status()
	if !st.LeagueCompleted || st.FinalRank != 2 || st.FinalPoints != 0 || st.MatchesLeft == nil || *st.MatchesLeft != 0 || st.State != StateActive {
		t.Errorf("status %+v (matches_left %v), want the league completed, rank 2, no match left, still active", st, st.MatchesLeft)
	}
}
