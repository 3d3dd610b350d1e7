package league

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
)

func TestPlayerCannotRegisterBeforeAReferee(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.unchanged("player registration without referee", func() {
		h.refused(playerRegistration(t, "p1"), protocol.ReasonNoRefereeRegistered)
	})
	f := newFakeReferee(t, "ref1")
	h.ok(refereeRegistration(t, "ref1", f.url(), nil))
	h.ok(playerRegistration(t, "p1"))
}

func TestRegistrationRefusals(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1"})
	// The conversations of the accepted registrations, to retry them with another endpoint.
	h.m.e.mu.Lock()
	refConv, playerConv := h.m.e.agents.referees["ref1"].conversationID, h.m.e.agents.players["p1"].conversationID
	h.m.e.mu.Unlock()

	tests := []struct {
		name string
		msg  func() *protocol.Message
		want protocol.Reason
	}{
		{"referee sender is not its referee_id", func() *protocol.Message {
			m := refereeRegistration(t, "ref2", "http://127.0.0.1:9/ref2", nil)
			m.Envelope.Sender = protocol.RefereeSender("ref3")
			return m
		}, protocol.ReasonSenderMismatch},
		{"player sender is not its player_id", func() *protocol.Message {
			m := playerRegistration(t, "p2")
			m.Envelope.Sender = protocol.PlayerSender("p1")
			return m
		}, protocol.ReasonSenderMismatch},
		{"referee id taken, new conversation", func() *protocol.Message {
			return refereeRegistration(t, "ref1", l.refs["ref1"].url(), nil)
		}, protocol.ReasonDuplicateRegistration},
		{"referee id taken, same conversation, other endpoint", func() *protocol.Message {
			m := refereeRegistration(t, "ref1", "http://127.0.0.1:9/other", nil)
			m.Envelope.ConversationID = refConv
			return m
		}, protocol.ReasonDuplicateRegistration},
		{"player id taken, new conversation", func() *protocol.Message {
			return playerRegistration(t, "p1")
		}, protocol.ReasonDuplicateRegistration},
		{"player id taken, same conversation, other endpoint", func() *protocol.Message {
			m := newMsg(t, protocol.RegisterPlayerRequest, protocol.PlayerSender("p1"), map[string]any{"player_id": "p1", "endpoint_url": "http://127.0.0.1:9/other"})
			m.Envelope.ConversationID = playerConv
			return m
		}, protocol.ReasonDuplicateRegistration},
		{"referee does not run the league's game", func() *protocol.Message {
			return refereeRegistration(t, "ref2", "http://127.0.0.1:9/ref2", map[string]any{"game_types": []string{"even_odd"}})
		}, protocol.ReasonUnsupportedGame},
		{"player does not play the league's game", func() *protocol.Message {
			m := playerRegistration(t, "p2")
			m.Payload, _ = json.Marshal(map[string]any{"player_id": "p2", "endpoint_url": playerEndpoint("p2"), "game_types": []string{"rock_paper_scissors"}})
			return m
		}, protocol.ReasonUnsupportedGame},
		{"player_id spelled in other case beside the real one", func() *protocol.Message {
			m := playerRegistration(t, "p2")
			m.Payload = json.RawMessage(`{"player_id": "p2", "endpoint_url": "` + playerEndpoint("p2") + `", "PLAYER_ID": "p3"}`)
			m.Envelope.Sender = protocol.PlayerSender("p3")
			return m
		}, protocol.ReasonSchemaViolation},
		{"endpoint_url spelled in other case beside the real one", func() *protocol.Message {
			m := refereeRegistration(t, "ref2", "http://127.0.0.1:9/ref2", nil)
			m.Payload = json.RawMessage(`{"referee_id": "ref2", "endpoint_url": "http://127.0.0.1:9/ref2", "Endpoint_URL": "file:///etc/passwd"}`)
			return m
		}, protocol.ReasonSchemaViolation},
		{"referee for another league", func() *protocol.Message {
			m := refereeRegistration(t, "ref2", "http://127.0.0.1:9/ref2", nil)
			m.Envelope.LeagueID = "other-league"
			return m
		}, protocol.ReasonWrongLeague},
		{"player for another league", func() *protocol.Message {
			m := playerRegistration(t, "p2")
			m.Envelope.LeagueID = "other-league"
			return m
		}, protocol.ReasonWrongLeague},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			h.unchanged(tc.name, func() { h.refused(tc.msg(), tc.want) })
		})
	}
}

// An agent whose endpoint is plain http on a host that is not loopback would get its
// token in clear over the network: refused, with a message saying what to do, and
// nothing stored; a League Manager told --insecure takes it.
func TestPlainHTTPEndpointOffLoopback(t *testing.T) {
	offLoopback := func(t *testing.T, id, endpoint string) *protocol.Message {
		return newMsg(t, protocol.RegisterPlayerRequest, protocol.PlayerSender(id), map[string]any{"player_id": id, "endpoint_url": endpoint})
	}
	h := newHarness(t, harnessOptions{})
	h.unchanged("referee on plain http off loopback", func() {
		perr := h.refused(refereeRegistration(t, "ref1", "http://10.0.0.2:8001/mcp", nil), protocol.ReasonInsecureEndpoint)
		for _, want := range []string{"http://10.0.0.2:8001/mcp", "not loopback", "https", "--insecure"} {
			if !strings.Contains(perr.Message, want) {
				t.Errorf("refusal %q does not say %q", perr.Message, want)
			}
		}
	})
	h.register([]string{"ref1"}, nil, nil)
	for _, endpoint := range []string{"http://10.0.0.3:9001/mcp", "http://players.example.org/mcp", "http://0.0.0.0:9001/mcp"} {
		h.unchanged(endpoint, func() { h.refused(offLoopback(t, "p1", endpoint), protocol.ReasonInsecureEndpoint) })
	}
	// https anywhere and plain http on loopback are fine.
	h.ok(offLoopback(t, "p1", "https://10.0.0.3:9001/mcp"))
	h.ok(offLoopback(t, "p2", "http://localhost:9002/mcp"))
	h.ok(offLoopback(t, "p3", "http://[::1]:9003/mcp"))

	insecure := newHarness(t, harnessOptions{insecure: true})
	insecure.ok(refereeRegistration(t, "ref1", "http://10.0.0.2:8001/mcp", nil))
	insecure.ok(offLoopback(t, "p1", "http://10.0.0.3:9001/mcp"))
}

// A registration retried with the same conversation_id and endpoint (e.g. after a lost
// answer) gets the same token back and changes nothing, also after a restart.
func TestRetriedRegistrationGetsTheSameToken(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	f := newFakeReferee(t, "ref1")
	refMsg := refereeRegistration(t, "ref1", f.url(), nil)
	playerMsg := playerRegistration(t, "p1")
	refToken := h.registrationToken(h.ok(refMsg))
	playerToken := h.registrationToken(h.ok(playerMsg))

	for _, restart := range []bool{false, true} {
		if restart {
			h.restart()
		}
		for _, tc := range []struct {
			name string
			msg  *protocol.Message
			want string
		}{
			{"referee", refMsg, refToken},
			{"player", playerMsg, playerToken},
		} {
			h.unchanged("retried "+tc.name+" registration", func() {
				got := h.registrationToken(h.ok(tc.msg))
				if got != tc.want {
					t.Errorf("restart=%v: retried %s registration got token %s, want %s", restart, tc.name, got, tc.want)
				}
			})
		}
	}
}

func TestTokensAreDistinctUUIDv4(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, []string{"p1", "p2", "p3"})
	seen := map[string]string{}
	all := map[string]string{}
	for id, tok := range l.refTokens {
		all["referee:"+id] = tok
	}
	for id, tok := range l.playerTokens {
		all["player:"+id] = tok
	}
	for who, tok := range all {
		u, err := uuid.Parse(tok)
		if err != nil || u.Version() != 4 || u.Variant() != uuid.RFC4122 || u.String() != tok {
			t.Errorf("%s token %q: got version %d variant %v (err %v), want a canonical UUID v4", who, tok, u.Version(), u.Variant(), err)
		}
		if other, dup := seen[tok]; dup {
			t.Errorf("%s and %s share token %s", who, other, tok)
		}
		seen[tok] = who
	}
}

func TestRegistrationClosesAtStart(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
	l.start()
	h.settle()
	h.unchanged("late player", func() {
		h.refused(playerRegistration(t, "p3"), protocol.ReasonRegistrationClosed)
	})
	// Referees may still join a running league, to take matches.
	f := newFakeReferee(t, "ref2")
	h.ok(refereeRegistration(t, "ref2", f.url(), nil))
	_, ms := h.round()
	mt := ms[0]
	l.reportOK(mt, decided(mt, 0))
	if got := h.m.State(); got != StateCompleted {
		t.Fatalf("state %s, want %s", got, StateCompleted)
	}
	h.unchanged("referee after completion", func() {
		h.refused(refereeRegistration(t, "ref3", "http://127.0.0.1:9/ref3", nil), protocol.ReasonRegistrationClosed)
	})
}

func TestRegistrationLimits(t *testing.T) {
	t.Run("max_referees", func(t *testing.T) {
		h := newHarness(t, harnessOptions{cfg: func(c *config.Config) { c.Registration.MaxReferees = 1 }})
		h.register([]string{"ref1"}, nil, nil)
		h.unchanged("second referee", func() {
			h.refused(refereeRegistration(t, "ref2", "http://127.0.0.1:9/ref2", nil), protocol.ReasonRegistrationClosed)
		})
	})
	t.Run("max_players closes registration and starts the league", func(t *testing.T) {
		h := newHarness(t, harnessOptions{cfg: func(c *config.Config) { c.Registration.MaxPlayers = 3 }})
		h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
		if got := h.m.State(); got != StateRegistration {
			t.Fatalf("state with 2 of 3 players %s, want %s", got, StateRegistration)
		}
		h.ok(playerRegistration(t, "p3"))
		if got := h.m.State(); got != StateActive {
			t.Fatalf("state with 3 of 3 players %s, want %s", got, StateActive)
		}
		h.settle()
		h.unchanged("fourth player", func() {
			h.refused(playerRegistration(t, "p4"), protocol.ReasonRegistrationClosed)
		})
	})
	t.Run("window closes registration once the minimums are met", func(t *testing.T) {
		var mu sync.Mutex
		now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
		h := newHarness(t, harnessOptions{now: clock, cfg: func(c *config.Config) { c.Registration.MinPlayers = 3 }})
		h.register([]string{"ref1"}, nil, []string{"p1"})
		advance(61 * time.Second)
		// The window is over but only 2 of 3 players are in: registration stays open.
		h.ok(playerRegistration(t, "p2"))
		if got := h.m.State(); got != StateRegistration {
			t.Fatalf("state below min_players after the window %s, want %s", got, StateRegistration)
		}
		h.ok(playerRegistration(t, "p3"))
		if got := h.m.State(); got != StateActive {
			t.Fatalf("state at min_players after the window %s, want %s", got, StateActive)
		}
		h.settle()
		h.unchanged("player after the window", func() {
			h.refused(playerRegistration(t, "p4"), protocol.ReasonRegistrationClosed)
		})
	})
}

func TestAuthenticationRefusals(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1", "ref2"}, nil, []string{"p1", "p2", "p3"})
	l.start()
	h.settle()
	_, ms := h.round()
	mt := ms[0]
	other := "ref1"
	if mt.Referee == "ref1" {
		other = "ref2"
	}
	stranger := uuid.NewString()

	tests := []struct {
		name string
		msg  *protocol.Message
		want protocol.Reason
	}{
		{"standings with an unknown token", standingsQuery(t, "player:p1", stranger, ""), protocol.ReasonUnauthorized},
		{"standings with another player's token", standingsQuery(t, "player:p1", l.playerTokens["p2"], ""), protocol.ReasonSenderMismatch},
		{"standings with a referee's token", standingsQuery(t, "player:p1", l.refTokens["ref1"], ""), protocol.ReasonSenderMismatch},
		{"standings from an unregistered player with a stolen token", standingsQuery(t, "player:p9", l.playerTokens["p1"], ""), protocol.ReasonSenderMismatch},
		{"standings from an unregistered player", standingsQuery(t, "player:p9", stranger, ""), protocol.ReasonUnauthorized},
		{"standings with the admin token as a player", standingsQuery(t, "player:p1", testAdminToken, ""), protocol.ReasonUnauthorized},
		{"standings as admin with a player's token", standingsQuery(t, "admin", l.playerTokens["p1"], ""), protocol.ReasonUnauthorized},
		{"ready with an unknown token", withToken(newMsg(t, protocol.AgentReadyRequest, "referee:ref1", map[string]any{}), stranger), protocol.ReasonUnauthorized},
		{"ready with another referee's token", withToken(newMsg(t, protocol.AgentReadyRequest, "referee:ref1", map[string]any{}), l.refTokens["ref2"]), protocol.ReasonSenderMismatch},
		{"result with an unknown token", h.report(mt.Referee, stranger, mt, decided(mt, 0)), protocol.ReasonUnauthorized},
		{"result spoofing the assigned referee", h.report(mt.Referee, l.refTokens[other], mt, decided(mt, 0)), protocol.ReasonSenderMismatch},
		{"result with a player's token", h.report(mt.Referee, l.playerTokens[mt.Players[0]], mt, decided(mt, 0)), protocol.ReasonSenderMismatch},
		{"result from another referee", h.report(other, l.refTokens[other], mt, decided(mt, 0)), protocol.ReasonNotAssignedReferee},
		{"admin start without a token", adminStart(t, ""), protocol.ReasonUnauthorized},
		{"admin start with a wrong token", adminStart(t, "not-the-admin-token"), protocol.ReasonUnauthorized},
		{"admin start with a player's token", adminStart(t, l.playerTokens["p1"]), protocol.ReasonUnauthorized},
	}
	for _, tc := range tests {
		h.run(t, tc.name, func(t *testing.T) {
			h.unchanged(tc.name, func() { h.refused(tc.msg, tc.want) })
		})
	}
	// The admin may read the standings with the admin token.
	p := decodeStandings(t, h.ok(standingsQuery(t, "admin", testAdminToken, "")))
	if len(p.Standings) != 3 {
		t.Errorf("admin standings have %d rows, want 3", len(p.Standings))
	}
}

// Without an admin token in the environment or config, no admin message is ever accepted.
func TestNoAdminTokenRefusesEveryAdminMessage(t *testing.T) {
	h := newHarness(t, harnessOptions{noAdmin: true})
	h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
	for _, tok := range []string{"", "admin", "x", testAdminToken} {
		h.unchanged("admin start with "+tok, func() { h.refused(adminStart(t, tok), protocol.ReasonUnauthorized) })
		if tok != "" { // QUERY_STANDINGS without auth_token is a schema violation
			h.unchanged("admin standings with "+tok, func() { h.refused(standingsQuery(t, "admin", tok, ""), protocol.ReasonUnauthorized) })
		}
	}
}

func TestAgentReadyMarksTheAgentActive(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1"})
	for _, tc := range []struct{ kind, id, token string }{
		{"referee", "ref1", l.refTokens["ref1"]},
		{"player", "p1", l.playerTokens["p1"]},
	} {
		for range 2 { // a repeated AGENT_READY is answered the same way
			ans := h.ok(withToken(newMsg(t, protocol.AgentReadyRequest, tc.kind+":"+tc.id, map[string]any{}), tc.token))
			var p map[string]string
			if err := ans.Decode(&p); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"status": "acknowledged", "agent_id": tc.id, "agent_type": tc.kind, "agent_state": AgentActive}
			for k, v := range want {
				if p[k] != v {
					t.Errorf("%s ready: payload %s = %q, want %q", tc.id, k, p[k], v)
				}
			}
		}
		var status string
		if err := h.store.DB().QueryRow(`SELECT status FROM `+tc.kind+`s WHERE `+tc.kind+`_id = ?`, tc.id).Scan(&status); err != nil {
			t.Fatal(err)
		}
		if status != AgentActive {
			t.Errorf("%s status in the database %s, want %s", tc.id, status, AgentActive)
		}
	}
}

// Tokens live in the database: a restarted League Manager on the same file accepts them,
// refuses strangers, and knows the league where it was.
func TestTokensPersistAcrossRestart(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2", "p3"})
	l.start()
	h.settle()
	_, ms := h.round()
	l.reportOK(ms[0], decided(ms[0], 1))
	before := decodeStandings(t, h.ok(standingsQuery(t, "player:p1", l.playerTokens["p1"], "")))

	h.restart()
	if got := h.m.State(); got != StateActive {
		t.Fatalf("state after restart %s, want %s", got, StateActive)
	}
	for id, tok := range l.playerTokens {
		after := decodeStandings(t, h.ok(standingsQuery(t, protocol.PlayerSender(id), tok, "")))
		if got, want := rowsString(after.Standings), rowsString(before.Standings); got != want {
			t.Errorf("standings after restart %s, want %s", got, want)
		}
	}
	h.ok(withToken(newMsg(t, protocol.AgentReadyRequest, "referee:ref1", map[string]any{}), l.refTokens["ref1"]))
	h.refused(standingsQuery(t, "player:p1", l.playerTokens["p2"], ""), protocol.ReasonSenderMismatch)
	h.refused(standingsQuery(t, "player:p1", uuid.NewString(), ""), protocol.ReasonUnauthorized)
}

// SUSPENDED and SHUTDOWN agents are refused. The database is edited as an operator
// would: SUSPENDED without suspended_until lasts until the operator lifts it, and
// nothing in the League Manager sets SHUTDOWN.
func TestSuspendedAndShutdownAgents(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
	for _, q := range []string{
		`UPDATE players SET status = 'SUSPENDED' WHERE player_id = 'p1'`,
		`UPDATE players SET status = 'SHUTDOWN' WHERE player_id = 'p2'`,
	} {
		if _, err := h.store.DB().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	h.restart()
	h.unchanged("suspended player", func() {
		h.refused(standingsQuery(t, "player:p1", l.playerTokens["p1"], ""), protocol.ReasonSuspended)
	})
	h.unchanged("shut down player", func() {
		h.refused(standingsQuery(t, "player:p2", l.playerTokens["p2"], ""), protocol.ReasonUnauthorized)
	})
}
