//go:build long

package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// pgnClockComment is a move's clock as the PGN export writes it (game.PGNClock).
var pgnClockComment = regexp.MustCompile(`\{\[%clk \d+:\d\d:\d\d(\.\d)?\]\}`)

// Issue 38, "Must show": Stockfish against Stockfish under 10+0.1, UCI clocks, in a
// 20-game gauntlet (one candidate, games_per_pair 20, first move alternating; games
// capped at 120 plies, so that the league ends in minutes): no game is lost on time,
// every move records its clock, and the PGN export passes pgn-extract with the league's
// TimeControl and a %clk comment after every move. The players pass --movetime 50ms:
// until the UCI player budgets from wtime/btime it searches that long, well within the
// increment; once it does, the clock's budget rules.
func TestLongStockfishGauntletUnderAClock(t *testing.T) {
	sf := stockfishPath(t)
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["time_control"] = map[string]any{"clock": "10+0.1"}
		league["scheduling"] = map[string]any{"algorithm": "gauntlet", "candidates": []string{"p01"}, "games_per_pair": 20}
		league["ranking"] = map[string]any{"rating_samples": 200}
	})
	// Chess games capped at 120 plies, as TestChessLeagueWithStockfish's.
	capChessPlies(t, cfg, 120)
	engine := []string{"--strategy", "uci", "--engine", sf, "--movetime", "50ms", "--engine-option", "Threads=1"}
	run := startLeague(t, leagueOpts{players: 2, referees: 2, game: "chess", seed: 38, config: cfg,
		playerArgs: map[string][]string{"p01": engine, "p02": engine}})
	run.waitCompleted(t, 20*time.Minute)
	ms := run.formatMatches(t)
	if len(ms) != 20 {
		t.Fatalf("%d matches, want the gauntlet's 20", len(ms))
	}
	run.checkFormatLeague(t, ms)

	rs := results(t, run)
	if len(rs) != 20 {
		t.Fatalf("%d results, want the gauntlet's 20 games", len(rs))
	}
	var lowest int64 = 10000
	moves := 0
	for _, r := range rs {
		cms := clockMoves(t, r)
		if r.termination != "normal" {
			t.Errorf("match %v ended %q (loser %q, forfeit %q) after %d moves; want every game played out, none lost on time",
				r.players, r.termination, r.loser, r.forfeit, len(cms))
			for _, m := range cms[max(len(cms)-4, 0):] {
				t.Logf("  %s: elapsed %d ms, network %d ms, clock %d ms", m.player, m.elapsed, m.network, m.clock)
			}
			t.Logf("  violations: %v", r.metadata["violations"])
		}
		moves += len(cms)
		for _, m := range cms {
			lowest = min(lowest, m.clock)
		}
	}
	if t.Failed() {
		// Why a player refused or lost: its log's warnings and errors.
		for _, id := range run.playerIDs {
			data, _ := os.ReadFile(filepath.Join(run.dir, "logs", "player_"+id+".log"))
			n := 0
			for _, line := range strings.Split(string(data), "\n") {
				if l := strings.ToLower(line); (strings.Contains(l, "warn") || strings.Contains(l, "error")) && n < 5 {
					t.Logf("%s: %s", id, line)
					n++
				}
			}
		}
	}
	t.Logf("20 games, %d moves in %v; the lowest clock after a move: %d ms of 10000", moves, run.elapsed, lowest)

	// The moves of each game, by match id, for the PGN's comments.
	plies := map[string]int{}
	rows, err := run.openDB(t).Query(`SELECT match_id, game_metadata FROM match_results`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, meta string
		var md struct {
			Moves []json.RawMessage `json:"moves"`
		}
		if err := rows.Scan(&id, &meta); err != nil || json.Unmarshal([]byte(meta), &md) != nil {
			t.Fatalf("match %s: %v %s", id, err, meta)
		}
		plies[id] = len(md.Moves)
	}
	rows.Close()

	pgn := exportPGN(t, run, 20)
	headers := pgnHeaders(string(pgn))
	// Each game is its tags, a blank line, then its movetext up to the next tags.
	bodies := regexp.MustCompile(`(?m)^\[Event `).Split(string(pgn), -1)[1:]
	if len(headers) != 20 || len(bodies) != 20 {
		t.Fatalf("the PGN has %d headers and %d games, want 20", len(headers), len(bodies))
	}
	for k, h := range headers {
		tags := map[string]string{}
		for _, tag := range h {
			tags[tag[0]] = tag[1]
		}
		if tags["TimeControl"] != "10+0.1" {
			t.Errorf("game %d (%s): TimeControl %q, want 10+0.1", k+1, tags["MatchId"], tags["TimeControl"])
		}
		want, ok := plies[tags["MatchId"]]
		if !ok {
			t.Errorf("game %d: MatchId %q is not a match of the league", k+1, tags["MatchId"])
			continue
		}
		clk := pgnClockComment.FindAllString(bodies[k], -1)
		if len(clk) != want {
			t.Errorf("game %d (%s): %d %%clk comments for %d moves, want one a move", k+1, tags["MatchId"], len(clk), want)
		}
		if k == 0 {
			t.Logf("game 1 begins: %s", strings.Join(strings.Fields(bodies[0])[:min(40, len(strings.Fields(bodies[0])))], " "))
		}
	}
}
