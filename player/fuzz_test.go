package player

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentleague/agentleague/internal/rpccheck"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// fuzzToken is the token of the fuzzed player.
const fuzzToken = "7d2e9c41-5b3a-4f6e-8a1d-0c9b8e7f6a53"

// fuzzFeatures are the League Manager's features a fuzz input turns on, one per bit.
var fuzzFeatures = []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials, protocol.FeatureMatchQuery}

// confirmingLeague answers QUERY_MATCH naming ref1 as the referee of every match, in
// progress, and refuses the rest.
type confirmingLeague struct{}

func (confirmingLeague) Call(_ context.Context, _ string, m *protocol.Message, _ protocol.CallOptions) (*protocol.Message, error) {
	if m.Envelope.MessageType != protocol.QueryMatch {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "not in this test")
	}
	var q protocol.MatchQuery
	if err := m.Decode(&q); err != nil {
		return nil, err
	}
	ref := "ref1"
	return m.Reply(protocol.MatchInfo, protocol.SenderLeagueManager, protocol.MatchDetails{MatchID: q.MatchID, Players: []string{"p1", "p2"}, RefereeID: &ref, Status: protocol.MatchStateInProgress})
}

// fuzzPlayer is a registered player of the random strategy, behind its JSON-RPC server
// (which checks requests with v, compiled once for every player of a fuzzing process).
func fuzzPlayer(tb testing.TB, v *protocol.Validator) (*Player, *protocol.Server) {
	tb.Helper()
	p, err := New(Config{ID: "p1", Addr: "127.0.0.1:0", LeagueURL: "http://league.test/mcp", Strategy: "random", Stdout: io.Discard}, zerolog.Nop())
	if err != nil {
		tb.Fatal(err)
	}
	p.link.caller = confirmingLeague{}
	p.link.token, p.link.leagueID, p.state = fuzzToken, "league-2025-01", StateActive
	close(p.link.registered)
	return p, protocol.NewServer(p, v, nil, zerolog.Nop())
}

// exampleRequest is the example message of name from schemas/testdata/examples as a
// JSON-RPC request, change applied to it.
func exampleRequest(tb testing.TB, name string, change func(env, payload map[string]any)) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "schemas", "testdata", "examples", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		tb.Fatal(err)
	}
	if change != nil {
		change(m["envelope"].(map[string]any), m["payload"].(map[string]any))
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": protocol.Method, "params": m, "id": 7})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// plain drops game_params (tic-tac-toe takes none) and the credential of a referee's
// message and names the match m1, as a referee of plain league.v2 sends it; a League
// Manager's message (from its sender) carries the player's token instead, as its schema
// requires.
func plain(env, payload map[string]any) {
	delete(payload, "game_params")
	env["match_id"] = "m1"
	if _, ok := payload["match_id"]; ok {
		payload["match_id"] = "m1"
	}
	if sc, ok := payload["step_context"].(map[string]any); ok {
		sc["move_number"] = 2 // the example's board holds one mark
	}
	if env["sender"] == protocol.SenderLeagueManager {
		env["auth_token"] = fuzzToken
	} else {
		delete(env, "auth_token")
	}
}

// FuzzPlayerHandle sends arbitrary bodies to a registered player's JSON-RPC endpoint,
// as if from referees and the League Manager, which announced the features the first byte
// selects. The endpoint must never panic nor fail inside its handler (INTERNAL); every
// answer is a JSON-RPC response, a result being a valid message from this player that
// shows its token only to a request that showed it; and the player's record stays
// consistent: no match both in play and over, and no more wins, draws and losses than
// matches over.
func FuzzPlayerHandle(f *testing.F) {
	for _, name := range []string{"game_invitation", "request_move", "game_over", "match_cancelled", "league_shutdown"} {
		f.Add(uint8(0), exampleRequest(f, name, plain))
		f.Add(uint8(1<<len(fuzzFeatures)-1), exampleRequest(f, name, nil))
	}
	f.Add(uint8(4), exampleRequest(f, "game_invitation", func(env, payload map[string]any) {
		plain(env, payload)
		env["sender"] = "referee:ref1"
	}))
	f.Add(uint8(2), exampleRequest(f, "request_move", func(env, payload map[string]any) {
		plain(env, payload)
		env["auth_token"] = protocol.MatchCredential(fuzzToken, "m1")
	}))
	f.Add(uint8(0), []byte("["+string(exampleRequest(f, "game_invitation", plain))+","+string(exampleRequest(f, "request_move", plain))+","+string(exampleRequest(f, "game_over", plain))+"]"))
	var wire struct {
		Request json.RawMessage `json:"request"`
	}
	data, err := os.ReadFile(filepath.Join("..", "protocol", "testdata", "interop", "request_move.wire.json"))
	if err == nil && json.Unmarshal(data, &wire) == nil {
		f.Add(uint8(0), []byte(wire.Request))
	}
	v, err := protocol.NewValidator()
	if err != nil {
		f.Fatal(err)
	}
	p, srv := fuzzPlayer(f, v)
	f.Fuzz(func(t *testing.T, features uint8, body []byte) {
		select {
		case <-p.shutdown: // LEAGUE_SHUTDOWN: a fresh player takes the next inputs
			p.book.releaseAll()
			p, srv = fuzzPlayer(t, v)
		default:
		}
		var announced []string
		for i, feature := range fuzzFeatures {
			if features&(1<<i) != 0 {
				announced = append(announced, feature)
			}
		}
		p.link.mu.Lock()
		p.link.features = announced
		p.link.mu.Unlock()
		out := srv.Process(context.Background(), body)
		rpccheck.Answers(t, v, body, out, protocol.PlayerSender("p1"), fuzzToken)
		b := p.book
		b.mu.Lock()
		defer b.mu.Unlock()
		for id := range b.matches {
			if _, over := b.finished[id]; over {
				t.Fatalf("match %s is both in play and over", id)
			}
		}
		if b.wins < 0 || b.draws < 0 || b.losses < 0 || b.wins+b.draws+b.losses > len(b.finished) {
			t.Fatalf("%d wins, %d draws, %d losses of %d matches over", b.wins, b.draws, b.losses, len(b.finished))
		}
	})
}

// The seeds of FuzzPlayerHandle reach the handler and are answered: an invitation, a
// move, the game over, a cancellation and the shutdown, from a referee of plain league.v2.
func TestFuzzSeedsAreAnswered(t *testing.T) {
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	p, srv := fuzzPlayer(t, v)
	defer p.book.releaseAll()
	for _, tc := range []struct{ name, want string }{
		{"game_invitation", protocol.GameJoinAck}, {"request_move", protocol.MoveResponse}, {"game_over", protocol.GameOverAck},
		{"match_cancelled", protocol.MatchCancelledAck}, {"league_shutdown", protocol.LeagueShutdownAck},
	} {
		var resp protocol.Response
		if err := json.Unmarshal(srv.Process(context.Background(), exampleRequest(t, tc.name, plain)), &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Error != nil || resp.Result.Envelope.MessageType != tc.want {
			t.Errorf("%s answered %+v %v, want %s", tc.name, resp.Result, resp.Error, tc.want)
		}
	}
	if b := p.book; b.wins+b.draws+b.losses != 0 || len(b.finished) != 0 {
		t.Errorf("after a game over and the match's cancellation: %d wins, %d draws, %d losses, %d over; want none", b.wins, b.draws, b.losses, len(b.finished))
	}
}
