package league

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
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
			[]string{"user_version 7", "needs 2", "new database"}},
		{"database without a version", []string{"CREATE TABLE something (x)"},
			[]string{"user_version 0", "needs 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "league.db")
			if tc.stmts != nil {
				path = makeDB(t, tc.stmts...)
			}
			s, err := OpenStore(path)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("OpenStore: %v", err)
				}
				defer s.Close()
				var v int
				if err := s.DB().QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
					t.Errorf("user_version %d (%v), want %d", v, err, schemaVersion)
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
		s, err := OpenStore(path)
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

// A database belongs to one league: another league id, game or seed is refused.
func TestNewManagerRefusesAnotherLeaguesDatabase(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	h.stop()
	tests := []struct {
		name   string
		mutate func(*config.Config)
		want   string
	}{
		{"another league id", func(c *config.Config) { c.League.LeagueID = "league-2" }, "database already holds another league"},
		{"another game", func(c *config.Config) { c.League.GameType = "even_odd" }, "plays tic_tac_toe with seed 1, config says even_odd with seed 1"},
		{"another seed", func(c *config.Config) { c.League.Seed = 9 }, "config says tic_tac_toe with seed 9"},
		{"a game not in the registry", func(c *config.Config) { c.League.GameType = "no_such_game" }, `game "no_such_game" is not in the game registry`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store, err := OpenStore(h.dbPath())
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			m, err := NewManager(Options{Config: testConfig(t, tc.mutate), Store: store, Log: zerolog.Nop(), Client: protocol.NewClient(testValidator(t), nil)})
			if err == nil {
				m.Close()
				t.Fatalf("NewManager accepted the database of another league")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}
