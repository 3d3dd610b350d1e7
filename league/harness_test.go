package league

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/replay"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testAdminToken is the admin token of every harness unless a test says otherwise.
const testAdminToken = "admin-token-for-tests-0123456789"

// Tests check every message the League Manager sends against its schema (SelfCheck), so
// that a bad answer fails where it is made; benchmarks run as `league serve` does.
var (
	checkingValidator = sync.OnceValues(func() (*protocol.Validator, error) {
		v, err := protocol.NewValidator()
		if v != nil {
			v.SelfCheck = true
		}
		return v, err
	})
	productionValidator = sync.OnceValues(func() (*protocol.Validator, error) {
		v, err := protocol.NewValidator()
		if v != nil {
			v.SelfCheck = false
		}
		return v, err
	})
)

func testValidator(tb testing.TB) *protocol.Validator {
	tb.Helper()
	get := checkingValidator
	if _, isBench := tb.(*testing.B); isBench {
		get = productionValidator
	}
	v, err := get()
	if err != nil {
		tb.Fatalf("protocol.NewValidator: %v", err)
	}
	return v
}

// testConfig is config.Default with fast retries, changed by mutate.
func testConfig(tb testing.TB, mutate func(*config.Config)) *config.Config {
	tb.Helper()
	cfg, err := config.Default(game.Default())
	if err != nil {
		tb.Fatalf("config.Default: %v", err)
	}
	cfg.Retries.BackoffMS = 5
	if mutate != nil {
		mutate(cfg)
	}
	return cfg
}

// setScoring changes the scoring of the league's game.
func setScoring(cfg *config.Config, s protocol.Scoring) {
	for i := range cfg.Games {
		if cfg.Games[i].GameType == cfg.League.GameType {
			cfg.Games[i].Scoring = s
		}
	}
}

type harnessOptions struct {
	cfg        func(*config.Config)
	now        func() time.Time
	noAdmin    bool
	redispatch time.Duration
	// clock, when set, is the Manager's clock and timer source (now is then ignored).
	clock *fakeClock
	// notifyTimeout bounds MATCH_CANCELLED and LEAGUE_SHUTDOWN (0: the Manager's default).
	notifyTimeout time.Duration
	// insecure accepts plain-http endpoints off loopback (league serve --insecure).
	insecure bool
	// flakyAudit puts a flakyAudit (storage_test.go) between the audit log and the
	// League Manager, so a test can make its appends fail.
	flakyAudit bool
	// beforeStart runs on the opened store before the Manager loads the league.
	beforeStart func(*store.Store)
	// transport, when set, carries the League Manager's calls instead of the network
	// (a test on fake time, where nothing may block on a socket).
	transport http.RoundTripper
}

// harness is an in-process League Manager: a Manager on a temporary database and audit
// log, served by a protocol.Server exactly as cmd/league wires it.
type harness struct {
	t          testing.TB
	dir        string
	cfg        *config.Config
	opt        harnessOptions
	adminToken string

	store  *store.Store
	audit  *audit.Log
	flaky  *flakyAudit // nil unless harnessOptions.flakyAudit
	client *protocol.Client
	m      *Manager
	srv    *protocol.Server
	open   bool

	mu       sync.Mutex
	secrets  map[string]bool // every token and credential issued, never to be leaked
	lastBody []byte          // the last request body processed
}

func newHarness(tb testing.TB, opt harnessOptions) *harness {
	tb.Helper()
	return openHarness(tb, tb.TempDir(), testConfig(tb, opt.cfg), opt)
}

// openHarness starts a League Manager on the files in dir (new or not) with cfg.
func openHarness(tb testing.TB, dir string, cfg *config.Config, opt harnessOptions) *harness {
	tb.Helper()
	h := &harness{t: tb, dir: dir, opt: opt, cfg: cfg, secrets: map[string]bool{}}
	if !opt.noAdmin {
		h.adminToken = testAdminToken
		h.secrets[testAdminToken] = true
	}
	h.start()
	tb.Cleanup(h.stop)
	return h
}

func (h *harness) dbPath() string    { return filepath.Join(h.dir, "league.db") }
func (h *harness) auditPath() string { return filepath.Join(h.dir, "audit.jsonl") }

// rebuild reads the audit log and rebuilds the league from it, as league replay does.
func (h *harness) rebuild() *replay.League {
	h.t.Helper()
	entries, err := audit.Read(h.auditPath())
	if err != nil {
		h.t.Fatal(err)
	}
	lg, err := replay.Rebuild(entries)
	if err != nil {
		h.t.Fatalf("rebuild from the log: %v", err)
	}
	return lg
}

// start opens the store, the audit log and the Manager, as `league serve` does.
func (h *harness) start() {
	h.t.Helper()
	v := testValidator(h.t)
	store, err := store.Open(h.dbPath())
	if err != nil {
		h.t.Fatalf("OpenStore: %v", err)
	}
	audit, err := audit.Open(h.auditPath(), protocol.SenderLeagueManager)
	if err != nil {
		h.t.Fatalf("audit.Open: %v", err)
	}
	if h.opt.beforeStart != nil {
		h.opt.beforeStart(store)
	}
	var rec interface {
		Auditor
		protocol.Recorder
	} = audit
	if h.opt.flakyAudit {
		h.flaky = &flakyAudit{Log: audit}
		rec = h.flaky
	}
	client := protocol.NewClient(v, rec)
	if h.opt.transport != nil {
		client = protocol.NewClientWith(v, rec, protocol.ClientOptions{HTTP: &http.Client{Transport: h.opt.transport}})
	}
	opt := Options{Config: h.cfg, Store: store, Audit: rec, Client: client, AdminToken: h.adminToken,
		Log: zerolog.Nop(), Now: h.opt.now, RedispatchDelay: h.opt.redispatch, NotifyTimeout: h.opt.notifyTimeout, Insecure: h.opt.insecure}
	if c := h.opt.clock; c != nil {
		opt.Now, opt.AfterFunc = c.Now, c.AfterFunc
	}
	m, err := NewManager(opt)
	if err != nil {
		h.t.Fatalf("NewManager: %v", err)
	}
	if err := m.Start(); err != nil {
		h.t.Fatalf("Manager.Start: %v", err)
	}
	h.store, h.audit, h.client, h.m = store, audit, client, m
	h.srv = protocol.NewServer(m, v, rec, zerolog.Nop())
	h.open = true
}

// stop closes everything start opened, in the order serve's defers do.
func (h *harness) stop() {
	if !h.open {
		return
	}
	h.open = false
	h.m.Close()
	h.client.Close()
	if err := h.audit.Close(); err != nil {
		h.t.Errorf("close audit log: %v", err)
	}
	if err := h.store.Close(); err != nil {
		h.t.Errorf("close store: %v", err)
	}
}

// run runs f as a subtest with the harness reporting to the subtest.
func (h *harness) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Run(name, func(t *testing.T) {
		parent := h.t
		h.t = t
		defer func() { h.t = parent }()
		f(t)
	})
}

// restart stops the League Manager and starts a new one on the same files.
func (h *harness) restart() {
	h.t.Helper()
	h.stop()
	h.start()
}

func (h *harness) addSecret(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.secrets[s] = true
}

func (h *harness) secretList() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(maps.Keys(h.secrets))
}

// checkNoSecret fails when b holds a token or credential.
func (h *harness) checkNoSecret(what string, b []byte) {
	h.t.Helper()
	for _, s := range h.secretList() {
		if strings.Contains(string(b), s) {
			h.t.Errorf("%s leaks secret %q: %s", what, s, b)
		}
	}
}

// process sends a raw body through the JSON-RPC server. Error answers are checked for
// leaked secrets.
func (h *harness) process(body []byte) (protocol.Response, []byte) {
	h.t.Helper()
	h.lastBody = body
	out := h.srv.Process(context.Background(), body)
	var resp protocol.Response
	if out == nil {
		return resp, nil
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		h.t.Fatalf("answer is not a JSON-RPC response: %v: %s", err, out)
	}
	if resp.Error != nil {
		h.checkNoSecret("error answer", out)
	}
	return resp, out
}

// requestBody wraps msg in a JSON-RPC request.
func requestBody(tb testing.TB, msg *protocol.Message) []byte {
	tb.Helper()
	id, _ := json.Marshal("req-" + uuid.NewString())
	b, err := json.Marshal(protocol.Request{JSONRPC: protocol.JSONRPCVersion, Method: protocol.Method, Params: msg, ID: id})
	if err != nil {
		tb.Fatalf("encode request: %v", err)
	}
	return b
}

// call sends msg and returns its result or its error.
func (h *harness) call(msg *protocol.Message) (*protocol.Message, *protocol.Error) {
	h.t.Helper()
	body := requestBody(h.t, msg)
	resp, out := h.process(body)
	var req protocol.Request
	_ = json.Unmarshal(body, &req)
	if string(resp.ID) != string(req.ID) {
		h.t.Fatalf("answer id %s, want %s: %s", resp.ID, req.ID, out)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	if resp.Result == nil {
		h.t.Fatalf("answer has neither result nor error: %s", out)
	}
	if got, want := resp.Result.Envelope.ConversationID, msg.Envelope.ConversationID; got != want {
		h.t.Errorf("answer conversation_id %q, want %q", got, want)
	}
	return resp.Result, nil
}

// ok sends msg and fails the test unless it is answered with a result.
func (h *harness) ok(msg *protocol.Message) *protocol.Message {
	h.t.Helper()
	ans, perr := h.call(msg)
	if perr != nil {
		h.t.Fatalf("%s from %s refused: %v", msg.Envelope.MessageType, msg.Envelope.Sender, perr)
	}
	return ans
}

// refused sends msg and checks that it is refused with reason and its code.
func (h *harness) refused(msg *protocol.Message, reason protocol.Reason) *protocol.Error {
	h.t.Helper()
	ans, perr := h.call(msg)
	if perr == nil {
		h.t.Fatalf("%s from %s: got answer %s, want error %s", msg.Envelope.MessageType, msg.Envelope.Sender, ans.Envelope.MessageType, reason)
	}
	checkError(h.t, perr, reason)
	return perr
}

func checkError(tb testing.TB, perr *protocol.Error, reason protocol.Reason) {
	tb.Helper()
	if perr.Data == nil {
		tb.Fatalf("error %v has no data, want reason %s", perr, reason)
	}
	if perr.Data.Reason != reason || perr.Code != reason.Code() {
		tb.Fatalf("got error %d %s (%q), want %d %s", perr.Code, perr.Data.Reason, perr.Message, reason.Code(), reason)
	}
}

// unchanged runs f and fails if the league's persistent or in-memory state moved.
func (h *harness) unchanged(what string, f func()) {
	h.t.Helper()
	before := h.state()
	f()
	if after := h.state(); after != before {
		h.t.Errorf("%s changed the league:\nbefore: %s\nafter:  %s", what, before, after)
	}
}

// state renders every table and the in-memory view of the league; whether storage is
// degraded is the health of the process, not a change of the league.
func (h *harness) state() string {
	h.t.Helper()
	status := h.m.Status()
	status.Storage = StorageStatus{}
	st, _ := json.Marshal(status)
	h.m.e.mu.Lock()
	rows, _ := json.Marshal(h.m.e.fx.table.Rows())
	h.m.e.mu.Unlock()
	return fingerprint(h.t, h.store.DB()) + "\nstatus " + string(st) + "\ntable " + string(rows)
}

// fingerprintQueries read every table the League Manager writes.
var fingerprintQueries = []string{
	`SELECT league_id, status, coalesce(first_player_at, ''), coalesce(registration_closed_at, ''), coalesce(completed_at, ''), current_round FROM leagues`,
	`SELECT referee_id, auth_token, status, endpoint_url, game_types, features, max_concurrent_matches, conversation_id FROM referees ORDER BY referee_id`,
	`SELECT player_id, auth_token, status, endpoint_url, features, conversation_id FROM players ORDER BY player_id`,
	`SELECT round_id, status, coalesce(started_at, ''), coalesce(completed_at, '') FROM rounds ORDER BY round_number`,
	`SELECT match_id, status, coalesce(referee_id, ''), coalesce(assigned_at, ''), assignments, failures FROM matches ORDER BY match_id`,
	`SELECT match_id, outcome, points, coalesce(game_metadata, ''), reported_at, coalesce(referee_id, '') FROM match_results ORDER BY match_id`,
	`SELECT snapshot_id, coalesce(round_id, ''), computed_at FROM standings_snapshots ORDER BY snapshot_id`,
	`SELECT snapshot_id, player_id, rank, points, wins, draws, losses, matches_played FROM player_rankings ORDER BY snapshot_id, player_id`,
	`SELECT round_id, player_id FROM byes ORDER BY round_id`,
}

func fingerprint(tb testing.TB, db *sql.DB) string {
	tb.Helper()
	var b strings.Builder
	for _, q := range fingerprintQueries {
		rows, err := db.Query(q)
		if err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				tb.Fatalf("%s: %v", q, err)
			}
			for _, v := range vals {
				b.WriteString(v.String)
				b.WriteByte('|')
			}
			b.WriteByte(';')
		}
		if err := rows.Err(); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
		rows.Close()
		b.WriteByte('\n')
	}
	return b.String()
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// settle waits until every assignment made so far has been answered by its referee.
func (h *harness) settle() {
	h.t.Helper()
	waitFor(h.t, "assignments to be delivered", func() bool {
		return h.m.Status().MatchesByStatus[protocol.MatchStateAssigned] == 0
	})
}

// ---- messages ----

func newMsg(tb testing.TB, messageType, sender string, payload any) *protocol.Message {
	tb.Helper()
	msg, err := protocol.NewMessage(messageType, sender, payload)
	if err != nil {
		tb.Fatalf("NewMessage: %v", err)
	}
	return msg
}

func playerEndpoint(id string) string { return "http://127.0.0.1:9/players/" + id + "/mcp" }

func refereeRegistration(tb testing.TB, id, endpoint string, extra map[string]any) *protocol.Message {
	p := map[string]any{"referee_id": id, "endpoint_url": endpoint}
	maps.Copy(p, extra)
	return newMsg(tb, protocol.RegisterRefereeRequest, protocol.RefereeSender(id), p)
}

// playerFeatures are what the harness's players announce, as ours do.
var playerFeatures = []string{protocol.FeatureMatchCredentials, protocol.FeatureMatchCancellation}

func playerRegistration(tb testing.TB, id string) *protocol.Message {
	return newMsg(tb, protocol.RegisterPlayerRequest, protocol.PlayerSender(id), map[string]any{"player_id": id, "endpoint_url": playerEndpoint(id), "features": playerFeatures})
}

func withToken(msg *protocol.Message, token string) *protocol.Message {
	msg.Envelope.AuthToken = token
	return msg
}

func standingsQuery(tb testing.TB, sender, token, roundID string) *protocol.Message {
	p := map[string]any{}
	if roundID != "" {
		p["round_id"] = roundID
	}
	return withToken(newMsg(tb, protocol.QueryStandings, sender, p), token)
}

func adminStart(tb testing.TB, token string) *protocol.Message {
	return withToken(newMsg(tb, protocol.AdminStartLeagueRequest, protocol.SenderAdmin, map[string]any{}), token)
}

// liveMatch is a scheduled match as the Manager holds it.
type liveMatch struct {
	ID, RoundID, Referee, Status string
	Players                      [2]string
	Seed                         int64
}

// result is a report's outcome and points.
type result struct {
	Outcome map[string]string
	Points  map[string]int
}

// decided: players[winner] wins 3-0.
func decided(mt liveMatch, winner int) result {
	w, l := mt.Players[winner], mt.Players[1-winner]
	return result{Outcome: map[string]string{w: "win", l: "loss"}, Points: map[string]int{w: 3, l: 0}}
}

func drawn(mt liveMatch) result {
	a, b := mt.Players[0], mt.Players[1]
	return result{Outcome: map[string]string{a: "draw", b: "draw"}, Points: map[string]int{a: 1, b: 1}}
}

func (h *harness) report(refID, token string, mt liveMatch, r result) *protocol.Message {
	msg := newMsg(h.t, protocol.MatchResultReport, protocol.RefereeSender(refID), map[string]any{
		"game_type": h.cfg.League.GameType, "players": mt.Players, "outcome": r.Outcome, "points": r.Points,
		"game_metadata": map[string]any{"total_moves": 5, "match_seed": mt.Seed},
	})
	e := &msg.Envelope
	e.AuthToken, e.LeagueID, e.RoundID, e.MatchID, e.GameType = token, h.cfg.League.LeagueID, mt.RoundID, mt.ID, h.cfg.League.GameType
	return msg
}

// ---- fake referee ----

// fakeReferee is a referee's HTTP endpoint that records every MATCH_ASSIGNMENT and
// acknowledges it (or rejects it when reject is set). It acknowledges LEAGUE_SHUTDOWN
// and keeps it in notices.
type fakeReferee struct {
	id  string
	srv *httptest.Server

	mu      sync.Mutex
	got     []*protocol.Message
	notices []*protocol.Message // LEAGUE_SHUTDOWN
	// calls holds every MATCH_ASSIGNMENT, MATCH_CANCELLED and RESULT_REMINDER in order.
	calls  []*protocol.Message
	reject bool
	// reminderPhase is the phase RESULT_REMINDER_ACK reports ("" answers reporting).
	reminderPhase string
}

func newFakeReferee(tb testing.TB, id string) *fakeReferee {
	tb.Helper()
	f := &fakeReferee{id: id}
	h := protocol.HandlerFunc(func(_ context.Context, msg *protocol.Message) (*protocol.Message, error) {
		if msg.Envelope.MessageType == protocol.LeagueShutdown {
			f.mu.Lock()
			f.notices = append(f.notices, msg)
			f.mu.Unlock()
			return msg.Reply(protocol.LeagueShutdownAck, protocol.RefereeSender(id), map[string]string{"status": "acknowledged"})
		}
		if msg.Envelope.MessageType == protocol.LeagueCompleted {
			f.mu.Lock()
			f.calls = append(f.calls, msg)
			f.mu.Unlock()
			return msg.Reply(protocol.LeagueCompletedAck, protocol.RefereeSender(id), map[string]string{"status": "acknowledged"})
		}
		var p struct {
			MatchID string `json:"match_id"`
		}
		if err := msg.Decode(&p); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.calls = append(f.calls, msg)
		phase := f.reminderPhase
		f.mu.Unlock()
		switch msg.Envelope.MessageType {
		case protocol.MatchCancelled:
			return msg.Reply(protocol.MatchCancelledAck, protocol.RefereeSender(id), map[string]string{"status": "acknowledged", "match_id": p.MatchID})
		case protocol.ResultReminder:
			if phase == "" {
				phase = protocol.PhaseReporting
			}
			return msg.Reply(protocol.ResultReminderAck, protocol.RefereeSender(id), map[string]any{"status": "acknowledged", "match_id": p.MatchID, "phase": phase})
		case protocol.MatchAssignment:
		default:
			return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "fake referee does not take %s", msg.Envelope.MessageType)
		}
		f.mu.Lock()
		f.got = append(f.got, msg)
		status := "acknowledged"
		if f.reject {
			status = "rejected"
		}
		f.mu.Unlock()
		ack, err := msg.Reply(protocol.MatchAssignmentAck, protocol.RefereeSender(id), map[string]string{"status": status, "match_id": p.MatchID})
		if err != nil {
			return nil, err
		}
		ack.Envelope.MatchID = p.MatchID
		return ack, nil
	})
	f.srv = httptest.NewServer(protocol.NewServer(h, testValidator(tb), nil, zerolog.Nop()))
	tb.Cleanup(f.srv.Close)
	return f
}

func (f *fakeReferee) url() string { return f.srv.URL + "/mcp" }

func (f *fakeReferee) setReject(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reject = v
}

// received lists the MATCH_ASSIGNMENT, MATCH_CANCELLED and RESULT_REMINDER calls in order.
func (f *fakeReferee) received(types ...string) []*protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*protocol.Message
	for _, m := range f.calls {
		if slices.Contains(types, m.Envelope.MessageType) {
			out = append(out, m)
		}
	}
	return out
}

func (f *fakeReferee) setReminderPhase(phase string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reminderPhase = phase
}

func (f *fakeReferee) assignments() []*protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

func (f *fakeReferee) shutdownNotices() []*protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.notices)
}

// assignment waits for the MATCH_ASSIGNMENT of matchID.
func (f *fakeReferee) assignment(tb testing.TB, matchID string) *protocol.Message {
	tb.Helper()
	var found *protocol.Message
	waitFor(tb, "assignment of "+matchID+" at "+f.id, func() bool {
		for _, a := range f.assignments() {
			if a.Envelope.MatchID == matchID {
				found = a
				return true
			}
		}
		return false
	})
	return found
}

// ---- a league with agents ----

// testLeague is a harness with referees and players registered.
type testLeague struct {
	*harness
	refs         map[string]*fakeReferee
	refTokens    map[string]string
	playerTokens map[string]string
	players      []string               // sorted
	playerSrv    map[string]*fakePlayer // players registered with a live endpoint
}

// register registers the referees (with fake endpoints) and then the players, whose
// endpoints answer nothing.
func (h *harness) register(refIDs []string, refExtra map[string]any, players []string) *testLeague {
	h.t.Helper()
	return h.registerWith(refIDs, refExtra, players, nil)
}

// registerLive registers as register does, but every player gets a fakePlayer endpoint.
func (h *harness) registerLive(refIDs []string, refExtra map[string]any, players []string) *testLeague {
	h.t.Helper()
	srv := map[string]*fakePlayer{}
	for _, id := range players {
		srv[id] = newFakePlayer(h.t, id)
	}
	return h.registerWith(refIDs, refExtra, players, srv)
}

func (h *harness) registerWith(refIDs []string, refExtra map[string]any, players []string, srv map[string]*fakePlayer) *testLeague {
	h.t.Helper()
	l := &testLeague{harness: h, refs: map[string]*fakeReferee{}, refTokens: map[string]string{}, playerTokens: map[string]string{}, playerSrv: srv}
	for _, id := range refIDs {
		f := newFakeReferee(h.t, id)
		l.refs[id] = f
		l.refTokens[id] = l.registrationToken(h.ok(refereeRegistration(h.t, id, f.url(), refExtra)))
	}
	for _, id := range players {
		msg := playerRegistration(h.t, id)
		if fp := srv[id]; fp != nil {
			msg = withPayload(h.t, msg, map[string]any{"player_id": id, "endpoint_url": fp.url(), "features": playerFeatures})
		}
		l.playerTokens[id] = l.registrationToken(h.ok(msg))
	}
	l.players = slices.Sorted(slices.Values(players))
	return l
}

func (h *harness) registrationToken(ans *protocol.Message) string {
	h.t.Helper()
	var p struct {
		AuthToken string `json:"auth_token"`
	}
	if err := ans.Decode(&p); err != nil || p.AuthToken == "" {
		h.t.Fatalf("registration answer without auth_token: %s", ans.Payload)
	}
	h.addSecret(p.AuthToken)
	return p.AuthToken
}

func (l *testLeague) start() {
	l.t.Helper()
	l.ok(adminStart(l.t, testAdminToken))
	if got := l.m.State(); got != StateActive {
		l.t.Fatalf("state after start %s, want %s", got, StateActive)
	}
}

// round returns the active round and its matches, in schedule order.
func (h *harness) round() (string, []liveMatch) {
	h.m.e.mu.Lock()
	defer h.m.e.mu.Unlock()
	if h.m.e.fx.current < 0 || h.m.e.state != StateActive {
		return "", nil
	}
	r := h.m.e.fx.rounds[h.m.e.fx.current]
	var out []liveMatch
	for _, mt := range r.matches {
		out = append(out, liveMatch{ID: mt.id, RoundID: mt.roundID, Referee: mt.referee, Status: mt.status, Players: mt.players, Seed: mt.seed})
	}
	return r.id, out
}

// match returns one match as the Manager holds it.
func (h *harness) match(id string) liveMatch {
	h.m.e.mu.Lock()
	defer h.m.e.mu.Unlock()
	mt := h.m.e.fx.matches[id]
	if mt == nil {
		h.t.Fatalf("no match %s", id)
	}
	return liveMatch{ID: mt.id, RoundID: mt.roundID, Referee: mt.referee, Status: mt.status, Players: mt.players, Seed: mt.seed}
}

// reportOK sends the result of mt from its assigned referee and expects the ack.
func (l *testLeague) reportOK(mt liveMatch, r result) {
	l.t.Helper()
	ans := l.ok(l.report(mt.Referee, l.refTokens[mt.Referee], mt, r))
	if ans.Envelope.MessageType != protocol.MatchResultAck {
		l.t.Fatalf("got %s, want %s", ans.Envelope.MessageType, protocol.MatchResultAck)
	}
	var p struct {
		Status  string `json:"status"`
		MatchID string `json:"match_id"`
	}
	if err := ans.Decode(&p); err != nil {
		l.t.Fatal(err)
	}
	if p.Status != "acknowledged" || p.MatchID != mt.ID {
		l.t.Fatalf("ack payload %s, want acknowledged for %s", ans.Payload, mt.ID)
	}
}

// standingsAnswer decodes a STANDINGS_RESPONSE.
type standingsPayload struct {
	RoundID     *string                 `json:"round_id"`
	UpdatedAt   string                  `json:"updated_at"`
	Standings   []protocol.StandingsRow `json:"standings"`
	LeagueState string                  `json:"league_state"`
	Final       bool                    `json:"final"`
}

func decodeStandings(tb testing.TB, ans *protocol.Message) standingsPayload {
	tb.Helper()
	if ans.Envelope.MessageType != protocol.StandingsResponse {
		tb.Fatalf("got %s, want %s", ans.Envelope.MessageType, protocol.StandingsResponse)
	}
	var p standingsPayload
	if err := ans.Decode(&p); err != nil {
		tb.Fatal(err)
	}
	return p
}

// expectedRows ranks players from results with the documented order, independently of
// the standings package: points, wins, draws (descending), then player_id.
func expectedRows(players []string, results []result) []protocol.StandingsRow {
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
			case "loss":
				row.Losses++
			}
		}
	}
	rows := make([]protocol.StandingsRow, 0, len(by))
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

func rowsString(rows []protocol.StandingsRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%d:%s p%d w%d d%d l%d m%d  ", r.Rank, r.PlayerID, r.Points, r.Wins, r.Draws, r.Losses, r.MatchesPlayed)
	}
	return b.String()
}
