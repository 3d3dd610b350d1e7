package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestLBMBridgeLeague runs seed 002's testing script against our own serve-model (the
// perfect strategy, behind a token), then plays a league in which one player's moves come
// from that model server and another's from a model server that fails every move.
func TestLBMBridgeLeague(t *testing.T) {
	modelProc := startProc(t, "model-server", []string{"LBM_MODEL_TOKEN=arena-secret"}, filepath.Join(binDir, "player"),
		"serve-model", "--addr", "127.0.0.1:0", "--strategy", "perfect")
	// Seed 002's own testing script, run against the real binary (it needs python3-requests,
	// which make deps installs).
	pythonBin, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is needed for the seed's testing script (make deps installs it): %v", err)
	}
	script := filepath.Join(moduleRoot(), "player", "lbm", "testdata", "seed_test_script.py")
	if out, err := exec.Command(pythonBin, script, modelProc.base(), "arena-secret").CombinedOutput(); err != nil {
		t.Fatalf("seed 002 testing script against serve-model: %v\n%s", err, out)
	}
	broken := http.NewServeMux()
	broken.HandleFunc("GET /model/health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "healthy", "capabilities": []string{"tic-tac-toe"}})
	})
	broken.HandleFunc("POST /model/play", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "boom", "code": "MODEL_UNAVAILABLE"})
	})
	brokenSrv := httptest.NewServer(broken)
	defer brokenSrv.Close()

	run := runLeague(t, leagueOpts{players: 4, referees: 2, seed: 41, config: fastConfig(t, nil),
		playerArgs: map[string][]string{
			"p01": {"--strategy", "lbm", "--model-url", modelProc.base()},
			"p02": {"--strategy", "lbm", "--model-url", brokenSrv.URL},
		},
		playerEnv: map[string][]string{"p01": {"LBM_MODEL_TOKEN=arena-secret"}},
	})
	run.checkLeague(t, 1)
	for _, r := range run.standings(t) {
		if r.PlayerID == "p01" && r.Losses != 0 {
			t.Errorf("the perfect model lost %d matches", r.Losses)
		}
		if r.PlayerID == "p02" && r.Points != 0 {
			t.Errorf("the broken model scored %d points", r.Points)
		}
	}
	db := run.openDB(t)
	var withReasoning int
	if err := db.QueryRow(`SELECT count(*) FROM match_results WHERE game_metadata LIKE '%"reasoning":"strategy perfect"%'`).Scan(&withReasoning); err != nil {
		t.Fatal(err)
	}
	// p01's matches against p03 and p04 are played move by move; the one against p02 may
	// be a forfeit once p02's failures have it suspended.
	if withReasoning < 2 {
		t.Errorf("%d results keep the model's reasoning, want at least p01's matches against p03 and p04", withReasoning)
	}
}
