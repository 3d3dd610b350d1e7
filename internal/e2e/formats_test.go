package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/ratings"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/web"
)

// formatMatch is a stored match as the format checks read it.
type formatMatch struct {
	id, round, status string
	number            int
	players           [2]string
	outcome           map[string]string
}

// formatMatches reads every match of the league in round and board order.
func (r *leagueRun) formatMatches(t *testing.T) []formatMatch {
	t.Helper()
	db := r.openDB(t)
	rows, err := db.Query(`SELECT m.match_id, m.round_id, rd.round_number, m.status, m.players, coalesce(res.outcome, '{}')
		FROM matches m JOIN rounds rd ON rd.round_id = m.round_id LEFT JOIN match_results res ON res.match_id = m.match_id
		ORDER BY rd.round_number, m.match_index`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []formatMatch
	for rows.Next() {
		var m formatMatch
		var players, outcome string
		if err := rows.Scan(&m.id, &m.round, &m.number, &m.status, &players, &outcome); err != nil {
			t.Fatal(err)
		}
		var ps []string
		if err := json.Unmarshal([]byte(players), &ps); err != nil || len(ps) != 2 {
			t.Fatalf("match %s: players %s", m.id, players)
		}
		m.players = [2]string{ps[0], ps[1]}
		if err := json.Unmarshal([]byte(outcome), &m.outcome); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// liveView reads GET /api/league.
func (r *leagueRun) liveView(t *testing.T) web.LeagueView {
	t.Helper()
	res, err := http.Get(r.lm.base() + "/api/league")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v web.LeagueView
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkFormatLeague checks what every format promises: every match completed, nobody
// twice in a round, the live standings a recount of the results and the stored byes,
// the ratings of the live view those of the export and of a replay of the audit log
// (which also re-pairs every round from the log's results).
func (r *leagueRun) checkFormatLeague(t *testing.T, ms []formatMatch) {
	t.Helper()
	seen := map[string]bool{}
	var results []standings.Result
	for _, m := range ms {
		if m.status != "COMPLETED" || len(m.outcome) != 2 {
			t.Errorf("match %s is %s with outcome %v", m.id, m.status, m.outcome)
		}
		for _, p := range m.players {
			key := m.round + "/" + p
			if seen[key] {
				t.Errorf("%s plays twice in %s", p, m.round)
			}
			seen[key] = true
		}
		pts := map[string]int{}
		for p, o := range m.outcome {
			pts[p] = map[string]int{"win": 3, "draw": 1, "loss": 0}[o]
		}
		results = append(results, standings.Result{Outcomes: m.outcome, Points: pts})
	}
	byePoints := map[string]int{}
	rows, err := r.openDB(t).Query(`SELECT player_id, points FROM byes`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var points int
		if err := rows.Scan(&id, &points); err != nil {
			t.Fatal(err)
		}
		byePoints[id] += points
	}
	rows.Close()
	want, err := standings.Recount(r.playerIDs, results)
	if err != nil {
		t.Fatal(err)
	}
	got := r.standings(t)
	gotPoints, wantPoints := map[string]int{}, map[string]int{}
	for _, row := range got {
		gotPoints[row.PlayerID] = row.Points
	}
	for _, row := range want {
		wantPoints[row.PlayerID] = row.Points + byePoints[row.PlayerID]
	}
	if !reflect.DeepEqual(gotPoints, wantPoints) {
		t.Errorf("standings points %v, want a recount of the results and byes %v", gotPoints, wantPoints)
	}
	view := r.liveView(t)
	out, err := exec.Command(filepath.Join(binDir, "league"), "export", "--db", r.db, "--format", "json").Output()
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	var exported struct {
		Ratings []ratings.Rating `json:"ratings"`
	}
	if err := json.Unmarshal(out, &exported); err != nil {
		t.Fatal(err)
	}
	if len(view.Ratings) != len(r.playerIDs) || !reflect.DeepEqual(view.Ratings, exported.Ratings) {
		t.Errorf("ratings of the live view %+v differ from the export's %+v", view.Ratings, exported.Ratings)
	}
	// replay --check compares the log's ratings, snapshots and standings with the
	// database, and re-pairs every round from the log's results.
	checkReplayAndVerify(t, r.audit, r.db)
}

// A 16-player Swiss of 5 rounds: 8 boards a round, never a repeat pairing.
func TestSwissLeagueWithRealBinaries(t *testing.T) {
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["scheduling"] = map[string]any{"algorithm": "swiss", "rounds": 5}
		league["ranking"] = map[string]any{"tiebreaks": []string{"sonneborn_berger", "head_to_head"}, "rating_samples": 200}
	})
	run := runLeague(t, leagueOpts{players: 16, referees: 4, seed: 5, config: cfg, maxMatches: 2})
	ms := run.formatMatches(t)
	if len(ms) != 5*8 {
		t.Fatalf("%d matches, want 40", len(ms))
	}
	pairs := map[[2]string]string{}
	for _, m := range ms {
		key := m.players
		if key[0] > key[1] {
			key[0], key[1] = key[1], key[0]
		}
		if first, ok := pairs[key]; ok {
			t.Errorf("%s and %s meet in %s and again in %s", key[0], key[1], first, m.round)
		}
		pairs[key] = m.round
	}
	if v := run.liveView(t); v.Format.Algorithm != schedule.Swiss || v.Format.Rounds != 5 || v.TotalRounds != 5 {
		t.Errorf("format %+v over %d rounds, want a Swiss of 5", v.Format, v.TotalRounds)
	}
	run.checkFormatLeague(t, ms)
}

// An 8-player knockout, best of 3, whose League Manager is killed (SIGKILL) mid-league and
// restarted: the bracket goes on from the database and ends with one champion.
func TestKnockoutSurvivesLeagueManagerKill(t *testing.T) {
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["scheduling"] = map[string]any{"algorithm": "knockout", "best_of": 3, "tie_rule": "sudden_death"}
		league["ranking"] = map[string]any{"rating_samples": 200}
	})
	run := startLeague(t, leagueOpts{players: 8, referees: 2, seed: 9, config: cfg})
	// Kill once the first stage is under way, past its first leg.
	waitStatus(t, run.lm, 60*time.Second, func(s statusDoc) bool { return completed(s) >= 5 })
	run.killLM(t)
	run.restartLM(t)
	run.waitCompleted(t, 120*time.Second)
	ms := run.formatMatches(t)
	view := run.liveView(t)
	if len(view.Bracket) != 3 {
		t.Fatalf("bracket of %d stages, want 3: %+v", len(view.Bracket), view.Bracket)
	}
	final := view.Bracket[2]
	champion := schedule.Champion(view.Bracket)
	if final.Name != "final" || len(final.Pairings) != 1 || champion == "" || final.Pairings[0].Winner != champion {
		t.Errorf("final %+v, champion %q", final, champion)
	}
	// Every stage halves the field: 4, 2 and 1 pairings, and an eliminated player never
	// plays again.
	out := map[string]string{}
	for i, st := range view.Bracket {
		if len(st.Pairings) != 4>>i {
			t.Errorf("stage %s has %d pairings, want %d", st.Name, len(st.Pairings), 4>>i)
		}
		for _, p := range st.Pairings {
			if p.Winner == "" {
				t.Errorf("stage %s: %v undecided", st.Name, p.Players)
			}
			for _, pl := range p.Players {
				if pl != p.Winner {
					out[pl] = st.Name
				}
			}
		}
	}
	for _, m := range ms {
		for _, p := range m.players {
			if stage, gone := out[p]; gone && m.number > lastRound(view.Bracket, stage) {
				t.Errorf("%s plays %s in round %d after going out in the %s", p, m.id, m.number, stage)
			}
		}
	}
	run.checkFormatLeague(t, ms)
}

// lastRound is the last league round of the named stage.
func lastRound(b []schedule.Stage, name string) int {
	for _, st := range b {
		if st.Name == name && len(st.Rounds) > 0 {
			return st.Rounds[len(st.Rounds)-1]
		}
	}
	return 0
}

// A gauntlet of one candidate against six players, two games a pair, first move
// alternating.
func TestGauntletLeagueWithRealBinaries(t *testing.T) {
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["scheduling"] = map[string]any{"algorithm": "gauntlet", "candidates": []string{"p01"}, "games_per_pair": 2}
		league["ranking"] = map[string]any{"rating_samples": 200}
	})
	run := runLeague(t, leagueOpts{players: 7, referees: 2, seed: 3, config: cfg})
	ms := run.formatMatches(t)
	if len(ms) != 12 {
		t.Fatalf("%d matches, want 6 opponents x 2 games", len(ms))
	}
	first := map[string]int{}
	games := map[string]int{}
	for _, m := range ms {
		var other string
		switch {
		case m.players[0] == "p01":
			other = m.players[1]
			first[other]--
		case m.players[1] == "p01":
			other = m.players[0]
			first[other]++
		default:
			t.Errorf("match %s between %v leaves the candidate out", m.id, m.players)
			continue
		}
		games[other]++
	}
	for i := 2; i <= 7; i++ {
		p := fmt.Sprintf("p%02d", i)
		if games[p] != 2 || first[p] != 0 {
			t.Errorf("%s: %d games against p01, first-move balance %d; want 2 and 0", p, games[p], first[p])
		}
	}
	run.checkFormatLeague(t, ms)
}

// A Swiss with an odd count under the shipped deadlines, one of whose players thinks 2 s
// a move: byes score, the slow player is paired and plays like any other, and nothing
// times out.
func TestSwissWithASlowPlayerAndByes(t *testing.T) {
	cfg := fastConfig(t, func(league, policy map[string]any) {
		league["scheduling"] = map[string]any{"algorithm": "swiss", "rounds": 2, "bye_points": 2}
		league["ranking"] = map[string]any{"rating_samples": 100}
		// The shipped move deadline (30 s), not the fast one.
		policy["timeouts"].(map[string]any)["match_level"].(map[string]any)["move_response"] = 30000
	})
	run := runLeague(t, leagueOpts{players: 5, referees: 2, seed: 4, config: cfg, faults: map[string]string{"p01": "slow:2s"}})
	ms := run.formatMatches(t)
	if len(ms) != 4 {
		t.Fatalf("%d matches, want two rounds of two", len(ms))
	}
	slowPlayed := 0
	for _, m := range ms {
		if m.players[0] == "p01" || m.players[1] == "p01" {
			slowPlayed++
		}
	}
	var byes, timeouts int
	db := run.openDB(t)
	if err := db.QueryRow(`SELECT count(*) FROM byes WHERE points = 2`).Scan(&byes); err != nil || byes != 2 {
		t.Errorf("%d byes scoring 2 (%v), want one a round", byes, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM match_results WHERE game_metadata LIKE '%"timeout"%'`).Scan(&timeouts); err != nil || timeouts != 0 {
		t.Errorf("%d results with a timeout (%v): a 2 s player is within the deadline", timeouts, err)
	}
	if slowPlayed == 0 {
		t.Error("the slow player never played")
	}
	run.checkFormatLeague(t, ms)
}

// A 6-player arena of tic-tac-toe with a budget of 24 games, through the real binaries:
// players of one strength never settle an order, so it stops at the budget; replay
// --check re-pairs every round from the log by the arena's rule.
func TestArenaLeagueWithRealBinaries(t *testing.T) {
	cfg := fastConfig(t, func(league, _ map[string]any) {
		league["scheduling"] = map[string]any{"algorithm": "arena", "arena": map[string]any{"max_games": 24}}
		league["ranking"] = map[string]any{"rating_samples": 100}
	})
	run := runLeague(t, leagueOpts{players: 6, referees: 2, seed: 9, config: cfg})
	ms := run.formatMatches(t)
	if len(ms) != 24 {
		t.Fatalf("%d matches, want the budget of 24", len(ms))
	}
	v := run.liveView(t)
	if v.Arena == nil || v.Arena.Stopped != schedule.ArenaBudget || v.Arena.Games != 24 || !strings.HasPrefix(v.Arena.Reason, "budget spent: 24 of 24 games") {
		t.Errorf("arena %+v, want stopped at its budget of 24 games", v.Arena)
	}
	rounds := map[string]int{}
	for _, m := range ms {
		rounds[m.round]++
	}
	t.Logf("24 games in %d rounds", len(rounds))
	run.checkFormatLeague(t, ms)
}
