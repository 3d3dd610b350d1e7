package protocol_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
)

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
