package protocol_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// TestValidateParamsDeterministic: the schema library visits properties in map order; the
// violations, and the names inside one message, must not depend on it.
func TestValidateParamsDeterministic(t *testing.T) {
	v := validator(t)
	p := params(t, heartbeat(t))
	env := p["envelope"].(map[string]any)
	for i := range 8 {
		env[fmt.Sprintf("extra%d", i)] = i
	}
	delete(env, "sender")
	p["payload"] = map[string]any{"active_matches": "m1"}
	want := []protocol.Violation{
		{Path: "/envelope", Message: "additionalProperties 'extra0', 'extra1', 'extra2', 'extra3', 'extra4', 'extra5', 'extra6', 'extra7' not allowed"},
		{Path: "/envelope", Message: "missing properties: 'sender'"},
		{Path: "/payload/active_matches", Message: "expected array, but got string"},
	}
	for range 20 {
		if got := v.ValidateParams(p); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

func TestValidateParams(t *testing.T) {
	v := validator(t)
	unknownType := params(t, heartbeat(t))
	unknownType["envelope"].(map[string]any)["message_type"] = "HELLO"
	extraTop := params(t, heartbeat(t))
	extraTop["extra"] = true
	tests := []struct {
		name   string
		params any
		want   []string
	}{
		{name: "valid", params: params(t, heartbeat(t))},
		{name: "unknown message type", params: unknownType, want: []string{"/envelope/message_type: value must be one of \"REGISTER_REFEREE_REQUEST\", \"REGISTER_REFEREE_RESPONSE\", \"REGISTER_PLAYER_REQUEST\", \"REGISTER_PLAYER_RESPONSE\", \"AGENT_READY_REQUEST\", \"AGENT_READY_RESPONSE\", \"MATCH_ASSIGNMENT\", \"MATCH_ASSIGNMENT_ACK\", \"MATCH_RESULT_REPORT\", \"MATCH_RESULT_ACK\", \"QUERY_STANDINGS\", \"STANDINGS_RESPONSE\", \"GAME_INVITATION\", \"GAME_JOIN_ACK\", \"REQUEST_MOVE\", \"MOVE_RESPONSE\", \"GAME_OVER\", \"GAME_OVER_ACK\", \"LEAGUE_SHUTDOWN\", \"LEAGUE_SHUTDOWN_ACK\", \"ADMIN_START_LEAGUE_REQUEST\", \"ADMIN_START_LEAGUE_RESPONSE\", \"ADMIN_SHUTDOWN_REQUEST\", \"ADMIN_SHUTDOWN_RESPONSE\", \"HEARTBEAT_REQUEST\", \"HEARTBEAT_RESPONSE\", \"MOVE_EVENT\", \"MOVE_EVENT_ACK\", \"MATCH_CANCELLED\", \"MATCH_CANCELLED_ACK\", \"RESULT_REMINDER\", \"RESULT_REMINDER_ACK\", \"QUERY_MATCH\", \"MATCH_INFO\", \"LEAGUE_COMPLETED\", \"LEAGUE_COMPLETED_ACK\""}},
		{name: "member beside envelope and payload", params: extraTop, want: []string{"/: additionalProperties 'extra' not allowed"}},
		{name: "envelope not an object", params: map[string]any{"envelope": "x", "payload": map[string]any{}}, want: []string{"/envelope: expected object, but got string"}},
		{name: "array", params: []any{}, want: []string{"/: params must be an object with envelope and payload"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, vi := range v.ValidateParams(tt.params) {
				got = append(got, vi.String())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidateMessage(t *testing.T) {
	v := validator(t)
	if err := v.ValidateMessage(heartbeat(t)); err != nil {
		t.Errorf("valid message: got %v, want nil", err)
	}
	if err := v.ValidateMessage(nil); err == nil {
		t.Error("nil message: got nil, want an error")
	}
	bad := heartbeat(t)
	bad.Envelope.Timestamp = "2026-11-22T01:21:50+01:00"
	if err := v.ValidateMessage(bad); err == nil {
		t.Error("bad timestamp: got nil, want an error")
	}
	if got := len(v.MessageTypes()); got != 36 {
		t.Errorf("got %d message types, want 36", got)
	}
}
