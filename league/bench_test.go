package league

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentleague/agentleague/config"
	"github.com/agentleague/agentleague/league/schedule"
	"github.com/agentleague/agentleague/league/standings"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
)

// reportLatencies reports the median and 99th percentile of the measured calls.
func reportLatencies(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "median-ns/op")
	b.ReportMetric(float64(d[len(d)*99/100].Nanoseconds()), "p99-ns/op")
}

// BenchmarkResultReport measures one MATCH_RESULT_REPORT through the real path:
// protocol.Server.Process validates it, the Manager checks and persists it (result,
// match status, standings in one transaction; a round snapshot and the next round's
// assignments when a round ends), the audit log makes the exchange durable with an
// fsync, and the MATCH_RESULT_ACK is encoded. The league has 100 players (4950 matches,
// 50 per round) and one referee taking a whole round at a time; when every match has
// its result, a new league is set up with the timer stopped.
func BenchmarkResultReport(b *testing.B) {
	ctx := context.Background()
	var (
		h      *harness
		bodies [][]byte
		next   int
	)
	setup := func() {
		if h != nil {
			h.stop()
		}
		h = newHarness(b, harnessOptions{cfg: func(c *config.Config) {
			c.Registration.MaxPlayers = 100
			unlimited(c)
		}})
		l := h.register([]string{"ref1"}, map[string]any{"max_concurrent_matches": 64}, playerIDs(100))
		l.start()
		sched, err := schedule.Build(l.players, 1, h.cfg.League.Seed)
		if err != nil {
			b.Fatal(err)
		}
		bodies, next = bodies[:0], 0
		for _, r := range sched.Rounds {
			for _, mt := range r.Matches {
				lm := liveMatch{ID: mt.ID, RoundID: r.ID, Referee: "ref1", Players: mt.Players, Seed: mt.Seed}
				var res result
				switch mt.Seed % 3 {
				case 0:
					res = decided(lm, 0)
				case 1:
					res = drawn(lm)
				default:
					res = decided(lm, 1)
				}
				bodies = append(bodies, requestBody(b, h.report("ref1", l.refTokens["ref1"], lm, res)))
			}
		}
	}
	setup()
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if next == len(bodies) {
			b.StopTimer()
			setup()
			b.StartTimer()
		}
		start := time.Now()
		out := h.srv.Process(ctx, bodies[next])
		durations = append(durations, time.Since(start))
		if !bytes.Contains(out, []byte(`"message_type":"MATCH_RESULT_ACK"`)) {
			b.Fatalf("report %d refused: %s", next, out)
		}
		next++
	}
	b.StopTimer()
	reportLatencies(b, durations)
}

// unlimited lifts the rate limits: benchmarks measure the work, not the limits.
func unlimited(c *config.Config) {
	c.RateLimits.RegistrationPerSecond, c.RateLimits.ResultsPerSecond, c.RateLimits.StandingsPerMinute = 1e9, 1e9, 1e9
}

// seededLeague is a completed league written straight into a database.
type seededLeague struct {
	dir          string
	cfg          *config.Config
	players      []string
	playerTokens map[string]string
	sched        schedule.Schedule
	results      map[string]played
}

// seedCompletedLeague writes a completed single round robin of n players into a new
// database, as the League Manager would have left it: agents, schedule, every match
// COMPLETED with its result, live standings, one snapshot per round and the byes.
// Results follow each match's seed (first mover wins, draw, second mover wins). Playing
// 499500 matches through the handler would take too long for 1000 players.
func seedCompletedLeague(tb testing.TB, n int) seededLeague {
	tb.Helper()
	s := seededLeague{dir: tb.TempDir(), players: make([]string, n), playerTokens: map[string]string{}, results: map[string]played{}}
	s.cfg = testConfig(tb, func(c *config.Config) {
		c.Registration.MaxPlayers = max(n, c.Registration.MaxPlayers)
		unlimited(c)
	})
	for i := range s.players {
		s.players[i] = fmt.Sprintf("p%04d", i+1)
	}
	st, err := store.Open(filepath.Join(s.dir, "league.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	m, err := NewManager(Options{Config: s.cfg, Store: st, Log: zerolog.Nop()}) // creates the league row
	if err != nil {
		tb.Fatal(err)
	}
	m.Close()
	s.sched, err = schedule.Build(s.players, 1, s.cfg.League.Seed)
	if err != nil {
		tb.Fatal(err)
	}
	now := protocol.Now(time.Now())
	err = inTx(st.DB(), func(tx *sql.Tx) error {
		exec := func(q string, args ...any) {
			if err == nil {
				_, err = tx.Exec(q, args...)
			}
		}
		exec(`INSERT INTO referees (referee_id, league_id, auth_token, status, registered_at, endpoint_url, game_types, max_concurrent_matches, conversation_id)
			VALUES ('ref1', ?, ?, 'ACTIVE', ?, 'http://127.0.0.1:9/ref1', '["tic_tac_toe"]', 64, ?)`, s.cfg.League.LeagueID, uuid.NewString(), now, uuid.NewString())
		for _, p := range s.players {
			s.playerTokens[p] = uuid.NewString()
			exec(`INSERT INTO players (player_id, league_id, auth_token, status, registered_at, endpoint_url, conversation_id) VALUES (?, ?, ?, 'ACTIVE', ?, ?, ?)`,
				p, s.cfg.League.LeagueID, s.playerTokens[p], now, playerEndpoint(p), uuid.NewString())
		}
		match, e1 := tx.Prepare(`INSERT INTO matches (match_id, round_id, referee_id, game_type, players, status, assigned_at, match_seed, match_index, assignments)
			VALUES (?, ?, 'ref1', 'tic_tac_toe', ?, 'COMPLETED', ?, ?, ?, 1)`)
		res, e2 := tx.Prepare(`INSERT INTO match_results (result_id, match_id, outcome, points, game_metadata, reported_at, referee_id) VALUES (?, ?, ?, ?, '{}', ?, 'ref1')`)
		rank, e3 := tx.Prepare(`INSERT INTO player_rankings (snapshot_id, player_id, rank, points, wins, draws, losses, matches_played) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
		if err = cmpErr(e1, e2, e3); err != nil {
			return err
		}
		defer match.Close()
		defer res.Close()
		defer rank.Close()
		table := standings.New(s.players)
		for ri, r := range s.sched.Rounds {
			exec(`INSERT INTO rounds (round_id, league_id, round_number, scheduled_at, status, cycle, started_at, completed_at) VALUES (?, ?, ?, ?, 'COMPLETED', ?, ?, ?)`,
				r.ID, s.cfg.League.LeagueID, r.Number, now, r.Cycle, now, now)
			for _, mt := range r.Matches {
				lm := liveMatch{ID: mt.ID, Players: mt.Players}
				var rs result
				switch mt.Seed % 3 {
				case 0:
					rs = decided(lm, 0)
				case 1:
					rs = drawn(lm)
				default:
					rs = decided(lm, 1)
				}
				s.results[mt.ID] = played{round: ri + 1, referee: "ref1", r: rs}
				ps, _ := json.Marshal(mt.Players)
				o, _ := json.Marshal(rs.Outcome)
				pt, _ := json.Marshal(rs.Points)
				if err == nil {
					_, err = match.Exec(mt.ID, r.ID, string(ps), now, mt.Seed, mt.Index)
				}
				if err == nil {
					_, err = res.Exec("result-"+uuid.NewString(), mt.ID, string(o), string(pt), now)
				}
				if aerr := table.Apply(rs.Outcome, rs.Points); aerr != nil && err == nil {
					err = aerr
				}
			}
			if r.Bye != "" {
				exec(`INSERT INTO byes (round_id, player_id) VALUES (?, ?)`, r.ID, r.Bye)
			}
			snap := "snapshot-" + uuid.NewString()
			exec(`INSERT INTO standings_snapshots (snapshot_id, league_id, round_id, computed_at) VALUES (?, ?, ?, ?)`, snap, s.cfg.League.LeagueID, r.ID, now)
			for _, row := range table.Rows() {
				if err == nil {
					_, err = rank.Exec(snap, row.PlayerID, row.Rank, row.Points, row.Wins, row.Draws, row.Losses, row.MatchesPlayed)
				}
			}
			if err != nil {
				return err
			}
		}
		exec(`UPDATE leagues SET status = 'COMPLETED', first_player_at = ?, registration_closed_at = ?, completed_at = ?, current_round = ?`,
			now, now, now, len(s.sched.Rounds))
		return err
	})
	if err != nil {
		tb.Fatalf("seed league: %v", err)
	}
	return s
}

// inTx runs fn in one transaction of db, as the seeding of a test database.
func inTx(db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

func cmpErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// The seeded database is a league the League Manager can load: its standings, snapshots
// and tables agree with the results, as for a league played through the handler.
func TestSeededLeagueIsConsistent(t *testing.T) {
	for _, n := range []int{5, 6} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := seedCompletedLeague(t, n)
			h := openHarness(t, s.dir, s.cfg, harnessOptions{})
			if got := h.m.State(); got != StateCompleted {
				t.Fatalf("state %s, want COMPLETED", got)
			}
			checkDatabase(t, h, s.players, s.sched, s.results)
			p := s.players[0]
			final := decodeStandings(t, h.ok(standingsQuery(t, protocol.PlayerSender(p), s.playerTokens[p], "")))
			want := expectedRows(s.players, resultsUpTo(s.results, len(s.sched.Rounds)))
			if rowsString(final.Standings) != rowsString(want) || !final.Final {
				t.Errorf("final standings %s (final %v), want %s", rowsString(final.Standings), final.Final, rowsString(want))
			}
			round := decodeStandings(t, h.ok(standingsQuery(t, protocol.PlayerSender(p), s.playerTokens[p], "round-2")))
			if want := expectedRows(s.players, resultsUpTo(s.results, 2)); rowsString(round.Standings) != rowsString(want) {
				t.Errorf("round-2 standings %s, want %s", rowsString(round.Standings), rowsString(want))
			}
		})
	}
}

func BenchmarkStandings100(b *testing.B)  { benchmarkStandings(b, 100) }
func BenchmarkStandings1000(b *testing.B) { benchmarkStandings(b, 1000) }

// benchmarkStandings measures QUERY_STANDINGS of a player in a completed league of n
// players with every result of the round robin recorded, through protocol.Server.Process
// with the audit log (fsync) as served: the live standings ("current") and the snapshot
// of a round read from the database ("round"). "handler" is the current standings through
// Manager.Handle alone, without JSON-RPC, schema validation and audit.
func benchmarkStandings(b *testing.B, n int) {
	s := seedCompletedLeague(b, n)
	h := openHarness(b, s.dir, s.cfg, harnessOptions{})
	p := s.players[n/2]
	sender, tok := protocol.PlayerSender(p), s.playerTokens[p]
	mid := s.sched.Rounds[len(s.sched.Rounds)/2].ID
	ctx := context.Background()
	for _, bc := range []struct{ name, round string }{{"current", ""}, {"round", mid}} {
		b.Run(bc.name, func(b *testing.B) {
			body := requestBody(b, standingsQuery(b, sender, tok, bc.round))
			durations := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				out := h.srv.Process(ctx, body)
				durations = append(durations, time.Since(start))
				if !bytes.Contains(out, []byte(`"message_type":"STANDINGS_RESPONSE"`)) || bytes.Count(out, []byte(`"rank"`)) != n {
					b.Fatalf("bad answer: %.300s", out)
				}
			}
			b.StopTimer()
			reportLatencies(b, durations)
		})
	}
	b.Run("handler", func(b *testing.B) {
		msg := standingsQuery(b, sender, tok, "")
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := h.m.Handle(ctx, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}
