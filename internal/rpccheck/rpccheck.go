// Package rpccheck holds what the tests of the league.v2 agents (referee, player) share:
// the checks their fuzz targets make of every answer, and the retry loop of their fake
// League Managers, which stands in for protocol.Client's.
package rpccheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

// holds reports whether v, decoded JSON, holds the string s anywhere.
func holds(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return v == s
	case []any:
		for _, e := range v {
			if holds(e, s) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if k == s || holds(e, s) {
				return true
			}
		}
	}
	return false
}

// Answers checks what a protocol.Server answered to body: nothing only to a
// notification (valid JSON), else JSON-RPC responses whose results are valid messages of
// sender and whose errors carry a reason with its own code; token appears only in answers
// to a body that showed it.
func Answers(t testing.TB, v *protocol.Validator, body, out []byte, sender, token string) {
	t.Helper()
	if out == nil {
		if !json.Valid(body) {
			t.Fatalf("no answer to invalid JSON %q", body)
		}
		return
	}
	var answers []json.RawMessage
	if trimmed := bytes.TrimSpace(out); len(trimmed) > 0 && trimmed[0] == '[' {
		if err := json.Unmarshal(out, &answers); err != nil || len(answers) == 0 || len(answers) > protocol.MaxBatch {
			t.Fatalf("batch answer %q (%v)", out, err)
		}
	} else {
		answers = []json.RawMessage{out}
	}
	var req any
	_ = json.Unmarshal(body, &req)
	for _, a := range answers {
		var resp protocol.Response
		if err := json.Unmarshal(a, &resp); err != nil || resp.JSONRPC != protocol.JSONRPCVersion || (resp.Result == nil) == (resp.Error == nil) {
			t.Fatalf("answer %s is not a JSON-RPC response (%v)", a, err)
		}
		if e := resp.Error; e != nil {
			if e.Data == nil || e.Data.Reason == "" || e.Code != e.Data.Reason.Code() {
				t.Fatalf("error %s has no reason, or a code not its reason's", a)
			}
			if e.Data.Reason == protocol.ReasonInternal {
				t.Fatalf("the handler failed: %s", a)
			}
			continue
		}
		if err := v.ValidateMessage(resp.Result); err != nil {
			t.Fatalf("answer %s is not a valid message: %v", a, err)
		}
		if resp.Result.Envelope.Sender != sender {
			t.Fatalf("answer from %q, want %q", resp.Result.Envelope.Sender, sender)
		}
		if strings.Contains(string(a), token) && !holds(req, token) {
			t.Fatalf("answer %s gives the token to a request that did not show it", a)
		}
	}
}

// Retrying calls attempt as protocol.Client.Call would under opt.Retry, for a fake
// League Manager reached in memory: the same reasons retried, each wait the longest the
// client may draw (so tests on fake time know when each attempt comes), the same errors
// when the caller's deadline ends the call.
func Retrying(ctx context.Context, url string, m *protocol.Message, opt protocol.CallOptions, attempt func() (*protocol.Message, error)) (*protocol.Message, error) {
	var last error
	for n := range max(opt.Retry.Attempts, 1) {
		if n > 0 {
			if err := sleep(ctx, opt.Retry.MaxDelay(n)); err != nil {
				return nil, fmt.Errorf("%s to %s: %w (last error: %w)", m.Envelope.MessageType, url, err, last)
			}
		}
		ans, err := attempt()
		if err == nil {
			return ans, nil
		}
		last = err
		if !opt.Retry.Retries(err) {
			return nil, err
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s to %s: %w (last error: %w)", m.Envelope.MessageType, url, ctx.Err(), err)
		}
	}
	return nil, last
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Call is one call a fake League Manager took in memory: the message, its options, when
// it came and the deadline of the whole call (zero for none).
type Call struct {
	Msg      *protocol.Message
	Opt      protocol.CallOptions
	At       time.Time
	Deadline time.Time
}

// SameMessage fails t unless every attempt sent the first attempt's message again: the
// same value, so the same conversation id.
func SameMessage(t testing.TB, calls []Call) {
	t.Helper()
	for i, c := range calls {
		if c.Msg != calls[0].Msg {
			t.Fatalf("attempt %d sent conversation %s, want the first attempt's message (%s) again", i, c.Msg.Envelope.ConversationID, calls[0].Msg.Envelope.ConversationID)
		}
	}
}

// DoublingBackoff fails t unless the waits between the attempts double from first to at
// most last, and reach it.
func DoublingBackoff(t testing.TB, calls []Call, first, last time.Duration) {
	t.Helper()
	want := first
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].At.Sub(calls[i-1].At); gap != want {
			t.Fatalf("attempt %d came %v after the one before, want %v (backoff %v doubling to %v)", i, gap, want, first, last)
		}
		want = min(2*want, last)
	}
	if want != last {
		t.Fatalf("%d attempts never waited the longest backoff, %v", len(calls), last)
	}
}
