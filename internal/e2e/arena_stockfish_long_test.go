//go:build long

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/league/schedule"
)

// arenaLadder is eight chess agents of known order, weakest first: random; Stockfish at
// 30 nodes a move with its Skill Level at 0 (it picks weaker moves on purpose); then
// Stockfish at full skill at 30 to 10000 nodes a move, each about three times the one
// before. Measured in game pairs from the 20-position book: skill 0 beat random 40-0 and
// scored 2 of 40 against full skill at the same nodes. Not in it: Stockfish at 10 nodes,
// which plays as it does at 30 (93 wins, 96 losses, 29 draws in one arena), and "first",
// whose order against random nobody knows.
var arenaLadder = []string{"random", "skill0:30", "30", "100", "300", "1000", "3000", "10000"}

// ladderLeague plays a chess league of ladder (p01 weakest; "random", a node count, or
// "skill0:" and a node count), games
// capped at 200 plies, with the scheduling of format and the openings of the 20-position
// book (engines at a fixed node count play the same game from the same position, so
// without openings a pairing that meets again tells nothing new), and returns its rated
// games and its /api/league. Moves may take 10 s: a cold Stockfish on a busy machine
// takes more than the 2 s of fastConfig to start, and a player suspended for it would
// forfeit the rest of the league.
func ladderLeague(t *testing.T, ladder []string, seed int64, format, openings map[string]any) ([]ratings.Game, map[string]json.RawMessage) {
	t.Helper()
	sf := stockfishPath(t)
	book, err := filepath.Abs(filepath.Join(moduleRoot(), "testdata", "openings", "book20.epd"))
	if err != nil {
		t.Fatal(err)
	}
	openings["book"] = book
	cfg := fastConfig(t, func(league, policy map[string]any) {
		policy["timeouts"].(map[string]any)["match_level"].(map[string]any)["move_response"] = 10000
		league["league"].(map[string]any)["game_type"] = "chess"
		league["scheduling"] = format
		league["ranking"] = map[string]any{"rating_samples": 200}
		league["openings"] = openings
	})
	capChessPlies(t, cfg, 200)
	args := map[string][]string{}
	for i, a := range ladder {
		id := fmt.Sprintf("p%02d", i+1)
		nodes, skill0 := strings.CutPrefix(a, "skill0:")
		switch {
		case a == "random":
			args[id] = []string{"--strategy", "random"}
		case skill0:
			args[id] = []string{"--strategy", "uci", "--engine", sf, "--nodes", nodes, "--engine-option", "Threads=1", "--engine-option", "Hash=16", "--engine-option", "Skill Level=0"}
		default:
			args[id] = []string{"--strategy", "uci", "--engine", sf, "--nodes", nodes, "--engine-option", "Threads=1", "--engine-option", "Hash=16"}
		}
	}
	run := startLeague(t, leagueOpts{players: len(ladder), referees: 4, game: "chess", seed: seed, config: cfg, playerArgs: args})
	run.waitCompleted(t, 50*time.Minute)
	var games []ratings.Game
	for _, r := range results(t, run) {
		if g, ok := ratings.FromOutcome(r.outcome, ""); ok {
			games = append(games, g)
		}
	}
	res, err := http.Get(run.lm.base() + "/api/league")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var view map[string]json.RawMessage
	if err := json.NewDecoder(res.Body).Decode(&view); err != nil {
		t.Fatal(err)
	}
	return games, view
}

// kendallTau compares the rating order of rows with the ladder's (p01 weakest): 1 when
// every pair is in the true order, -1 when every pair is reversed.
func kendallTau(rows []ratings.Rating) float64 {
	pos := map[string]float64{}
	for _, r := range rows {
		pos[r.PlayerID] = r.Rating
	}
	concordant, discordant := 0, 0
	for i := 1; i <= len(arenaLadder); i++ {
		for j := i + 1; j <= len(arenaLadder); j++ {
			a, b := pos[fmt.Sprintf("p%02d", i)], pos[fmt.Sprintf("p%02d", j)]
			switch {
			case b > a:
				concordant++
			case b < a:
				discordant++
			}
		}
	}
	return float64(concordant-discordant) / float64(concordant+discordant)
}

// settledOrder reports whether games settle the order of players by the arena's rule:
// each player's likelihood of superiority over the next at least 97.5%.
func settledOrder(t *testing.T, players []string, games []ratings.Game) bool {
	t.Helper()
	rows, err := ratings.Compute(players, games, ratings.Options{Samples: 200, Seed: 39, LOS: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[:len(rows)-1] {
		if r.LOSNext < 0.975 {
			return false
		}
	}
	return true
}

// meanWidth is the mean width of the rating intervals.
func meanWidth(rows []ratings.Rating) float64 {
	sum := 0.0
	for _, r := range rows {
		sum += r.High - r.Low
	}
	return sum / float64(len(rows))
}

// Issue 39, "Must show" (arena): the ladder in an arena recovers the true order in fewer
// games than double round robins need for intervals as narrow, and for the same certainty.
// The arena plays until its order settles or its budget of 600 games is spent; then double
// round robins of the same agents (56 games each, in game pairs, other seeds) are pooled
// until their ratings settle by the arena's rule, or 12 of them (672 games) are spent.
// Games, Kendall tau and mean interval width of each are logged.
func TestLongArenaRecoversTheOrder(t *testing.T) {
	players := make([]string, len(arenaLadder))
	for i := range players {
		players[i] = fmt.Sprintf("p%02d", i+1)
	}
	games, view := ladderLeague(t, arenaLadder, 39, map[string]any{"algorithm": "arena", "arena": map[string]any{"max_games": 600}}, map[string]any{})
	var st schedule.ArenaState
	if err := json.Unmarshal(view["arena"], &st); err != nil {
		t.Fatalf("arena state %s: %v", view["arena"], err)
	}
	arenaRows, err := ratings.League(players, games, 200, 39)
	if err != nil {
		t.Fatal(err)
	}
	arenaTau, arenaWidth := kendallTau(arenaRows), meanWidth(arenaRows)
	t.Logf("arena: %d games, %s (%s); Kendall tau %.2f, mean interval %.0f", len(games), st.Stopped, st.Reason, arenaTau, arenaWidth)

	var pooled []ratings.Game
	asNarrow, settled := 0, 0 // games the round robins needed for each
	for k := 1; k <= 12 && settled == 0; k++ {
		g, _ := ladderLeague(t, arenaLadder, 100+int64(k), map[string]any{"algorithm": "round_robin", "cycles": 2}, map[string]any{"game_pairs": true})
		pooled = append(pooled, g...)
		rows, err := ratings.League(players, pooled, 200, 39)
		if err != nil {
			t.Fatal(err)
		}
		if asNarrow == 0 && meanWidth(rows) <= arenaWidth {
			asNarrow = len(pooled)
		}
		if settledOrder(t, players, pooled) {
			settled = len(pooled)
		}
		t.Logf("double round robins: %d, %d games; Kendall tau %.2f, mean interval %.0f, settled %v", k, len(pooled), kendallTau(rows), meanWidth(rows), settled > 0)
	}
	if st.Stopped != schedule.ArenaSettled {
		t.Errorf("the arena stopped %s (%s), want settled", st.Stopped, st.Reason)
	}
	if arenaTau < 1 {
		t.Errorf("arena's Kendall tau %.2f, want the true order (1)", arenaTau)
	}
	if asNarrow != 0 && len(games) >= asNarrow {
		t.Errorf("the arena took %d games, the double round robins %d for intervals as narrow: want fewer for the arena", len(games), asNarrow)
	}
	if settled != 0 && len(games) >= settled {
		t.Errorf("the arena took %d games, the double round robins %d to settle the order: want fewer for the arena", len(games), settled)
	}
}
