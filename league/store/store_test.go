package store

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// makeDB creates a SQLite file holding the given statements.
func makeDB(t *testing.T, stmts ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "league.db")
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return path
}

func TestOpenStoreChecksSchemaVersion(t *testing.T) {
	tests := []struct {
		name  string
		stmts []string
		// wantErr is "" for success, else parts of the error message.
		wantErr []string
	}{
		{"new file", nil, nil},
		{"empty database with another user_version", []string{"PRAGMA user_version = 5"}, nil},
		{"database of a newer League Manager", []string{"CREATE TABLE leagues (league_id TEXT)", "PRAGMA user_version = 7"},
			[]string{"user_version 7", "needs 3", "new database"}},
		{"database without a version", []string{"CREATE TABLE something (x)"},
			[]string{"user_version 0", "needs 3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "league.db")
			if tc.stmts != nil {
				path = makeDB(t, tc.stmts...)
			}
			s, err := Open(path)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("OpenStore: %v", err)
				}
				defer s.Close()
				var v int
				if err := s.DB().QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
					t.Errorf("user_version %d (%v), want %d", v, err, SchemaVersion)
				}
				return
			}
			if err == nil {
				s.Close()
				t.Fatal("OpenStore accepted a database of another schema version")
			}
			if !errors.Is(err, ErrSchemaMismatch) {
				t.Errorf("error %v, want ErrSchemaMismatch", err)
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not say %q", err, part)
				}
			}
		})
	}
}

func TestOpenStoreReopensItsOwnDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "league.db")
	for range 2 {
		s, err := Open(path)
		if err != nil {
			t.Fatalf("OpenStore: %v", err)
		}
		var mode string
		if err := s.DB().QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("journal_mode %q (%v), want wal", mode, err)
		}
		var fk int
		if err := s.DB().QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
			t.Errorf("foreign_keys %d (%v), want 1", fk, err)
		}
		s.Close()
	}
}

// A database of schema version 2 (live standings in a table of their own) is upgraded:
// the table goes, the data stays.
func TestOpenMigratesVersion2(t *testing.T) {
	path := makeDB(t,
		"CREATE TABLE leagues (league_id TEXT PRIMARY KEY, status TEXT NOT NULL, created_at TEXT NOT NULL, config TEXT NOT NULL, game_type TEXT NOT NULL, seed INTEGER NOT NULL, first_player_at TEXT, registration_closed_at TEXT, completed_at TEXT, current_round INTEGER NOT NULL DEFAULT 0)",
		"INSERT INTO leagues (league_id, status, created_at, config, game_type, seed) VALUES ('l1', 'ACTIVE', '2026-01-01T00:00:00Z', '{}', 'even_odd', 7)",
		"CREATE TABLE standings (player_id TEXT PRIMARY KEY, points INTEGER NOT NULL DEFAULT 0)",
		"PRAGMA user_version = 2")
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	var n int
	if err := s.DB().QueryRow("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'standings'").Scan(&n); err != nil || n != 0 {
		t.Errorf("standings table still there (%d, %v)", n, err)
	}
	l, found, err := s.LoadLeague("l1")
	if err != nil || !found || l.GameType != "even_odd" || l.Seed != 7 || l.Status != "ACTIVE" {
		t.Errorf("LoadLeague after migration = %+v, %v, %v", l, found, err)
	}
}

// Live standings are counted from the stored results over every registered player.
func TestStandingsAreCountedFromResults(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "league.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CreateLeague(League{ID: "l1", Status: "REGISTRATION", GameType: "even_odd", Seed: 1, Config: []byte("{}")}, "t0"); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"p1", "p2", "p3"} {
		a := Agent{Kind: KindPlayer, ID: id, Token: "tok-" + id, Status: "ACTIVE", Endpoint: "http://x", ConversationID: "c", RegisteredAt: "t0"}
		if err := s.AddAgent("l1", a, i == 0); err != nil {
			t.Fatal(err)
		}
	}
	rounds := []Round{{ID: "r1", Number: 1, Cycle: 1, Status: RoundPending, Bye: "p3", Matches: []Match{{ID: "m1", RoundID: "r1", Status: "PENDING", Players: [2]string{"p1", "p2"}, Seed: 5}}}}
	if err := s.SaveSchedule("l1", "SCHEDULING", "even_odd", "t1", rounds); err != nil {
		t.Fatal(err)
	}
	res := Result{Outcome: map[string]string{"p1": "loss", "p2": "win"}, Points: map[string]int{"p1": 0, "p2": 3}, ReportedAt: "t2", Referee: ""}
	if err := s.RecordResult("m1", "COMPLETED", res, nil); err != nil {
		t.Fatal(err)
	}
	// A second result for the same match is refused and changes nothing.
	if err := s.RecordResult("m1", "COMPLETED", res, nil); err == nil {
		t.Fatal("a second result of m1 was stored")
	}
	rows, err := s.Standings()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(rows)
	want := "[{1 p2 3 1 0 0 1 false} {2 p1 0 0 0 1 1 false} {3 p3 0 0 0 0 0 false}]"
	if got != want {
		t.Errorf("Standings = %s, want %s", got, want)
	}
	sched, err := s.Schedule()
	if err != nil || len(sched) != 1 || sched[0].Bye != "p3" || sched[0].Matches[0].Result == nil || sched[0].Matches[0].Status != "COMPLETED" {
		t.Errorf("Schedule = %+v, %v", sched, err)
	}
}
