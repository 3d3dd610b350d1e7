package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// ---- a client acting as referees, players and admin ----

type sent struct{ conv, sender string }

// wire sends messages to one League Manager and remembers what it sent and every error
// answer it got, for the audit and leak checks.
type wire struct {
	t      *testing.T
	lm     *lmRun
	client *protocol.Client
	v      *protocol.Validator

	mu       sync.Mutex
	sent     []sent
	errs     [][]byte
	secrets  map[string]bool
	tokenMap map[string]string // captured token -> issued token (interop replay)
}

func newWire(t *testing.T, lm *lmRun) *wire {
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	v.SelfCheck = true // the client checks what it sends; answers are always checked
	c := protocol.NewClient(v, nil)
	t.Cleanup(c.Close)
	return &wire{t: t, lm: lm, client: c, v: v, secrets: map[string]bool{e2eAdminToken: true}, tokenMap: map[string]string{}}
}

func (w *wire) secret(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.secrets[s] = true
}

func (w *wire) noSecretIn(what string, b []byte) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.secrets {
		if bytes.Contains(b, []byte(s)) {
			w.t.Errorf("%s holds secret %s", what, s)
		}
	}
}

func (w *wire) record(conv, sender string, errAnswer []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if conv != "" {
		w.sent = append(w.sent, sent{conv, sender})
	}
	if errAnswer != nil {
		w.errs = append(w.errs, errAnswer)
	}
}

// call sends a valid message with protocol.Client (which validates it first).
func (w *wire) call(msg *protocol.Message) (*protocol.Message, *protocol.Error) {
	w.t.Helper()
	ans, err := w.client.Call(context.Background(), w.lm.url, msg, protocol.CallOptions{Timeout: 10 * time.Second})
	var perr *protocol.Error
	if errors.As(err, &perr) {
		b, _ := json.Marshal(perr)
		w.record(msg.Envelope.ConversationID, msg.Envelope.Sender, b)
		return nil, perr
	}
	w.record(msg.Envelope.ConversationID, msg.Envelope.Sender, nil)
	if err != nil {
		w.t.Fatalf("%s from %s: %v", msg.Envelope.MessageType, msg.Envelope.Sender, err)
	}
	if ans.Envelope.ConversationID != msg.Envelope.ConversationID {
		w.t.Errorf("answer conversation_id %s, want %s", ans.Envelope.ConversationID, msg.Envelope.ConversationID)
	}
	return ans, nil
}

func (w *wire) ok(msg *protocol.Message) *protocol.Message {
	w.t.Helper()
	ans, perr := w.call(msg)
	if perr != nil {
		w.t.Fatalf("%s from %s refused: %v", msg.Envelope.MessageType, msg.Envelope.Sender, perr)
	}
	return ans
}

// post sends a raw body with http.Post and returns the decoded answer.
func (w *wire) post(body []byte) (map[string]any, []byte) {
	w.t.Helper()
	res, err := http.Post(w.lm.url, "application/json", bytes.NewReader(body))
	if err != nil {
		w.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		w.t.Fatalf("HTTP %d for a JSON-RPC request, want 200: %s", res.StatusCode, out)
	}
	var resp map[string]any
	if err := json.Unmarshal(out, &resp); err != nil {
		w.t.Fatalf("answer is not JSON: %s", out)
	}
	conv, sender := "", ""
	var req struct {
		Params struct {
			Envelope struct {
				ConversationID string `json:"conversation_id"`
				Sender         string `json:"sender"`
			} `json:"envelope"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &req) == nil {
		conv, sender = req.Params.Envelope.ConversationID, req.Params.Envelope.Sender
	}
	var errAnswer []byte
	if resp["error"] != nil {
		errAnswer = out
	}
	if sender == "" {
		sender = "unknown"
	}
	w.record(conv, sender, errAnswer)
	return resp, out
}

// refused sends msg (with the client when it is valid, raw otherwise) and checks the
// reason and the code.
func (w *wire) refused(msg *protocol.Message, reason protocol.Reason) {
	w.t.Helper()
	if w.v.ValidateMessage(msg) != nil {
		w.refusedRaw(requestBody(w.t, msg), reason)
		return
	}
	_, perr := w.call(msg)
	if perr == nil {
		w.t.Fatalf("%s from %s accepted, want %s", msg.Envelope.MessageType, msg.Envelope.Sender, reason)
	}
	if perr.Data == nil || perr.Data.Reason != reason || perr.Code != reason.Code() {
		w.t.Fatalf("%s from %s: got %v, want %d %s", msg.Envelope.MessageType, msg.Envelope.Sender, perr, reason.Code(), reason)
	}
}

func (w *wire) refusedRaw(body []byte, reason protocol.Reason) {
	w.t.Helper()
	resp, out := w.post(body)
	e, _ := resp["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	if e == nil || data["reason"] != string(reason) || e["code"] != float64(reason.Code()) {
		w.t.Fatalf("answer %s, want error %d %s", out, reason.Code(), reason)
	}
}

func requestBody(t *testing.T, msg *protocol.Message) []byte {
	t.Helper()
	id, _ := json.Marshal(uuid.NewString())
	b, err := json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: msg, ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ---- database and state fingerprints ----

func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

var fingerprintQueries = []string{
	`SELECT league_id, status, current_round, coalesce(completed_at, '') FROM leagues`,
	`SELECT referee_id, auth_token, status, endpoint_url, conversation_id FROM referees ORDER BY referee_id`,
	`SELECT player_id, auth_token, status, endpoint_url, conversation_id FROM players ORDER BY player_id`,
	`SELECT round_id, status FROM rounds ORDER BY round_number`,
	`SELECT match_id, status, coalesce(referee_id, ''), assignments FROM matches ORDER BY match_id`,
	`SELECT match_id, outcome, points, reported_at FROM match_results ORDER BY match_id`,
	`SELECT count(*) FROM standings_snapshots`,
	`SELECT count(*), coalesce(sum(points), 0), coalesce(sum(rank), 0) FROM player_rankings`,
	`SELECT round_id, player_id FROM byes ORDER BY round_id`,
}

func fingerprint(t *testing.T, db *sql.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range fingerprintQueries {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				b.WriteString(v.String + "|")
			}
			b.WriteString(";")
		}
		rows.Close()
		b.WriteString("\n")
	}
	return b.String()
}

// unchanged runs f and fails if the database or GET /status moved.
func unchanged(t *testing.T, lm *lmRun, db *sql.DB, what string, f func()) {
	t.Helper()
	lm.settle(t)
	// No timer of the League Manager fires meanwhile (wallClock): what moved, f moved.
	lm.quiet.Lock()
	defer lm.quiet.Unlock()
	// The exchange count grows with every request, refused or not: it is no league state.
	state := func() string {
		s := lm.status(t)
		delete(s, "exchanges")
		return fmt.Sprint(s)
	}
	before := fingerprint(t, db) + state()
	f()
	if after := fingerprint(t, db) + state(); after != before {
		t.Errorf("%s changed the league:\nbefore %s\nafter  %s", what, before, after)
	}
}

// ---- fake referee ----

type fakeRef struct {
	id     string
	srv    *httptest.Server
	mu     sync.Mutex
	got    []*protocol.Message
	answer func(msg *protocol.Message) (*protocol.Message, error) // nil: a plain ack
}

func newFakeRef(t *testing.T, v *protocol.Validator, id string) *fakeRef {
	f := &fakeRef{id: id}
	h := protocol.HandlerFunc(func(_ context.Context, msg *protocol.Message) (*protocol.Message, error) {
		if msg.Envelope.MessageType != protocol.MatchAssignment {
			return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "assignments only")
		}
		f.mu.Lock()
		f.got = append(f.got, msg)
		answer := f.answer
		f.mu.Unlock()
		if answer != nil {
			return answer(msg)
		}
		ack, err := msg.Reply(protocol.MatchAssignmentAck, protocol.RefereeSender(id), map[string]string{"status": "acknowledged", "match_id": msg.Envelope.MatchID})
		if err != nil {
			return nil, err
		}
		ack.Envelope.MatchID = msg.Envelope.MatchID
		return ack, nil
	})
	f.srv = httptest.NewServer(protocol.NewServer(h, v, nil, zerolog.Nop()))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRef) url() string { return f.srv.URL + "/mcp" }

func (f *fakeRef) assignment(t *testing.T, matchID string) *protocol.Message {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		for _, a := range f.got {
			if a.Envelope.MatchID == matchID {
				f.mu.Unlock()
				return a
			}
		}
		f.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("%s got no assignment of %s", f.id, matchID)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ---- messages ----

func msgOf(t *testing.T, typ, sender string, payload any) *protocol.Message {
	t.Helper()
	m, err := protocol.NewMessage(typ, sender, payload)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func playerURL(id string) string { return "http://127.0.0.1:9/" + id + "/mcp" }

func regReferee(t *testing.T, id, endpoint string) *protocol.Message {
	return msgOf(t, protocol.RegisterRefereeRequest, protocol.RefereeSender(id), map[string]any{"referee_id": id, "endpoint_url": endpoint})
}

func regPlayer(t *testing.T, id string) *protocol.Message {
	return msgOf(t, protocol.RegisterPlayerRequest, protocol.PlayerSender(id), map[string]any{"player_id": id, "endpoint_url": playerURL(id)})
}

func tokenOf(t *testing.T, ans *protocol.Message) string {
	t.Helper()
	var p struct {
		AuthToken string `json:"auth_token"`
	}
	if err := ans.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if u, err := uuid.Parse(p.AuthToken); err != nil || u.Version() != 4 {
		t.Fatalf("auth_token %q is not a UUID v4", p.AuthToken)
	}
	return p.AuthToken
}

func query(t *testing.T, sender, token, round string) *protocol.Message {
	p := map[string]any{}
	if round != "" {
		p["round_id"] = round
	}
	m := msgOf(t, protocol.QueryStandings, sender, p)
	m.Envelope.AuthToken = token
	return m
}

func adminStartMsg(t *testing.T, token string) *protocol.Message {
	m := msgOf(t, protocol.AdminStartLeagueRequest, protocol.SenderAdmin, map[string]any{})
	m.Envelope.AuthToken = token
	return m
}

type outcome struct {
	Outcome map[string]string
	Points  map[string]int
}

func report(t *testing.T, ref, token string, mt schedule.Match, roundID string, o outcome) *protocol.Message {
	m := msgOf(t, protocol.MatchResultReport, protocol.RefereeSender(ref), map[string]any{
		"game_type": "tic_tac_toe", "players": mt.Players, "outcome": o.Outcome, "points": o.Points,
		"game_metadata": map[string]any{"total_moves": 5},
	})
	e := &m.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = token, "league-2025-01", roundID, mt.ID, "tic_tac_toe"
	return m
}

// scripted is the result the test plays for the i-th match: first mover wins, draw,
// second mover wins, in turn.
func scripted(mt schedule.Match, i int) outcome {
	a, b := mt.Players[0], mt.Players[1]
	switch i % 3 {
	case 0:
		return outcome{map[string]string{a: "win", b: "loss"}, map[string]int{a: 3, b: 0}}
	case 1:
		return outcome{map[string]string{a: "draw", b: "draw"}, map[string]int{a: 1, b: 1}}
	}
	return outcome{map[string]string{a: "loss", b: "win"}, map[string]int{a: 0, b: 3}}
}

// ranked computes the standings the test expects: points, wins, draws, then player_id.
func ranked(players []string, results []outcome) []protocol.StandingsRow {
	by := map[string]*protocol.StandingsRow{}
	for _, p := range players {
		by[p] = &protocol.StandingsRow{PlayerID: p}
	}
	for _, r := range results {
		for p, o := range r.Outcome {
			row := by[p]
			row.MatchesPlayed++
			row.Points += r.Points[p]
			switch o {
			case "win":
				row.Wins++
			case "draw":
				row.Draws++
			default:
				row.Losses++
			}
		}
	}
	var rows []protocol.StandingsRow
	for _, r := range by {
		rows = append(rows, *r)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Points != b.Points {
			return a.Points > b.Points
		}
		if a.Wins != b.Wins {
			return a.Wins > b.Wins
		}
		if a.Draws != b.Draws {
			return a.Draws > b.Draws
		}
		return a.PlayerID < b.PlayerID
	})
	for i := range rows {
		rows[i].Rank = i + 1
	}
	return rows
}

func standingsOf(t *testing.T, ans *protocol.Message) []protocol.StandingsRow {
	t.Helper()
	var p struct {
		Standings []protocol.StandingsRow `json:"standings"`
	}
	if ans.Envelope.MessageType != protocol.StandingsResponse {
		t.Fatalf("got %s, want STANDINGS_RESPONSE", ans.Envelope.MessageType)
	}
	if err := ans.Decode(&p); err != nil {
		t.Fatal(err)
	}
	return p.Standings
}

// ---- the end-to-end run ----

// TestEndToEnd runs the League Manager in-process and drives a whole league over HTTP as two
// referees and five players, with bad inputs interleaved: each is refused with its reason
// and changes nothing. It then restarts the League Manager on the same database, checks
// the audit log, and replays the interop captures in a second league.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	lm := startLM(t, dir)
	w := newWire(t, lm)
	db := openRO(t, filepath.Join(dir, "league.db"))
	if s := lm.state(t); s != "REGISTRATION" {
		t.Fatalf("state %s, want REGISTRATION", s)
	}
	same := func(what string, f func()) { t.Helper(); unchanged(t, lm, db, what, f) }

	// Before anyone registered.
	same("bad JSON", func() {
		w.refusedRaw([]byte(`{"jsonrpc":"2.0","method":"league.handle","params":{`), protocol.ReasonParseError)
	})
	same("wrong protocol", func() {
		m := regReferee(t, "ref1", "http://127.0.0.1:9/ref1")
		m.Envelope.Protocol = "league.v1"
		w.refused(m, protocol.ReasonSchemaViolation)
	})
	same("no conversation_id", func() {
		m := regReferee(t, "ref1", "http://127.0.0.1:9/ref1")
		m.Envelope.ConversationID = ""
		w.refused(m, protocol.ReasonSchemaViolation)
	})
	same("no endpoint_url", func() {
		m := msgOf(t, protocol.RegisterRefereeRequest, "referee:ref1", map[string]any{"referee_id": "ref1"})
		w.refused(m, protocol.ReasonSchemaViolation)
	})
	same("player before any referee", func() { w.refused(regPlayer(t, "p01"), protocol.ReasonNoRefereeRegistered) })

	// Referees.
	refs := map[string]*fakeRef{}
	refTok := map[string]string{}
	for _, id := range []string{"ref1", "ref2"} {
		refs[id] = newFakeRef(t, w.v, id)
		m := regReferee(t, id, refs[id].url())
		refTok[id] = tokenOf(t, w.ok(m))
		w.secret(refTok[id])
		// A retry of the same registration (lost answer) gets the same token.
		same("retried registration of "+id, func() {
			if got := tokenOf(t, w.ok(m)); got != refTok[id] {
				t.Errorf("retried registration token %s, want %s", got, refTok[id])
			}
		})
	}
	ready := msgOf(t, protocol.AgentReadyRequest, "referee:ref1", map[string]any{})
	ready.Envelope.AuthToken = refTok["ref1"]
	w.ok(ready)
	same("spoofed referee registration", func() {
		m := regReferee(t, "ref3", "http://127.0.0.1:9/ref3")
		m.Envelope.Sender = "referee:ref4"
		w.refused(m, protocol.ReasonSenderMismatch)
	})
	same("duplicate referee", func() { w.refused(regReferee(t, "ref1", refs["ref1"].url()), protocol.ReasonDuplicateRegistration) })

	// Players.
	players := []string{"p01", "p02", "p03", "p04", "p05"}
	plTok := map[string]string{}
	for _, id := range players {
		plTok[id] = tokenOf(t, w.ok(regPlayer(t, id)))
		w.secret(plTok[id])
	}
	same("duplicate player", func() { w.refused(regPlayer(t, "p01"), protocol.ReasonDuplicateRegistration) })
	same("standings with a wrong token", func() { w.refused(query(t, "player:p01", uuid.NewString(), ""), protocol.ReasonUnauthorized) })
	same("standings with a spoofed sender", func() { w.refused(query(t, "player:p01", plTok["p02"], ""), protocol.ReasonSenderMismatch) })
	same("start without the admin token", func() { w.refused(adminStartMsg(t, ""), protocol.ReasonUnauthorized) })
	same("start with a wrong admin token", func() { w.refused(adminStartMsg(t, "admin"), protocol.ReasonUnauthorized) })
	same("start with a player's token", func() { w.refused(adminStartMsg(t, plTok["p01"]), protocol.ReasonUnauthorized) })
	if rows := standingsOf(t, w.ok(query(t, "player:p04", plTok["p04"], ""))); !slices.Equal(rows, ranked(players, nil)) {
		t.Errorf("standings before the start %v, want every player with nothing played", rows)
	}
	s := lm.status(t)
	if s["state"] != "REGISTRATION" || s["players"] != float64(5) || s["referees"] != float64(2) {
		t.Fatalf("status before start %v, want REGISTRATION with 5 players and 2 referees", s)
	}

	ans := w.ok(adminStartMsg(t, e2eAdminToken))
	var st map[string]string
	_ = ans.Decode(&st)
	if st["status"] != "started" || st["league_status"] != "ACTIVE" {
		t.Errorf("start answer %v, want started / ACTIVE", st)
	}
	lm.waitStatus(t, "ACTIVE in round 1", func(s map[string]any) bool { return s["state"] == "ACTIVE" && s["current_round"] == float64(1) })
	same("late player", func() { w.refused(regPlayer(t, "p06"), protocol.ReasonRegistrationClosed) })

	sched, err := schedule.Build(players, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var done []outcome
	n := 0
	for ri, r := range sched.Rounds {
		lm.waitStatus(t, r.ID+" active", func(s map[string]any) bool { return s["current_round"] == float64(r.Number) })
		lm.settle(t)
		// Both matches of the round went out, one to each referee, with everything the
		// referee needs.
		refOf := map[string]string{}
		for _, mt := range r.Matches {
			var a *protocol.Message
			for _, id := range []string{"ref1", "ref2"} {
				refs[id].mu.Lock()
				for _, g := range refs[id].got {
					if g.Envelope.MatchID == mt.ID {
						a, refOf[mt.ID] = g, id
					}
				}
				refs[id].mu.Unlock()
			}
			if a == nil {
				t.Fatalf("%s: no referee got %s", r.ID, mt.ID)
			}
			checkAssignment(t, a, mt, r.ID, refTok[refOf[mt.ID]], plTok)
			for _, pl := range mt.Players {
				w.secret(protocol.MatchCredential(plTok[pl], mt.ID))
			}
		}
		if refOf[r.Matches[0].ID] == refOf[r.Matches[1].ID] {
			t.Errorf("%s: both matches went to %s, want one per referee", r.ID, refOf[r.Matches[0].ID])
		}
		mt := r.Matches[0]
		ref := refOf[mt.ID]
		other := "ref1"
		if ref == "ref1" {
			other = "ref2"
		}
		good, conflicting := scripted(mt, n), scripted(mt, n+1)
		if ri == 0 {
			same("result from another referee", func() {
				w.refused(report(t, other, refTok[other], mt, r.ID, good), protocol.ReasonNotAssignedReferee)
			})
			same("result with a wrong token", func() {
				w.refused(report(t, ref, uuid.NewString(), mt, r.ID, good), protocol.ReasonUnauthorized)
			})
			same("result with a spoofed sender", func() {
				w.refused(report(t, ref, refTok[other], mt, r.ID, good), protocol.ReasonSenderMismatch)
			})
			same("result with points that do not match the scoring", func() {
				bad := outcome{Outcome: good.Outcome, Points: map[string]int{mt.Players[0]: 2, mt.Players[1]: 2}}
				w.refused(report(t, ref, refTok[ref], mt, r.ID, bad), protocol.ReasonInvalidResult)
			})
			same("result with inconsistent outcomes", func() {
				bad := outcome{Outcome: map[string]string{mt.Players[0]: "win", mt.Players[1]: "win"}, Points: map[string]int{mt.Players[0]: 3, mt.Players[1]: 3}}
				w.refused(report(t, ref, refTok[ref], mt, r.ID, bad), protocol.ReasonInvalidResult)
			})
			same("result with a player of another match", func() {
				x := mt
				x.Players = r.Matches[1].Players
				w.refused(report(t, ref, refTok[ref], x, r.ID, scripted(x, 0)), protocol.ReasonInvalidResult)
			})
			same("result of an unknown match", func() {
				x := mt
				x.ID = "match-38adb6e2-517a-4035-8fd3-29be866355a2"
				w.refused(report(t, ref, refTok[ref], x, r.ID, good), protocol.ReasonUnknownMatch)
			})
			same("result for another league", func() {
				m := report(t, ref, refTok[ref], mt, r.ID, good)
				m.Envelope.LeagueID = "league-1999"
				w.refused(m, protocol.ReasonWrongLeague)
			})
			same("result without outcome", func() {
				m := report(t, ref, refTok[ref], mt, r.ID, good)
				m.Payload, _ = json.Marshal(map[string]any{"game_type": "tic_tac_toe", "players": mt.Players, "points": good.Points})
				w.refused(m, protocol.ReasonSchemaViolation)
			})
			same("result that is not JSON", func() {
				body := requestBody(t, report(t, ref, refTok[ref], mt, r.ID, good))
				w.refusedRaw(body[:len(body)-3], protocol.ReasonParseError)
			})
			same("snapshot of a round not completed", func() {
				w.refused(query(t, "player:p01", plTok["p01"], r.ID), protocol.ReasonUnknownRound)
			})
		}
		// Both results at once, as the referees would send them.
		var wg sync.WaitGroup
		errs := make(chan error, len(r.Matches))
		for _, m := range r.Matches {
			o := scripted(m, n)
			n++
			done = append(done, o)
			msg := report(t, refOf[m.ID], refTok[refOf[m.ID]], m, r.ID, o)
			w.record(msg.Envelope.ConversationID, msg.Envelope.Sender, nil)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ans, err := w.client.Call(context.Background(), lm.url, msg, protocol.CallOptions{Timeout: 10 * time.Second})
				if err == nil && ans.Envelope.MessageType != protocol.MatchResultAck {
					err = fmt.Errorf("got %s", ans.Envelope.MessageType)
				}
				if err != nil {
					errs <- fmt.Errorf("result of %s: %w", m.ID, err)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		same("identical retry of a result", func() {
			ack := w.ok(report(t, ref, refTok[ref], mt, r.ID, good))
			if ack.Envelope.MessageType != protocol.MatchResultAck || ack.Envelope.MatchID != mt.ID {
				t.Errorf("retry answered %s for %s, want MATCH_RESULT_ACK for %s", ack.Envelope.MessageType, ack.Envelope.MatchID, mt.ID)
			}
		})
		same("conflicting result", func() {
			w.refused(report(t, ref, refTok[ref], mt, r.ID, conflicting), protocol.ReasonDuplicateResult)
		})
		// The database moved with the results: results, match status, standings, snapshot.
		checkTables(t, db, r, ri+1, players, done)
		got := standingsOf(t, w.ok(query(t, "player:p03", plTok["p03"], r.ID)))
		if want := ranked(players, done); !slices.Equal(got, want) {
			t.Errorf("%s snapshot %v, want %v", r.ID, got, want)
		}
	}

	lm.waitStatus(t, "COMPLETED", func(s map[string]any) bool { return s["state"] == "COMPLETED" })
	final := standingsOf(t, w.ok(query(t, "player:p05", plTok["p05"], "")))
	want := ranked(players, done)
	if !slices.Equal(final, want) {
		t.Errorf("final standings %v, want %v", final, want)
	}
	same("unknown round", func() { w.refused(query(t, "player:p01", plTok["p01"], "round-77"), protocol.ReasonUnknownRound) })
	same("referee after completion", func() {
		w.refused(regReferee(t, "ref9", "http://127.0.0.1:9/ref9"), protocol.ReasonRegistrationClosed)
	})
	lm.stop()

	// Restart on the same database: tokens and the league survive.
	lm2 := startLM(t, dir)
	w.lm = lm2
	if s := lm2.state(t); s != "COMPLETED" {
		t.Errorf("state after restart %s, want COMPLETED", s)
	}
	if again := standingsOf(t, w.ok(query(t, "player:p05", plTok["p05"], ""))); !slices.Equal(again, want) {
		t.Errorf("standings after restart %v, want %v", again, want)
	}
	ready2 := msgOf(t, protocol.AgentReadyRequest, "referee:ref2", map[string]any{})
	ready2.Envelope.AuthToken = refTok["ref2"]
	w.ok(ready2)
	w.refused(query(t, "player:p01", plTok["p02"], ""), protocol.ReasonSenderMismatch)
	lm2.stop()

	// Audit log and application log, after both runs.
	checkAudit(t, filepath.Join(dir, "audit.jsonl"), w, refs)
	appLog, err := os.ReadFile(filepath.Join(dir, "league.log"))
	if err != nil {
		t.Fatal(err)
	}
	w.noSecretIn("application log", appLog)
	w.noSecretIn("stderr", []byte(lm.stderr.String()+lm2.stderr.String()))
	for _, e := range w.errs {
		w.noSecretIn("error answer", e)
	}

	t.Run("interop replay", func(t *testing.T) { interopReplay(t) })
}

func checkAssignment(t *testing.T, a *protocol.Message, mt schedule.Match, roundID, refToken string, plTok map[string]string) {
	t.Helper()
	e := a.Envelope
	if e.AuthToken != refToken || e.MatchID != mt.ID || e.RoundID != roundID || e.LeagueID != "league-2025-01" || e.GameType != "tic_tac_toe" {
		t.Errorf("assignment envelope %+v", e)
	}
	var p struct {
		Players          []string          `json:"players"`
		PlayerEndpoints  map[string]string `json:"player_endpoints"`
		MatchSeed        int64             `json:"match_seed"`
		MatchCredentials map[string]string `json:"match_credentials"`
	}
	if err := a.Decode(&p); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Players, mt.Players[:]) || p.MatchSeed != mt.Seed {
		t.Errorf("assignment of %s: players %v seed %d, want %v seed %d", mt.ID, p.Players, p.MatchSeed, mt.Players, mt.Seed)
	}
	for _, pl := range mt.Players {
		if p.PlayerEndpoints[pl] != playerURL(pl) {
			t.Errorf("endpoint of %s: %q, want %q", pl, p.PlayerEndpoints[pl], playerURL(pl))
		}
		if want := protocol.MatchCredential(plTok[pl], mt.ID); p.MatchCredentials[pl] != want {
			t.Errorf("credential of %s: %q, want %q", pl, p.MatchCredentials[pl], want)
		}
	}
}

// checkTables reads the database after round number round ended.
func checkTables(t *testing.T, db *sql.DB, r schedule.Round, round int, players []string, done []outcome) {
	t.Helper()
	var results, completed, snapshots, rankings int
	var status string
	for _, q := range []struct {
		sql string
		dst any
	}{
		{`SELECT count(*) FROM match_results`, &results},
		{`SELECT count(*) FROM matches WHERE status = 'COMPLETED'`, &completed},
		{`SELECT count(*) FROM standings_snapshots`, &snapshots},
		{`SELECT count(*) FROM player_rankings`, &rankings},
		{`SELECT status FROM rounds WHERE round_id = '` + r.ID + `'`, &status},
	} {
		if err := db.QueryRow(q.sql).Scan(q.dst); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if results != len(done) || completed != len(done) {
		t.Errorf("after round %d: %d results, %d completed matches, want %d", round, results, completed, len(done))
	}
	if status != "COMPLETED" || snapshots != round || rankings != round*len(players) {
		t.Errorf("after round %d: status %s, %d snapshots, %d rankings, want COMPLETED, %d, %d", round, status, snapshots, rankings, round, round*len(players))
	}
	var bye string
	if err := db.QueryRow(`SELECT player_id FROM byes WHERE round_id = ?`, r.ID).Scan(&bye); err != nil || bye != r.Bye {
		t.Errorf("bye of %s: %q (%v), want %q", r.ID, bye, err, r.Bye)
	}
	want := ranked(players, done)
	for _, row := range want {
		var g protocol.StandingsRow
		// The round's snapshot holds the standings counted from its results.
		if err := db.QueryRow(`SELECT k.rank, k.player_id, k.points, k.wins, k.draws, k.losses, k.matches_played FROM player_rankings k
			JOIN standings_snapshots s ON s.snapshot_id = k.snapshot_id WHERE s.round_id = ? AND k.player_id = ?`, r.ID, row.PlayerID).
			Scan(&g.Rank, &g.PlayerID, &g.Points, &g.Wins, &g.Draws, &g.Losses, &g.MatchesPlayed); err != nil {
			t.Fatal(err)
		}
		if g != row {
			t.Errorf("standings row %+v, want %+v", g, row)
		}
	}
}

// checkAudit verifies the hash chain and that every exchange is a request line and a
// response line with direction, source, destination and conversation_id, and that no
// token is in the file.
func checkAudit(t *testing.T, path string, w *wire, refs map[string]*fakeRef) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w.noSecretIn("audit log", data)
	type entry struct {
		Direction, Source, Destination string
		ConversationID                 string `json:"conversation_id"`
		PrevHash                       string `json:"prev_hash"`
	}
	var lines []entry
	prev := ""
	for i, raw := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatalf("audit line %d: %v", i+1, err)
		}
		if e.PrevHash != prev {
			t.Fatalf("audit line %d: prev_hash %s, want %s", i+1, e.PrevHash, prev)
		}
		sum := sha256.Sum256(raw)
		prev = hex.EncodeToString(sum[:])
		lines = append(lines, e)
	}
	has := func(conv, src, dst string) bool {
		for i, e := range lines {
			if e.Direction == "request" && e.ConversationID == conv && e.Source == src && e.Destination == dst {
				return i+1 < len(lines) && lines[i+1].Direction == "response" && lines[i+1].ConversationID == conv &&
					lines[i+1].Source == dst && lines[i+1].Destination == src
			}
		}
		return false
	}
	w.mu.Lock()
	sentList := slices.Clone(w.sent)
	w.mu.Unlock()
	for _, s := range sentList {
		if !has(s.conv, s.sender, "league_manager") {
			t.Errorf("audit log lacks the exchange %s from %s", s.conv, s.sender)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(refs)) {
		refs[id].mu.Lock()
		for _, a := range refs[id].got {
			if !has(a.Envelope.ConversationID, "league_manager", "referee:"+id) {
				t.Errorf("audit log lacks the assignment %s to %s", a.Envelope.ConversationID, id)
			}
		}
		refs[id].mu.Unlock()
	}
	if len(sentList) < 40 {
		t.Errorf("only %d exchanges checked", len(sentList))
	}
}
