package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// memNet serves HTTP in memory: hosts map to handlers, so that a whole run of the tool
// and a fake agent go on fake time (testing/synctest), where nothing may block on a
// socket.
type memNet struct {
	mu    sync.Mutex
	hosts map[string]http.Handler
	next  int
}

func newMemNet() *memNet { return &memNet{hosts: map[string]http.Handler{}} }

func (n *memNet) serve(_ string, h http.Handler) (string, func(context.Context) error, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.next++
	host := fmt.Sprintf("mem%d.test", n.next)
	n.hosts[host] = h
	return "http://" + host + "/mcp", func(context.Context) error {
		n.mu.Lock()
		defer n.mu.Unlock()
		delete(n.hosts, host)
		return nil
	}, nil
}

func (n *memNet) handler(endpoint string) http.Handler {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hosts[u.Host]
}

func (n *memNet) probe(_ context.Context, endpoint string) error {
	if n.handler(endpoint) == nil {
		return errors.New("connection refused")
	}
	return nil
}

// RoundTrip serves req with its host's handler; it returns when the handler does or
// req's context ends. The handler's goroutine ends when the handler returns.
func (n *memNet) RoundTrip(req *http.Request) (*http.Response, error) {
	h := n.handler(req.URL.String())
	if h == nil {
		return nil, errors.New("connection refused")
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	inner := httptest.NewRequest(req.Method, req.URL.String(), bytes.NewReader(body)).WithContext(req.Context())
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(rec, inner)
		close(done)
	}()
	select {
	case <-done:
		return rec.Result(), nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// memSession is a session on n with the product's default deadlines.
func memSession(t *testing.T, n *memNet, opt Options) *session {
	t.Helper()
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	v.SelfCheck = true
	opt.Log = zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	s := &session{opt: opt, v: v, log: opt.Log, http: &http.Client{Transport: n}, serve: n.serve, probe: n.probe}
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	return s
}

// defaults are the command's defaults, which no test may shorten on fake time.
func defaults(game string) Options {
	return Options{Listen: "127.0.0.1:8900", Game: game, Wait: 60 * time.Second, MoveTimeout: 30 * time.Second}
}

// fakeAgent is an agent written in the test: a protocol.Handler of funcs by message type.
type fakeAgent struct {
	id, kind string
	on       map[string]func(m *protocol.Message) (any, string, error)
}

func (f *fakeAgent) sender() string { return f.kind + ":" + f.id }

// Handle implements protocol.Handler: the func of the message type builds the payload
// and the answer's type.
func (f *fakeAgent) Handle(_ context.Context, m *protocol.Message) (*protocol.Message, error) {
	h := f.on[m.Envelope.MessageType]
	if h == nil {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "fake %s does not take %s", f.kind, m.Envelope.MessageType)
	}
	payload, typ, err := h(m)
	if err != nil {
		return nil, err
	}
	out, err := m.Reply(typ, f.sender(), payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.MatchID = m.Envelope.MatchID
	return out, nil
}

// start serves f on n and registers it with the tool at leagueURL; the registering
// goroutine ends once the registration is answered.
func (f *fakeAgent) start(t *testing.T, n *memNet, leagueURL string) {
	t.Helper()
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	endpoint, _, _ := n.serve("", protocol.NewServer(f, v, nil, zerolog.Nop()))
	reg := protocol.RegisterPlayerRequest
	payload := map[string]any{"player_id": f.id, "endpoint_url": endpoint}
	if f.kind == "referee" {
		reg, payload = protocol.RegisterRefereeRequest, map[string]any{"referee_id": f.id, "endpoint_url": endpoint}
	}
	body, _, err := request(message(reg, f.sender(), payload))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		res, err := (&http.Client{Transport: n}).Post(leagueURL, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Errorf("fake %s: register: %v", f.kind, err)
			return
		}
		res.Body.Close()
	}()
}

// firstLegal answers REQUEST_MOVE of tic_tac_toe with the first legal move, after delay.
func firstLegal(delay time.Duration) func(m *protocol.Message) (any, string, error) {
	return func(m *protocol.Message) (any, string, error) {
		time.Sleep(delay)
		var p struct {
			StepContext json.RawMessage `json:"step_context"`
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			return nil, "", err
		}
		g, _ := game.Default().New(game.TypeTicTacToe, nil)
		legal, err := g.LegalMoves(p.StepContext)
		if err != nil || len(legal) == 0 {
			return nil, "", protocol.Errorf(protocol.ReasonSchemaViolation, "no move")
		}
		return map[string]any{"move_payload": legal[0]}, protocol.MoveResponse, nil
	}
}

func ack(typ string) func(m *protocol.Message) (any, string, error) {
	return func(m *protocol.Message) (any, string, error) {
		return map[string]any{"status": "acknowledged"}, typ, nil
	}
}

// A player that never registers fails registration once --wait (60 s) passes.
func TestNoRegistrationOnFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := memSession(t, newMemNet(), defaults("tic_tac_toe"))
		start := time.Now()
		rep := NewReport("player", "tic_tac_toe")
		if err := s.runPlayer(context.Background(), rep); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 60*time.Second {
			t.Errorf("waited %s for the registration, want the 60s of --wait", waited)
		}
		got := result(t, rep, "player.register.schema")
		if got.Status != Fail || got.Reason != "no REGISTER_PLAYER_REQUEST arrived within 1m0s" {
			t.Errorf("got %s %q", got.Status, got.Reason)
		}
		if res := result(t, rep, "player.move.legal"); res.Status != Skip || !strings.Contains(res.Reason, "never registered") {
			t.Errorf("player.move.legal: got %s %q", res.Status, res.Reason)
		}
	})
}

// A player slower than the move deadline fails player.move.deadline; one just inside
// it passes.
func TestMoveDeadlineOnFakeTime(t *testing.T) {
	for _, tc := range []struct {
		delay time.Duration
		want  Status
	}{{29 * time.Second, Pass}, {31 * time.Second, Fail}} {
		t.Run(tc.delay.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := newMemNet()
				opt := defaults("tic_tac_toe")
				p := &fakeAgent{id: "slow", kind: "player", on: map[string]func(*protocol.Message) (any, string, error){
					protocol.GameInvitation: func(m *protocol.Message) (any, string, error) {
						return map[string]any{"status": "accepted", "match_id": m.Envelope.MatchID}, protocol.GameJoinAck, nil
					},
					protocol.RequestMove:    firstLegal(tc.delay),
					protocol.GameOver:       ack(protocol.GameOverAck),
					protocol.LeagueShutdown: ack(protocol.LeagueShutdownAck),
				}}
				opt.Ready = func(url string) { p.start(t, n, url) }
				s := memSession(t, n, opt)
				rep := NewReport("player", "tic_tac_toe")
				if err := s.runPlayer(context.Background(), rep); err != nil {
					t.Fatal(err)
				}
				got := result(t, rep, "player.move.deadline")
				if got.Status != tc.want {
					t.Errorf("player.move.deadline: got %s %q, want %s", got.Status, got.Reason, tc.want)
				}
				if tc.want == Fail && got.Reason != "no MOVE_RESPONSE to step 1 of conform-m1 within the move deadline of 30s" {
					t.Errorf("reason %q", got.Reason)
				}
			})
		})
	}
}

// A referee that takes its assignment and never plays is found out on the stall bound
// and the result deadline, not by waiting for ever.
func TestRefereeStallsOnFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		opt := defaults("tic_tac_toe")
		ref := &fakeAgent{id: "idle", kind: "referee", on: map[string]func(*protocol.Message) (any, string, error){
			protocol.MatchAssignment: func(m *protocol.Message) (any, string, error) {
				return map[string]any{"status": "acknowledged", "match_id": m.Envelope.MatchID}, protocol.MatchAssignmentAck, nil
			},
		}}
		opt.Ready = func(url string) { ref.start(t, n, url) }
		s := memSession(t, n, opt)
		start := time.Now()
		rep := NewReport("referee", "tic_tac_toe")
		if err := s.runReferee(context.Background(), rep); err != nil {
			t.Fatal(err)
		}
		// Per match: the 30 s move deadline as stall bound, then the 60 s result deadline.
		if took, most := time.Since(start), 3*(90*time.Second)+2*DefaultGrace+readyWait+5*time.Second; took > most {
			t.Errorf("the run took %s of fake time, want at most %s", took, most)
		}
		for id, reason := range map[string]string{
			"referee.invite":    "invited neither to conform-m1, not both players",
			"referee.game_over": "sent conform-p1 no GAME_OVER for conform-m1",
			"referee.result":    "no MATCH_RESULT_REPORT for conform-m1 within 1m0s of its end",
		} {
			if got := result(t, rep, id); got.Status != Fail || got.Reason != reason {
				t.Errorf("%s: got %s %q, want fail %q", id, got.Status, got.Reason, reason)
			}
		}
		if !rep.Failed() {
			t.Error("an idle referee conforms")
		}
	})
}

// A registration that breaks the schema is refused, and the report names every
// violation with its path.
func TestRegistrationViolationsOnFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		opt := defaults("tic_tac_toe")
		opt.Ready = func(url string) {
			body := `{"jsonrpc":"2.0","method":"league.handle","id":1,"params":{"envelope":{"protocol":"league.v2",` +
				`"message_type":"REGISTER_PLAYER_REQUEST","sender":"player:p1","timestamp":"yesterday",` +
				`"conversation_id":"8f0e2a4c-3b1d-4c5e-9f6a-7b8c9d0e1f2a"},"payload":{"player_id":"p1"}}}`
			// Ends once the tool answers.
			go func() {
				res, err := (&http.Client{Transport: n}).Post(url, "application/json", strings.NewReader(body))
				if err != nil {
					t.Errorf("register: %v", err)
					return
				}
				res.Body.Close()
			}()
		}
		s := memSession(t, n, opt)
		rep := NewReport("player", "tic_tac_toe")
		if err := s.runPlayer(context.Background(), rep); err != nil {
			t.Fatal(err)
		}
		got := result(t, rep, "player.register.schema")
		for _, want := range []string{"/envelope/timestamp: ", "/payload: missing properties: 'endpoint_url'"} {
			if got.Status != Fail || !strings.Contains(got.Reason, want) {
				t.Errorf("got %s %q, want a failure naming %q", got.Status, got.Reason, want)
			}
		}
		if res := result(t, rep, "player.join"); res.Status != Skip || !strings.Contains(res.Reason, "registration was refused") {
			t.Errorf("player.join: got %s %q", res.Status, res.Reason)
		}
	})
}

// A player started against `league conform referee` is told it is in the wrong run.
func TestWrongRoleOnFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		opt := defaults("tic_tac_toe")
		p := &fakeAgent{id: "p1", kind: "player"}
		opt.Ready = func(url string) { p.start(t, n, url) }
		s := memSession(t, n, opt)
		rep := NewReport("referee", "tic_tac_toe")
		if err := s.runReferee(context.Background(), rep); err != nil {
			t.Fatal(err)
		}
		got := result(t, rep, "referee.register.schema")
		if got.Status != Fail || !strings.Contains(got.Reason, "but player:p1 registered for the other role") || !strings.Contains(got.Hint, "league conform player") {
			t.Errorf("got %s %q (hint %q)", got.Status, got.Reason, got.Hint)
		}
	})
}

// An outbound player is given an endpoint on the tool's relay in the registration answer;
// one that then never polls the relay fails its endpoint check, with the relay's hint.
func TestOutboundNeverPollsOnFakeTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := newMemNet()
		opt := defaults("tic_tac_toe")
		answer := make(chan string, 1)
		opt.Ready = func(url string) {
			body, _, err := request(message(protocol.RegisterPlayerRequest, "player:p1", map[string]any{"player_id": "p1", "features": []string{protocol.FeatureOutbound}}))
			if err != nil {
				t.Fatal(err)
			}
			// Ends once the tool answers.
			go func() {
				res, err := (&http.Client{Transport: n}).Post(url, "application/json", bytes.NewReader(body))
				if err != nil {
					t.Errorf("register: %v", err)
					return
				}
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				answer <- string(raw)
			}()
		}
		s := memSession(t, n, opt)
		rep := NewReport("player", "tic_tac_toe")
		if err := s.runPlayer(context.Background(), rep); err != nil {
			t.Fatal(err)
		}
		if got := <-answer; !strings.Contains(got, `"endpoint_url":"http://mem1.test/relay/player/p1/mcp"`) || !strings.Contains(got, `"relay"`) {
			t.Errorf("registration answer %s: want the relay endpoint and feature relay", got)
		}
		for _, id := range []string{"player.register.endpoint", "player.outbound.register"} {
			if got := result(t, rep, id); got.Status == Pass || !strings.Contains(got.Reason, "did not poll the relay with its token within 5s") || !strings.Contains(got.Hint, "/relay/poll") {
				t.Errorf("%s: got %s %q (hint %q)", id, got.Status, got.Reason, got.Hint)
			}
		}
	})
}
