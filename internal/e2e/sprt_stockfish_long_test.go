//go:build long

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/schedule"
)

// sprtRun plays a gauntlet of p01 against p02 under an SPRT (elo0 0, elo1 50, alpha = beta
// = 0.05, at most maxGames) from the 20-position book in game pairs, p01 searching nodes1
// nodes a move and p02 nodes2, and returns the test's final state as league standings
// --ratings --json reports it, and the league's time.
func sprtRun(t *testing.T, seed int64, nodes1, nodes2 string, maxGames int) (schedule.SPRTState, time.Duration) {
	t.Helper()
	sf := stockfishPath(t)
	book, err := filepath.Abs(filepath.Join(moduleRoot(), "testdata", "openings", "book20.epd"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["league"].(map[string]any)["game_type"] = "chess"
		league["scheduling"] = map[string]any{"algorithm": "gauntlet", "candidates": []string{"p01"}, "games_per_pair": maxGames,
			"sprt": map[string]any{"elo0": 0, "elo1": 50, "alpha": 0.05, "beta": 0.05}}
		league["ranking"] = map[string]any{"rating_samples": 100}
		league["openings"] = map[string]any{"book": book, "game_pairs": true}
	})
	// Games capped at 160 plies from the book's position (a draw by the move cap after).
	capChessPlies(t, cfg, 160)
	engine := func(nodes string) []string {
		return []string{"--strategy", "uci", "--engine", sf, "--nodes", nodes, "--engine-option", "Threads=1"}
	}
	run := startLeague(t, leagueOpts{players: 2, referees: 1, game: "chess", seed: seed, config: cfg,
		playerArgs: map[string][]string{"p01": engine(nodes1), "p02": engine(nodes2)}})
	run.waitCompleted(t, 40*time.Minute)
	cmd := exec.Command(filepath.Join(binDir, "league"), "standings", "--league", run.lm.url, "--ratings", "--json")
	cmd.Env = append(os.Environ(), "LEAGUE_ADMIN_TOKEN="+run.token)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("league standings: %v", err)
	}
	var v struct {
		SPRT *schedule.SPRTState `json:"sprt"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.SPRT == nil {
		t.Fatalf("league standings --ratings --json: %v, no sprt in\n%s", err, out)
	}
	if out, err := exec.Command(filepath.Join(binDir, "league"), "verify", run.audit, "--db", run.db).CombinedOutput(); err != nil {
		t.Errorf("league verify: %v\n%s", err, out)
	}
	return *v.SPRT, run.elapsed
}

// Issue 39, "Must show" (SPRT on real engines): Stockfish at 20000 nodes a move against
// itself at 2000 accepts H1, twice with the same seed; Stockfish at 2000 against itself
// accepts H0 or runs to its bound without accepting H1. The pairs each took are logged.
func TestLongSPRTStockfish(t *testing.T) {
	for run := 1; run <= 2; run++ {
		st, took := sprtRun(t, 39, "20000", "2000", 400)
		t.Logf("20000 v 2000 nodes, run %d: %s after %d pairs (LLR %.2f, pentanomial %v, Elo %+.0f) in %v", run, st.Decision, st.Pairs, st.LLR, st.Penta, st.Elo, took)
		if st.Decision != schedule.AcceptH1 {
			t.Errorf("run %d: decision %q after %d pairs, want H1", run, st.Decision, st.Pairs)
		}
	}
	st, took := sprtRun(t, 40, "2000", "2000", 400)
	t.Logf("2000 v 2000 nodes: %q after %d pairs (LLR %.2f, pentanomial %v, Elo %+.0f) in %v", st.Decision, st.Pairs, st.LLR, st.Penta, st.Elo, took)
	if st.Decision == schedule.AcceptH1 {
		t.Errorf("Stockfish against itself accepted H1 after %d pairs", st.Pairs)
	}
}
