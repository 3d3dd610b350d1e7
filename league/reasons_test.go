package league

import (
	"context"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// notFromLeagueManager are the reasons of the catalogue a League Manager never answers:
// they belong to referees and players, or to a feature the League Manager lacks.
var notFromLeagueManager = map[protocol.Reason]string{
	protocol.ReasonStaleStep: "player: a move for a step that is over",
	protocol.ReasonBusy:      "referee/player: at capacity",
}

// Every error reason the League Manager answers, each triggered on a fresh league through
// the JSON-RPC server, with its fixed code, and without changing anything (INTERNAL aside).
func TestEveryErrorReason(t *testing.T) {
	type scenario func(t *testing.T, h *harness) *protocol.Error
	// active sets up 2 referees and 4 players in an active league.
	active := func(h *harness) (*testLeague, []liveMatch) {
		l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
		l.start()
		h.settle()
		_, ms := h.round()
		return l, ms
	}
	raw := func(h *harness, body string) *protocol.Error {
		resp, _ := h.process([]byte(body))
		return resp.Error
	}
	scenarios := map[protocol.Reason]scenario{
		protocol.ReasonParseError: func(t *testing.T, h *harness) *protocol.Error { return raw(h, `{"jsonrpc":`) },
		protocol.ReasonInvalidRequest: func(t *testing.T, h *harness) *protocol.Error {
			return raw(h, `{"jsonrpc":"1.0","method":"league.handle","params":{},"id":1}`)
		},
		protocol.ReasonMethodNotFound: func(t *testing.T, h *harness) *protocol.Error {
			return raw(h, `{"jsonrpc":"2.0","method":"rpc.discover","id":1}`)
		},
		protocol.ReasonSchemaViolation: func(t *testing.T, h *harness) *protocol.Error {
			m := playerRegistration(t, "p1")
			m.Envelope.Protocol = "league.v1"
			_, e := h.call(m)
			return e
		},
		protocol.ReasonUnauthorized: func(t *testing.T, h *harness) *protocol.Error {
			_, e := h.call(adminStart(t, "guess"))
			return e
		},
		protocol.ReasonSenderMismatch: func(t *testing.T, h *harness) *protocol.Error {
			m := refereeRegistration(t, "ref1", "http://127.0.0.1:9/ref1", nil)
			m.Envelope.Sender = "referee:ref2"
			_, e := h.call(m)
			return e
		},
		protocol.ReasonDuplicateRegistration: func(t *testing.T, h *harness) *protocol.Error {
			h.register([]string{"ref1"}, nil, nil)
			_, e := h.call(refereeRegistration(t, "ref1", "http://127.0.0.1:9/ref1", nil))
			return e
		},
		protocol.ReasonNoRefereeRegistered: func(t *testing.T, h *harness) *protocol.Error {
			_, e := h.call(playerRegistration(t, "p1"))
			return e
		},
		protocol.ReasonRegistrationClosed: func(t *testing.T, h *harness) *protocol.Error {
			active(h)
			_, e := h.call(playerRegistration(t, "p9"))
			return e
		},
		protocol.ReasonUnknownMatch: func(t *testing.T, h *harness) *protocol.Error {
			l, ms := active(h)
			mt := ms[0]
			mt.ID = "r09-m09-000000000000"
			_, e := h.call(h.report(ms[0].Referee, l.refTokens[ms[0].Referee], mt, decided(mt, 0)))
			return e
		},
		protocol.ReasonNotAssignedReferee: func(t *testing.T, h *harness) *protocol.Error {
			l, ms := active(h)
			_, e := h.call(h.report(ms[1].Referee, l.refTokens[ms[1].Referee], ms[0], decided(ms[0], 0)))
			return e
		},
		protocol.ReasonDuplicateResult: func(t *testing.T, h *harness) *protocol.Error {
			l, ms := active(h)
			l.reportOK(ms[0], decided(ms[0], 0))
			_, e := h.call(h.report(ms[0].Referee, l.refTokens[ms[0].Referee], ms[0], decided(ms[0], 1)))
			return e
		},
		protocol.ReasonInvalidResult: func(t *testing.T, h *harness) *protocol.Error {
			l, ms := active(h)
			r := decided(ms[0], 0)
			r.Points[ms[0].Players[0]] = 2
			_, e := h.call(h.report(ms[0].Referee, l.refTokens[ms[0].Referee], ms[0], r))
			return e
		},
		protocol.ReasonLeagueNotActive: func(t *testing.T, h *harness) *protocol.Error {
			h.register([]string{"ref1"}, nil, []string{"p1"})
			_, e := h.call(adminStart(t, testAdminToken))
			return e
		},
		protocol.ReasonSuspended: func(t *testing.T, h *harness) *protocol.Error {
			l := h.register([]string{"ref1"}, nil, []string{"p1"})
			if _, err := h.store.DB().Exec(`UPDATE players SET status = 'SUSPENDED'`); err != nil {
				t.Fatal(err)
			}
			h.restart()
			_, e := h.call(standingsQuery(t, "player:p1", l.playerTokens["p1"], ""))
			return e
		},
		protocol.ReasonStaleAssignment: func(t *testing.T, h *harness) *protocol.Error {
			l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
			l.refs["ref1"].setReject(true)
			l.start()
			_, ms := h.round()
			waitFor(t, "the match to return to the pool", func() bool { return h.match(ms[0].ID).Status == protocol.MatchStatePending })
			_, e := h.call(h.report("ref1", l.refTokens["ref1"], ms[0], decided(ms[0], 0)))
			return e
		},
		protocol.ReasonRateLimited: func(t *testing.T, h *harness) *protocol.Error {
			l := h.register([]string{"ref1"}, nil, []string{"p1"})
			h.m.e.mu.Lock()
			for h.m.limits.allow(limitStandings, "player:p1", true, time.Now()) {
			}
			h.m.e.mu.Unlock()
			_, e := h.call(standingsQuery(t, "player:p1", l.playerTokens["p1"], ""))
			return e
		},
		protocol.ReasonShuttingDown: func(t *testing.T, h *harness) *protocol.Error {
			h.register([]string{"ref1"}, nil, nil)
			if err := h.m.Shutdown(context.Background(), "test", 0); err != nil {
				t.Fatal(err)
			}
			_, e := h.call(playerRegistration(t, "p1"))
			return e
		},
		protocol.ReasonWrongLeague: func(t *testing.T, h *harness) *protocol.Error {
			m := refereeRegistration(t, "ref1", "http://127.0.0.1:9/ref1", nil)
			m.Envelope.LeagueID = "another"
			_, e := h.call(m)
			return e
		},
		protocol.ReasonUnsupportedMessage: func(t *testing.T, h *harness) *protocol.Error {
			// A GAME_INVITATION is for players.
			m := newMsg(t, protocol.GameInvitation, "referee:ref1", map[string]any{"match_id": "r01-m01-x", "game_type": "tic_tac_toe", "opponents": []string{"p2"}})
			m.Envelope.MatchID, m.Envelope.GameType = "r01-m01-x", "tic_tac_toe"
			_, e := h.call(m)
			return e
		},
		protocol.ReasonUnsupportedGame: func(t *testing.T, h *harness) *protocol.Error {
			_, e := h.call(refereeRegistration(t, "ref1", "http://127.0.0.1:9/ref1", map[string]any{"game_types": []string{"even_odd"}}))
			return e
		},
		protocol.ReasonInsecureEndpoint: func(t *testing.T, h *harness) *protocol.Error {
			h.register([]string{"ref1"}, nil, nil)
			_, e := h.call(withPayload(t, playerRegistration(t, "p1"), map[string]any{"player_id": "p1", "endpoint_url": "http://10.0.0.3:9001/mcp"}))
			return e
		},
		protocol.ReasonUnknownRound: func(t *testing.T, h *harness) *protocol.Error {
			l := h.register([]string{"ref1"}, nil, []string{"p1"})
			_, e := h.call(standingsQuery(t, "player:p1", l.playerTokens["p1"], "round-1"))
			return e
		},
		protocol.ReasonStorageUnavailable: func(t *testing.T, h *harness) *protocol.Error {
			// The database takes no writes (as on a full disk): nothing is registered.
			h.register([]string{"ref1"}, nil, nil)
			if _, err := h.store.DB().Exec(`PRAGMA query_only = ON`); err != nil {
				t.Fatal(err)
			}
			_, e := h.call(playerRegistration(t, "p1"))
			if e != nil && (e.Data == nil || e.Data.Details != "database: attempt to write a readonly database") {
				t.Errorf("details %+v, want the database's cause and nothing more", e.Data)
			}
			return e
		},
		protocol.ReasonInternal: func(t *testing.T, h *harness) *protocol.Error {
			// The database goes away under the League Manager.
			h.register([]string{"ref1"}, nil, nil)
			if err := h.store.DB().Close(); err != nil {
				t.Fatal(err)
			}
			_, e := h.call(playerRegistration(t, "p1"))
			return e
		},
	}

	for _, r := range protocol.Reasons() {
		_, known := scenarios[r]
		_, excused := notFromLeagueManager[r]
		if known == excused {
			t.Errorf("reason %s: scenario %v, excused %v; want exactly one", r, known, excused)
		}
	}
	for _, r := range protocol.Reasons() {
		run, ok := scenarios[r]
		if !ok {
			continue
		}
		t.Run(string(r), func(t *testing.T) {
			h := newHarness(t, harnessOptions{redispatch: 1 << 40})
			var perr *protocol.Error
			if r == protocol.ReasonInternal {
				perr = run(t, h)
				h.open = false // the store is closed already
				h.m.Close()
				h.client.Close()
				h.audit.Close()
			} else {
				// Changes made by the setup are fine; the refused message itself changes nothing.
				perr = runUnchangedLast(t, h, run)
			}
			if perr == nil {
				t.Fatalf("got no error, want %s", r)
			}
			checkError(t, perr, r)
			if r == protocol.ReasonInternal && (perr.Message != "internal error" || perr.Data.Details != "" || len(perr.Data.Violations) != 0) {
				t.Errorf("INTERNAL answer %+v says more than \"internal error\"", perr)
			}
		})
	}
}

// runUnchangedLast runs the scenario, then sends its refused message again and checks
// that the repetition is refused the same way and changes nothing.
func runUnchangedLast(t *testing.T, h *harness, run func(*testing.T, *harness) *protocol.Error) *protocol.Error {
	t.Helper()
	perr := run(t, h)
	last := h.lastBody
	if perr == nil || last == nil {
		return perr
	}
	h.unchanged("repeated refused message", func() {
		resp, _ := h.process(last)
		if resp.Error == nil || resp.Error.Data.Reason != perr.Data.Reason {
			t.Errorf("repeated message answered %+v, want %s", resp.Error, perr.Data.Reason)
		}
	})
	return perr
}
