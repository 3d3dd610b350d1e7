package protocol_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/agentleague/agentleague/protocol"
)

// interopDefects names the captured answers known not to validate (see schemas/README.md):
// the Python player echoes the GAME_OVER envelope with an empty payload.
var interopDefects = map[string]bool{"game_over.wire.json": true}

type capture struct {
	Request  json.RawMessage `json:"request"`
	Response struct {
		Result *protocol.Message `json:"result"`
		ID     json.RawMessage   `json:"id"`
	} `json:"response"`
}

func captures(t *testing.T) map[string]capture {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "interop", "*.wire.json"))
	if err != nil {
		t.Fatalf("glob: %v", err)
	}
	if len(files) < 10 {
		t.Fatalf("got %d captures, want the 10 of shared/interop/python-peer-wire", len(files))
	}
	out := map[string]capture{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("read %s: %v", f, err)
		}
		var c capture
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("decode %s: %v", f, err)
		}
		out[filepath.Base(f)] = c
	}
	return out
}

func TestInteropCaptures(t *testing.T) {
	v := validator(t)
	for name, c := range captures(t) {
		t.Run(name, func(t *testing.T) {
			req := decodeObject(t, c.Request)
			if vs := v.ValidateParams(req["params"]); len(vs) > 0 {
				t.Fatalf("request params: got violations %v, want none", vs)
			}
			wantType := strings.ToUpper(strings.TrimSuffix(name, ".wire.json"))

			var mu sync.Mutex
			var gotTypes []string
			h := protocol.HandlerFunc(func(_ context.Context, m *protocol.Message) (*protocol.Message, error) {
				mu.Lock()
				gotTypes = append(gotTypes, m.Envelope.MessageType)
				mu.Unlock()
				return c.Response.Result, nil
			})
			rec := &recorder{}
			s := protocol.NewServer(h, v, rec, zerolog.Nop())
			out := s.Process(context.Background(), c.Request)

			if len(gotTypes) != 1 || gotTypes[0] != wantType {
				t.Errorf("handler saw %v, want [%s]", gotTypes, wantType)
			}
			resp := decodeResponse(t, out)
			if !bytes.Equal(resp.ID, c.Response.ID) {
				t.Errorf("got id %s, want %s", resp.ID, c.Response.ID)
			}
			if interopDefects[name] {
				// The server refuses to send an answer that breaks its schema.
				if resp.Error == nil || resp.Error.Data == nil || resp.Error.Data.Reason != protocol.ReasonInternal {
					t.Errorf("got %s, want INTERNAL for the known-defective answer", out)
				}
			} else {
				if resp.Error != nil {
					t.Fatalf("got error %v, want the captured answer", resp.Error)
				}
				if !sameJSON(t, resp.Result, mustJSON(t, c.Response.Result)) {
					t.Errorf("got result %s, want %s", resp.Result, mustJSON(t, c.Response.Result))
				}
			}
			exs := rec.exchanges()
			if len(exs) != 1 || !bytes.Equal(exs[0].Request, c.Request) || exs[0].Peer == "" || exs[0].ConversationID == "" {
				t.Errorf("got exchanges %+v, want the request with its sender and conversation", exs)
			}
		})
	}
}
