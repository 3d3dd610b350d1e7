package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/agentleague/agentleague/protocol"
)

// benchValidator is a production validator: self-checks off, as agents run by default.
var benchValidator = sync.OnceValues(func() (*protocol.Validator, error) {
	v, err := protocol.NewValidator()
	if v != nil {
		v.SelfCheck = false
	}
	return v, err
})

func prodValidator(b *testing.B) *protocol.Validator {
	b.Helper()
	v, err := benchValidator()
	if err != nil {
		b.Fatalf("NewValidator: %v", err)
	}
	return v
}

// example reads the schemas' example message of a type, e.g. "request_move".
func example(b *testing.B, name string) *protocol.Message {
	b.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "schemas", "testdata", "examples", name+".json"))
	if err != nil {
		b.Fatalf("read example: %v", err)
	}
	var m protocol.Message
	if err := json.Unmarshal(raw, &m); err != nil {
		b.Fatalf("decode example %s: %v", name, err)
	}
	return &m
}

// built is the example message of a type as an agent builds it: its payload written by
// json.Marshal (NewMessage), its envelope the example's.
func built(b *testing.B, name string) *protocol.Message {
	b.Helper()
	ex := example(b, name)
	var p map[string]any
	if err := json.Unmarshal(ex.Payload, &p); err != nil {
		b.Fatal(err)
	}
	m, err := protocol.NewMessage(ex.Envelope.MessageType, ex.Envelope.Sender, p)
	if err != nil {
		b.Fatal(err)
	}
	m.Envelope = ex.Envelope
	return m
}

// benchMessages are the messages of a tic-tac-toe match's hot exchanges.
var benchMessages = []string{"request_move", "move_response", "match_result_report"}

func BenchmarkNewValidator(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := protocol.NewValidator(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewValidatorFirstUse is start-up plus the first validation of the messages
// a player receives, which is what a process pays before its first answer.
func BenchmarkNewValidatorFirstUse(b *testing.B) {
	m := example(b, "request_move")
	b.ReportAllocs()
	for b.Loop() {
		v, err := protocol.NewValidator()
		if err != nil {
			b.Fatal(err)
		}
		if err := v.ValidateMessage(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateMessage(b *testing.B) {
	v := prodValidator(b)
	for _, name := range benchMessages {
		m := example(b, name)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.ValidateMessage(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// moveHandler answers REQUEST_MOVE as a player does: decode the payload, reply.
func moveHandler(b *testing.B) protocol.HandlerFunc {
	answer := example(b, "move_response")
	var payload protocol.MoveAnswer
	if err := answer.Decode(&payload); err != nil {
		b.Fatal(err)
	}
	return func(_ context.Context, m *protocol.Message) (*protocol.Message, error) {
		var req protocol.MoveRequest
		if err := m.Decode(&req); err != nil {
			return nil, err
		}
		a, err := m.Reply(protocol.MoveResponse, answer.Envelope.Sender, payload)
		if err != nil {
			return nil, err
		}
		a.Envelope.MatchID = answer.Envelope.MatchID
		return a, nil
	}
}

func BenchmarkServerProcess(b *testing.B) {
	s := protocol.NewServer(moveHandler(b), prodValidator(b), discard{}, zerolog.Nop())
	body := call(b, 1, example(b, "request_move"))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		out := s.Process(ctx, body)
		if !bytes.Contains(out, []byte(`"result"`)) {
			b.Fatalf("answer %s", out)
		}
	}
}

func BenchmarkClientCall(b *testing.B) {
	v := prodValidator(b)
	srv := httptest.NewServer(protocol.NewServer(moveHandler(b), v, discard{}, zerolog.Nop()))
	defer srv.Close()
	c := protocol.NewClient(v, discard{})
	defer c.Close()
	m := built(b, "request_move")
	opt := protocol.CallOptions{Timeout: 5 * time.Second, Retry: protocol.RetryPolicy{Attempts: 1}, Peer: "player:p01"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		ans, err := c.Call(ctx, srv.URL, m, opt)
		if err != nil {
			b.Fatal(err)
		}
		var p protocol.MoveAnswer
		if err := ans.Decode(&p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarmPlayer is what a player pays at start-up for its schemas: loading them,
// then compiling what it receives.
func BenchmarkWarmPlayer(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		v, err := protocol.NewValidator()
		if err != nil {
			b.Fatal(err)
		}
		if err := v.Warm(protocol.PlayerReceives...); err != nil {
			b.Fatal(err)
		}
	}
}

// benchMetadata is the game_metadata of a tic-tac-toe match of eight moves as a referee
// writes it.
const benchMetadata = `{"match_seed":42,"game_params":{},"moves":[` +
	`{"step":1,"player":"p01","move":{"row":0,"col":0},"outcome":"SUCCESS","elapsed_ms":1},` +
	`{"step":2,"player":"p02","move":{"row":1,"col":1},"outcome":"SUCCESS","elapsed_ms":0},` +
	`{"step":3,"player":"p01","move":{"row":0,"col":1},"outcome":"SUCCESS","elapsed_ms":0},` +
	`{"step":4,"player":"p02","move":{"row":0,"col":2},"outcome":"SUCCESS","elapsed_ms":1},` +
	`{"step":5,"player":"p01","move":{"row":2,"col":0},"outcome":"SUCCESS","elapsed_ms":0},` +
	`{"step":6,"player":"p02","move":{"row":1,"col":0},"outcome":"SUCCESS","elapsed_ms":0},` +
	`{"step":7,"player":"p01","move":{"row":1,"col":2},"outcome":"SUCCESS","elapsed_ms":2},` +
	`{"step":8,"player":"p02","move":{"row":2,"col":1},"outcome":"SUCCESS","elapsed_ms":0}],` +
	`"final_state":{"board":[["X","X","O"],["O","O","X"],["X","O",""]],"winner":"","outcome":"IN_PROGRESS","move_count":8},` +
	`"termination":"normal","violations":[],"steps":8,"total_moves":8,"referee_id":"ref1",` +
	`"started_at":"2026-11-23T07:00:29.467492Z","finished_at":"2026-11-23T07:00:29.475492Z"}`

// BenchmarkReadGameMetadata is the League Manager reading a result's game_metadata.
func BenchmarkReadGameMetadata(b *testing.B) {
	raw := json.RawMessage(benchMetadata)
	b.ReportAllocs()
	for b.Loop() {
		if md, vs := protocol.ReadGameMetadata(raw); len(md.Moves) != 8 || vs != nil {
			b.Fatalf("read %d moves, violations %v", len(md.Moves), vs)
		}
	}
}
