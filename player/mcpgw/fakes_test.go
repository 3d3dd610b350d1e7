package mcpgw

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every message the seats send or answer is checked against its schema too.
	if err := os.Setenv(protocol.SelfCheckEnv, "1"); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m)
}

const (
	testLeagueID = "league-test"
	callTimeout  = 5 * time.Second
)

// fakeLeague is a League Manager reduced to what a player talks to: registration,
// AGENT_READY, QUERY_STANDINGS and QUERY_MATCH. It announces match credentials, so
// seats check the referee's.
type fakeLeague struct {
	url string
	v   *protocol.Validator

	mu     sync.Mutex
	tokens map[string]string // player id -> token
	// endpoints are the registered players' endpoints.
	endpoints map[string]string
	// standings answers QUERY_STANDINGS, with matchesLeft (none when nil).
	standings   []protocol.StandingsRow
	matchesLeft *int
}

func startLeague(t *testing.T) *fakeLeague {
	t.Helper()
	f := &fakeLeague{v: validator(t), tokens: map[string]string{}, endpoints: map[string]string{}, standings: []protocol.StandingsRow{}}
	srv, err := httpserve.Start("127.0.0.1:0", protocol.NewServer(protocol.HandlerFunc(f.handle), f.v, nil, testLogger(t).With().Str("component", "fake_league").Logger()))
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

func (f *fakeLeague) token(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tokens[id] == "" {
		f.tokens[id] = uuid.NewString()
	}
	return f.tokens[id]
}

func (f *fakeLeague) endpoint(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.endpoints[id]
}

func (f *fakeLeague) handle(_ context.Context, m *protocol.Message) (*protocol.Message, error) {
	_, id := protocol.ParseSender(m.Envelope.Sender)
	if m.Envelope.MessageType != protocol.RegisterPlayerRequest && !protocol.TokenEqual(m.Envelope.AuthToken, f.token(id)) {
		return nil, protocol.Errorf(protocol.ReasonUnauthorized, "bad token")
	}
	switch m.Envelope.MessageType {
	case protocol.RegisterPlayerRequest:
		var p protocol.PlayerRegistration
		if err := m.Decode(&p); err != nil {
			return nil, err
		}
		f.mu.Lock()
		_, dup := f.endpoints[id]
		f.endpoints[id] = p.EndpointURL
		f.mu.Unlock()
		if dup {
			return nil, protocol.Errorf(protocol.ReasonDuplicateRegistration, "player %s is registered", id)
		}
		return f.reply(m, protocol.RegisterPlayerResponse, protocol.RegistrationAnswer{Status: "registered", AuthToken: f.token(id), LeagueID: testLeagueID,
			PlayerID: id, Features: []string{protocol.FeatureMatchCredentials, protocol.FeatureSignedAssignments, protocol.FeatureMatchQuery}})
	case protocol.AgentReadyRequest:
		return f.reply(m, protocol.AgentReadyResponse, protocol.AgentReadyAnswer{Status: "acknowledged", AgentID: id, AgentType: "player", AgentState: "ACTIVE"})
	case protocol.QueryStandings:
		f.mu.Lock()
		rows, left := f.standings, f.matchesLeft
		f.mu.Unlock()
		return f.reply(m, protocol.StandingsResponse, protocol.Standings{UpdatedAt: protocol.Now(time.Now()), Standings: rows, LeagueState: "RUNNING", MatchesLeft: left})
	case protocol.QueryMatch:
		var q protocol.MatchQuery
		if err := m.Decode(&q); err != nil {
			return nil, err
		}
		if q.MatchID != "R1M1" {
			return nil, protocol.Errorf(protocol.ReasonUnknownMatch, "match %q is not in the schedule", q.MatchID)
		}
		ref := "ref1"
		return f.reply(m, protocol.MatchInfo, protocol.MatchDetails{MatchID: q.MatchID, RoundID: "round-1", Players: []string{"p1", "p2"}, RefereeID: &ref, Status: "IN_PROGRESS"})
	}
	return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "not here")
}

func (f *fakeLeague) reply(m *protocol.Message, typ string, payload any) (*protocol.Message, error) {
	out, err := m.Reply(typ, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.LeagueID = testLeagueID
	if m.Envelope.MatchID != "" {
		out.Envelope.MatchID = m.Envelope.MatchID
	}
	return out, nil
}

// shutdown sends LEAGUE_SHUTDOWN to player id, signed with its token.
func (f *fakeLeague) shutdown(t *testing.T, id string) {
	t.Helper()
	m, err := protocol.NewMessage(protocol.LeagueShutdown, protocol.SenderLeagueManager, protocol.Shutdown{Reason: "league completed"})
	if err != nil {
		t.Fatal(err)
	}
	m.Envelope.AuthToken, m.Envelope.LeagueID = f.token(id), testLeagueID
	c := protocol.NewClient(f.v, nil)
	defer c.Close()
	if _, err := c.Call(context.Background(), f.endpoint(id), m, protocol.CallOptions{Timeout: callTimeout}); err != nil {
		t.Fatalf("LEAGUE_SHUTDOWN to %s: %v", id, err)
	}
}

// completed sends LEAGUE_COMPLETED with rows to player id, signed with its token.
func (f *fakeLeague) completed(t *testing.T, id string, rows []protocol.StandingsRow) {
	t.Helper()
	m, err := protocol.NewMessage(protocol.LeagueCompleted, protocol.SenderLeagueManager,
		protocol.LeagueCompletion{LeagueID: testLeagueID, CompletedAt: protocol.Now(time.Now()), Rounds: 1, Standings: rows})
	if err != nil {
		t.Fatal(err)
	}
	m.Envelope.AuthToken, m.Envelope.LeagueID = f.token(id), testLeagueID
	c := protocol.NewClient(f.v, nil)
	defer c.Close()
	ans, err := c.Call(context.Background(), f.endpoint(id), m, protocol.CallOptions{Timeout: callTimeout})
	if err != nil || ans.Envelope.MessageType != protocol.LeagueCompletedAck {
		t.Fatalf("LEAGUE_COMPLETED to %s: %v, %v", id, ans, err)
	}
}

// fakeReferee sends match messages to seats as the referee of match R1M1 would.
type fakeReferee struct {
	t      *testing.T
	league *fakeLeague
	client *protocol.Client
}

func newReferee(t *testing.T, lg *fakeLeague) *fakeReferee {
	c := protocol.NewClient(lg.v, nil)
	t.Cleanup(c.Close)
	return &fakeReferee{t: t, league: lg, client: c}
}

func (r *fakeReferee) send(ctx context.Context, id, messageType string, payload any) (*protocol.Message, error) {
	r.t.Helper()
	m, err := protocol.NewMessage(messageType, protocol.RefereeSender("ref1"), payload)
	if err != nil {
		r.t.Fatal(err)
	}
	m.Envelope.MatchID, m.Envelope.GameType, m.Envelope.LeagueID = "R1M1", "tic_tac_toe", testLeagueID
	m.Envelope.AuthToken = protocol.MatchCredential(r.league.token(id), "R1M1")
	return r.client.Call(ctx, r.league.endpoint(id), m, protocol.CallOptions{Timeout: callTimeout})
}

// invite sends GAME_INVITATION of match R1M1 against opponent.
func (r *fakeReferee) invite(id, opponent string) {
	r.t.Helper()
	ans, err := r.send(context.Background(), id, protocol.GameInvitation, protocol.Invitation{MatchID: "R1M1", GameType: "tic_tac_toe", Opponents: []string{opponent}})
	if err != nil {
		r.t.Fatalf("GAME_INVITATION to %s: %v", id, err)
	}
	var ack protocol.JoinAck
	if err := ans.Decode(&ack); err != nil || ack.Status != protocol.StatusAccepted {
		r.t.Fatalf("GAME_JOIN_ACK %s, %v; want accepted", ans.Payload, err)
	}
}

// requestMove sends REQUEST_MOVE on an empty board in the background; the answer, or
// the error, arrives on the channel.
func (r *fakeReferee) requestMove(id string, deadline time.Duration) <-chan moveAnswer {
	r.t.Helper()
	return r.requestMoveOn(id, deadline, nil)
}

// requestMoveOn is requestMove under a clock: clocks are sent with it.
func (r *fakeReferee) requestMoveOn(id string, deadline time.Duration, clocks *protocol.Clocks) <-chan moveAnswer {
	r.t.Helper()
	ch := make(chan moveAnswer, 1)
	board := [][]string{{"X", "", ""}, {"", "", ""}, {"", "", ""}}
	payload := protocol.MoveRequest{StepNumber: 2, DeadlineMS: int(deadline.Milliseconds()), Clocks: clocks,
		StepContext: mustJSON(r.t, map[string]any{"board": board, "your_mark": "O", "move_number": 2})}
	go func() {
		ans, err := r.send(context.Background(), id, protocol.RequestMove, payload)
		if err != nil {
			ch <- moveAnswer{err: err}
			return
		}
		var mv protocol.MoveAnswer
		err = ans.Decode(&mv)
		ch <- moveAnswer{move: mv.MovePayload, err: err}
	}()
	return ch
}

type moveAnswer struct {
	move json.RawMessage
	err  error
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeClock is a clock the test moves forward.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Timer(d time.Duration) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch, func() {}
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	return ch, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.waiters = slices.DeleteFunc(c.waiters, func(w fakeWaiter) bool { return w.ch == ch })
	}
}

// Advance moves the clock forward and fires the timers due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	left := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			left = append(left, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = left
}

// waitTimer blocks until a timer is due at at.
func (c *fakeClock) waitTimer(t *testing.T, at time.Time) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		for _, w := range c.waiters {
			if w.at.Equal(at) {
				c.mu.Unlock()
				return
			}
		}
		c.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no timer due at %v", at)
		}
		time.Sleep(time.Millisecond)
	}
}

// startGateway starts a gateway against lg; clk nil means the real clock.
func startGateway(t *testing.T, lg *fakeLeague, clk clock) *Gateway {
	t.Helper()
	if clk == nil {
		clk = realClock{}
	}
	// The fake League Manager has no relay: its seats are inbound.
	g, err := start(Config{Addr: "127.0.0.1:0", LeagueURL: lg.url, RegisterFor: 5 * time.Second, Inbound: true}, testLogger(t).With().Str("component", "mcp_gateway").Logger(), clk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(context.Background()); err != nil {
			t.Errorf("close gateway: %v", err)
		}
	})
	return g
}

// connect opens an MCP session with the SDK's client over Streamable HTTP.
func connect(t *testing.T, g *Gateway, opts *sdk.ClientOptions) *sdk.ClientSession {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "v0"}, opts)
	// A connection of its own, closed with the session: one the client dialled for a
	// request it then dropped would hold up the gateway's graceful shutdown.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: g.URL(), HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		tr.CloseIdleConnections()
	})
	return cs
}

// call calls a tool and decodes its structured output into out; it returns the text
// of a tool error, or "".
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		if len(res.Content) == 0 {
			t.Fatalf("%s: an error without content", name)
		}
		return res.Content[0].(*sdk.TextContent).Text
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, b, err)
		}
	}
	return ""
}

// mustCall is call for a tool that must succeed.
func mustCall(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	if msg := call(t, cs, name, args, out); msg != "" {
		t.Fatalf("%s: tool error %q", name, msg)
	}
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

// httpStatus is the status of GET url.
func httpStatus(url string) (int, error) {
	res, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	return res.StatusCode, nil
}
