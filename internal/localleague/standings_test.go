package localleague

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/proctest"
	"github.com/agentleague/agentleague/league/server"
	"github.com/agentleague/agentleague/protocol"
)

// Standings reads the standings and, beside the endpoint, what the query adds; the text
// and the JSON show what was asked for.
func TestStandings(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Start(ctx, server.Options{ConfigPath: proctest.ConfigPath(), Addr: "127.0.0.1:0", DBPath: filepath.Join(dir, "league.db"),
		AuditPath: filepath.Join(dir, "audit.jsonl"), LogPath: filepath.Join(dir, "league.log"), AdminToken: "admin-token", Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := srv.Wait(); err != nil {
			t.Error(err)
		}
	})
	a, err := NewAdmin(protocol.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, tc := range []struct {
		q              StandingsQuery
		text, jsonKeys []string
	}{
		{StandingsQuery{}, []string{"state REGISTRATION, round -", "rank"}, []string{"standings"}},
		{StandingsQuery{Stats: true}, []string{"illegal", "avg_ms"}, []string{"player_stats"}},
		{StandingsQuery{Ratings: true, Crosstable: true}, []string{"state REGISTRATION"}, []string{"ratings", "crosstable"}},
	} {
		s, err := a.Standings(ctx, srv.URL(), "admin-token", tc.q)
		if err != nil {
			t.Fatalf("%+v: %v", tc.q, err)
		}
		var text, js bytes.Buffer
		if err := s.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		for _, want := range tc.text {
			if !strings.Contains(text.String(), want) {
				t.Errorf("%+v: the text lacks %q:\n%s", tc.q, want, text.String())
			}
		}
		var doc map[string]any
		if err := s.WriteJSON(&js); err != nil || json.Unmarshal(js.Bytes(), &doc) != nil {
			t.Fatalf("%+v: JSON %v:\n%s", tc.q, err, js.String())
		}
		for _, key := range tc.jsonKeys {
			if _, ok := doc[key]; !ok {
				t.Errorf("%+v: the JSON has no %q:\n%s", tc.q, key, js.String())
			}
		}
	}
	if _, err := a.Standings(ctx, strings.TrimSuffix(srv.URL(), "/mcp")+"/rpc", "admin-token", StandingsQuery{Stats: true}); !errors.Is(err, ErrNoLiveView) {
		t.Errorf("statistics beside an endpoint not ending with /mcp: %v, want ErrNoLiveView", err)
	}
	if s, err := a.StartLeague(ctx, srv.URL(), "admin-token"); err == nil || s.LeagueID != "" {
		t.Errorf("start without players: %+v (%v), want refused", s, err)
	}
}
