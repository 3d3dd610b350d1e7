package league

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/protocol"
)

func playerIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%02d", i+1)
	}
	return ids
}

func getStatus(t *testing.T, h *harness, base string) Status {
	t.Helper()
	res, err := http.Get(base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /status: %d %s", res.StatusCode, body)
	}
	h.checkNoSecret("GET /status", body)
	var s Status
	if err := json.Unmarshal(body, &s); err != nil {
		t.Fatalf("GET /status: %v: %s", err, body)
	}
	return s
}

// The lifecycle REGISTRATION -> ACTIVE -> COMPLETED, as GET /status shows it.
func TestLifecycleVisibleInStatus(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	web := httptest.NewServer(Routes(h.m, h.srv))
	defer web.Close()

	res, err := http.Get(web.URL + "/health")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /health: %d, want 200", res.StatusCode)
	}

	if s := getStatus(t, h, web.URL); s.State != StateRegistration || s.TotalRounds != 0 || s.CurrentRound != 0 {
		t.Fatalf("fresh league status %+v, want REGISTRATION with no rounds", s)
	}
	l := h.register([]string{"ref1"}, nil, []string{"p1"})
	h.unchanged("start below min_players", func() {
		h.refused(adminStart(t, testAdminToken), protocol.ReasonLeagueNotActive)
	})
	h.ok(playerRegistration(t, "p2"))
	h.ok(playerRegistration(t, "p3"))
	s := getStatus(t, h, web.URL)
	if s.State != StateRegistration || s.Players != 3 || s.Referees != 1 || len(s.Agents) != 4 {
		t.Fatalf("status before start %+v, want REGISTRATION with 1 referee and 3 players", s)
	}

	ans := h.ok(adminStart(t, testAdminToken))
	var started map[string]string
	if err := ans.Decode(&started); err != nil {
		t.Fatal(err)
	}
	if started["status"] != "started" || started["league_status"] != StateActive {
		t.Errorf("start answer %v, want started / ACTIVE", started)
	}
	h.settle()
	s = getStatus(t, h, web.URL)
	if s.State != StateActive || s.CurrentRound != 1 || s.TotalRounds != 3 || s.MatchesTotal != 3 {
		t.Fatalf("status after start %+v, want ACTIVE, round 1 of 3, 3 matches", s)
	}
	// Starting again is harmless.
	h.unchanged("second start", func() { h.ok(adminStart(t, testAdminToken)) })

	for round := 1; ; round++ {
		h.settle()
		_, ms := h.round()
		if len(ms) == 0 {
			break
		}
		if s := getStatus(t, h, web.URL); s.CurrentRound != round || s.State != StateActive {
			t.Fatalf("status in round %d: %+v", round, s)
		}
		for _, mt := range ms {
			l.reportOK(mt, drawn(mt))
		}
	}
	s = getStatus(t, h, web.URL)
	if s.State != StateCompleted || s.MatchesByStatus[protocol.MatchStateCompleted] != 3 || s.CurrentRound != 3 {
		t.Fatalf("final status %+v, want COMPLETED with 3 completed matches", s)
	}
	p := decodeStandings(t, h.ok(standingsQuery(t, "player:p1", l.playerTokens["p1"], "")))
	if !p.Final || p.LeagueState != StateCompleted {
		t.Errorf("final standings: final %v state %s, want true / COMPLETED", p.Final, p.LeagueState)
	}
	h.unchanged("start after completion", func() {
		ans := h.ok(adminStart(t, testAdminToken))
		var p map[string]string
		_ = ans.Decode(&p)
		if p["league_status"] != StateCompleted {
			t.Errorf("start after completion: league_status %q, want COMPLETED", p["league_status"])
		}
	})
	// The state survives a restart.
	h.restart()
	if got := h.m.State(); got != StateCompleted {
		t.Errorf("state after restart %s, want COMPLETED", got)
	}
}

// The schedule stored at start is exactly schedule.Build for the registered players.
func TestScheduleInDatabaseMatchesBuild(t *testing.T) {
	for _, tc := range []struct{ players, cycles int }{{2, 1}, {3, 1}, {4, 1}, {5, 1}, {8, 1}, {3, 2}, {6, 2}} {
		t.Run(fmt.Sprintf("%d players %d cycles", tc.players, tc.cycles), func(t *testing.T) {
			h := newHarness(t, harnessOptions{cfg: func(c *config.Config) { c.Scheduling.Cycles = tc.cycles; c.League.Seed = 42 }})
			ids := playerIDs(tc.players)
			// Register in reverse order: the schedule must not depend on it.
			rev := slices.Clone(ids)
			slices.Reverse(rev)
			l := h.register([]string{"ref1"}, nil, rev)
			l.start()
			h.settle()
			want, err := schedule.Build(ids, tc.cycles, 42)
			if err != nil {
				t.Fatal(err)
			}
			var wantRounds, wantMatches, wantByes []string
			for _, r := range want.Rounds {
				wantRounds = append(wantRounds, fmt.Sprintf("%s %d %d", r.ID, r.Number, r.Cycle))
				if r.Bye != "" {
					wantByes = append(wantByes, r.ID+" "+r.Bye)
				}
				for _, mt := range r.Matches {
					ps, _ := json.Marshal(mt.Players)
					wantMatches = append(wantMatches, fmt.Sprintf("%s %s %s %d %d tic_tac_toe", mt.ID, r.ID, ps, mt.Seed, mt.Index))
				}
			}
			db := h.store.DB()
			check := func(what, q string, want []string) {
				t.Helper()
				got := queryStrings(t, db, q)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s:\ngot  %q\nwant %q", what, got, want)
				}
			}
			check("rounds", `SELECT round_id || ' ' || round_number || ' ' || cycle FROM rounds ORDER BY round_number`, wantRounds)
			check("matches", `SELECT m.match_id || ' ' || m.round_id || ' ' || m.players || ' ' || m.match_seed || ' ' || m.match_index || ' ' || m.game_type
				FROM matches m JOIN rounds r ON r.round_id = m.round_id ORDER BY r.round_number, m.match_index`, wantMatches)
			check("byes", `SELECT b.round_id || ' ' || b.player_id FROM byes b JOIN rounds r ON r.round_id = b.round_id ORDER BY r.round_number`, wantByes)
			rows, err := h.store.Standings()
			if err != nil {
				t.Fatal(err)
			}
			var listed []string
			for _, r := range rows {
				listed = append(listed, r.PlayerID)
			}
			slices.Sort(listed)
			if strings.Join(listed, " ") != strings.Join(ids, " ") {
				t.Errorf("standings list %q, want %q", listed, ids)
			}
		})
	}
}

func queryStrings(t testing.TB, db *sql.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// MATCH_ASSIGNMENT carries the players (first mover first), their endpoints, the match
// seed, per-player match credentials and the referee's own token.
func TestMatchAssignmentContents(t *testing.T) {
	h := newHarness(t, harnessOptions{cfg: func(c *config.Config) { c.League.Seed = 7 }})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	l.start()
	h.settle()
	sched, err := schedule.Build(l.players, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	roundID, ms := h.round()
	if roundID != sched.Rounds[0].ID || len(ms) != len(sched.Rounds[0].Matches) {
		t.Fatalf("active round %s with %d matches, want %s with %d", roundID, len(ms), sched.Rounds[0].ID, len(sched.Rounds[0].Matches))
	}
	refsUsed := map[string]int{}
	for i, want := range sched.Rounds[0].Matches {
		mt := ms[i]
		refsUsed[mt.Referee]++
		a := l.refs[mt.Referee].assignment(t, want.ID)
		e := a.Envelope
		if e.Sender != protocol.SenderLeagueManager || e.AuthToken != l.refTokens[mt.Referee] || e.LeagueID != h.cfg.League.LeagueID ||
			e.RoundID != roundID || e.MatchID != want.ID || e.GameType != "tic_tac_toe" {
			t.Errorf("assignment envelope %+v: want sender league_manager, the referee's token, league, round, match and game", e)
		}
		var p struct {
			MatchID          string            `json:"match_id"`
			RoundID          string            `json:"round_id"`
			GameType         string            `json:"game_type"`
			Players          []string          `json:"players"`
			PlayerEndpoints  map[string]string `json:"player_endpoints"`
			MatchSeed        int64             `json:"match_seed"`
			MatchCredentials map[string]string `json:"match_credentials"`
			Scoring          map[string]int    `json:"scoring"`
			Deadlines        map[string]int    `json:"deadlines"`
		}
		if err := a.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.MatchID != want.ID || p.RoundID != roundID || p.GameType != "tic_tac_toe" {
			t.Errorf("assignment payload ids %s/%s/%s, want %s/%s/tic_tac_toe", p.MatchID, p.RoundID, p.GameType, want.ID, roundID)
		}
		if !slices.Equal(p.Players, want.Players[:]) {
			t.Errorf("assignment players %v, want %v (first mover first)", p.Players, want.Players)
		}
		if p.MatchSeed != want.Seed {
			t.Errorf("match_seed %d, want %d", p.MatchSeed, want.Seed)
		}
		wantEndpoints := map[string]string{want.Players[0]: playerEndpoint(want.Players[0]), want.Players[1]: playerEndpoint(want.Players[1])}
		if !maps.Equal(p.PlayerEndpoints, wantEndpoints) {
			t.Errorf("player_endpoints %v, want %v", p.PlayerEndpoints, wantEndpoints)
		}
		wantCreds := map[string]string{}
		for _, pid := range want.Players {
			wantCreds[pid] = protocol.MatchCredential(l.playerTokens[pid], want.ID)
			h.addSecret(wantCreds[pid])
		}
		if !maps.Equal(p.MatchCredentials, wantCreds) {
			t.Errorf("match_credentials %v, want %v", p.MatchCredentials, wantCreds)
		}
		if !maps.Equal(p.Scoring, map[string]int{"win": 3, "draw": 1, "loss": 0}) {
			t.Errorf("scoring %v, want win 3 draw 1 loss 0", p.Scoring)
		}
		if p.Deadlines["join_ack_ms"] != h.cfg.Timeouts.MatchLevel.GameJoinAck || p.Deadlines["move_ms"] != h.cfg.Timeouts.MatchLevel.MoveResponse {
			t.Errorf("deadlines %v, want the timeout policy's", p.Deadlines)
		}
	}
	// One match at a time per referee (max_concurrent_matches 1): both referees work.
	if refsUsed["ref1"] != 1 || refsUsed["ref2"] != 1 {
		t.Errorf("round 1 matches per referee %v, want one each", refsUsed)
	}
	for _, f := range l.refs {
		if n := len(f.assignments()); n != 1 {
			t.Errorf("%s got %d assignments, want 1", f.id, n)
		}
	}
}

// played is one accepted result, kept by the test to check the database against.
type played struct {
	round   int
	referee string
	r       result
}

// Plays whole leagues through the handler and checks, after every result, that the
// result, the match status and the standings changed together, and after every round the
// snapshot, and that byes are stored for odd player counts.
func TestWholeLeagueKeepsDatabaseConsistent(t *testing.T) {
	for _, tc := range []struct {
		players, cycles, referees int
	}{{5, 1, 2}, {4, 2, 1}, {7, 1, 3}} {
		t.Run(fmt.Sprintf("%d players %d cycles %d referees", tc.players, tc.cycles, tc.referees), func(t *testing.T) {
			h := newHarness(t, harnessOptions{cfg: func(c *config.Config) { c.Scheduling.Cycles = tc.cycles }})
			var refs []string
			for i := range tc.referees {
				refs = append(refs, fmt.Sprintf("ref%d", i+1))
			}
			l := h.register(refs, nil, playerIDs(tc.players))
			l.start()
			sched, err := schedule.Build(l.players, tc.cycles, h.cfg.League.Seed)
			if err != nil {
				t.Fatal(err)
			}
			results := map[string]played{}
			snapshots := map[string]string{}
			n := 0
			for ri, sr := range sched.Rounds {
				h.settle()
				roundID, ms := h.round()
				if roundID != sr.ID {
					t.Fatalf("active round %s, want %s", roundID, sr.ID)
				}
				for i := range ms {
					h.settle()
					mt := h.match(ms[i].ID) // assigned once a referee is free
					if i == len(ms)-1 {
						// Not completed yet: no snapshot.
						h.refused(standingsQuery(t, "player:p01", l.playerTokens["p01"], roundID), protocol.ReasonUnknownRound)
					}
					l.refs[mt.Referee].assignment(t, mt.ID)
					var r result
					switch n % 4 {
					case 0, 3:
						r = decided(mt, n%2)
					case 1:
						r = drawn(mt)
					case 2:
						// A double forfeit: both lose, nobody scores.
						r = result{Outcome: map[string]string{mt.Players[0]: "loss", mt.Players[1]: "loss"}, Points: map[string]int{mt.Players[0]: 0, mt.Players[1]: 0}}
					}
					n++
					l.reportOK(mt, r)
					results[mt.ID] = played{round: ri + 1, referee: mt.Referee, r: r}
					checkDatabase(t, h, l.players, sched, results)
				}
				// The round's snapshot, as QUERY_STANDINGS round_id serves it.
				p := decodeStandings(t, h.ok(standingsQuery(t, "player:p02", l.playerTokens["p02"], roundID)))
				want := expectedRows(l.players, resultsUpTo(results, ri+1))
				if got := rowsString(p.Standings); got != rowsString(want) {
					t.Errorf("%s snapshot %s, want %s", roundID, got, rowsString(want))
				}
				if p.RoundID == nil || *p.RoundID != roundID {
					t.Errorf("snapshot round_id %v, want %s", p.RoundID, roundID)
				}
				snapshots[roundID] = rowsString(p.Standings)
			}
			if got := h.m.State(); got != StateCompleted {
				t.Fatalf("state after every result %s, want COMPLETED", got)
			}
			// Snapshots are immutable: every round still shows what it showed when it ended,
			// also when round_id travels in the envelope.
			for id, want := range snapshots {
				q := standingsQuery(t, "player:p01", l.playerTokens["p01"], "")
				q.Envelope.RoundID = id
				p := decodeStandings(t, h.ok(q))
				if got := rowsString(p.Standings); got != want {
					t.Errorf("%s snapshot at the end %s, want %s", id, got, want)
				}
			}
			final := decodeStandings(t, h.ok(standingsQuery(t, "player:p01", l.playerTokens["p01"], "")))
			if want := expectedRows(l.players, resultsUpTo(results, len(sched.Rounds))); rowsString(final.Standings) != rowsString(want) {
				t.Errorf("final standings %s, want %s", rowsString(final.Standings), rowsString(want))
			}
			h.refused(standingsQuery(t, "player:p01", l.playerTokens["p01"], "round-999"), protocol.ReasonUnknownRound)
		})
	}
}

func resultsUpTo(results map[string]played, round int) []result {
	var out []result
	for _, id := range slices.Sorted(maps.Keys(results)) {
		if results[id].round <= round {
			out = append(out, results[id].r)
		}
	}
	return out
}

// checkDatabase compares every table the result path writes with what the test sent.
func checkDatabase(t *testing.T, h *harness, players []string, sched schedule.Schedule, results map[string]played) {
	t.Helper()
	db := h.store.DB()

	// match_results: one row per accepted result, as sent.
	rows, err := db.Query(`SELECT match_id, outcome, points, referee_id FROM match_results`)
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for rows.Next() {
		var id, outcome, points, ref string
		if err := rows.Scan(&id, &outcome, &points, &ref); err != nil {
			t.Fatal(err)
		}
		stored++
		want, ok := results[id]
		if !ok {
			t.Errorf("match_results holds %s, which was not reported", id)
			continue
		}
		var o map[string]string
		var p map[string]int
		_ = json.Unmarshal([]byte(outcome), &o)
		_ = json.Unmarshal([]byte(points), &p)
		if !maps.Equal(o, want.r.Outcome) || !maps.Equal(p, want.r.Points) || ref != want.referee {
			t.Errorf("match_results %s: %s %s by %s, want %v %v by %s", id, outcome, points, ref, want.r.Outcome, want.r.Points, want.referee)
		}
	}
	rows.Close()
	if stored != len(results) {
		t.Errorf("match_results has %d rows, want %d", stored, len(results))
	}

	// matches.status: COMPLETED exactly for the reported matches.
	for _, r := range sched.Rounds {
		for _, mt := range r.Matches {
			var status string
			if err := db.QueryRow(`SELECT status FROM matches WHERE match_id = ?`, mt.ID).Scan(&status); err != nil {
				t.Fatal(err)
			}
			_, reported := results[mt.ID]
			if (status == protocol.MatchStateCompleted) != reported {
				t.Errorf("match %s status %s, reported %v", mt.ID, status, reported)
			}
		}
	}

	// standings: the live table equals a recount of the results.
	var all []result
	for _, p := range results {
		all = append(all, p.r)
	}
	want := expectedRows(players, all)
	got := map[string]protocol.StandingsRow{}
	recount, serr := h.store.Standings()
	if serr != nil {
		t.Fatal(serr)
	}
	for _, r := range recount {
		got[r.PlayerID] = r
	}
	for _, w := range want {
		g := got[w.PlayerID]
		w.Rank, g.Rank = 0, 0
		if g != w {
			t.Errorf("standings row %+v, want %+v", g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("standings has %d rows, want %d", len(got), len(want))
	}

	// player_rankings: one snapshot per completed round, equal to the recount up to it.
	for i, r := range sched.Rounds {
		var status string
		if err := db.QueryRow(`SELECT status FROM rounds WHERE round_id = ?`, r.ID).Scan(&status); err != nil {
			t.Fatal(err)
		}
		snaps := queryStrings(t, db, `SELECT snapshot_id FROM standings_snapshots WHERE round_id = ?`, r.ID)
		if status != "COMPLETED" {
			if len(snaps) != 0 {
				t.Errorf("round %s is %s but has snapshots %v", r.ID, status, snaps)
			}
			continue
		}
		if len(snaps) != 1 {
			t.Fatalf("completed round %s has %d snapshots, want 1", r.ID, len(snaps))
		}
		var ranked []protocol.StandingsRow
		rr, err := db.Query(`SELECT rank, player_id, points, wins, draws, losses, matches_played FROM player_rankings WHERE snapshot_id = ? ORDER BY rank`, snaps[0])
		if err != nil {
			t.Fatal(err)
		}
		for rr.Next() {
			var x protocol.StandingsRow
			if err := rr.Scan(&x.Rank, &x.PlayerID, &x.Points, &x.Wins, &x.Draws, &x.Losses, &x.MatchesPlayed); err != nil {
				t.Fatal(err)
			}
			ranked = append(ranked, x)
		}
		rr.Close()
		if want := expectedRows(players, resultsUpTo(results, i+1)); rowsString(ranked) != rowsString(want) {
			t.Errorf("player_rankings of %s: %s, want %s", r.ID, rowsString(ranked), rowsString(want))
		}
	}

	// byes: one per round for an odd player count, the player not in any match.
	for _, r := range sched.Rounds {
		byes := queryStrings(t, db, `SELECT player_id FROM byes WHERE round_id = ?`, r.ID)
		want := []string{}
		if r.Bye != "" {
			want = []string{r.Bye}
			for _, mt := range r.Matches {
				if slices.Contains(mt.Players[:], r.Bye) {
					t.Errorf("round %s: bye %s also plays %s", r.ID, r.Bye, mt.ID)
				}
			}
		}
		if len(byes) != len(want) || (len(want) == 1 && byes[0] != want[0]) {
			t.Errorf("byes of %s: %v, want %v", r.ID, byes, want)
		}
	}
}

// The standings order is points, wins, draws (descending), then player_id.
func TestStandingsOrder(t *testing.T) {
	type outcome struct {
		a, b string
		res  string // "a" wins, "b" wins, "draw" or "forfeit" (both lose)
	}
	tests := []struct {
		name    string
		scoring protocol.Scoring
		players []string
		games   []outcome
		want    []string // "player points wins draws losses"
	}{
		{
			name:    "points tie broken by wins",
			scoring: protocol.Scoring{Win: 2, Draw: 1, Loss: 0},
			players: []string{"zed", "amy", "kim", "bob"},
			games: []outcome{
				{"zed", "amy", "a"}, {"zed", "kim", "b"}, {"zed", "bob", "forfeit"},
				{"amy", "kim", "draw"}, {"amy", "bob", "draw"}, {"kim", "bob", "a"},
			},
			want: []string{"kim 5 2 1 0", "zed 2 1 0 2", "amy 2 0 2 1", "bob 1 0 1 2"},
		},
		{
			name:    "points and wins tie broken by draws",
			scoring: protocol.Scoring{Win: 3, Draw: 0, Loss: 0},
			players: []string{"zoe", "bob", "cat", "abe"},
			games: []outcome{
				{"zoe", "bob", "a"}, {"zoe", "cat", "draw"}, {"zoe", "abe", "draw"},
				{"bob", "cat", "a"}, {"bob", "abe", "draw"}, {"cat", "abe", "a"},
			},
			want: []string{"zoe 3 1 2 0", "bob 3 1 1 1", "cat 3 1 1 1", "abe 0 0 2 1"},
		},
		{
			name:    "full tie broken by player_id",
			scoring: protocol.Scoring{Win: 3, Draw: 1, Loss: 0},
			players: []string{"d4", "b2", "c3", "a1"},
			games: []outcome{
				{"d4", "b2", "draw"}, {"d4", "c3", "draw"}, {"d4", "a1", "draw"},
				{"b2", "c3", "draw"}, {"b2", "a1", "draw"}, {"c3", "a1", "draw"},
			},
			want: []string{"a1 3 0 3 0", "b2 3 0 3 0", "c3 3 0 3 0", "d4 3 0 3 0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{cfg: func(c *config.Config) { setScoring(c, tc.scoring) }})
			l := h.register([]string{"ref1", "ref2"}, nil, tc.players)
			l.start()
			find := func(mt liveMatch) result {
				for _, g := range tc.games {
					if (g.a == mt.Players[0] && g.b == mt.Players[1]) || (g.a == mt.Players[1] && g.b == mt.Players[0]) {
						s := tc.scoring
						switch g.res {
						case "a":
							return result{Outcome: map[string]string{g.a: "win", g.b: "loss"}, Points: map[string]int{g.a: s.Win, g.b: s.Loss}}
						case "b":
							return result{Outcome: map[string]string{g.b: "win", g.a: "loss"}, Points: map[string]int{g.b: s.Win, g.a: s.Loss}}
						case "draw":
							return result{Outcome: map[string]string{g.a: "draw", g.b: "draw"}, Points: map[string]int{g.a: s.Draw, g.b: s.Draw}}
						default:
							return result{Outcome: map[string]string{g.a: "loss", g.b: "loss"}, Points: map[string]int{g.a: s.Loss, g.b: s.Loss}}
						}
					}
				}
				t.Fatalf("no scripted game for %v", mt.Players)
				return result{}
			}
			for h.m.State() == StateActive {
				h.settle()
				_, ms := h.round()
				for _, mt := range ms {
					h.settle()
					mt = h.match(mt.ID)
					l.reportOK(mt, find(mt))
				}
			}
			p := decodeStandings(t, h.ok(standingsQuery(t, "player:"+tc.players[0], l.playerTokens[tc.players[0]], "")))
			var got []string
			for i, r := range p.Standings {
				if r.Rank != i+1 || r.MatchesPlayed != 3 {
					t.Errorf("row %d: rank %d played %d, want rank %d played 3", i, r.Rank, r.MatchesPlayed, i+1)
				}
				got = append(got, fmt.Sprintf("%s %d %d %d %d", r.PlayerID, r.Points, r.Wins, r.Draws, r.Losses))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("standings\ngot  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// A referee that refuses an assignment loses the match back to the pool: its report is
// then STALE_ASSIGNMENT.
func TestRejectedAssignmentIsStale(t *testing.T) {
	h := newHarness(t, harnessOptions{redispatch: 1 << 40}) // never offered again during the test
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
	l.refs["ref1"].setReject(true)
	l.start()
	_, ms := h.round()
	waitFor(t, "the rejected match to return to the pool", func() bool { return h.match(ms[0].ID).Status == protocol.MatchStatePending })
	mt := h.match(ms[0].ID)
	h.unchanged("report of a rejected match", func() {
		h.refused(h.report("ref1", l.refTokens["ref1"], mt, decided(mt, 0)), protocol.ReasonStaleAssignment)
	})
}

// Matches in flight when the League Manager stops are assigned again at restart, under
// the same match_id; the referee that lost one gets STALE_ASSIGNMENT.
func TestRestartReassignsMatchesInFlight(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, map[string]any{"max_concurrent_matches": 2}, playerIDs(4))
	l.start()
	h.settle()
	_, ms := h.round()
	for _, mt := range ms {
		if mt.Referee != "ref1" {
			t.Fatalf("match %s went to %s, want ref1", mt.ID, mt.Referee)
		}
	}
	f2 := newFakeReferee(t, "ref2")
	l.refs["ref2"] = f2
	l.refTokens["ref2"] = h.registrationToken(h.ok(refereeRegistration(t, "ref2", f2.url(), nil)))

	h.restart()
	h.settle()
	// Both matches were in flight at ref1: one goes to the idle ref2, the other back to ref1.
	a, b := h.match(ms[0].ID), h.match(ms[1].ID)
	if a.Referee == "ref2" {
		a, b = b, a
	}
	if a.Referee != "ref1" || b.Referee != "ref2" {
		t.Fatalf("after restart matches went to %s and %s, want one to ref1 and one to ref2", a.Referee, b.Referee)
	}
	f2.assignment(t, b.ID)
	var assignments int
	if err := h.store.DB().QueryRow(`SELECT assignments FROM matches WHERE match_id = ?`, b.ID).Scan(&assignments); err != nil {
		t.Fatal(err)
	}
	if assignments != 2 {
		t.Errorf("match %s assigned %d times, want 2", b.ID, assignments)
	}
	h.unchanged("report from the referee that lost the match", func() {
		h.refused(h.report("ref1", l.refTokens["ref1"], b, decided(b, 0)), protocol.ReasonStaleAssignment)
	})
	l.reportOK(a, decided(a, 0))
	l.reportOK(b, decided(b, 1))
}

// A League Manager stopped between activating the league and starting its first round
// starts that round when it comes back.
func TestRestartResumesActiveLeagueWithoutActiveRound(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1", "p2"})
	l.start()
	h.settle()
	h.stop()
	db, err := sql.Open("sqlite3", "file:"+h.dbPath())
	if err != nil {
		t.Fatal(err)
	}
	// The state the first transaction of the start leaves behind.
	for _, q := range []string{
		`UPDATE rounds SET status = 'PENDING', started_at = NULL`,
		`UPDATE matches SET status = 'PENDING', referee_id = NULL, assigned_at = NULL, assignments = 0`,
		`UPDATE leagues SET current_round = 0`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	h.start()
	h.settle()
	roundID, ms := h.round()
	if roundID != "round-1" || len(ms) != 1 || ms[0].Referee != "ref1" {
		t.Fatalf("after restart: round %q matches %+v, want round-1 assigned to ref1", roundID, ms)
	}
	l.reportOK(ms[0], drawn(ms[0]))
	if got := h.m.State(); got != StateCompleted {
		t.Errorf("state %s, want COMPLETED", got)
	}
}

// A referee that cannot take a match (its endpoint is down, or it refuses) does not keep
// it: the match goes to another referee that can.
func TestUnavailableRefereeDoesNotStallTheLeague(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break1 func(f *fakeReferee)
	}{
		{"endpoint down", func(f *fakeReferee) { f.srv.Close() }},
		{"assignment rejected", func(f *fakeReferee) { f.setReject(true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{redispatch: 5 * time.Millisecond})
			l := h.register([]string{"ref1", "ref2"}, nil, []string{"p1", "p2"})
			tc.break1(l.refs["ref1"])
			l.start()
			_, ms := h.round()
			waitFor(t, "the match to reach ref2", func() bool {
				mt := h.match(ms[0].ID)
				return mt.Referee == "ref2" && mt.Status == protocol.MatchStateInProgress
			})
			l.refs["ref2"].assignment(t, ms[0].ID)
			// ref1 had the match once: a report from it is stale.
			mt := h.match(ms[0].ID)
			h.unchanged("report of the first referee", func() {
				h.refused(h.report("ref1", l.refTokens["ref1"], mt, decided(mt, 1)), protocol.ReasonStaleAssignment)
			})
			l.reportOK(mt, decided(mt, 0))
			if got := h.m.State(); got != StateCompleted {
				t.Errorf("state %s, want COMPLETED", got)
			}
		})
	}
}

// Standings can be read before the league starts: every registered player with nothing
// played, the same before and after a restart, and an empty list before any player.
func TestStandingsDuringRegistration(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	p := decodeStandings(t, h.ok(standingsQuery(t, "admin", testAdminToken, "")))
	if p.Standings == nil || len(p.Standings) != 0 || p.RoundID != nil || p.LeagueState != StateRegistration {
		t.Errorf("standings of an empty league %+v, want an empty list, no round, REGISTRATION", p)
	}
	l := h.register([]string{"ref1"}, nil, []string{"p2", "p1"})
	want := "1:p1 p0 w0 d0 l0 m0  2:p2 p0 w0 d0 l0 m0  "
	for _, restart := range []bool{false, true} {
		if restart {
			h.restart()
		}
		p := decodeStandings(t, h.ok(standingsQuery(t, "player:p1", l.playerTokens["p1"], "")))
		if got := rowsString(p.Standings); got != want {
			t.Errorf("restart=%v: standings %s, want %s", restart, got, want)
		}
	}
}
