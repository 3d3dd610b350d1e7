package referee

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// fakePlayer decides how a scripted player answers one request.
type fakePlayer func(ctx context.Context, m *protocol.Message, call int) (*protocol.Message, error)

// fakeCaller routes calls to scripted players by URL and keeps every request.
type fakeCaller struct {
	mu       sync.Mutex
	players  map[string]fakePlayer
	calls    map[string]int
	requests []*protocol.Message
	v        *protocol.Validator
	t        *testing.T
}

func newFakeCaller(t *testing.T, players map[string]fakePlayer) *fakeCaller {
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	return &fakeCaller{players: players, calls: map[string]int{}, v: v, t: t}
}

func (f *fakeCaller) Call(ctx context.Context, url string, m *protocol.Message, opt protocol.CallOptions) (*protocol.Message, error) {
	// Every message the referee sends must satisfy its schema.
	if err := f.v.ValidateMessage(m); err != nil {
		f.t.Errorf("referee sent an invalid message: %v", err)
	}
	f.mu.Lock()
	f.requests = append(f.requests, m)
	n := f.calls[url]
	f.calls[url]++
	p := f.players[url]
	f.mu.Unlock()
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	return p(ctx, m, n)
}

// sent lists the requests of messageType ("" for any) sent with auth token to ("" for any).
func (f *fakeCaller) sent(messageType, to string) []*protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*protocol.Message
	for _, m := range f.requests {
		if (messageType == "" || m.Envelope.MessageType == messageType) && (to == "" || m.Envelope.AuthToken == to) {
			out = append(out, m)
		}
	}
	return out
}

func reply(m *protocol.Message, id, typ string, payload any) (*protocol.Message, error) {
	out, err := m.Reply(typ, protocol.PlayerSender(id), payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.MatchID = m.Envelope.MatchID
	out.Envelope.AuthToken = m.Envelope.AuthToken
	return out, nil
}

// scripted answers invitations and game-over, and moves with move(context) or blocks.
func scripted(g game.Game, id string, move func(ctx context.Context, m *protocol.Message, step map[string]any, call int) (any, error)) fakePlayer {
	return func(ctx context.Context, m *protocol.Message, call int) (*protocol.Message, error) {
		switch m.Envelope.MessageType {
		case protocol.GameInvitation:
			return reply(m, id, protocol.GameJoinAck, map[string]string{"status": "accepted", "match_id": m.Envelope.MatchID})
		case protocol.GameOver:
			return reply(m, id, protocol.GameOverAck, map[string]string{"status": "acknowledged"})
		}
		var p map[string]any
		if err := m.Decode(&p); err != nil {
			return nil, err
		}
		mv, err := move(ctx, m, p, call)
		if err != nil {
			return nil, err
		}
		return reply(m, id, protocol.MoveResponse, map[string]any{"move_payload": mv, "step_number": p["step_number"]})
	}
}

// firstLegal plays the first legal move the context allows.
func firstLegal(g game.Game) func(context.Context, *protocol.Message, map[string]any, int) (any, error) {
	return func(_ context.Context, _ *protocol.Message, p map[string]any, _ int) (any, error) {
		raw, _ := json.Marshal(p["step_context"])
		moves, err := g.LegalMoves(raw)
		if err != nil {
			return nil, err
		}
		return json.RawMessage(moves[0]), nil
	}
}

// silent never answers a move request: it waits for the caller's deadline.
func silent(ctx context.Context, _ *protocol.Message, _ map[string]any, _ int) (any, error) {
	<-ctx.Done()
	return nil, fmt.Errorf("request move: %w", ctx.Err())
}

func newRunner(t *testing.T, gameType string, caller Caller) *MatchRunner {
	g, err := game.Default().New(gameType, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &MatchRunner{
		RefereeID: "ref1", LeagueID: "league-1", Game: g, Caller: caller, Log: zerolog.Nop(),
		JoinTimeout: 100 * time.Millisecond, MoveTimeout: 200 * time.Millisecond,
		Penalties: protocol.Penalties{MoveWarnings: 1, ForcedMoves: 1},
		A: protocol.Assignment{
			MatchID: "r01-m01-abc", RoundID: "round-1", GameType: gameType, Players: []string{"p1", "p2"},
			PlayerEndpoints:  map[string]string{"p1": "http://p1", "p2": "http://p2"},
			MatchSeed:        42,
			MatchCredentials: map[string]string{"p1": "c1", "p2": "c2"},
			Scoring:          &protocol.Scoring{Win: 3, Draw: 1, Loss: 0},
		},
	}
}

func ttt(t *testing.T) game.Game {
	g, err := game.Default().New(game.TypeTicTacToe, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestNormalMatchReplaysThroughTheRules(t *testing.T) {
	g := ttt(t)
	fc := newFakeCaller(t, map[string]fakePlayer{
		"http://p1": scripted(g, "p1", firstLegal(g)),
		"http://p2": scripted(g, "p2", firstLegal(g)),
	})
	rep, err := newRunner(t, game.TypeTicTacToe, fc).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Both playing the first empty cell: X fills row 0 col 0, 2, then row 1... X wins on the diagonal? Re-play to know.
	state := g.NewState(42)
	for _, mv := range rep.Metadata.Moves {
		if mv.Outcome != protocol.MoveSuccess {
			t.Fatalf("move %+v not a success", mv)
		}
		next, err := state.Apply([]json.RawMessage{mv.Move})
		if err != nil {
			t.Fatal(err)
		}
		state = next
	}
	if !state.Terminal() {
		t.Fatal("re-played moves do not reach a terminal state")
	}
	want := state.Outcomes()
	if rep.Outcome["p1"] != string(want[0]) || rep.Outcome["p2"] != string(want[1]) {
		t.Errorf("got outcome %v, want %v", rep.Outcome, want)
	}
	if rep.Metadata.Termination != protocol.TerminationNormal || rep.Metadata.MatchSeed == nil || *rep.Metadata.MatchSeed != 42 || len(rep.Metadata.Violations) != 0 {
		t.Errorf("got metadata %+v", rep.Metadata)
	}
	for _, cred := range []string{"c1", "c2"} {
		if n := len(fc.sent(protocol.GameInvitation, cred)); n != 1 {
			t.Errorf("got %d invitations with credential %s, want 1", n, cred)
		}
		over := fc.sent(protocol.GameOver, cred)
		if len(over) != 1 {
			t.Fatalf("got %d GAME_OVER with credential %s, want 1", len(over), cred)
		}
	}
}

func TestMoveRequestsCarryStepHashDeadlineAndLastResult(t *testing.T) {
	g := ttt(t)
	fc := newFakeCaller(t, map[string]fakePlayer{
		"http://p1": scripted(g, "p1", firstLegal(g)),
		"http://p2": scripted(g, "p2", firstLegal(g)),
	})
	if _, err := newRunner(t, game.TypeTicTacToe, fc).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := fc.sent(protocol.RequestMove, "c1")
	if len(reqs) < 2 {
		t.Fatalf("got %d requests to p1", len(reqs))
	}
	for i, m := range reqs {
		var p struct {
			Step       int            `json:"step_number"`
			Ctx        map[string]any `json:"step_context"`
			Hash       string         `json:"context_hash"`
			DeadlineMS int            `json:"deadline_ms"`
			Last       map[string]any `json:"last_result"`
		}
		if err := m.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Hash != contextHash(marshal(t, p.Ctx)) || p.DeadlineMS != 200 {
			t.Errorf("request %d: got hash %s deadline %d", i, p.Hash, p.DeadlineMS)
		}
		if i == 0 && p.Last != nil {
			t.Errorf("first request has last_result %v", p.Last)
		}
		if i > 0 && p.Last["outcome"] != string(protocol.MoveSuccess) {
			t.Errorf("request %d: got last_result %v, want SUCCESS", i, p.Last)
		}
	}
}

func TestTimeoutLadderWarningForcedThenLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		fc := newFakeCaller(t, map[string]fakePlayer{
			"http://p1": scripted(g, "p1", silent),
			"http://p2": scripted(g, "p2", firstLegal(g)),
		})
		start := time.Now()
		rep, err := newRunner(t, game.TypeTicTacToe, fc).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// Three timeouts of 200 ms: a warning, a forced move, then the technical loss.
		if got := time.Since(start); got != 600*time.Millisecond {
			t.Errorf("match took %v of fake time, want 600ms", got)
		}
		if rep.Outcome["p1"] != "loss" || rep.Outcome["p2"] != "win" || rep.Points["p2"] != 3 || rep.Points["p1"] != 0 {
			t.Errorf("got %v %v", rep.Outcome, rep.Points)
		}
		if rep.Metadata.Termination != protocol.TerminationTimeout || rep.Metadata.Loser != "p1" {
			t.Errorf("got termination %s loser %s", rep.Metadata.Termination, rep.Metadata.Loser)
		}
		var actions []string
		for _, v := range rep.Metadata.Violations {
			actions = append(actions, string(v.Kind)+"/"+string(v.Action))
		}
		want := []string{"timeout/warning", "timeout/forced_move", "timeout/technical_loss"}
		if fmt.Sprint(actions) != fmt.Sprint(want) {
			t.Errorf("got violations %v, want %v", actions, want)
		}
		if rep.Metadata.Moves[0].Outcome != protocol.MoveForced {
			t.Errorf("got first move %+v, want FORCED", rep.Metadata.Moves[0])
		}
		reqs := fc.sent(protocol.RequestMove, "c1")
		if len(reqs) != 3 {
			t.Fatalf("got %d requests to p1, want 3", len(reqs))
		}
		var second, third struct {
			Step    int            `json:"step_number"`
			Warning string         `json:"warning"`
			Last    map[string]any `json:"last_result"`
		}
		_ = reqs[1].Decode(&second)
		_ = reqs[2].Decode(&third)
		if second.Step != 1 || second.Warning == "" || second.Last["outcome"] != string(protocol.MoveTimeout) {
			t.Errorf("re-sent request: got %+v", second)
		}
		if third.Step != 3 || third.Last["outcome"] != string(protocol.MoveForced) {
			t.Errorf("request after the forced move: got %+v", third)
		}
	})
}

func TestUnreachablePlayerCountsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		refused := func(context.Context, *protocol.Message, map[string]any, int) (any, error) {
			return nil, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
		}
		fc := newFakeCaller(t, map[string]fakePlayer{
			"http://p1": scripted(g, "p1", firstLegal(g)),
			"http://p2": scripted(g, "p2", refused),
		})
		start := time.Now()
		rep, err := newRunner(t, game.TypeTicTacToe, fc).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("refused connections took %v, want no waiting", got)
		}
		if rep.Outcome["p2"] != "loss" || rep.Metadata.Violations[0].Kind != "unreachable" {
			t.Errorf("got %v %+v", rep.Outcome, rep.Metadata.Violations)
		}
	})
}

func TestIllegalAndMalformedMovesLose(t *testing.T) {
	cases := []struct {
		name string
		move any
		kind string
	}{
		{"occupied cell", map[string]int{"row": 0, "col": 0}, "invalid_move"},
		{"off the board", map[string]int{"row": 3, "col": 0}, "invalid_move"},
		{"not an object", "centre", "malformed_move"},
		{"missing col", map[string]int{"row": 1}, "malformed_move"},
		{"null", nil, "malformed_move"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := ttt(t)
			bad := func(ctx context.Context, m *protocol.Message, p map[string]any, call int) (any, error) {
				if call <= 1 { // invitation, then the first move is fine
					return firstLegal(g)(ctx, m, p, call)
				}
				return tc.move, nil
			}
			fc := newFakeCaller(t, map[string]fakePlayer{
				"http://p1": scripted(g, "p1", bad),
				"http://p2": scripted(g, "p2", firstLegal(g)),
			})
			r := newRunner(t, game.TypeTicTacToe, fc)
			rep, err := r.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Outcome["p1"] != "loss" || rep.Outcome["p2"] != "win" || rep.Metadata.Termination != protocol.TerminationIllegalMove {
				t.Errorf("got %v termination %s", rep.Outcome, rep.Metadata.Termination)
			}
			last := rep.Metadata.Violations[len(rep.Metadata.Violations)-1]
			if string(last.Kind) != tc.kind || last.Action != "technical_loss" || last.Player != "p1" {
				t.Errorf("got violation %+v, want %s", last, tc.kind)
			}
		})
	}
}

func TestForcedPolicyReplacesIllegalMove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		fc := newFakeCaller(t, map[string]fakePlayer{
			"http://p1": scripted(g, "p1", func(context.Context, *protocol.Message, map[string]any, int) (any, error) {
				return map[string]int{"row": 9, "col": 9}, nil
			}),
			"http://p2": scripted(g, "p2", firstLegal(g)),
		})
		r := newRunner(t, game.TypeTicTacToe, fc)
		r.Policy = protocol.PolicyForced
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome["p1"] != "loss" || rep.Metadata.Termination != protocol.TerminationTimeout {
			t.Errorf("got %v %s", rep.Outcome, rep.Metadata.Termination)
		}
		if rep.Metadata.Moves[0].Outcome != protocol.MoveForced || rep.Metadata.Violations[0].Kind != "invalid_move" {
			t.Errorf("got moves %+v violations %+v", rep.Metadata.Moves, rep.Metadata.Violations)
		}
	})
}

func TestStaleAnswerIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		stale := func(_ context.Context, m *protocol.Message, call int) (*protocol.Message, error) {
			switch m.Envelope.MessageType {
			case protocol.GameInvitation:
				return reply(m, "p1", protocol.GameJoinAck, map[string]string{"status": "accepted", "match_id": m.Envelope.MatchID})
			case protocol.GameOver:
				return reply(m, "p1", protocol.GameOverAck, map[string]string{"status": "acknowledged"})
			}
			return reply(m, "p1", protocol.MoveResponse, map[string]any{"move_payload": map[string]int{"row": 1, "col": 1}, "step_number": 99})
		}
		fc := newFakeCaller(t, map[string]fakePlayer{
			"http://p1": stale,
			"http://p2": scripted(g, "p2", firstLegal(g)),
		})
		rep, err := newRunner(t, game.TypeTicTacToe, fc).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Metadata.Violations[0].Kind != "stale_answer" || rep.Outcome["p1"] != "loss" {
			t.Errorf("got %+v %v", rep.Metadata.Violations, rep.Outcome)
		}
	})
}

func TestWrongCredentialInAnswerIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		forged := func(ctx context.Context, m *protocol.Message, call int) (*protocol.Message, error) {
			ans, err := scripted(g, "p1", firstLegal(g))(ctx, m, call)
			if ans != nil && m.Envelope.MessageType == protocol.RequestMove {
				ans.Envelope.AuthToken = "forged"
			}
			return ans, err
		}
		fc := newFakeCaller(t, map[string]fakePlayer{"http://p1": forged, "http://p2": scripted(g, "p2", firstLegal(g))})
		rep, err := newRunner(t, game.TypeTicTacToe, fc).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome["p1"] != "loss" || rep.Metadata.Violations[0].Kind != "stale_answer" {
			t.Errorf("got %v %+v", rep.Outcome, rep.Metadata.Violations)
		}
	})
}

func TestCheckAnswerTokens(t *testing.T) {
	const matchID = "r01-m01-abc"
	token := "player-token-p1"
	s := &seat{id: "p1", credential: protocol.MatchCredential(token, matchID)}
	for _, tc := range []struct {
		name, token string
		ok          bool
	}{
		{"match credential", s.credential, true},
		{"player's own token", token, true},
		{"no token", "", true},
		{"wrong token", "some-other-token", false},
		{"another player's token", "player-token-p2", false},
		{"own token's credential for another match", protocol.MatchCredential(token, "r01-m02-xyz"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ans, err := protocol.NewMessage(protocol.MoveResponse, protocol.PlayerSender("p1"), map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			ans.Envelope.MatchID, ans.Envelope.AuthToken = matchID, tc.token
			err = checkAnswer(s, ans, matchID)
			if got := err == nil; got != tc.ok {
				t.Errorf("got error %v, want accepted %v", err, tc.ok)
			}
		})
	}
	// A referee given no credential has nothing to check a token against.
	ans, err := protocol.NewMessage(protocol.MoveResponse, protocol.PlayerSender("p1"), map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	ans.Envelope.AuthToken = "anything"
	if err := checkAnswer(&seat{id: "p1"}, ans, matchID); err != nil {
		t.Errorf("without a credential: got %v, want accepted", err)
	}
}

func TestPlayerAnsweringWithItsOwnTokenPlays(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		tokens := map[string]string{"p1": "token-of-p1", "p2": "token-of-p2"}
		// Seed 004 §8.2: the player puts its own league token in every answer.
		ownToken := func(id string) fakePlayer {
			return func(ctx context.Context, m *protocol.Message, call int) (*protocol.Message, error) {
				ans, err := scripted(g, id, firstLegal(g))(ctx, m, call)
				if ans != nil {
					ans.Envelope.AuthToken = tokens[id]
				}
				return ans, err
			}
		}
		fc := newFakeCaller(t, map[string]fakePlayer{"http://p1": ownToken("p1"), "http://p2": ownToken("p2")})
		r := newRunner(t, game.TypeTicTacToe, fc)
		r.A.MatchCredentials = map[string]string{}
		for id, tok := range tokens {
			r.A.MatchCredentials[id] = protocol.MatchCredential(tok, r.A.MatchID)
		}
		rep, err := r.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Metadata.Termination != protocol.TerminationNormal || len(rep.Metadata.Violations) != 0 {
			t.Errorf("got termination %s, violations %+v", rep.Metadata.Termination, rep.Metadata.Violations)
		}
	})
}

func TestNoShows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		absent := func(ctx context.Context, _ *protocol.Message, _ int) (*protocol.Message, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		fc := newFakeCaller(t, map[string]fakePlayer{"http://p1": absent, "http://p2": scripted(g, "p2", firstLegal(g))})
		start := time.Now()
		rep, err := newRunner(t, game.TypeTicTacToe, fc).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome["p1"] != "loss" || rep.Outcome["p2"] != "win" || rep.Metadata.Termination != protocol.TerminationNoShow {
			t.Errorf("got %v %s", rep.Outcome, rep.Metadata.Termination)
		}
		// The join deadline (100 ms) and the GAME_OVER attempt to the absent player (100 ms).
		if got := time.Since(start); got != 200*time.Millisecond {
			t.Errorf("took %v, want 200ms", got)
		}

		fc = newFakeCaller(t, map[string]fakePlayer{"http://p1": absent, "http://p2": absent})
		rep, err = newRunner(t, game.TypeTicTacToe, fc).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if rep.Outcome["p1"] != "loss" || rep.Outcome["p2"] != "loss" || rep.Points["p1"] != 0 || rep.Points["p2"] != 0 || rep.Metadata.Termination != protocol.TerminationDoubleNoShow {
			t.Errorf("double no-show: got %v %v %s", rep.Outcome, rep.Points, rep.Metadata.Termination)
		}
	})
}

func TestSimultaneousStepsShareOneSnapshot(t *testing.T) {
	g, err := game.Default().New("rock_paper_scissors", nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[int][]string{} // step -> context hashes shown
	record := func(id string, choice string) func(context.Context, *protocol.Message, map[string]any, int) (any, error) {
		return func(_ context.Context, _ *protocol.Message, p map[string]any, _ int) (any, error) {
			step := int(p["step_number"].(float64))
			mu.Lock()
			seen[step] = append(seen[step], id)
			mu.Unlock()
			return map[string]string{"choice": choice}, nil
		}
	}
	fc := newFakeCaller(t, map[string]fakePlayer{
		"http://p1": scripted(g, "p1", record("p1", "rock")),
		"http://p2": scripted(g, "p2", record("p2", "scissors")),
	})
	r := newRunner(t, "rock_paper_scissors", fc)
	r.Game = g
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome["p1"] != "win" || rep.Outcome["p2"] != "loss" {
		t.Errorf("got %v", rep.Outcome)
	}
	for step, ids := range seen {
		if len(ids) != 2 {
			t.Errorf("step %d asked %v, want both players", step, ids)
		}
	}
	// Each step records both moves, applied together.
	if len(rep.Metadata.Moves) != 2*rep.Metadata.Steps {
		t.Errorf("got %d moves over %d steps", len(rep.Metadata.Moves), rep.Metadata.Steps)
	}
}

func TestCancelledMatchIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := ttt(t)
		fc := newFakeCaller(t, map[string]fakePlayer{"http://p1": scripted(g, "p1", silent), "http://p2": scripted(g, "p2", silent)})
		ctx, cancel := context.WithCancel(context.Background())
		r := newRunner(t, game.TypeTicTacToe, fc)
		r.MoveTimeout = 10 * time.Minute
		done := make(chan error, 1)
		go func() {
			_, err := r.Run(ctx)
			done <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
}

func TestMoveMetadataIsKeptAndBounded(t *testing.T) {
	g := ttt(t)
	talker := func(note string) fakePlayer {
		return func(ctx context.Context, m *protocol.Message, call int) (*protocol.Message, error) {
			if m.Envelope.MessageType != protocol.RequestMove {
				return scripted(g, "p1", firstLegal(g))(ctx, m, call)
			}
			var p map[string]any
			_ = m.Decode(&p)
			mv, _ := firstLegal(g)(ctx, m, p, call)
			return reply(m, "p1", protocol.MoveResponse, map[string]any{"move_payload": mv, "step_number": p["step_number"], "metadata": map[string]string{"reasoning": note}})
		}
	}
	for _, tc := range []struct {
		name, note, want string
	}{
		{"short note kept", "centre first", `"reasoning":"centre first"`},
		{"long note dropped", strings.Repeat("x", 2000), `"dropped"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := newFakeCaller(t, map[string]fakePlayer{"http://p1": talker(tc.note), "http://p2": scripted(g, "p2", firstLegal(g))})
			rep, err := newRunner(t, game.TypeTicTacToe, fc).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := string(rep.Metadata.Moves[0].Metadata); !strings.Contains(got, tc.want) {
				t.Errorf("got metadata %s, want %s", got, tc.want)
			}
			if rep.Metadata.Moves[1].Metadata != nil {
				t.Errorf("p2 sent no metadata but got %s", rep.Metadata.Moves[1].Metadata)
			}
		})
	}
}

// TestLongestChessContextFitsTheProtocol builds the largest REQUEST_MOVE a chess match can
// send: the history of max_plies moves (its registry bound, 700), each of the longest UCI
// form, beside the most legal moves a chess position has (218). The schemas bound arrays at
// 4096 items and the validator at 10,000: raising max_plies must keep within them.
func TestLongestChessContextFitsTheProtocol(t *testing.T) {
	const maxPlies, mostLegalMoves = 700, 218
	reg := game.Default()
	if _, err := reg.Params(game.TypeChess, map[string]any{"max_plies": maxPlies + 1}); err == nil {
		t.Fatalf("max_plies %d is accepted: this test must use the new bound", maxPlies+1)
	}
	g, err := reg.New(game.TypeChess, map[string]any{"max_plies": maxPlies})
	if err != nil {
		t.Fatal(err)
	}
	view := g.NewState(0).Context(0)
	view["moves"] = slices.Repeat([]string{"a7a8q"}, maxPlies)
	view["legal_moves"] = slices.Repeat([]string{"a7a8q"}, mostLegalMoves)
	view["last_move"], view["ply"] = "a7a8q", maxPlies
	m, err := protocol.NewMessage(protocol.RequestMove, protocol.RefereeSender("ref1"), map[string]any{
		"step_number": maxPlies, "step_context": view, "context_hash": contextHash(marshal(t, view)), "deadline_ms": 30000,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Envelope.MatchID, m.Envelope.GameType = "m1", game.TypeChess
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.ValidateMessage(m); err != nil {
		t.Errorf("got %v, want the longest chess request valid", err)
	}
	if raw, _ := json.Marshal(m); len(raw) > protocol.MaxBodyBytes/16 {
		t.Errorf("the longest chess request has %d bytes, want well under the %d byte body limit", len(raw), protocol.MaxBodyBytes)
	}
}

// marshal is the JSON of v, as the referee encodes what it shows a player.
func marshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
