package export

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/internal/testtools"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
)

// match is one match of a seeded league; an empty outcome leaves it PENDING, without a result.
type match struct {
	id, round, players, outcome, points, meta, reportedAt string
}

// seed writes a league of three players (a, b, c) with rounds 1 and 2, the matches given
// (in match_index order) and the standings of one win of a over b.
func seed(t *testing.T, gameType, cfg string, matches []match) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "league.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	type stmt struct {
		query string
		args  []any
	}
	stmts := []stmt{
		{`INSERT INTO leagues (league_id, status, created_at, config, game_type, seed) VALUES ('l1', 'ACTIVE', 't', ?, ?, 7)`, []any{cfg, gameType}},
		{`INSERT INTO players (player_id, league_id, auth_token, status, registered_at, endpoint_url, conversation_id, agent_card) VALUES
			('a', 'l1', 'ta', 'ACTIVE', 't', 'u', 'c', '{"model":"m1","version":"3"}'), ('b', 'l1', 'tb', 'ACTIVE', 't', 'u', 'c', NULL), ('c', 'l1', 'tc', 'ACTIVE', 't', 'u', 'c', NULL)`, nil},
		{`INSERT INTO rounds (round_id, league_id, round_number, status) VALUES ('round-1', 'l1', 1, 'COMPLETED'), ('round-2', 'l1', 2, 'ACTIVE')`, nil},
	}
	for i, m := range matches {
		status := "PENDING"
		if m.outcome != "" {
			status = "COMPLETED"
		}
		stmts = append(stmts, stmt{`INSERT INTO matches (match_id, round_id, game_type, players, status, match_seed, match_index) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			[]any{m.id, m.round, gameType, m.players, status, i, i + 1}})
		if m.outcome != "" {
			stmts = append(stmts, stmt{`INSERT INTO match_results (result_id, match_id, outcome, points, game_metadata, reported_at) VALUES (?, ?, ?, ?, ?, ?)`,
				[]any{"r-" + m.id, m.id, m.outcome, m.points, m.meta, m.reportedAt}})
		}
	}
	tx, err := st.DB().BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if _, err := tx.Exec(s.query, s.args...); err != nil {
			t.Fatalf("%s: %v", s.query, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	return st
}

func TestLoadAndWrite(t *testing.T) {
	d, err := Load(seed(t, "tic_tac_toe", "{}", []match{
		{"m1", "round-1", `["a","b"]`, `{"a":"win","b":"loss"}`, `{"a":3,"b":0}`, `{"termination":"normal"}`, "t1"},
		{"m2", "round-2", `["c","a"]`, "", "", "", ""},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if d.League.LeagueID != "l1" || len(d.Results) != 2 || len(d.Standings) != 3 || d.Standings[0].PlayerID != "a" || d.Standings[0].Rank != 1 {
		t.Fatalf("got %+v", d)
	}
	// Each player with the agent card it registered with.
	if card := (protocol.AgentCard{Model: "m1", Version: "3"}); len(d.Players) != 3 || d.Players[0].AgentCard == nil || *d.Players[0].AgentCard != card ||
		d.Players[0].CardHash != card.Hash() || d.Players[1].AgentCard != nil || d.Players[1].CardHash != "" {
		t.Errorf("players %+v: want a's card and hash, none for b", d.Players)
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
	if got := strings.Join(results[1], ","); got != "1,round-1,m1,COMPLETED,a,b,win,loss,3,0,normal,,t1,,," {
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

// chessLeague is a chess league named with a quote and a backslash, with 30 s moves: a
// checkmate, a timeout, a draw at the move cap, a double no-show, a forfeit of the League
// Manager's (no game) and a pending match.
func chessLeague(t *testing.T) *store.Store {
	t.Helper()
	cfg, err := json.Marshal(config.Config{
		League:   config.League{LeagueID: "l1", Name: `The "Cup" \ of 2025`, GameType: "chess"},
		Timeouts: config.TimeoutPolicy{MatchLevel: config.MatchLevelTimeouts{MoveResponse: 30000}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return seed(t, "chess", string(cfg), []match{
		{"m1", "round-1", `["a","b"]`, `{"a":"loss","b":"win"}`, `{"a":0,"b":3}`,
			`{"termination":"normal","started_at":"2025-03-04T23:59:59.000000Z","final_state":{"termination":"checkmate","moves_san":["f3","e5","g4","Qh4#"],"pgn":"[Event \"Agent League\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n"}}`,
			"2025-03-05T00:00:01.000000Z"},
		{"m2", "round-1", `["c","a"]`, `{"c":"win","a":"loss"}`, `{"c":3,"a":0}`,
			`{"termination":"timeout","loser":"a","started_at":"2025-03-05T10:00:00.000000Z","final_state":{"termination":"in_progress","moves_san":["e4"]}}`,
			"2025-03-05T10:01:00.000000Z"},
		{"m3", "round-2", `["b","c"]`, `{"b":"draw","c":"draw"}`, `{"b":1,"c":1}`,
			`{"termination":"normal","final_state":{"termination":"move_cap","moves_san":["Nf3","Nf6","Ng1","Ng8"]}}`,
			"2025-03-06T08:00:00Z"},
		{"m4", "round-2", `["a","c"]`, `{"a":"loss","c":"loss"}`, `{"a":0,"c":0}`,
			`{"termination":"double_no_show","started_at":"2025-03-06T09:00:00+00:00","final_state":{"termination":"in_progress","moves_san":[]}}`,
			"2025-03-06T09:00:10Z"},
		{"m5", "round-2", `["b","a"]`, `{"b":"win","a":"loss"}`, `{"b":3,"a":0}`, `{"forfeit":"suspended","suspended":["a"]}`, "2025-03-06T09:00:00Z"},
		{"m6", "round-2", `["c","b"]`, "", "", "", ""},
	})
}

// TestWritePGN writes the Seven Tag Roster from the league (its name escaped), then
// Termination, TimeControl, PlyCount and MatchId, with the match's result as Result and as
// the game termination marker; games without a board (a forfeit, a pending match) are left
// out. Debian's pgn-extract reads the file without a diagnostic.
func TestWritePGN(t *testing.T) {
	d, err := Load(chessLeague(t))
	if err != nil {
		t.Fatal(err)
	}
	if d.League.Name != `The "Cup" \ of 2025` || d.League.MoveResponseMS != 30000 {
		t.Errorf("got league %+v, want the name and move deadline of its config", d.League)
	}
	var buf bytes.Buffer
	if err := WritePGN(&buf, d); err != nil {
		t.Fatal(err)
	}
	roster := func(date, round, white, black, result string) string {
		return `[Event "The \"Cup\" \\ of 2025"]` + "\n" + `[Site "Agent League l1"]` + "\n" +
			`[Date "` + date + `"]` + "\n" + `[Round "` + round + `"]` + "\n" +
			`[White "` + white + `"]` + "\n" + `[Black "` + black + `"]` + "\n" + `[Result "` + result + `"]` + "\n"
	}
	want := roster("2025.03.04", "1", "a", "b", "0-1") +
		"[Termination \"normal\"]\n[TimeControl \"1/30\"]\n[PlyCount \"4\"]\n[MatchId \"m1\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n" +
		roster("2025.03.05", "1", "c", "a", "1-0") +
		"[Termination \"time forfeit\"]\n[TimeControl \"1/30\"]\n[PlyCount \"1\"]\n[MatchId \"m2\"]\n\n1. e4 1-0\n\n" +
		roster("2025.03.06", "2", "b", "c", "1/2-1/2") +
		"[Termination \"adjudication\"]\n[TimeControl \"1/30\"]\n[PlyCount \"4\"]\n[MatchId \"m3\"]\n\n1. Nf3 Nf6 2. Ng1 Ng8 1/2-1/2\n\n" +
		roster("2025.03.06", "2", "a", "c", "*") +
		"[Termination \"rules infraction\"]\n[TimeControl \"1/30\"]\n[PlyCount \"0\"]\n[MatchId \"m4\"]\n\n*\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	path := filepath.Join(t.TempDir(), "league.pgn")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := testtools.CheckPGN(path); err != nil || n != 4 {
		t.Errorf("pgn-extract read %d games, error %v; want 4 and none", n, err)
	}
}

// TestPGNTags maps terminations, move deadlines and times to their PGN tag values.
func TestPGNTags(t *testing.T) {
	for _, tt := range []struct{ match, chess, want string }{
		{"normal", "checkmate", "normal"},
		{"normal", "threefold_repetition", "normal"},
		{"normal", "move_cap", "adjudication"},
		{"timeout", "in_progress", "time forfeit"},
		{"timeout_vs_insufficient_material", "in_progress", "time forfeit"},
		{"illegal_move", "in_progress", "rules infraction"},
		{"no_show", "in_progress", "rules infraction"},
		{"double_no_show", "in_progress", "rules infraction"},
		{"aborted", "in_progress", ""},
	} {
		if got := pgnTermination(tt.match, tt.chess); got != tt.want {
			t.Errorf("pgnTermination(%q, %q) = %q, want %q", tt.match, tt.chess, got, tt.want)
		}
	}
	for ms, want := range map[int]string{30000: "1/30", 1000: "1/1", 1500: "", 300: "", 0: ""} {
		if got := pgnTimeControl(ms); got != want {
			t.Errorf("pgnTimeControl(%d) = %q, want %q", ms, got, want)
		}
	}
	for _, tt := range []struct {
		times []string
		want  string
	}{
		{[]string{"2025-12-31T23:59:59.999Z", "2026-01-01T00:00:01Z"}, "2025.12.31"},
		{[]string{"", "2026-01-01T00:00:01Z"}, "2026.01.01"},
		{[]string{"yesterday", ""}, "????.??.??"},
	} {
		if got := pgnDate(tt.times...); got != tt.want {
			t.Errorf("pgnDate(%q) = %q, want %q", tt.times, got, tt.want)
		}
	}
}

// TestWritePGNUnnamed gives a league whose stored configuration has no name (nor move
// deadline) the standard's unknown Event and no TimeControl.
func TestWritePGNUnnamed(t *testing.T) {
	d, err := Load(seed(t, "chess", "{}", []match{
		{"m1", "round-1", `["a","b"]`, `{"a":"win","b":"loss"}`, `{"a":3,"b":0}`,
			`{"termination":"illegal_move","loser":"b","final_state":{"termination":"in_progress","moves_san":["e4"]}}`, "2025-03-05T00:00:01Z"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePGN(&buf, d); err != nil {
		t.Fatal(err)
	}
	want := "[Event \"?\"]\n[Site \"Agent League l1\"]\n[Date \"2025.03.05\"]\n[Round \"1\"]\n[White \"a\"]\n[Black \"b\"]\n[Result \"1-0\"]\n" +
		"[Termination \"rules infraction\"]\n[PlyCount \"1\"]\n[MatchId \"m1\"]\n\n1. e4 1-0\n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestExportClocks: a chess league under a 10+0.1 clock. Its PGN has the TimeControl of
// each match (the one the referee recorded, else the league's) and the mover's clock after
// each move as {[%clk]}, which pgn-extract reads; the CSV has the time control and the
// clocks left at the end, and the JSON keeps the move records' figures.
func TestExportClocks(t *testing.T) {
	cfg, err := json.Marshal(config.Config{
		League:      config.League{LeagueID: "l1", Name: "Blitz", GameType: "chess"},
		Timeouts:    config.TimeoutPolicy{MatchLevel: config.MatchLevelTimeouts{MoveResponse: 30000}},
		TimeControl: &config.TimeControl{Clock: "10+0.1", BankMS: 2000},
	})
	if err != nil {
		t.Fatal(err)
	}
	moves := `"moves":[{"step":1,"player":"a","move":"f2f3","outcome":"SUCCESS","elapsed_ms":250,"network_ms":40,"clock_ms":9890},` +
		`{"step":2,"player":"b","move":"e7e5","outcome":"SUCCESS","elapsed_ms":120,"network_ms":0,"clock_ms":9980},` +
		`{"step":3,"player":"a","move":"g2g4","outcome":"SUCCESS","elapsed_ms":9000,"network_ms":40,"clock_ms":990},` +
		`{"step":4,"player":"b","move":"d8h4","outcome":"SUCCESS","elapsed_ms":3,"network_ms":0,"clock_ms":10077}]`
	d, err := Load(seed(t, "chess", string(cfg), []match{
		{"m1", "round-1", `["a","b"]`, `{"a":"loss","b":"win"}`, `{"a":0,"b":3}`,
			`{"termination":"normal","started_at":"2025-03-04T10:00:00Z","time_control":{"base_ms":5000,"increment_ms":50},` + moves +
				`,"final_state":{"termination":"checkmate","moves_san":["f3","e5","g4","Qh4#"]}}`, "2025-03-04T10:01:00Z"},
		{"m2", "round-1", `["c","a"]`, `{"c":"win","a":"loss"}`, `{"c":3,"a":0}`,
			`{"termination":"timeout","loser":"a","started_at":"2025-03-04T11:00:00Z","moves":[{"step":1,"player":"c","move":"e2e4","outcome":"SUCCESS","elapsed_ms":50,"network_ms":10,"clock_ms":10060}],` +
				`"final_state":{"termination":"in_progress","moves_san":["e4"]}}`, "2025-03-04T11:00:20Z"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if d.League.TimeControl != "10+0.1" {
		t.Errorf("got league time control %q, want 10+0.1", d.League.TimeControl)
	}
	var buf bytes.Buffer
	if err := WritePGN(&buf, d); err != nil {
		t.Fatal(err)
	}
	pgn := buf.String()
	for _, want := range []string{
		"[TimeControl \"5+0.05\"]\n[PlyCount \"4\"]\n[MatchId \"m1\"]\n\n" +
			"1. f3 {[%clk 0:00:09.8]} 1... e5 {[%clk 0:00:09.9]} 2. g4 {[%clk 0:00:00.9]}\n2... Qh4# {[%clk 0:00:10]} 0-1\n",
		"[TimeControl \"10+0.1\"]\n[PlyCount \"1\"]\n[MatchId \"m2\"]\n\n1. e4 {[%clk 0:00:10]} 1-0\n",
	} {
		if !strings.Contains(pgn, want) {
			t.Errorf("got\n%s\nwant it to hold\n%s", pgn, want)
		}
	}
	path := filepath.Join(t.TempDir(), "clocks.pgn")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := testtools.CheckPGN(path); err != nil || n != 2 {
		t.Errorf("pgn-extract read %d games, error %v; want 2 and none", n, err)
	}

	buf.Reset()
	if err := WriteCSV(&buf, d); err != nil {
		t.Fatal(err)
	}
	tables := strings.Split(strings.TrimSpace(buf.String()), "\n\n")
	results, err := csv.NewReader(strings.NewReader(tables[1])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		"time_control,first_clock_ms,second_clock_ms",
		"5+0.05,990,10077",
		"10+0.1,10060,",
	} {
		if got := strings.Join(results[i][13:], ","); got != want {
			t.Errorf("csv row %d ends %q, want %q", i, got, want)
		}
	}

	buf.Reset()
	if err := WriteJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var back struct {
		League struct {
			TimeControl string `json:"time_control"`
		} `json:"league"`
		Results []struct {
			Metadata struct {
				Moves []map[string]any `json:"moves"`
			} `json:"game_metadata"`
		} `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.League.TimeControl != "10+0.1" || len(back.Results) != 2 || len(back.Results[0].Metadata.Moves) != 4 {
		t.Fatalf("json export: got %+v", back)
	}
	if mv := back.Results[0].Metadata.Moves[2]; mv["elapsed_ms"] != 9000.0 || mv["network_ms"] != 40.0 || mv["clock_ms"] != 990.0 {
		t.Errorf("json export: move 3 is %v, want elapsed_ms 9000, network_ms 40, clock_ms 990", mv)
	}
}
