package referee

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentleague/agentleague/internal/rpccheck"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// fuzzToken is the token of the fuzzed referee.
const fuzzToken = "0b6f3a52-6c1e-4d4e-9d7a-2f8e1c5b7a90"

// fuzzFeatures are the League Manager's features a fuzz input turns on, one per bit.
var fuzzFeatures = []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials, protocol.FeatureMatchProgress,
	protocol.FeatureResultReminders, protocol.FeatureMoveEvents, protocol.FeatureMatchCancellation}

// fuzzLeague acknowledges every result report and refuses the rest (heartbeats and move
// events are best effort).
type fuzzLeague struct{}

func (fuzzLeague) Call(_ context.Context, _ string, m *protocol.Message, _ protocol.CallOptions) (*protocol.Message, error) {
	if m.Envelope.MessageType != protocol.MatchResultReport {
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "not in this test")
	}
	out, err := m.Reply(protocol.MatchResultAck, protocol.SenderLeagueManager, protocol.MatchAck{Status: protocol.StatusAcknowledged, MatchID: m.Envelope.MatchID})
	if err != nil {
		return nil, err
	}
	out.Envelope.LeagueID = "league-1"
	return out, nil
}

// unreachablePlayers fail every call at once: a match ends at its invitations.
type unreachablePlayers struct{}

func (unreachablePlayers) Call(context.Context, string, *protocol.Message, protocol.CallOptions) (*protocol.Message, error) {
	return nil, errors.New("connection refused")
}

// fuzzReferee is a registered referee whose matches end at once, behind the JSON-RPC
// server the League Manager's requests reach, which checks them with v (compiled once
// for every referee of a fuzzing process). stop ends its matches and waits for them.
func fuzzReferee(tb testing.TB, v *protocol.Validator) (r *Referee, srv *protocol.Server, stop func()) {
	tb.Helper()
	r, err := New(Config{ID: "ref1", Addr: "127.0.0.1:0", LeagueURL: "http://league.test/mcp", Stdout: io.Discard, MaxMatches: 2, MaxQueued: 2}, zerolog.Nop())
	if err != nil {
		tb.Fatal(err)
	}
	r.league, r.players = fuzzLeague{}, unreachablePlayers{}
	r.token, r.leagueID, r.state = fuzzToken, "league-1", "IDLE"
	close(r.registered)
	matches, cancel := context.WithCancel(context.Background())
	return r, protocol.NewServer(r.handler(matches), v, nil, zerolog.Nop()), func() { r.stopMatches(cancel) }
}

// rpcBody wraps a message, as a wire example holds it, in a JSON-RPC request.
func rpcBody(tb testing.TB, msg json.RawMessage) []byte {
	tb.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": protocol.Method, "params": msg, "id": 7})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// exampleRequest reads the example message of name from schemas/testdata/examples with
// its auth_token set to token, and no game_params.
func exampleRequest(tb testing.TB, name, token string) json.RawMessage {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "schemas", "testdata", "examples", name+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber() // match_seed is -2^63
	if err := d.Decode(&m); err != nil {
		tb.Fatal(err)
	}
	m["envelope"].(map[string]any)["auth_token"] = token
	delete(m["payload"].(map[string]any), "game_params") // tic-tac-toe takes none
	out, _ := json.Marshal(m)
	return out
}

// FuzzRefereeHandle sends arbitrary bodies to a registered referee's JSON-RPC endpoint,
// as if from the League Manager, which announced the features the first byte selects. The
// endpoint must never panic nor fail inside its handler (INTERNAL); every answer is a
// JSON-RPC response, a result being a valid message from this referee that shows its token
// only to a request that showed it; and the referee never holds more matches than its
// slots and queue.
func FuzzRefereeHandle(f *testing.F) {
	for _, name := range []string{"match_assignment", "result_reminder", "match_cancelled", "league_shutdown"} {
		f.Add(uint8(0), rpcBody(f, exampleRequest(f, name, fuzzToken)))
		f.Add(uint8(1<<len(fuzzFeatures)-1), rpcBody(f, exampleRequest(f, name, fuzzToken)))
	}
	f.Add(uint8(0), rpcBody(f, exampleRequest(f, "match_assignment", "not-the-token")))
	f.Add(uint8(0), []byte("["+string(rpcBody(f, exampleRequest(f, "match_assignment", fuzzToken)))+","+string(rpcBody(f, exampleRequest(f, "match_cancelled", fuzzToken)))+"]"))
	var wire struct {
		Request json.RawMessage `json:"request"`
	}
	data, err := os.ReadFile(filepath.Join("..", "protocol", "testdata", "interop", "match_assignment.wire.json"))
	if err == nil && json.Unmarshal(data, &wire) == nil {
		f.Add(uint8(0), []byte(wire.Request))
	}
	v, err := protocol.NewValidator()
	if err != nil {
		f.Fatal(err)
	}
	r, srv, stop := fuzzReferee(f, v)
	f.Cleanup(func() { stop() })
	f.Fuzz(func(t *testing.T, features uint8, body []byte) {
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed { // LEAGUE_SHUTDOWN: a fresh referee takes the next inputs
			stop()
			r, srv, stop = fuzzReferee(t, v)
		}
		var announced []string
		for i, feature := range fuzzFeatures {
			if features&(1<<i) != 0 {
				announced = append(announced, feature)
			}
		}
		r.mu.Lock()
		r.leagueFeatures = announced
		r.mu.Unlock()
		out := srv.Process(context.Background(), body)
		rpccheck.Answers(t, v, body, out, protocol.RefereeSender("ref1"), fuzzToken)
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.playing < 0 || r.playing > r.cfg.MaxMatches || len(r.queue) > r.cfg.MaxQueued {
			t.Fatalf("%d matches playing, %d queued: more than %d slots and %d places", r.playing, len(r.queue), r.cfg.MaxMatches, r.cfg.MaxQueued)
		}
		for _, hm := range r.queue {
			if r.held[hm.a.MatchID] != hm {
				t.Fatalf("queued match %s is not held", hm.a.MatchID)
			}
		}
		for id, hm := range r.held {
			if hm.a.MatchID != id {
				t.Fatalf("match %s held as %s", hm.a.MatchID, id)
			}
		}
	})
}

// The seeds of FuzzRefereeHandle reach the handler and are answered: an assignment,
// a reminder and a cancellation of it, and the shutdown.
func TestFuzzSeedsAreAnswered(t *testing.T) {
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	_, srv, stop := fuzzReferee(t, v)
	defer stop()
	// In this order: the shutdown last, since the referee refuses what comes after it.
	for _, c := range []struct{ name, want string }{{"match_assignment", protocol.MatchAssignmentAck}, {"result_reminder", protocol.ResultReminderAck},
		{"match_cancelled", protocol.MatchCancelledAck}, {"league_shutdown", protocol.LeagueShutdownAck}} {
		name, want := c.name, c.want
		var resp protocol.Response
		if err := json.Unmarshal(srv.Process(context.Background(), rpcBody(t, exampleRequest(t, name, fuzzToken))), &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Error != nil || resp.Result.Envelope.MessageType != want {
			t.Errorf("%s answered %+v %v, want %s", name, resp.Result, resp.Error, want)
		}
	}
}
