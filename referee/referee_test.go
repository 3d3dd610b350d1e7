package referee

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/player"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// fakeLeague is a minimal League Manager: it registers agents, announces features and
// records results.
type fakeLeague struct {
	features []string
	// heartbeatMS, when set, is the heartbeat_interval_ms of referee registrations.
	heartbeatMS int
	srv         *httpserve.Server

	mu         sync.Mutex
	tokens     map[string]string // sender -> token
	endpoints  map[string]string
	results    []*protocol.Message
	got        chan struct{}
	heartbeats []*protocol.Message
	beat       chan struct{}
	// received counts every request by message type; registrations keeps the payloads
	// of referee registrations.
	received      map[string]int
	registrations []map[string]any
	// regConversations are the conversation ids of the referee registrations;
	// refusals, when set, answer the first ones, one each.
	regConversations []string
	refusals         []protocol.Reason
}

func startFakeLeague(t *testing.T, features []string) *fakeLeague {
	t.Helper()
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLeague{features: features, tokens: map[string]string{}, endpoints: map[string]string{}, got: make(chan struct{}, 16),
		beat: make(chan struct{}, 1024), received: map[string]int{}}
	f.srv, err = httpserve.Start("127.0.0.1:0", protocol.NewServer(protocol.HandlerFunc(f.handle), v, nil, zerolog.Nop()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.srv.Shutdown(context.Background()) })
	return f
}

func (f *fakeLeague) handle(_ context.Context, m *protocol.Message) (*protocol.Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := m.Envelope
	var p map[string]any
	_ = m.Decode(&p)
	f.received[e.MessageType]++
	if e.MessageType == protocol.RegisterRefereeRequest {
		f.registrations = append(f.registrations, p)
		f.regConversations = append(f.regConversations, e.ConversationID)
		if n := len(f.registrations); n <= len(f.refusals) {
			return nil, protocol.Errorf(f.refusals[n-1], "refused, for now")
		}
	}
	var out *protocol.Message
	var err error
	switch e.MessageType {
	case protocol.RegisterRefereeRequest, protocol.RegisterPlayerRequest:
		tok := uuid.NewString()
		f.tokens[e.Sender] = tok
		f.endpoints[e.Sender] = p["endpoint_url"].(string)
		typ := protocol.RegisterRefereeResponse
		if e.MessageType == protocol.RegisterPlayerRequest {
			typ = protocol.RegisterPlayerResponse
		}
		ans := map[string]any{"status": "registered", "auth_token": tok, "league_id": "league-1"}
		if f.features != nil {
			ans["features"] = f.features
		}
		if f.heartbeatMS > 0 && typ == protocol.RegisterRefereeResponse {
			ans["heartbeat_interval_ms"], ans["lease_ms"] = f.heartbeatMS, 3*f.heartbeatMS
		}
		out, err = m.Reply(typ, protocol.SenderLeagueManager, ans)
	case protocol.AgentReadyRequest:
		_, id := protocol.ParseSender(e.Sender)
		kind, _ := protocol.ParseSender(e.Sender)
		out, err = m.Reply(protocol.AgentReadyResponse, protocol.SenderLeagueManager, map[string]string{"status": "acknowledged", "agent_id": id, "agent_type": kind, "agent_state": "ACTIVE"})
	case protocol.MatchResultReport:
		if e.AuthToken != f.tokens[e.Sender] {
			return nil, protocol.Errorf(protocol.ReasonUnauthorized, "bad token")
		}
		f.results = append(f.results, m)
		f.got <- struct{}{}
		out, err = m.Reply(protocol.MatchResultAck, protocol.SenderLeagueManager, map[string]string{"status": "acknowledged", "match_id": e.MatchID})
	case protocol.HeartbeatRequest:
		if e.AuthToken != f.tokens[e.Sender] {
			return nil, protocol.Errorf(protocol.ReasonUnauthorized, "bad token")
		}
		f.heartbeats = append(f.heartbeats, m)
		select {
		case f.beat <- struct{}{}:
		default:
		}
		out, err = m.Reply(protocol.HeartbeatResponse, protocol.SenderLeagueManager, map[string]any{"status": "acknowledged", "lease_ms": 3 * f.heartbeatMS})
	default:
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "no")
	}
	if out != nil {
		out.Envelope.LeagueID = "league-1"
	}
	return out, err
}

func (f *fakeLeague) waitRegistered(t *testing.T, senders ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		f.mu.Lock()
		n := 0
		for _, s := range senders {
			if f.tokens[s] != "" {
				n++
			}
		}
		f.mu.Unlock()
		if n == len(senders) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%v did not register", senders)
}

// leagueWithAgents starts a fake league, a real referee and two real players.
func leagueWithAgents(t *testing.T, features []string, maxMatches int) (*fakeLeague, *Referee) {
	t.Helper()
	a := startAgents(t, agents{features: features, referee: func(c *Config) { c.MaxMatches = maxMatches }})
	return a.league, a.ref
}

// agents configures startAgents; nil funcs keep the defaults.
type agents struct {
	features    []string
	heartbeatMS int
	referee     func(*Config)
	player      func(*player.Config)
}

// started is what startAgents started; done receives the referee's Run result.
type started struct {
	league *fakeLeague
	ref    *Referee
	done   chan error
}

// agentDeadline is the join and move deadline of the matches between real agents: a hang
// guard.
const agentDeadline = 10 * time.Second

// startAgents starts a fake league, a real referee and two real players p1 and p2; they
// stop when the test ends.
func startAgents(t *testing.T, opt agents) started {
	t.Helper()
	f := startFakeLeague(t, opt.features)
	f.heartbeatMS = opt.heartbeatMS
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	// The deadlines are hang guards: the real players answer at once, and a loaded
	// machine must not make them miss one (tests of deadlines run on fake time).
	cfg := Config{ID: "ref1", Addr: "127.0.0.1:0", LeagueURL: f.srv.URL(), MaxMatches: 1, Stdout: io.Discard,
		MoveTimeout: agentDeadline, JoinTimeout: agentDeadline, Penalties: protocol.Penalties{MoveWarnings: 1, ForcedMoves: 1}}
	if opt.referee != nil {
		opt.referee(&cfg)
	}
	ref, err := New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	wg.Go(func() { done <- ref.Run(ctx) })
	for _, id := range []string{"p1", "p2"} {
		pc := player.Config{ID: id, Addr: "127.0.0.1:0", LeagueURL: f.srv.URL(), Strategy: "random", Seed: 1, Stdout: io.Discard}
		if opt.player != nil {
			opt.player(&pc)
		}
		p, err := player.New(pc, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := p.Run(ctx); err != nil {
				t.Errorf("player: %v", err)
			}
		})
	}
	f.waitRegistered(t, "referee:ref1", "player:p1", "player:p2")
	return started{league: f, ref: ref, done: done}
}

// waitRun returns the referee's Run result, failing the test after 5 s.
func (s started) waitRun(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("referee Run did not return")
		return nil
	}
}

// shutdown sends LEAGUE_SHUTDOWN to the referee, signed with its own token.
func (f *fakeLeague) shutdown(t *testing.T) {
	t.Helper()
	m, err := protocol.NewMessage(protocol.LeagueShutdown, protocol.SenderLeagueManager, map[string]any{"reason": "league completed", "league_id": "league-1"})
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	m.Envelope.AuthToken = f.tokens["referee:ref1"]
	f.mu.Unlock()
	ans, err := f.send(t, m)
	if err != nil {
		t.Fatalf("LEAGUE_SHUTDOWN: %v", err)
	}
	if ans.Envelope.MessageType != protocol.LeagueShutdownAck {
		t.Fatalf("LEAGUE_SHUTDOWN answered with %s", ans.Envelope.MessageType)
	}
}

func (f *fakeLeague) assignment(matchID string, signed, credentials bool) *protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := map[string]any{
		"match_id": matchID, "round_id": "round-1", "game_type": game.TypeTicTacToe, "players": []string{"p1", "p2"},
		"player_endpoints": map[string]string{"p1": f.endpoints["player:p1"], "p2": f.endpoints["player:p2"]},
		"match_seed":       5,
	}
	if credentials {
		p["match_credentials"] = map[string]string{
			"p1": protocol.MatchCredential(f.tokens["player:p1"], matchID),
			"p2": protocol.MatchCredential(f.tokens["player:p2"], matchID),
		}
	}
	m, _ := protocol.NewMessage(protocol.MatchAssignment, protocol.SenderLeagueManager, p)
	m.Envelope.MatchID, m.Envelope.RoundID, m.Envelope.GameType = matchID, "round-1", game.TypeTicTacToe
	if signed {
		m.Envelope.AuthToken = f.tokens["referee:ref1"]
	}
	return m
}

func (f *fakeLeague) send(t *testing.T, m *protocol.Message) (*protocol.Message, error) {
	t.Helper()
	v, _ := protocol.NewValidator()
	c := protocol.NewClient(v, nil)
	defer c.Close()
	f.mu.Lock()
	url := f.endpoints["referee:ref1"]
	f.mu.Unlock()
	return c.Call(context.Background(), url, m, protocol.CallOptions{Timeout: agentDeadline})
}

func (f *fakeLeague) waitResults(t *testing.T, n int) []*protocol.Message {
	t.Helper()
	for range n {
		select {
		case <-f.got:
		case <-time.After(20 * time.Second):
			t.Fatalf("no result within 20 s")
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*protocol.Message(nil), f.results...)
}

func TestRefereeRequiresAnnouncedProtections(t *testing.T) {
	f, _ := leagueWithAgents(t, []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials}, 1)
	cases := []struct {
		name                string
		signed, credentials bool
		forge               func(m *protocol.Message)
		want                protocol.Reason
	}{
		{"unsigned", false, true, nil, protocol.ReasonUnauthorized},
		{"wrong token", true, true, func(m *protocol.Message) { m.Envelope.AuthToken = uuid.NewString() }, protocol.ReasonUnauthorized},
		{"no credentials", true, false, nil, protocol.ReasonUnauthorized},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := f.assignment(fmt.Sprintf("m-bad-%d", i), tc.signed, tc.credentials)
			if tc.forge != nil {
				tc.forge(m)
			}
			_, err := f.send(t, m)
			if got := protocol.ReasonOf(err); got != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
	// A valid assignment runs a whole match between the real players.
	ack, err := f.send(t, f.assignment("m-ok", true, true))
	if err != nil {
		t.Fatal(err)
	}
	if ack.Envelope.MessageType != protocol.MatchAssignmentAck || ack.Envelope.MatchID != "m-ok" {
		t.Errorf("got %+v", ack.Envelope)
	}
	res := f.waitResults(t, 1)
	var p struct {
		Players  []string              `json:"players"`
		Outcome  map[string]string     `json:"outcome"`
		Metadata protocol.GameMetadata `json:"game_metadata"`
	}
	if err := res[0].Decode(&p); err != nil {
		t.Fatal(err)
	}
	if p.Metadata.Termination != protocol.TerminationNormal || p.Metadata.MatchSeed == nil || *p.Metadata.MatchSeed != 5 || len(p.Metadata.Moves) < 5 || p.Metadata.FinalState == nil {
		t.Errorf("got metadata %+v", p.Metadata)
	}
	if len(p.Outcome) != 2 {
		t.Errorf("got outcome %v", p.Outcome)
	}
}

// A League Manager written from the seeds alone announces no features (here it still
// offers a heartbeat interval): the referee announces its own, then speaks plain
// league.v2: no heartbeat, no move event, no signed or credentialed assignment needed.
func TestRefereeWorksWithALeagueThatAnnouncesNothing(t *testing.T) {
	a := startAgents(t, agents{heartbeatMS: 10})
	f := a.league
	ack, err := f.send(t, f.assignment("m-python", false, false))
	if err != nil {
		t.Fatalf("unprotected assignment refused: %v", err)
	}
	if ack.Envelope.AuthToken != "" {
		t.Errorf("the referee handed its token to a sender that did not show it")
	}
	res := f.waitResults(t, 1)
	var p struct {
		Metadata protocol.GameMetadata `json:"game_metadata"`
	}
	_ = res[0].Decode(&p)
	if p.Metadata.Termination != protocol.TerminationNormal {
		t.Errorf("got termination %s (violations %+v)", p.Metadata.Termination, p.Metadata.Violations)
	}
	time.Sleep(50 * time.Millisecond) // five heartbeat intervals
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, typ := range []string{protocol.HeartbeatRequest, protocol.MoveEvent} {
		if n := f.received[typ]; n != 0 {
			t.Errorf("got %d %s, want none", n, typ)
		}
	}
	if len(f.registrations) != 1 || fmt.Sprint(f.registrations[0]["features"]) != fmt.Sprint(Features) {
		t.Errorf("registrations %v, want one announcing %v", f.registrations, Features)
	}
}

func TestRefereeCapacityQueueAndRetriedAssignments(t *testing.T) {
	a := startAgents(t, agents{
		features: []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials},
		referee:  func(c *Config) { c.MaxQueued = 1 },
	})
	f, ref := a.league, a.ref
	// Occupy the only slot as if match m-1 were running.
	ref.mu.Lock()
	ref.held["m-1"] = &heldMatch{a: protocol.Assignment{MatchID: "m-1"}, phase: protocol.PhasePlaying, step: 2}
	ref.playing = 1
	ref.mu.Unlock()
	// The same assignment again (a retry) is acknowledged without starting a second match.
	if _, err := f.send(t, f.assignment("m-1", true, true)); err != nil {
		t.Fatalf("retried assignment refused: %v", err)
	}
	// Beyond the slot, an assignment waits in the queue; its retry is not queued twice.
	for range 2 {
		if _, err := f.send(t, f.assignment("m-2", true, true)); err != nil {
			t.Fatalf("assignment beyond the slot refused: %v", err)
		}
	}
	_, err := f.send(t, f.assignment("m-3", true, true))
	var perr *protocol.Error
	if !errors.As(err, &perr) || perr.Data.Reason != protocol.ReasonBusy || perr.Data.Details != "referee ref1 runs 1 of 1 matches, 1 of 1 queued" {
		t.Errorf("got %v, want BUSY naming the full slot and queue", err)
	}
	want := []protocol.MatchProgress{{MatchID: "m-1", Step: 2, Phase: protocol.PhasePlaying}, {MatchID: "m-2", Phase: protocol.PhaseQueued}}
	if st := ref.Status(); !slices.Equal(st.ActiveMatches, []string{"m-1"}) || !slices.Equal(st.Matches, want) || st.State != "ACTIVE" {
		t.Errorf("got status %+v, want m-1 active and m-2 queued", st)
	}
	m := f.assignment("m-4", true, true)
	var p map[string]any
	_ = json.Unmarshal(m.Payload, &p)
	p["game_type"] = "no_such_game"
	m.Payload, _ = json.Marshal(p)
	m.Envelope.GameType = "no_such_game"
	if _, err := f.send(t, m); protocol.ReasonOf(err) != protocol.ReasonUnsupportedGame {
		t.Errorf("got %v, want UNSUPPORTED_GAME", err)
	}
	// The slot frees: the queued match runs between the real players and is reported.
	ref.mu.Lock()
	delete(ref.held, "m-1")
	ref.playing--
	ref.startQueuedLocked(t.Context())
	ref.mu.Unlock()
	res := f.waitResults(t, 1)
	if len(res) != 1 || res[0].Envelope.MatchID != "m-2" {
		t.Fatalf("got %d results, want the one of m-2", len(res))
	}
	// The acknowledgement reaches the referee just after the fake league recorded the report.
	for deadline := time.Now().Add(5 * time.Second); ref.Status().ResultsReported != 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if st := ref.Status(); len(st.Matches) != 0 || st.State != "IDLE" || st.MatchesCompleted != 1 {
		t.Errorf("got status %+v after the report, want an idle referee holding nothing", st)
	}
}

// A League Manager that cannot write for a while (a full disk) or fails refuses the
// registration with STORAGE_UNAVAILABLE or INTERNAL: Run sends it again over HTTP, the
// same call, and serves once registered instead of exiting. TestRegistrationOutlastsTransientRefusals
// follows the backoff and the deadline on fake time.
func TestRunRegistersAfterTransientRefusals(t *testing.T) {
	f := startFakeLeague(t, nil)
	f.refusals = []protocol.Reason{protocol.ReasonStorageUnavailable, protocol.ReasonInternal, protocol.ReasonStorageUnavailable}
	ref, err := New(Config{ID: "ref1", Addr: "127.0.0.1:0", LeagueURL: f.srv.URL(), Stdout: io.Discard}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ref.Run(ctx) }()
	// The referee has read the answer (the fake league's token is set a little before).
	select {
	case <-ref.registered:
	case err := <-done:
		t.Fatalf("Run returned %v before the referee registered", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the referee did not register")
	}
	f.mu.Lock()
	convs := slices.Clone(f.regConversations)
	f.mu.Unlock()
	if len(convs) != 4 {
		t.Errorf("the League Manager saw %d registrations, want 4 (3 refusals, then success)", len(convs))
	}
	for i, c := range convs {
		if c != convs[0] {
			t.Errorf("registration %d in conversation %s, want the first one's, %s", i, c, convs[0])
		}
	}
	select {
	case err := <-done:
		t.Fatalf("Run returned %v once registered", err)
	default:
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}
