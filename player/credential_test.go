package player

import (
	"testing"

	"github.com/agentleague/agentleague/protocol"
)

// The kept credential is the one protocol.MatchCredential computes, for the match and the
// token asked, whatever was asked before.
func TestMatchCredentialIsKeptPerMatchAndToken(t *testing.T) {
	l := &leagueLink{}
	for _, c := range []struct{ token, match string }{
		{"t1", "m1"}, {"t1", "m1"}, {"t1", "m2"}, {"t2", "m2"}, {"t1", "m1"}, {"", ""}, {"", "m1"},
	} {
		if got, want := l.matchCredential(c.token, c.match), protocol.MatchCredential(c.token, c.match); got != want {
			t.Errorf("credential of %q for %q: %s, want %s", c.token, c.match, got, want)
		}
	}
}

// BenchmarkMatchCredential is the check of each REQUEST_MOVE of a match: the credential
// kept from the match's first request, against computing it (an HMAC-SHA256) each time.
func BenchmarkMatchCredential(b *testing.B) {
	b.Run("kept", func(b *testing.B) {
		l := &leagueLink{}
		b.ReportAllocs()
		for b.Loop() {
			_ = l.matchCredential("9f2c1a5e0b7d4c3a8e6f1d2b5a4c7e9f", "match-38adb6e2")
		}
	})
	b.Run("computed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = protocol.MatchCredential("9f2c1a5e0b7d4c3a8e6f1d2b5a4c7e9f", "match-38adb6e2")
		}
	})
}
