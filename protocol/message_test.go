package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

type decodeInner struct {
	Move string `json:"move"`
	Kind string `json:"kind"`
}

type decodeBase struct {
	Version string `json:"version"`
}

type decodeTarget struct {
	decodeBase
	PlayerID string                 `json:"player_id"`
	Inner    *decodeInner           `json:"inner"`
	List     []decodeInner          `json:"list"`
	ByPlayer map[string]decodeInner `json:"by_player"`
	Raw      json.RawMessage        `json:"raw"`
	Any      any                    `json:"any"`
	Skipped  string                 `json:"-"`
	NoTag    string
}

// TestDecodeMemberCase checks that a member the schema saw under another name cannot
// fill a field: encoding/json matches names without case.
func TestDecodeMemberCase(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		wantErr bool
		want    string
	}{
		{name: "exact names", payload: `{"player_id":"p1","version":"1","inner":{"move":"X"},"list":[{"move":"O"}],"by_player":{"P1":{"move":"A"}},"NoTag":"n"}`, want: "p1"},
		{name: "unknown members are fine", payload: `{"player_id":"p1","extra":{"Player_ID":1},"raw":{"PLAYER_ID":2},"any":{"Move":3}}`, want: "p1"},
		{name: "map keys keep their case", payload: `{"by_player":{"Move":{"move":"x"}}}`},
		{name: "other case beside the name", payload: `{"player_id":"p1","PLAYER_ID":"../etc"}`, wantErr: true},
		{name: "other case alone", payload: `{"Player_Id":"../etc"}`, wantErr: true},
		{name: "kelvin sign", payload: `{"inner":{"move":"x","\u212aind":"y"}}`, wantErr: true},
		{name: "long s", payload: `{"ver\u017fion":"2"}`, wantErr: true},
		{name: "in a pointer field", payload: `{"inner":{"MOVE":"x"}}`, wantErr: true},
		{name: "in a slice", payload: `{"list":[{"move":"a"},{"Move":"b"}]}`, wantErr: true},
		{name: "in a map value", payload: `{"by_player":{"p1":{"mOVE":"b"}}}`, wantErr: true},
		{name: "embedded field", payload: `{"VERSION":"2"}`, wantErr: true},
		{name: "untagged field", payload: `{"notag":"n"}`, wantErr: true},
		{name: "not json", payload: `{`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &protocol.Message{Envelope: protocol.Envelope{MessageType: protocol.RegisterPlayerRequest}, Payload: json.RawMessage(tt.payload)}
			var got decodeTarget
			err := m.Decode(&got)
			if (err != nil) != tt.wantErr {
				t.Fatalf("got error %v, want error %v", err, tt.wantErr)
			}
			if got.PlayerID != tt.want && !tt.wantErr {
				t.Errorf("got player_id %q, want %q", got.PlayerID, tt.want)
			}
			if tt.wantErr && got.PlayerID != "" {
				t.Errorf("got player_id %q after a refusal, want the target untouched", got.PlayerID)
			}
		})
	}
}

func TestReplyKeepsConversation(t *testing.T) {
	m := heartbeat(t)
	a := heartbeatAnswer(t, m)
	if a.Envelope.ConversationID != m.Envelope.ConversationID {
		t.Errorf("got conversation %s, want %s", a.Envelope.ConversationID, m.Envelope.ConversationID)
	}
	if a.Envelope.AuthToken != "" {
		t.Errorf("reply carries auth_token %q, want none", a.Envelope.AuthToken)
	}
	n := heartbeat(t)
	if n.Envelope.ConversationID == m.Envelope.ConversationID {
		t.Error("two NewMessage calls share a conversation id")
	}
}

func TestParseSender(t *testing.T) {
	tests := []struct{ in, role, id string }{
		{protocol.RefereeSender("ref1"), "referee", "ref1"},
		{protocol.PlayerSender("p01"), "player", "p01"},
		{protocol.SenderLeagueManager, "league_manager", ""},
		{protocol.SenderAdmin, "admin", ""},
	}
	for _, tt := range tests {
		role, id := protocol.ParseSender(tt.in)
		if role != tt.role || id != tt.id {
			t.Errorf("ParseSender(%q): got %q %q, want %q %q", tt.in, role, id, tt.role, tt.id)
		}
	}
}
