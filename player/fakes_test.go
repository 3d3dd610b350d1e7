package player

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/rpccheck"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// callTimeout is the deadline of every call a test makes, and of each attempt of the
// players' calls to the League Manager: a hang guard only, generous so that a loaded
// machine never fails a test (a 500 ms one once made a registration time out and be sent
// again). Timings are tested on fake time (synctest).
const callTimeout = 10 * time.Second

const testLeagueID = "league-test"

// fakeLeague is a League Manager reduced to what a player talks to: registration (refused
// with refusalReason, NO_REFEREE_REGISTERED by default, the first refusals times, or
// always with refuseWith), AGENT_READY, QUERY_STANDINGS and QUERY_MATCH (answered from the
// matches set with setMatch). startLeague serves it over HTTP; newFakeLeague readies it to
// be reached in memory (caller), on a synctest bubble's clock.
type fakeLeague struct {
	features      []string
	refusals      int
	refusalReason protocol.Reason
	refuseWith    protocol.Reason
	// hold, when set, delays every registration answer until it is closed.
	hold chan struct{}
	// refuseLater, when set, refuses everything but registration with it: the first
	// laterRefusals such requests when that is not 0, else all of them.
	refuseLater   protocol.Reason
	laterRefusals int

	url string

	mu     sync.Mutex
	later  int                 // requests other than registration received
	tokens map[string]string   // player id -> token, drawn on first use
	rpcIDs map[string][]string // conversation id -> JSON-RPC id of every attempt over HTTP
	// conversations: player id -> conversation id of every registration attempt
	conversations map[string][]string
	registrations map[string]map[string]any
	ready         map[string]int
	matches       map[string]fakeMatch // by match id, for QUERY_MATCH
	queries       map[string]int       // QUERY_MATCH received, by match id
	// queryAnswer, when set, answers QUERY_MATCH instead of matches: "drop" closes the
	// connection unanswered, a reason refuses it with that reason; queryRefusals, when
	// not 0, refuses only the first queryRefusals queries about a match with that reason.
	queryAnswer   string
	queryRefusals int
}

// fakeMatch is what the fake League Manager says of a match in MATCH_INFO.
type fakeMatch struct {
	players   [2]string
	refereeID string // "" for null
	status    string
}

// setMatch makes QUERY_MATCH about matchID answer with m.
func (f *fakeLeague) setMatch(matchID string, m fakeMatch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.matches[matchID] = m
}

// setQueryAnswer sets queryAnswer.
func (f *fakeLeague) setQueryAnswer(a string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queryAnswer = a
}

// refuseNext refuses every request but registration with reason from now on: the next n,
// or all of them when n is 0 (refuseLater and laterRefusals).
func (f *fakeLeague) refuseNext(reason protocol.Reason, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuseLater, f.laterRefusals, f.later = reason, n, 0
}

// queryCount is the number of QUERY_MATCH received about matchID.
func (f *fakeLeague) queryCount(matchID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[matchID]
}

// dropQueries closes the connection of a QUERY_MATCH unanswered while queryAnswer is
// "drop", as a League Manager that went away does. It records the JSON-RPC id of every
// request too (rpcIDs).
func (f *fakeLeague) dropQueries(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		var rpc struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Envelope struct {
					ConversationID string `json:"conversation_id"`
				} `json:"envelope"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &rpc)
		f.mu.Lock()
		conv := rpc.Params.Envelope.ConversationID
		f.rpcIDs[conv] = append(f.rpcIDs[conv], string(rpc.ID))
		drop := f.queryAnswer == "drop" && bytes.Contains(body, []byte(`"`+protocol.QueryMatch+`"`))
		if drop {
			var req struct {
				Params struct {
					Payload struct {
						MatchID string `json:"match_id"`
					} `json:"payload"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &req)
			f.queries[req.Params.Payload.MatchID]++
		}
		f.mu.Unlock()
		if drop {
			panic(http.ErrAbortHandler)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// newFakeLeague readies f to answer: in memory through caller, or over HTTP (startLeague).
func newFakeLeague(f *fakeLeague) *fakeLeague {
	f.tokens, f.conversations, f.registrations, f.ready = map[string]string{}, map[string][]string{}, map[string]map[string]any{}, map[string]int{}
	f.matches, f.queries, f.rpcIDs = map[string]fakeMatch{}, map[string]int{}, map[string][]string{}
	f.refusalReason = cmp.Or(f.refusalReason, protocol.ReasonNoRefereeRegistered)
	return f
}

func startLeague(t *testing.T, f *fakeLeague) *fakeLeague {
	t.Helper()
	newFakeLeague(f)
	rpc := protocol.NewServer(protocol.HandlerFunc(f.handle), validator(t), nil, testLogger(t).With().Str("component", "fake_league").Logger())
	srv, err := httpserve.Start("127.0.0.1:0", f.dropQueries(rpc))
	if err != nil {
		t.Fatal(err)
	}
	f.url = srv.URL()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shut down fake league: %v", err)
		}
	})
	return f
}

// token is the token the league gives (or gave) player id.
func (f *fakeLeague) token(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tokens[id] == "" {
		f.tokens[id] = uuid.NewString()
	}
	return f.tokens[id]
}

func (f *fakeLeague) handle(ctx context.Context, m *protocol.Message) (*protocol.Message, error) {
	_, id := protocol.ParseSender(m.Envelope.Sender)
	if m.Envelope.MessageType != protocol.RegisterPlayerRequest {
		f.mu.Lock()
		f.later++
		reason := f.refuseLater
		if f.laterRefusals > 0 && f.later > f.laterRefusals {
			reason = ""
		}
		f.mu.Unlock()
		if reason != "" {
			return nil, protocol.Errorf(reason, "refused")
		}
	}
	switch m.Envelope.MessageType {
	case protocol.RegisterPlayerRequest:
		return f.register(ctx, m, id)
	case protocol.AgentReadyRequest:
		if err := f.authenticate(m, id); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.ready[id]++
		f.mu.Unlock()
		return f.reply(m, protocol.AgentReadyResponse, map[string]any{
			"status": "acknowledged", "agent_id": id, "agent_type": "player", "agent_state": "ACTIVE",
		})
	case protocol.QueryStandings:
		if err := f.authenticate(m, id); err != nil {
			return nil, err
		}
		return f.reply(m, protocol.StandingsResponse, map[string]any{
			"round_id": "round-1", "updated_at": protocol.Now(time.Now()), "league_state": "ACTIVE",
			"standings": []map[string]any{
				{"rank": 1, "player_id": id, "points": 3, "wins": 1, "draws": 0, "losses": 0, "matches_played": 1},
			},
		})
	case protocol.QueryMatch:
		if err := f.authenticate(m, id); err != nil {
			return nil, err
		}
		return f.queryMatch(m, id)
	}
	return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "fake league does not accept %s", m.Envelope.MessageType)
}

func (f *fakeLeague) queryMatch(m *protocol.Message, playerID string) (*protocol.Message, error) {
	var q struct {
		MatchID string `json:"match_id"`
	}
	if err := m.Decode(&q); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.queries[q.MatchID]++
	mt, known := f.matches[q.MatchID]
	answer := f.queryAnswer
	if f.queryRefusals > 0 && f.queries[q.MatchID] > f.queryRefusals {
		answer = ""
	}
	f.mu.Unlock()
	switch {
	case answer != "":
		return nil, protocol.Errorf(protocol.Reason(answer), "refused")
	case !known:
		return nil, protocol.Errorf(protocol.ReasonUnknownMatch, "no match %s", q.MatchID)
	case mt.players[0] != playerID && mt.players[1] != playerID:
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "not a player of %s", q.MatchID)
	}
	var referee any
	if mt.refereeID != "" {
		referee = mt.refereeID
	}
	return f.reply(m, protocol.MatchInfo, map[string]any{
		"match_id": q.MatchID, "round_id": "round-1", "players": mt.players, "referee_id": referee, "status": mt.status,
	})
}

func (f *fakeLeague) register(ctx context.Context, m *protocol.Message, id string) (*protocol.Message, error) {
	var p map[string]any
	if err := m.Decode(&p); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.conversations[id] = append(f.conversations[id], m.Envelope.ConversationID)
	f.registrations[id] = p
	attempt := len(f.conversations[id])
	f.mu.Unlock()
	switch {
	case f.refuseWith != "":
		return nil, protocol.Errorf(f.refuseWith, "refused")
	case attempt <= f.refusals:
		return nil, protocol.Errorf(f.refusalReason, "refused, for now")
	}
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	ans := map[string]any{"status": "registered", "auth_token": f.token(id), "league_id": testLeagueID, "player_id": id}
	// Like the Python League Manager, a league without protections announces none.
	if f.features != nil {
		ans["features"] = f.features
	}
	return f.reply(m, protocol.RegisterPlayerResponse, ans)
}

func (f *fakeLeague) authenticate(m *protocol.Message, id string) error {
	if !protocol.TokenEqual(m.Envelope.AuthToken, f.token(id)) {
		return protocol.Errorf(protocol.ReasonUnauthorized, "bad token")
	}
	return nil
}

func (f *fakeLeague) reply(m *protocol.Message, typ string, payload any) (*protocol.Message, error) {
	out, err := m.Reply(typ, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.LeagueID = testLeagueID
	return out, nil
}

// jsonrpcIDs are the JSON-RPC ids of the attempts of conversation conv over HTTP.
func (f *fakeLeague) jsonrpcIDs(conv string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.rpcIDs[conv])
}

func (f *fakeLeague) attempts(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.conversations[id]...)
}

func (f *fakeLeague) readyCount(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ready[id]
}

func (f *fakeLeague) registration(id string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registrations[id]
}

// running is a player whose Run goroutine a test started.
type running struct {
	*Player
	league *fakeLeague
	url    string
	cancel context.CancelFunc
	done   chan error

	once sync.Once
	err  error
}

// lineWriter hands each write (Run prints its one line in one write) to a channel.
type lineWriter chan string

func (w lineWriter) Write(b []byte) (int, error) {
	w <- string(b)
	return len(b), nil
}

// startPlayer runs a player against lg and waits for its listening line; setup, when
// not nil, may adjust the player before Run.
func startPlayer(t *testing.T, lg *fakeLeague, cfg Config, setup func(*Player)) *running {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	cfg.LeagueURL = lg.url
	if cfg.Strategy == "" {
		cfg.Strategy = "random"
	}
	if cfg.RegisterTimeout == 0 {
		cfg.RegisterTimeout = callTimeout
	}
	if cfg.RegisterFor == 0 {
		cfg.RegisterFor = 5 * time.Second
	}
	lines := make(lineWriter, 1)
	cfg.Stdout = lines
	p, err := New(cfg, testLogger(t).With().Str("component", "player").Str("player_id", cfg.ID).Logger())
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{Player: p, league: lg, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- p.Run(ctx) }()
	t.Cleanup(func() {
		r.cancel()
		if err := r.wait(t); err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	select {
	case line := <-lines:
		url, ok := strings.CutPrefix(strings.TrimSpace(line), "player "+cfg.ID+" listening on ")
		if !ok {
			t.Fatalf("stdout line %q, want %q", line, "player "+cfg.ID+" listening on <url>")
		}
		r.url = url
	case err := <-r.done:
		t.Fatalf("Run returned before listening: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no listening line")
	}
	return r
}

// wait returns Run's result, waiting up to 5 s.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	r.once.Do(func() {
		select {
		case r.err = <-r.done:
		case <-time.After(5 * time.Second):
			t.Fatal("Run did not return")
		}
	})
	return r.err
}

// waitState polls the player's state.
func (r *running) waitState(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for r.Status().State != want {
		if time.Now().After(deadline) || r.Status().State == StateStopped {
			t.Fatalf("state %s, want %s", r.Status().State, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// credential is the match credential the league would hand the referee.
func (r *running) credential(matchID string) string {
	return protocol.MatchCredential(r.league.token(r.cfg.ID), matchID)
}

// sender talks to a player as a referee or the League Manager would.
type sender struct {
	t      *testing.T
	client *protocol.Client
	// timeout bounds each call; callTimeout when 0.
	timeout time.Duration
}

func newSender(t *testing.T) *sender {
	c := protocol.NewClient(validator(t), nil)
	t.Cleanup(c.Close)
	return &sender{t: t, client: c}
}

// envelope holds the contextual envelope fields of a test message.
type envelope struct {
	sender, matchID, gameType, auth, leagueID string
}

func (s *sender) send(url, messageType string, e envelope, payload any) (*protocol.Message, error) {
	s.t.Helper()
	if e.sender == "" {
		e.sender = protocol.RefereeSender("ref1")
	}
	m, err := protocol.NewMessage(messageType, e.sender, payload)
	if err != nil {
		s.t.Fatal(err)
	}
	m.Envelope.MatchID, m.Envelope.GameType, m.Envelope.AuthToken, m.Envelope.LeagueID = e.matchID, e.gameType, e.auth, e.leagueID
	// Transport failures are retried with the same ids, as a referee does, so a loaded
	// machine does not fail a test; refusals are never retried.
	return s.client.Call(context.Background(), url, m, protocol.CallOptions{
		Timeout: cmp.Or(s.timeout, callTimeout), Retry: protocol.RetryPolicy{Attempts: 3, Backoff: 20 * time.Millisecond},
	})
}

// invite sends GAME_INVITATION for a tic_tac_toe match.
func (s *sender) invite(r *running, matchID, credential string) (*protocol.Message, error) {
	return s.send(r.url, protocol.GameInvitation, envelope{matchID: matchID, gameType: "tic_tac_toe", auth: credential},
		map[string]any{"match_id": matchID, "game_type": "tic_tac_toe", "opponents": []string{"p99"}})
}

func decode[T any](t *testing.T, m *protocol.Message) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(m.Payload, &v); err != nil {
		t.Fatalf("decode %s: %v", m.Envelope.MessageType, err)
	}
	return v
}

func validator(t *testing.T) *protocol.Validator {
	t.Helper()
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testLogger(t *testing.T) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.DebugLevel)
}

// freeAddr returns an address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func wantReason(t *testing.T, err error, want protocol.Reason) {
	t.Helper()
	if got := protocol.ReasonOf(err); got != want {
		t.Fatalf("error %v: reason %q, want %q", err, got, want)
	}
}

// memCaller reaches a fakeLeague in memory, as protocol.Client reaches it over HTTP:
// every attempt has opt.Timeout, and a failed attempt is retried as opt.Retry says
// (transport failures, the reasons it lists, errors without a reason when Unexplained),
// after the longest backoff the client may draw, min(Backoff·2^(n-1), MaxBackoff), until
// ctx ends or the attempts run out. Built in a synctest bubble, it runs on its clock.
type memCaller struct {
	t  *testing.T
	lg *fakeLeague
	v  *protocol.Validator

	mu    sync.Mutex
	calls []rpccheck.Call
}

// caller returns the in-memory way to f (see memCaller); newFakeLeague must have readied f.
func (f *fakeLeague) caller(t *testing.T) *memCaller {
	return &memCaller{t: t, lg: f, v: validator(t)}
}

func (c *memCaller) Call(ctx context.Context, url string, m *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error) {
	if err := c.v.ValidateMessage(m); err != nil {
		c.t.Errorf("player sent an invalid %s: %v", m.Envelope.MessageType, err)
		return nil, err
	}
	return rpccheck.Retrying(ctx, url, m, opt, func() (*protocol.Message, error) { return c.attempt(ctx, m, opt) })
}

func (c *memCaller) attempt(ctx context.Context, m *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error) {
	deadline, _ := ctx.Deadline()
	c.mu.Lock()
	c.calls = append(c.calls, rpccheck.Call{Msg: m, Opt: opt, At: time.Now(), Deadline: deadline})
	c.mu.Unlock()
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	ans, err := c.lg.handle(ctx, m)
	var perr *protocol.Error
	switch {
	case err == nil:
		if verr := c.v.ValidateMessage(ans); verr != nil {
			c.t.Errorf("fake league answered an invalid %s: %v", ans.Envelope.MessageType, verr)
		}
		return ans, nil
	case errors.As(err, &perr):
		return nil, perr
	case ctx.Err() != nil:
		return nil, fmt.Errorf("post: %w", ctx.Err()) // no answer in time
	}
	// As protocol.Server answers any other handler error.
	return nil, protocol.Errorf(protocol.ReasonInternal, "internal error")
}

// sent returns the attempts of messageType received so far.
func (c *memCaller) sent(messageType string) []rpccheck.Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []rpccheck.Call
	for _, call := range c.calls {
		if call.Msg.Envelope.MessageType == messageType {
			out = append(out, call)
		}
	}
	return out
}
