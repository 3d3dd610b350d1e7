package localleague

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/internal/proctest"
	"github.com/agentleague/agentleague/league"
	"github.com/agentleague/agentleague/league/schedule"
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

// The statistics table adds the clock columns once a player played under a clock; a
// player without clock figures shows dashes there, and a league without clocks has none.
func TestStatsTableClockColumns(t *testing.T) {
	rows := []protocol.StandingsRow{{Rank: 1, PlayerID: "p1", Points: 3, Wins: 1, MatchesPlayed: 1}, {Rank: 2, PlayerID: "p2", MatchesPlayed: 1, Losses: 1}}
	plain := map[string]*league.PlayerStats{"p1": {Moves: 5}, "p2": {Moves: 4}}
	var b bytes.Buffer
	writeStatsTable(&b, rows, plain)
	if strings.Contains(b.String(), "think_p50") {
		t.Errorf("clock columns without a clock:\n%s", b.String())
	}
	clocked := map[string]*league.PlayerStats{
		"p1": {Moves: 5, Clock: &league.ClockStats{Games: 1, Moves: 5, ThinkMS: league.Spread{P50: 120, P99: 480}, NetworkMS: league.Spread{P50: 7, P99: 31}, LeftMS: league.Spread{P50: 9350}}},
		"p2": {Moves: 4},
	}
	b.Reset()
	writeStatsTable(&b, rows, clocked)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines:\n%s", len(lines), b.String())
	}
	for i, want := range [][]string{
		{"think_p50", "think_p99", "net_p50", "net_p99", "left_p50", "flags"},
		{"p1", "120", "480", "7", "31", "9350", "0"},
		{"p2", "-", "-", "-", "-", "-", "-"},
	} {
		fields := strings.Fields(lines[i])
		if got := fields[len(fields)-len(want)+1:]; i > 0 && !slices.Equal(got, want[1:]) {
			t.Errorf("line %d ends %v, want %v", i, got, want[1:])
		}
		if i == 0 && !slices.Equal(fields[len(fields)-len(want):], want) {
			t.Errorf("header %v, want it to end with %v", fields, want)
		}
	}
}

// The SPRT of a gauntlet is written with its hypotheses, its LLR between the bounds, the
// pairs and the decision.
func TestWriteSPRT(t *testing.T) {
	f := schedule.Default()
	f.Algorithm, f.Candidates = schedule.Gauntlet, []string{"new"}
	f.SPRT = &schedule.SPRT{Elo0: 0, Elo1: 50, Alpha: 0.05, Beta: 0.05}
	var b bytes.Buffer
	writeSPRT(&b, f, f.SPRT.Test([][2]float64{{1, 1}, {1, 0.5}, {0.5, 0.5}}))
	for _, want := range []string{"SPRT elo0 0, elo1 50, alpha 0.05, beta 0.05", "(-2.94, 2.94), 3 pairs [0 0 1 1 1], games W 3 D 3 L 0", "no decision yet"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("got:\n%s\nlacks %q", b.String(), want)
		}
	}
}

// An arena is written with its games against the budget and why it stopped.
func TestWriteArena(t *testing.T) {
	var b bytes.Buffer
	writeArena(&b, schedule.ArenaState{Games: 12, Budget: 100, Stopped: schedule.ArenaSettled, Reason: "settled after 12 games: every player's rank is certain"})
	if want := "arena 12 of 100 games: settled after 12 games: every player's rank is certain\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
