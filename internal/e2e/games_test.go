package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/corentings/chess/v2"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/game"
	"github.com/agentleague/agentleague/internal/testtools"
)

func TestConnectFourAndChessLeagues(t *testing.T) {
	for _, tc := range []struct {
		game, strategy string
		players        int
	}{
		{"connect_four", "alphabeta", 5},
		{"chess", "alphabeta", 4},
		{"chess", "random", 3},
	} {
		t.Run(tc.game+"_"+tc.strategy, func(t *testing.T) {
			run := runLeague(t, leagueOpts{players: tc.players, referees: 2, game: tc.game, strategy: tc.strategy, seed: 31})
			run.checkLeague(t, 1)
			if tc.game == "chess" {
				checkPGNExport(t, run, tc.players*(tc.players-1)/2)
			}
			t.Logf("%s with %s: %d players in %v", tc.game, tc.strategy, tc.players, run.elapsed)
		})
	}
}

// exportPGN exports the league as PGN with league export, has Debian's pgn-extract read
// the file, wanting games games, and returns it.
func exportPGN(t *testing.T, run *leagueRun, games int) []byte {
	t.Helper()
	path := filepath.Join(run.dir, "league.pgn")
	if out, err := exec.Command(filepath.Join(binDir, "league"), "export", "--db", run.db, "--format", "pgn", "--out", path).CombinedOutput(); err != nil {
		t.Fatalf("export pgn: %v\n%s", err, out)
	}
	if n, err := testtools.CheckPGN(path); err != nil || n != games {
		t.Fatalf("pgn-extract read %d games, error %v; want %d and none", n, err, games)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkPGNExport exports the league as PGN, has Debian's pgn-extract validate the file,
// reads every game back with the chess library, and checks each game's tags against the
// database and the configuration: the Seven Tag Roster first, then Termination,
// TimeControl, PlyCount and MatchId.
func checkPGNExport(t *testing.T, run *leagueRun, games int) {
	t.Helper()
	out := exportPGN(t, run, games)
	sc := chess.NewScanner(bytes.NewReader(out))
	n := 0
	for sc.HasNext() {
		g, err := sc.ParseNext()
		if err != nil {
			t.Fatalf("game %d does not parse: %v", n+1, err)
		}
		if len(g.Moves()) == 0 {
			t.Errorf("game %d has no moves", n+1)
		}
		n++
	}
	if n != games {
		t.Errorf("the PGN holds %d games, want %d", n, games)
	}

	cfg, err := config.Load(filepath.Join(moduleRoot(), "config", "league.yaml"), game.Default())
	if err != nil {
		t.Fatal(err)
	}
	want := pgnWants(t, run)
	days := []string{run.started.UTC().Format("2006.01.02"), time.Now().UTC().Format("2006.01.02")}
	order := []string{"Event", "Site", "Date", "Round", "White", "Black", "Result", "Termination", "TimeControl", "PlyCount", "MatchId"}
	headers := pgnHeaders(string(out))
	for k, h := range headers {
		var names []string
		tags := map[string]string{}
		for _, tag := range h {
			names = append(names, tag[0])
			tags[tag[0]] = tag[1]
		}
		if !slices.Equal(names, order) {
			t.Errorf("game %d has tags %v, want %v", k+1, names, order)
		}
		w, ok := want[tags["MatchId"]]
		if !ok {
			t.Errorf("game %d: MatchId %q is not a match of the league with a result", k+1, tags["MatchId"])
			continue
		}
		delete(want, tags["MatchId"])
		for name, value := range map[string]string{
			"Event": cfg.League.Name, "Site": "Agent League " + cfg.League.LeagueID, "Round": w.round,
			"White": w.white, "Black": w.black, "Result": w.result, "Termination": w.termination,
			"TimeControl": fmt.Sprintf("1/%d", cfg.Timeouts.MatchLevel.MoveResponse/1000),
		} {
			if tags[name] != value {
				t.Errorf("game %d (%s): got %s %q, want %q", k+1, tags["MatchId"], name, tags[name], value)
			}
		}
		if !slices.Contains(days, tags["Date"]) {
			t.Errorf("game %d (%s): got Date %q, want one of %v", k+1, tags["MatchId"], tags["Date"], days)
		}
	}
	if len(headers) != games || len(want) != 0 {
		t.Errorf("the PGN has %d headers, want %d; matches without a game: %v", len(headers), games, want)
	}
}

// pgnWant is what a match's PGN header should say, from the database.
type pgnWant struct{ round, white, black, result, termination string }

// pgnWants reads every match with a result: its round number, players (the first mover
// has White), its result from White's side, and how it ended: every game of these
// leagues ends by the rules, a draw at the move cap being the league's adjudication.
func pgnWants(t *testing.T, run *leagueRun) map[string]pgnWant {
	t.Helper()
	rows, err := run.openDB(t).Query(`SELECT m.match_id, r.round_number, m.players, x.outcome, x.game_metadata
		FROM matches m JOIN rounds r ON r.round_id = m.round_id JOIN match_results x ON x.match_id = m.match_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	results := map[string]string{"win/loss": "1-0", "loss/win": "0-1", "draw/draw": "1/2-1/2"}
	want := map[string]pgnWant{}
	for rows.Next() {
		var id, round, players, outcome, meta string
		if err := rows.Scan(&id, &round, &players, &outcome, &meta); err != nil {
			t.Fatal(err)
		}
		var ps []string
		var o map[string]string
		var md struct {
			Termination string `json:"termination"`
			FinalState  struct {
				Termination string `json:"termination"`
			} `json:"final_state"`
		}
		if json.Unmarshal([]byte(players), &ps) != nil || len(ps) != 2 || json.Unmarshal([]byte(outcome), &o) != nil || json.Unmarshal([]byte(meta), &md) != nil {
			t.Fatalf("match %s: players %s, outcome %s, game_metadata %s", id, players, outcome, meta)
		}
		if md.Termination != "normal" {
			t.Errorf("match %s ended by %s, want the rules", id, md.Termination)
		}
		termination := "normal"
		if md.FinalState.Termination == "move_cap" {
			termination = "adjudication"
		}
		want[id] = pgnWant{round: round, white: ps[0], black: ps[1], result: results[o[ps[0]]+"/"+o[ps[1]]], termination: termination}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}

// pgnHeaders returns each game's tag pairs, name and value, in file order. Values are not
// unescaped: the league's tags hold no quote or backslash.
func pgnHeaders(pgn string) [][][2]string {
	var games [][][2]string
	inHeader := false
	for _, line := range strings.Split(pgn, "\n") {
		if !strings.HasPrefix(line, "[") {
			inHeader = false
			continue
		}
		if !inHeader {
			games = append(games, nil)
			inHeader = true
		}
		name, value, _ := strings.Cut(strings.TrimSuffix(strings.TrimPrefix(line, "["), `"]`), ` "`)
		games[len(games)-1] = append(games[len(games)-1], [2]string{name, value})
	}
	return games
}
