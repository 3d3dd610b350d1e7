package protocol_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"testing"
	"time"

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

func TestMatchCredential(t *testing.T) {
	tests := []struct {
		token, matchID, want string
	}{
		// The HMAC-SHA256 example of RFC 2104 implementations (Wikipedia), checked with python3 hmac.
		{"key", "The quick brown fox jumps over the lazy dog", "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
		// python3 -c 'import hmac,hashlib; print(hmac.new(b"5ad5...", b"match-38ad...", hashlib.sha256).hexdigest())'
		{"5ad5f85a-d841-4fd5-835c-711877d65b72", "match-38adb6e2-517a-4035-8fd3-29be866355a2", "79e7bcdff411cf88a4966fd02c193dae01d130c21554af950c00d48a9c00a819"},
	}
	for _, tt := range tests {
		t.Run(tt.matchID, func(t *testing.T) {
			got := protocol.MatchCredential(tt.token, tt.matchID)
			if got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
			mac := hmac.New(sha256.New, []byte(tt.token))
			mac.Write([]byte(tt.matchID))
			if indep := hex.EncodeToString(mac.Sum(nil)); got != indep {
				t.Errorf("got %s, want %s (crypto/hmac)", got, indep)
			}
		})
	}
	t.Run("shape and binding", func(t *testing.T) {
		c := protocol.MatchCredential("tok", "m1")
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(c) {
			t.Errorf("got %q, want 64 lowercase hex digits (defs.json hex_sha256 and token)", c)
		}
		if c == protocol.MatchCredential("tok", "m2") || c == protocol.MatchCredential("tok2", "m1") {
			t.Error("credential does not depend on both the token and the match")
		}
	})
}

func TestTokenEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"abc", "abc", true},
		{"", "", true},
		{"abc", "abd", false},
		{"abc", "abcd", false},
		{"abc", "", false},
		{"ABC", "abc", false},
	}
	for _, tt := range tests {
		if got := protocol.TokenEqual(tt.a, tt.b); got != tt.want {
			t.Errorf("TokenEqual(%q, %q): got %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	want := time.Date(2026, 11, 22, 1, 21, 50, 353357000, time.UTC)
	tests := []struct {
		in     string
		want   time.Time
		wantOK bool
	}{
		{"2026-11-22T01:21:50.353357Z", want, true},
		{"2026-11-22T01:21:50.353357+00:00", want, true},
		{"2026-11-22T01:21:50.353357000Z", want, true},
		{"2026-11-22T01:21:50Z", want.Truncate(time.Second), true},
		{"2026-11-22T03:21:50.353357+02:00", time.Time{}, false},
		{"2026-11-22T01:21:50.353357-00:00", time.Time{}, false},
		{"2026-11-22T01:21:50,353357Z", time.Time{}, false},
		{"2026-11-22T01:21:50.3533570000Z", time.Time{}, false},
		{"2026-11-22T01:21:50.353357", time.Time{}, false},
		{"2026-11-22T01:21:50.353357z", time.Time{}, false},
		{"2026-11-22 01:21:50Z", time.Time{}, false},
		{"2026-13-22T01:21:50Z", time.Time{}, false},
		{"2026-11-22T24:00:00Z", time.Time{}, false},
		{"yesterday", time.Time{}, false},
		{"", time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := protocol.ParseTime(tt.in)
			if (err == nil) != tt.wantOK {
				t.Fatalf("got error %v, want ok %v", err, tt.wantOK)
			}
			if !got.Equal(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			if tt.wantOK && got.Location() != time.UTC {
				t.Errorf("got location %v, want UTC", got.Location())
			}
		})
	}
}

func TestNow(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	in := time.Date(2026, 11, 22, 2, 21, 50, 353357123, paris)
	got := protocol.Now(in)
	if want := "2026-11-22T01:21:50.353357Z"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	back, err := protocol.ParseTime(got)
	if err != nil {
		t.Fatalf("ParseTime(Now): %v", err)
	}
	if !back.Equal(in.Truncate(time.Microsecond)) {
		t.Errorf("got %v back, want %v", back, in.Truncate(time.Microsecond))
	}
}
