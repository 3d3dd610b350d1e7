package export

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/league"
)

// seed writes a one-round league of three players: a decided match, a drawn one, a bye,
// and a pending match of round 2.
func seed(t *testing.T, gameType string, pgn string) *sql.DB {
	t.Helper()
	st, err := league.OpenStore(filepath.Join(t.TempDir(), "league.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	meta := `{"termination":"normal","final_state":{"pgn":` + strings.ReplaceAll(jsonString(pgn), "\n", `\n`) + `}}`
	err = st.Tx(context.Background(), func(tx *sql.Tx) error {
		stmts := []string{
			`INSERT INTO leagues (league_id, status, created_at, config, game_type, seed) VALUES ('l1', 'ACTIVE', 't', '{}', '` + gameType + `', 7)`,
			`INSERT INTO players (player_id, league_id, auth_token, status, registered_at, endpoint_url, conversation_id) VALUES
				('a', 'l1', 'ta', 'ACTIVE', 't', 'u', 'c'), ('b', 'l1', 'tb', 'ACTIVE', 't', 'u', 'c'), ('c', 'l1', 'tc', 'ACTIVE', 't', 'u', 'c')`,
			`INSERT INTO rounds (round_id, league_id, round_number, status) VALUES ('round-1', 'l1', 1, 'COMPLETED'), ('round-2', 'l1', 2, 'ACTIVE')`,
			`INSERT INTO matches (match_id, round_id, game_type, players, status, match_seed, match_index) VALUES
				('m1', 'round-1', '` + gameType + `', '["a","b"]', 'COMPLETED', 1, 1),
				('m2', 'round-2', '` + gameType + `', '["c","a"]', 'PENDING', 2, 1)`,
			`INSERT INTO match_results (result_id, match_id, outcome, points, game_metadata, reported_at, referee_id) VALUES
				('r1', 'm1', '{"a":"win","b":"loss"}', '{"a":3,"b":0}', '` + meta + `', 't1', NULL)`,
			`INSERT INTO standings (player_id, points, wins, draws, losses, matches_played) VALUES ('a', 3, 1, 0, 0, 1), ('b', 0, 0, 0, 1, 1), ('c', 0, 0, 0, 0, 0)`,
		}
		for _, s := range stmts {
			if _, err := tx.Exec(s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return st.DB()
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestLoadAndWrite(t *testing.T) {
	d, err := Load(seed(t, "tic_tac_toe", ""))
	if err != nil {
		t.Fatal(err)
	}
	if d.League.LeagueID != "l1" || len(d.Results) != 2 || len(d.Standings) != 3 || d.Standings[0].PlayerID != "a" || d.Standings[0].Rank != 1 {
		t.Fatalf("got %+v", d)
	}
	if r := d.Results[0]; r.MatchID != "m1" || r.Outcome["a"] != "win" || r.Termination != "normal" {
		t.Errorf("got result %+v", r)
	}
	if r := d.Results[1]; r.Status != "PENDING" || r.Outcome != nil {
		t.Errorf("a match without a result: got %+v", r)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, d); err != nil {
		t.Fatal(err)
	}
	tables := strings.Split(strings.TrimSpace(buf.String()), "\n\n")
	if len(tables) != 2 {
		t.Fatalf("got %d csv tables", len(tables))
	}
	results, err := csv.NewReader(strings.NewReader(tables[1])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(results[1], ","); got != "1,round-1,m1,COMPLETED,a,b,win,loss,3,0,normal,,t1" {
		t.Errorf("got csv row %q", got)
	}
	buf.Reset()
	if err := WriteJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var back Data
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || len(back.Results) != 2 {
		t.Errorf("json does not read back: %v", err)
	}
	if err := WritePGN(&buf, d); err == nil {
		t.Error("a tic-tac-toe league exported as PGN")
	}
}

func TestWritePGN(t *testing.T) {
	pgn := "[Event \"Agent League\"]\n\n1. e4 e5 1-0\n"
	d, err := Load(seed(t, "chess", pgn))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePGN(&buf, d); err != nil {
		t.Fatal(err)
	}
	if buf.String() != pgn {
		t.Errorf("got %q, want %q", buf.String(), pgn)
	}
}
