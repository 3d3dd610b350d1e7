package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Issue 39, "Must show" (openings): a chess league from a 20-position EPD book in game
// pairs, a gauntlet of 40 games between two players. On the database, every opening is
// played exactly twice, the two games with colours swapped; the PGN export sets each game
// up from its position (SetUp, FEN) and passes pgn-extract; league verify re-plays every
// game from its opening.
func TestChessOpeningsInGamePairs(t *testing.T) {
	book, err := filepath.Abs(filepath.Join(moduleRoot(), "testdata", "openings", "book20.epd"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["scheduling"] = map[string]any{"algorithm": "gauntlet", "candidates": []string{"p01"}, "games_per_pair": 40}
		league["ranking"] = map[string]any{"rating_samples": 100}
		league["openings"] = map[string]any{"book": book, "game_pairs": true}
		league["league"].(map[string]any)["game_type"] = "chess"
	})
	// Games capped at 40 plies from the book's position, so that the league ends in seconds.
	capChessPlies(t, cfg, 40)
	run := startLeague(t, leagueOpts{players: 2, referees: 2, game: "chess", strategy: "random", seed: 39, config: cfg})
	run.waitCompleted(t, 5*time.Minute)

	rs := results(t, run)
	if len(rs) != 40 {
		t.Fatalf("%d results, want 40", len(rs))
	}
	white := map[string][]string{} // opening name -> White of each of its games
	for _, r := range rs {
		o, _ := r.metadata["opening"].(map[string]any)
		name, _ := o["name"].(string)
		fen, _ := o["fen"].(string)
		if !strings.HasPrefix(name, "book20.epd#") || fen == "" {
			t.Errorf("match %v: opening %v, want an entry of book20.epd with its FEN", r.players, o)
		}
		white[name] = append(white[name], r.players[0])
	}
	if len(white) != 20 {
		t.Errorf("%d openings played, want the book's 20: %v", len(white), white)
	}
	for name, w := range white {
		if len(w) != 2 || w[0] == w[1] {
			t.Errorf("opening %s: White %v, want two games with colours swapped", name, w)
		}
	}

	out, err := exec.Command(filepath.Join(binDir, "league"), "verify", run.audit, "--db", run.db).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "40 matches re-played") {
		t.Errorf("league verify: %v\n%s\nwant the 40 matches re-played from their openings", err, out)
	}
	pgn := exportPGN(t, run, 40)
	if setups, fens := strings.Count(string(pgn), "[SetUp \"1\"]"), len(regexp.MustCompile(`\[FEN "[^"]+"\]`).FindAllString(string(pgn), -1)); setups != 40 || fens != 40 {
		t.Errorf("the PGN has %d SetUp and %d FEN tags, want 40 of each", setups, fens)
	}
}
