package store

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
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
		{"empty database with another user_version", []string{"PRAGMA user_version = 6"}, nil},
		{"database of a newer League Manager", []string{"CREATE TABLE leagues (league_id TEXT)", "PRAGMA user_version = 7"},
			[]string{"user_version 7", "needs 5", "new database"}},
		{"database without a version", []string{"CREATE TABLE something (x)"},
			[]string{"user_version 0", "needs 5"}},
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
		"CREATE TABLE byes (round_id TEXT NOT NULL, player_id TEXT NOT NULL, PRIMARY KEY (round_id, player_id))",
		"INSERT INTO byes (round_id, player_id) VALUES ('round-1', 'p3')",
		"CREATE TABLE players (player_id TEXT PRIMARY KEY, league_id TEXT NOT NULL, auth_token TEXT NOT NULL UNIQUE, status TEXT NOT NULL, registered_at TEXT NOT NULL, endpoint_url TEXT NOT NULL, display_name TEXT, features TEXT NOT NULL DEFAULT '[]', conversation_id TEXT NOT NULL, violations INTEGER NOT NULL DEFAULT 0, suspended_until TEXT)",
		"INSERT INTO players (player_id, league_id, auth_token, status, registered_at, endpoint_url, conversation_id) VALUES ('p3', 'l1', 't3', 'ACTIVE', '2026-01-01T00:00:00Z', 'http://127.0.0.1:9/p3', 'c3')",
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
	// Version 4: a round-robin bye of before scores nothing.
	var points int
	if err := s.DB().QueryRow("SELECT points FROM byes WHERE player_id = 'p3'").Scan(&points); err != nil || points != 0 {
		t.Errorf("bye points after migration = %d, %v; want 0", points, err)
	}
	// Version 5: a player of before has no agent card.
	if agents, err := s.Agents(); err != nil || len(agents) != 1 || agents[0].AgentCard != nil {
		t.Errorf("players after migration = %+v, %v; want p3 without a card", agents, err)
	}
	if _, found, err := s.Format(); found || err != nil {
		t.Errorf("Format of a database from before formats: found %v, %v", found, err)
	}
}

// A Swiss bye scores its points in the standings without a match; rounds paired later
// are stored with the step that starts them; the format is read back as stored.
func TestSwissByesRoundsAddedAndFormat(t *testing.T) {
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
	format := schedule.Default()
	byePoints := 3
	format.Algorithm, format.Rounds, format.ByePoints, format.Seeding = schedule.Swiss, 2, &byePoints, []string{"p2"}
	format.Tiebreaks, format.RatingSamples = []string{standings.SonnebornBerger}, 50
	format.ConcurrentMatchesPerRound = false // not stored
	r1 := Round{ID: "round-1", Number: 1, Cycle: 1, Status: RoundPending, Bye: "p3", ByePoints: 3, Matches: []Match{{ID: "m1", RoundID: "round-1", Status: "PENDING", Players: [2]string{"p1", "p2"}, Seed: 5, Index: 1}}}
	if err := s.SaveSchedule("l1", "SCHEDULING", "even_odd", "t1", format, []Round{r1}); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.Format()
	if err != nil || !found || !reflect.DeepEqual(got, format) {
		t.Errorf("Format = %+v, %v, %v; want %+v", got, found, err, format)
	}
	if err := s.AdvanceRound(Advance{LeagueID: "l1", At: "t2", Next: &Round{ID: "round-1", Number: 1}}); err != nil {
		t.Fatal(err)
	}
	res := Result{Outcome: map[string]string{"p1": "draw", "p2": "draw"}, Points: map[string]int{"p1": 1, "p2": 1}, ReportedAt: "t3"}
	if err := s.RecordResult("m1", "COMPLETED", res, nil); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Standings()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rows) != "[{1 p3 3 0 0 0 0 false} {2 p1 1 0 1 0 1 false} {3 p2 1 0 1 0 1 false}]" {
		t.Errorf("standings with a bye: %v", rows)
	}
	r2 := Round{ID: "round-2", Number: 2, Cycle: 1, Status: RoundPending, Bye: "p1", ByePoints: 3, Matches: []Match{{ID: "m2", RoundID: "round-2", Status: "PENDING", Players: [2]string{"p3", "p2"}, Seed: 6, Index: 1}}}
	adv := Advance{LeagueID: "l1", At: "t4", Done: &Snapshot{RoundID: "round-1", Rows: rows}, Add: []Round{r2}, GameType: "even_odd", Next: &Round{ID: "round-2", Number: 2}, Rounds: 2}
	if err := s.AdvanceRound(adv); err != nil {
		t.Fatal(err)
	}
	sched, err := s.Schedule()
	if err != nil || len(sched) != 2 || sched[1].Status != RoundActive || sched[1].Bye != "p1" || sched[1].ByePoints != 3 || len(sched[1].Matches) != 1 || sched[0].Status != RoundCompleted {
		t.Fatalf("Schedule = %+v, %v", sched, err)
	}
	// A round stored twice is refused whole: the step that would add it changes nothing.
	adv.Done = nil
	if err := s.AdvanceRound(adv); err == nil {
		t.Fatal("round-2 was added twice")
	}
	if sched, _ := s.Schedule(); len(sched) != 2 {
		t.Errorf("a refused step changed the schedule: %d rounds", len(sched))
	}
}

// The format row written by an earlier League Manager reads back as it was; one that
// breaks the format's rules is refused with the path of the field.
func TestStoredFormatIsValidated(t *testing.T) {
	const earlier = `{"algorithm":"knockout","cycles":1,"rounds":0,"bye_points":3,"best_of":3,"tie_rule":"sudden_death",` +
		`"seeding":["p2"],"candidates":[],"games_per_pair":2,"tiebreaks":[],"rating_samples":1000}`
	for _, tt := range []struct {
		name, stored, wantErr string
	}{
		{"earlier version", earlier, ""},
		{"unknown tie rule", strings.Replace(earlier, "sudden_death", "replay", 1), `scheduling.tie_rule: must be one of "higher_seed", "coin_toss", "sudden_death", got "replay"`},
		{"unknown tiebreak", strings.Replace(earlier, `"tiebreaks":[]`, `"tiebreaks":["buchholz"]`, 1), `ranking.tiebreaks[0]: must be one of`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "league.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.DB().Exec(`INSERT INTO meta (key, value) VALUES ('format', ?)`, tt.stored); err != nil {
				t.Fatal(err)
			}
			f, found, err := s.Format()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Format = %+v, %v; want an error containing %q", f, err, tt.wantErr)
				}
				return
			}
			if err != nil || !found || f.Algorithm != schedule.Knockout || f.BestOf != 3 || f.TieRule != schedule.TieSuddenDeath || *f.ByePoints != 3 {
				t.Errorf("Format = %+v, %v, %v", f, found, err)
			}
		})
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
	format := schedule.Default()
	format.Tiebreaks, format.RatingSamples = []string{standings.HeadToHead}, 10
	if err := s.SaveSchedule("l1", "SCHEDULING", "even_odd", "t1", format, rounds); err != nil {
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
