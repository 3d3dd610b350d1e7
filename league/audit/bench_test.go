package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// benchExchange is an inbound MATCH_RESULT_REPORT (carrying an auth_token) and its answer,
// as the League Manager records one per match.
func benchExchange(b *testing.B) protocol.Exchange {
	b.Helper()
	read := func(name string) json.RawMessage {
		raw, err := os.ReadFile(filepath.Join("..", "..", "schemas", "testdata", "examples", name+".json"))
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": protocol.Method, "params": read("match_result_report")})
	if err != nil {
		b.Fatal(err)
	}
	resp, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "result": read("match_result_ack")})
	if err != nil {
		b.Fatal(err)
	}
	return protocol.Exchange{Inbound: true, Peer: "referee:ref1", ConversationID: "3b30ff6a-1474-4b42-acdc-4d7668dd0bed", Request: req, Response: resp}
}

// BenchmarkWireMessage is the CPU the log spends making one exchange safe to write.
func BenchmarkWireMessage(b *testing.B) {
	ex := benchExchange(b)
	b.ReportAllocs()
	for b.Loop() {
		_ = redact(ex.Request)
		_ = redact(ex.Response)
	}
}

// BenchmarkRecord is one exchange recorded, fsync included.
func BenchmarkRecord(b *testing.B) {
	ex := benchExchange(b)
	a, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), self)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := a.Record(ex); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordParallel is exchanges recorded at once by many callers, as a League
// Manager serving many agents does: they share fsyncs.
func BenchmarkRecordParallel(b *testing.B) {
	ex := benchExchange(b)
	a, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), self)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := a.Record(ex); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
