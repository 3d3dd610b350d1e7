package player

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// callTimeout is the deadline of every call a test makes.
const callTimeout = 500 * time.Millisecond

const testLeagueID = "league-test"

// fakeLeague is a League Manager reduced to what a player talks to: registration (refused
// with NO_REFEREE_REGISTERED the first refusals times, or always with refuseWith),
// AGENT_READY, QUERY_STANDINGS and QUERY_MATCH (answered from the matches set with
// setMatch).
type fakeLeague struct {
	features   []string
	refusals   int
	refuseWith protocol.Reason
	// hold, when set, delays every registration answer until it is closed.
	hold chan struct{}
	// refuseLater, when set, refuses everything but registration with it.
	refuseLater protocol.Reason

	url string

	mu            sync.Mutex
	tokens        map[string]string   // player id -> token, drawn on first use
	conversations map[string][]string // player id -> conversation id of every attempt
	registrations map[string]map[string]any
	ready         map[string]int
	matches       map[string]fakeMatch // by match id, for QUERY_MATCH
	queries       map[string]int       // QUERY_MATCH received, by match id
	// queryAnswer, when set, answers QUERY_MATCH instead of matches: "drop" closes the
	// connection unanswered, a reason refuses it with that reason.
	queryAnswer string
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

// queryCount is the number of QUERY_MATCH received about matchID.
func (f *fakeLeague) queryCount(matchID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[matchID]
}

// dropQueries closes the connection of a QUERY_MATCH unanswered while queryAnswer is
// "drop", as a League Manager that went away does.
func (f *fakeLeague) dropQueries(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
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

func startLeague(t *testing.T, f *fakeLeague) *fakeLeague {
	t.Helper()
	f.tokens, f.conversations, f.registrations, f.ready = map[string]string{}, map[string][]string{}, map[string]map[string]any{}, map[string]int{}
	f.matches, f.queries = map[string]fakeMatch{}, map[string]int{}
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
	if f.refuseLater != "" && m.Envelope.MessageType != protocol.RegisterPlayerRequest {
		return nil, protocol.Errorf(f.refuseLater, "refused")
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
		return nil, protocol.Errorf(protocol.ReasonNoRefereeRegistered, "no referee yet")
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
