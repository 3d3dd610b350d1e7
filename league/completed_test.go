package league

import (
	"bytes"
	"slices"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
)

// matchesLeftOf asks the standings as player id and returns matches_left (nil when
// absent).
func (l *testLeague) matchesLeftOf(id string) *int {
	l.t.Helper()
	var st protocol.Standings
	if err := l.ok(standingsQuery(l.t, protocol.PlayerSender(id), l.playerTokens[id], "")).Decode(&st); err != nil {
		l.t.Fatal(err)
	}
	return st.MatchesLeft
}

// When the last result is in, LEAGUE_COMPLETED with the final standings reaches every
// agent that announced league_completed, referees and players, each with its own token,
// and no other agent; each exchange is in the audit log. A player asking for the
// standings of a round robin learns how many of its matches are left.
func TestLeagueCompletedReachesOnlyAgentsThatAnnouncedIt(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := &testLeague{harness: h, refs: map[string]*fakeReferee{}, refTokens: map[string]string{}, playerTokens: map[string]string{}, playerSrv: map[string]*fakePlayer{}}
	announced := map[string]bool{"referee:ref1": true, "player:p01": true, "player:p03": true}
	for _, id := range []string{"ref1", "ref2"} {
		f := newFakeReferee(t, id)
		l.refs[id] = f
		extra := map[string]any{}
		if announced[protocol.RefereeSender(id)] {
			extra["features"] = []string{protocol.FeatureLeagueCompleted}
		}
		l.refTokens[id] = l.registrationToken(h.ok(refereeRegistration(t, id, f.url(), extra)))
	}
	l.players = playerIDs(4)
	for _, id := range l.players {
		fp := newFakePlayer(t, id)
		l.playerSrv[id] = fp
		features := playerFeatures
		if announced[protocol.PlayerSender(id)] {
			features = append(slices.Clone(playerFeatures), protocol.FeatureLeagueCompleted)
		}
		msg := withPayload(t, playerRegistration(t, id), map[string]any{"player_id": id, "endpoint_url": fp.url(), "features": features})
		ans := h.ok(msg)
		var ra protocol.RegistrationAnswer
		if err := ans.Decode(&ra); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ra.Features, protocol.FeatureLeagueCompleted) {
			t.Errorf("the League Manager announces %v, want %s among them", ra.Features, protocol.FeatureLeagueCompleted)
		}
		l.playerTokens[id] = l.registrationToken(ans)
	}
	if got := l.matchesLeftOf("p01"); got != nil {
		t.Errorf("matches_left %d before the schedule, want none", *got)
	}
	l.start()
	if got := l.matchesLeftOf("p01"); got == nil || *got != 3 {
		t.Errorf("matches_left %v at the start of a round robin of 4, want 3", got)
	}
	l.playOut()

	notices := func(agent string) []*protocol.Message {
		role, id := protocol.ParseSender(agent)
		if role == "referee" {
			return l.refs[id].received(protocol.LeagueCompleted)
		}
		return l.playerSrv[id].messages(protocol.LeagueCompleted)
	}
	waitFor(t, "LEAGUE_COMPLETED to the agents that announced it", func() bool {
		for agent := range announced {
			if len(notices(agent)) == 0 {
				return false
			}
		}
		return true
	})
	h.m.e.notices.wg.Wait() // every notice sent is answered: nothing more is on its way

	var final protocol.Standings
	if err := h.ok(standingsQuery(t, "player:p02", l.playerTokens["p02"], "")).Decode(&final); err != nil {
		t.Fatal(err)
	}
	if !final.Final || final.MatchesLeft == nil || *final.MatchesLeft != 0 {
		t.Errorf("standings after the end: final %v, matches_left %v; want final and 0 left", final.Final, final.MatchesLeft)
	}
	tokens := map[string]string{"referee:ref1": l.refTokens["ref1"], "referee:ref2": l.refTokens["ref2"]}
	for id, tok := range l.playerTokens {
		tokens[protocol.PlayerSender(id)] = tok
	}
	for agent, token := range tokens {
		got := notices(agent)
		if !announced[agent] {
			if len(got) != 0 {
				t.Errorf("%s announced nothing and got %d LEAGUE_COMPLETED", agent, len(got))
			}
			continue
		}
		if len(got) != 1 {
			t.Errorf("%s got %d LEAGUE_COMPLETED, want 1", agent, len(got))
			continue
		}
		var p protocol.LeagueCompletion
		if err := got[0].Decode(&p); err != nil {
			t.Fatal(err)
		}
		if got[0].Envelope.AuthToken != token || p.LeagueID != l.cfg.League.LeagueID || p.CompletedAt == "" || p.Rounds != 3 {
			t.Errorf("LEAGUE_COMPLETED to %s: %+v %s; want its own token, the league id, the time and 3 rounds", agent, got[0].Envelope, got[0].Payload)
		}
		if rowsString(p.Standings) != rowsString(final.Standings) {
			t.Errorf("LEAGUE_COMPLETED to %s carries %s, want the final standings %s", agent, rowsString(p.Standings), rowsString(final.Standings))
		}
	}

	// Each notice and its answer are in the audit log.
	recorded := map[string]int{}
	for _, line := range readAudit(t, h.auditPath()) {
		e := line.entry
		switch {
		case e.Direction == "request" && bytes.Contains(e.Message, []byte(`"LEAGUE_COMPLETED"`)):
			recorded[e.Destination]++
		case e.Direction == "response" && bytes.Contains(e.Message, []byte(`"LEAGUE_COMPLETED_ACK"`)):
			recorded[e.Source] += 10
		}
	}
	for agent := range announced {
		if recorded[agent] != 11 {
			t.Errorf("audit log: %d requests and %d answers of LEAGUE_COMPLETED with %s, want 1 and 1 (all: %v)", recorded[agent]%10, recorded[agent]/10, agent, recorded)
		}
	}
	if len(recorded) != len(announced) {
		t.Errorf("audit log: LEAGUE_COMPLETED exchanged with %v, want only %v", recorded, announced)
	}
}

// A Swiss league pairs each round when the one before is over: how many matches a
// player has left is not known before the end, so the standings do not say.
func TestMatchesLeftUnknownInSwiss(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *config.Config) { c.Scheduling.Algorithm, c.Scheduling.Rounds = schedule.Swiss, 2 }})
	l := h.registerLive([]string{"ref1"}, nil, playerIDs(4))
	l.start()
	if got := l.matchesLeftOf("p01"); got != nil {
		t.Errorf("matches_left %d in a running Swiss league, want none", *got)
	}
	l.playOut()
	if got := l.matchesLeftOf("p01"); got == nil || *got != 0 {
		t.Errorf("matches_left %v once the Swiss league completed, want 0", got)
	}
}
