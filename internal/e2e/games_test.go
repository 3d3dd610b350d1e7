package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/corentings/chess/v2"
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

// checkPGNExport exports the league as PGN and reads every game back with the chess
// library.
func checkPGNExport(t *testing.T, run *leagueRun, games int) {
	t.Helper()
	out, err := exec.Command(filepath.Join(binDir, "league"), "export", "--db", run.db, "--format", "pgn").Output()
	if err != nil {
		t.Fatalf("export pgn: %v", err)
	}
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
}
