package referee

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/rpccheck"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// bench is a referee driven in memory, on fake time when built in a synctest bubble:
// the League Manager's requests pass through a protocol.Server in front of it (both the
// request and the answer are checked against their schemas), and its own calls reach
// scripted players and a fake League Manager.
type bench struct {
	t       *testing.T
	r       *Referee
	league  *fakeLeagueCaller
	players *fakeCaller
	srv     *protocol.Server
}

// newBench builds a referee registered with a League Manager that announced features.
// Its matches stop when the test ends.
func newBench(t *testing.T, features []string, change func(*Config), league func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error), players map[string]fakePlayer) *bench {
	t.Helper()
	fl := newFakeLeagueCaller(t, league)
	r := registeredReferee(t, fl, zerolog.Nop(), func(c *Config) {
		c.JoinTimeout, c.MoveTimeout = 10*time.Second, 10*time.Second
		if change != nil {
			change(c)
		}
	})
	r.leagueFeatures = features
	fc := newFakeCaller(t, players)
	r.players = fc
	matches, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { r.stopMatches(cancel) })
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	v.SelfCheck = true
	return &bench{t: t, r: r, league: fl, players: fc, srv: protocol.NewServer(r.handler(matches), v, nil, zerolog.Nop())}
}

// send delivers a League Manager request to the referee as it would arrive on the wire.
func (b *bench) send(m *protocol.Message) (*protocol.Message, error) {
	b.t.Helper()
	body, err := json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: m, ID: json.RawMessage(`1`)})
	if err != nil {
		b.t.Fatal(err)
	}
	var resp protocol.Response
	if err := json.Unmarshal(b.srv.Process(context.Background(), body), &resp); err != nil {
		b.t.Fatal(err)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	return resp.Result, nil
}

// ok sends m and fails the test unless it is answered with answerType; it returns the
// answer's payload.
func (b *bench) ok(m *protocol.Message, answerType string) map[string]any {
	b.t.Helper()
	ans, err := b.send(m)
	if err != nil {
		b.t.Fatalf("%s %s: %v", m.Envelope.MessageType, m.Envelope.MatchID, err)
	}
	if ans.Envelope.MessageType != answerType || ans.Envelope.MatchID != m.Envelope.MatchID {
		b.t.Fatalf("%s answered with %s about %q", m.Envelope.MessageType, ans.Envelope.MessageType, ans.Envelope.MatchID)
	}
	var p map[string]any
	if err := ans.Decode(&p); err != nil {
		b.t.Fatal(err)
	}
	return p
}

// fromLM builds a League Manager request about matchID, unsigned like the Python
// implementation's.
func fromLM(t *testing.T, messageType, matchID string, payload map[string]any) *protocol.Message {
	t.Helper()
	m, err := protocol.NewMessage(messageType, protocol.SenderLeagueManager, payload)
	if err != nil {
		t.Fatal(err)
	}
	m.Envelope.MatchID = matchID
	return m
}

func assignMsg(t *testing.T, matchID string) *protocol.Message {
	t.Helper()
	m := fromLM(t, protocol.MatchAssignment, matchID, map[string]any{
		"match_id": matchID, "round_id": "round-1", "game_type": game.TypeTicTacToe, "players": []string{"p1", "p2"},
		"player_endpoints": map[string]string{"p1": "http://p1", "p2": "http://p2"},
	})
	m.Envelope.RoundID, m.Envelope.GameType = "round-1", game.TypeTicTacToe
	return m
}

// reminderMsg and cancelMsg carry token, as their schemas require.
func reminderMsg(t *testing.T, matchID, token string) *protocol.Message {
	m := fromLM(t, protocol.ResultReminder, matchID, map[string]any{"match_id": matchID, "attempt": 1, "reason": "no result yet"})
	m.Envelope.AuthToken = token
	return m
}

func cancelMsg(t *testing.T, matchID, token string) *protocol.Message {
	m := fromLM(t, protocol.MatchCancelled, matchID, map[string]any{"match_id": matchID, "reason": "referee too slow; the match is assigned again"})
	m.Envelope.AuthToken = token
	return m
}

// leagueAcks is a League Manager that acknowledges every report, event and heartbeat.
func leagueAcks(_ context.Context, m *protocol.Message, _ int) (*protocol.Message, error) {
	var out *protocol.Message
	var err error
	switch m.Envelope.MessageType {
	case protocol.MatchResultReport:
		out, err = leagueReply(m, protocol.MatchResultAck, map[string]string{"status": "acknowledged", "match_id": m.Envelope.MatchID})
	case protocol.MoveEvent:
		return moveEventAck(m)
	default:
		out, err = leagueReply(m, protocol.HeartbeatResponse, map[string]any{"status": "acknowledged", "lease_ms": 3000})
	}
	return out, err
}

// slowPlayers answer everything after d of (fake) time, moves with the first legal one.
func slowPlayers(t *testing.T, d time.Duration) map[string]fakePlayer {
	g := ttt(t)
	out := map[string]fakePlayer{}
	for _, id := range []string{"p1", "p2"} {
		p := scripted(g, id, firstLegal(g))
		out["http://"+id] = func(ctx context.Context, m *protocol.Message, call int) (*protocol.Message, error) {
			select {
			case <-time.After(d):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return p(ctx, m, call)
		}
	}
	return out
}

// sentAbout lists the requests of messageType the referee sent to players about matchID.
func (b *bench) sentAbout(messageType, matchID string) []*protocol.Message {
	var out []*protocol.Message
	for _, m := range b.players.sent(messageType, "") {
		if m.Envelope.MatchID == matchID {
			out = append(out, m)
		}
	}
	return out
}

// reports lists the MATCH_RESULT_REPORT attempts about matchID.
func (b *bench) reports(matchID string) []rpccheck.Call {
	var out []rpccheck.Call
	for _, c := range b.league.sent(protocol.MatchResultReport) {
		if c.Msg.Envelope.MatchID == matchID {
			out = append(out, c)
		}
	}
	return out
}

// onlyReport is the one MATCH_RESULT_REPORT about matchID and the game metadata it
// carries; the test fails unless there is exactly one.
func (b *bench) onlyReport(matchID string) (rpccheck.Call, protocol.GameMetadata) {
	b.t.Helper()
	reports := b.reports(matchID)
	if len(reports) != 1 {
		b.t.Fatalf("got %d reports, want 1", len(reports))
	}
	var rep protocol.ResultReport
	if err := reports[0].Msg.Decode(&rep); err != nil {
		b.t.Fatal(err)
	}
	md, vs := protocol.ReadGameMetadata(rep.GameMetadata)
	if vs != nil {
		b.t.Fatalf("game_metadata violates its schema: %v", vs)
	}
	return reports[0], md
}

// Assignments beyond --max-matches are acknowledged and wait in a bounded FIFO queue;
// BUSY comes only when the queue is full; a retried assignment is not queued twice; and
// every queued match is played, in order, once a slot frees. MOVE_EVENT goes only to a
// League Manager that announced move_events.
func TestQueuedAssignmentsRunInArrivalOrder(t *testing.T) {
	for _, tc := range []struct {
		name       string
		features   []string
		wantEvents bool
	}{
		{"seed league", nil, false},
		{"league with move events", []string{protocol.FeatureMoveEvents}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBench(t, tc.features, func(c *Config) { c.MaxMatches, c.MaxQueued = 1, 2 }, leagueAcks, slowPlayers(t, time.Second))
				for _, id := range []string{"m-1", "m-2", "m-3", "m-2", "m-1"} {
					b.ok(assignMsg(t, id), protocol.MatchAssignmentAck)
				}
				_, err := b.send(assignMsg(t, "m-4"))
				if protocol.ReasonOf(err) != protocol.ReasonBusy {
					t.Fatalf("fourth match: got %v, want BUSY", err)
				}
				synctest.Wait()
				want := []protocol.MatchProgress{
					{MatchID: "m-1", Phase: protocol.PhaseJoining},
					{MatchID: "m-2", Phase: protocol.PhaseQueued},
					{MatchID: "m-3", Phase: protocol.PhaseQueued},
				}
				if st := b.r.Status(); !slices.Equal(st.Matches, want) || !slices.Equal(st.ActiveMatches, []string{"m-1"}) {
					t.Errorf("got matches %v, active %v; want %v, active [m-1]", st.Matches, st.ActiveMatches, want)
				}
				time.Sleep(time.Minute) // three matches of at most 9 moves of 1 s each
				synctest.Wait()

				// Invitations and moves of one match all come before those of the next.
				var order []string
				for _, m := range b.players.sent("", "") {
					if len(order) == 0 || order[len(order)-1] != m.Envelope.MatchID {
						order = append(order, m.Envelope.MatchID)
					}
				}
				if !slices.Equal(order, []string{"m-1", "m-2", "m-3"}) {
					t.Errorf("players were asked about matches in the order %v, want m-1, m-2, m-3, one at a time", order)
				}
				for _, id := range []string{"m-1", "m-2", "m-3"} {
					if n := len(b.reports(id)); n != 1 {
						t.Errorf("%s reported %d times, want once", id, n)
					}
					if n := len(b.sentAbout(protocol.GameInvitation, id)); n != 2 {
						t.Errorf("%s: %d invitations, want 2 (one match, played once)", id, n)
					}
				}
				if events := len(b.league.sent(protocol.MoveEvent)); (events > 0) != tc.wantEvents {
					t.Errorf("got %d move events, want some: %v", events, tc.wantEvents)
				}
				if st := b.r.Status(); len(st.Matches) != 0 || st.ResultsReported != 3 || st.State != "IDLE" {
					t.Errorf("got status %+v, want an idle referee with 3 results reported", st)
				}
			})
		})
	}
}

// Each held match shows its phase and steps: joining while invitations are out, playing
// with the steps completed so far, reporting from the end of play until the report ends.
// The slot frees when play ends, so the next match starts while the first is reported.
// Heartbeats carry the same, when the League Manager announced match_progress.
func TestMatchProgressFollowsEachMatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		league := func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			if m.Envelope.MessageType == protocol.MatchResultReport {
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return leagueAcks(ctx, m, n)
		}
		b := newBench(t, []string{protocol.FeatureHeartbeats, protocol.FeatureMatchProgress},
			func(c *Config) { c.ReportTimeout = time.Hour }, league, slowPlayers(t, time.Second))
		b.ok(assignMsg(t, "m-1"), protocol.MatchAssignmentAck)
		b.ok(assignMsg(t, "m-2"), protocol.MatchAssignmentAck)
		check := func(when string, want ...protocol.MatchProgress) {
			t.Helper()
			synctest.Wait()
			if got := b.r.Status().Matches; !slices.Equal(got, want) {
				t.Errorf("%s: got %v, want %v", when, got, want)
			}
		}
		check("at once", protocol.MatchProgress{MatchID: "m-1", Phase: protocol.PhaseJoining}, protocol.MatchProgress{MatchID: "m-2", Phase: protocol.PhaseQueued})
		time.Sleep(1500 * time.Millisecond) // joined at 1 s; the first move is asked
		check("after the invitations", protocol.MatchProgress{MatchID: "m-1", Phase: protocol.PhasePlaying}, protocol.MatchProgress{MatchID: "m-2", Phase: protocol.PhaseQueued})
		time.Sleep(2 * time.Second) // moves applied at 2 s and 3 s
		check("after two moves", protocol.MatchProgress{MatchID: "m-1", Step: 2, Phase: protocol.PhasePlaying}, protocol.MatchProgress{MatchID: "m-2", Phase: protocol.PhaseQueued})
		// Until m-1's play is over (its report waits); a slot held until the report ends
		// would keep m-2 queued and m-1 first.
		for i := 0; i < 300 && b.r.Status().Matches[0].MatchID == "m-1"; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		steps := len(b.sentAbout(protocol.RequestMove, "m-1"))
		check("while m-1 is reported", protocol.MatchProgress{MatchID: "m-2", Phase: protocol.PhaseJoining}, protocol.MatchProgress{MatchID: "m-1", Step: steps, Phase: protocol.PhaseReporting})
		if n := len(b.sentAbout(protocol.GameInvitation, "m-2")); n != 2 {
			t.Errorf("m-2 got %d invitations while m-1 was reported, want 2: the slot frees when play ends", n)
		}

		b.r.sendHeartbeat(context.Background(), time.Second)
		beats := b.league.sent(protocol.HeartbeatRequest)
		var p struct {
			Active   []string                 `json:"active_matches"`
			Progress []protocol.MatchProgress `json:"match_progress"`
		}
		if err := beats[len(beats)-1].Msg.Decode(&p); err != nil {
			t.Fatal(err)
		}
		wantProgress := []protocol.MatchProgress{{MatchID: "m-2", Phase: protocol.PhaseJoining}, {MatchID: "m-1", Step: steps, Phase: protocol.PhaseReporting}}
		if !slices.Equal(p.Active, []string{"m-2"}) || !slices.Equal(p.Progress, wantProgress) {
			t.Errorf("heartbeat lists active %v and progress %v, want [m-2] and %v", p.Active, p.Progress, wantProgress)
		}
		close(release)
		time.Sleep(time.Minute)
		check("after both reports")
	})
}

// A RESULT_REMINDER is answered with where the match stands. While a result is being
// reported, the same report goes again at once; a result acknowledged recently (whose
// acknowledgement the League Manager may have lost) is sent again, once however many
// reminders come; a result the League Manager refused as no longer this referee's is
// forgotten.
func TestResultReminders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refuse := map[string]protocol.Reason{"m-stale": protocol.ReasonStaleAssignment, "m-other": protocol.ReasonNotAssignedReferee}
		hangResend := make(chan struct{})
		var mu sync.Mutex
		attempts := map[string]int{} // reports received, by match
		league := func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			if m.Envelope.MessageType != protocol.MatchResultReport {
				return leagueAcks(ctx, m, n)
			}
			id := m.Envelope.MatchID
			mu.Lock()
			attempt := attempts[id]
			attempts[id]++
			mu.Unlock()
			switch {
			case refuse[id] != "":
				return nil, protocol.Errorf(refuse[id], "match %s is not yours", id)
			case id == "m-slow" && attempt == 0:
				// The first report fails: the referee waits before its next attempt.
				return nil, protocol.Errorf(protocol.ReasonInternal, "database busy")
			case id == "m-moved" && attempt > 0:
				return nil, protocol.Errorf(protocol.ReasonStaleAssignment, "match %s was assigned again", id)
			case id == "m-done" && attempt > 0:
				// The resend on a reminder hangs until released.
				select {
				case <-hangResend:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return leagueAcks(ctx, m, n)
		}
		b := newBench(t, nil, func(c *Config) { c.ReportTimeout = time.Hour }, league, slowPlayers(t, 0))

		remind := func(id, wantPhase string, wantResent bool) {
			t.Helper()
			p := b.ok(reminderMsg(t, id, b.r.token), protocol.ResultReminderAck)
			if p["status"] != "acknowledged" || p["match_id"] != id || p["phase"] != wantPhase || p["resent"] != wantResent {
				t.Errorf("reminder about %s answered %v, want phase %s, resent %v", id, p, wantPhase, wantResent)
			}
		}
		remind("m-never", protocol.PhaseUnknown, false)

		// A result acknowledged at once is remembered.
		b.ok(assignMsg(t, "m-done"), protocol.MatchAssignmentAck)
		synctest.Wait()
		first := b.reports("m-done")
		if len(first) != 1 {
			t.Fatalf("m-done reported %d times, want once", len(first))
		}
		remind("m-done", protocol.PhaseReporting, true)
		remind("m-done", protocol.PhaseReporting, true)
		synctest.Wait()
		again := b.reports("m-done")
		if len(again) != 2 || again[1].Msg != first[0].Msg {
			t.Errorf("m-done reported %d times, want the same report once more whatever the reminders", len(again))
		}
		close(hangResend)
		synctest.Wait()

		// A failed report is retried at once on a reminder, not after its backoff.
		b.ok(assignMsg(t, "m-slow"), protocol.MatchAssignmentAck)
		synctest.Wait()
		remind("m-slow", protocol.PhaseReporting, true)
		synctest.Wait()
		slow := b.reports("m-slow")
		if len(slow) != 2 || slow[1].Msg != slow[0].Msg || !slow[1].At.Equal(slow[0].At) {
			t.Errorf("got %d attempts of m-slow, want the same report again at once", len(slow))
		}

		// A match still queued or played is not reported on a reminder.
		b.r.mu.Lock()
		b.r.playing = b.r.cfg.MaxMatches // no free slot: the next assignment waits
		b.r.mu.Unlock()
		b.ok(assignMsg(t, "m-queued"), protocol.MatchAssignmentAck)
		remind("m-queued", protocol.PhaseQueued, false)
		b.r.mu.Lock()
		b.r.playing = 0
		b.r.startQueuedLocked(t.Context())
		b.r.mu.Unlock()
		synctest.Wait()

		// Refused as another referee's: forgotten.
		for _, id := range []string{"m-stale", "m-other"} {
			b.ok(assignMsg(t, id), protocol.MatchAssignmentAck)
			synctest.Wait()
			remind(id, protocol.PhaseUnknown, false)
			if n := len(b.reports(id)); n != 1 {
				t.Errorf("%s reported %d times, want once: a refusal is final", id, n)
			}
		}
		// Acknowledged, then refused as another referee's when sent again: forgotten.
		b.ok(assignMsg(t, "m-moved"), protocol.MatchAssignmentAck)
		synctest.Wait()
		remind("m-moved", protocol.PhaseReporting, true)
		synctest.Wait()
		remind("m-moved", protocol.PhaseUnknown, false)
		// Only the last results are remembered.
		for i := range recentResults {
			id := "m-fill-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
			b.ok(assignMsg(t, id), protocol.MatchAssignmentAck)
			synctest.Wait()
		}
		remind("m-done", protocol.PhaseUnknown, false)
	})
}

// MATCH_CANCELLED stops a match at once: a queued one never starts, a running one gets no
// further request and reports nothing, and its slot goes to the next queued match; a
// report under way stops. Only the League Manager may cancel, with the referee's token
// when it signs its requests.
func TestMatchCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		league := func(ctx context.Context, m *protocol.Message, n int) (*protocol.Message, error) {
			if m.Envelope.MessageType == protocol.MatchResultReport && m.Envelope.MatchID == "m-3" {
				return nil, protocol.Errorf(protocol.ReasonRateLimited, "slow down")
			}
			return leagueAcks(ctx, m, n)
		}
		b := newBench(t, []string{protocol.FeatureSignedAssignments}, func(c *Config) { c.MaxQueued = 2 }, league, slowPlayers(t, time.Second))
		tok := b.r.token
		for _, id := range []string{"m-1", "m-2", "m-3"} {
			m := assignMsg(t, id)
			m.Envelope.AuthToken = tok
			b.ok(m, protocol.MatchAssignmentAck)
		}
		// Not signed with this referee's token: refused, nothing changes.
		if _, err := b.send(cancelMsg(t, "m-1", "0123456789abcdef")); protocol.ReasonOf(err) != protocol.ReasonUnauthorized {
			t.Errorf("cancellation with another token: got %v, want UNAUTHORIZED", err)
		}
		if _, err := b.send(reminderMsg(t, "m-1", "0123456789abcdef")); protocol.ReasonOf(err) != protocol.ReasonUnauthorized {
			t.Errorf("reminder with another token: got %v, want UNAUTHORIZED", err)
		}
		mismatch := cancelMsg(t, "m-1", tok)
		mismatch.Envelope.MatchID = "m-2"
		if _, err := b.send(mismatch); protocol.ReasonOf(err) != protocol.ReasonSchemaViolation {
			t.Errorf("cancellation naming two matches: got %v, want SCHEMA_VIOLATION", err)
		}
		p := b.ok(cancelMsg(t, "m-2", tok), protocol.MatchCancelledAck)
		if p["status"] != "acknowledged" || p["match_id"] != "m-2" {
			t.Errorf("got %v, want acknowledged m-2", p)
		}
		time.Sleep(3500 * time.Millisecond) // m-1: joined at 1 s, moves applied at 2 s and 3 s
		asked := len(b.sentAbout(protocol.RequestMove, "m-1"))
		b.ok(cancelMsg(t, "m-1", tok), protocol.MatchCancelledAck)
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(b.sentAbout(protocol.RequestMove, "m-1")); n != asked {
			t.Errorf("m-1 got %d move requests after its cancellation", n-asked)
		}
		for _, m := range b.players.sent("", "") {
			if m.Envelope.MatchID == "m-1" && m.Envelope.MessageType == protocol.GameOver {
				t.Errorf("a cancelled match was announced over to %s", m.Envelope.AuthToken)
			}
		}
		if n := len(b.reports("m-1")); n != 0 {
			t.Errorf("cancelled m-1 was reported %d times", n)
		}
		if n := len(b.sentAbout("", "m-2")); n != 0 {
			t.Errorf("cancelled queued m-2 got %d requests sent about it", n)
		}
		// m-3 took the slot m-1 left and is being reported (refused for now, retried).
		if n := len(b.sentAbout(protocol.GameInvitation, "m-3")); n != 2 {
			t.Fatalf("m-3 got %d invitations, want 2", n)
		}
		if st := b.r.Status(); !slices.Equal(st.Matches, []protocol.MatchProgress{{MatchID: "m-3", Step: st.Matches[0].Step, Phase: protocol.PhaseReporting}}) {
			t.Errorf("got matches %v, want m-3 reporting", st.Matches)
		}
		attempts := len(b.reports("m-3"))
		b.ok(cancelMsg(t, "m-3", tok), protocol.MatchCancelledAck)
		time.Sleep(time.Minute)
		if n := len(b.reports("m-3")); n != attempts {
			t.Errorf("m-3 reported %d more times after its cancellation", n-attempts)
		}
		b.ok(cancelMsg(t, "m-unknown", tok), protocol.MatchCancelledAck)
		if st := b.r.Status(); len(st.Matches) != 0 {
			t.Errorf("got matches %v, want none", st.Matches)
		}
	})
}

// LEAGUE_SHUTDOWN drops the queued matches, lets the running one finish and report, and
// leaves no goroutine behind (synctest.Test fails on a leaked one).
func TestShutdownDropsQueuedMatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBench(t, nil, nil, leagueAcks, slowPlayers(t, time.Second))
		for _, id := range []string{"m-1", "m-2", "m-3"} {
			b.ok(assignMsg(t, id), protocol.MatchAssignmentAck)
		}
		b.ok(fromLM(t, protocol.LeagueShutdown, "", map[string]any{"reason": "league completed"}), protocol.LeagueShutdownAck)
		if _, err := b.send(assignMsg(t, "m-4")); protocol.ReasonOf(err) != protocol.ReasonShuttingDown {
			t.Errorf("assignment after LEAGUE_SHUTDOWN: got %v, want SHUTTING_DOWN", err)
		}
		if st := b.r.Status(); len(st.Matches) != 1 || st.Matches[0].MatchID != "m-1" {
			t.Errorf("got matches %v after LEAGUE_SHUTDOWN, want only m-1", st.Matches)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(b.reports("m-1")); n != 1 {
			t.Errorf("m-1 reported %d times, want once", n)
		}
		for _, id := range []string{"m-2", "m-3"} {
			if n := len(b.sentAbout("", id)); n != 0 {
				t.Errorf("dropped %s got %d requests", id, n)
			}
		}
	})
}

// An assignment that arrives while the registration answer is still on its way (the
// League Manager may assign as soon as it has answered) waits for it and is taken,
// instead of being refused as from an unknown League Manager.
func TestAssignmentWaitsForTheRegistrationAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBench(t, nil, nil, leagueAcks, slowPlayers(t, time.Second))
		b.r.mu.Lock()
		token := b.r.token
		b.r.token, b.r.registered = "", make(chan struct{})
		b.r.mu.Unlock()
		var ans *protocol.Message
		var err error
		done := make(chan struct{})
		go func() {
			defer close(done)
			ans, err = b.send(assignMsg(t, "m-early"))
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Fatalf("assignment answered before the registration answer was stored: %v, %v", ans, err)
		default:
		}
		b.r.mu.Lock()
		b.r.token = token
		b.r.mu.Unlock()
		close(b.r.registered)
		<-done
		if err != nil || ans.Envelope.MessageType != protocol.MatchAssignmentAck {
			t.Fatalf("assignment after registration: %v, %v; want %s", ans, err, protocol.MatchAssignmentAck)
		}
	})
}

// LEAGUE_COMPLETED is acknowledged and changes nothing: the referee still takes
// assignments until LEAGUE_SHUTDOWN.
func TestLeagueCompletedIsAcknowledged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		if !slices.Contains(Features, protocol.FeatureLeagueCompleted) {
			t.Errorf("the referee announces %v, want %s among them", Features, protocol.FeatureLeagueCompleted)
		}
		b := newBench(t, nil, nil, leagueAcks, slowPlayers(t, time.Second))
		b.ok(fromLM(t, protocol.LeagueCompleted, "", map[string]any{"league_id": "league-1", "standings": []any{}}), protocol.LeagueCompletedAck)
		b.ok(assignMsg(t, "m-1"), protocol.MatchAssignmentAck)
		time.Sleep(time.Minute)
		synctest.Wait()
	})
}
