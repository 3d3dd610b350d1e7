package league

import (
	"context"
	"database/sql"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
)

type flight struct {
	referee     string
	assignments int
}

// inFlight lists the matches waiting for their referee.
func (h *harness) inFlight() map[string]flight {
	h.t.Helper()
	out := map[string]flight{}
	_, ms := h.round()
	for _, mt := range ms {
		if mt.Status == protocol.MatchStateAssigned || mt.Status == protocol.MatchStateInProgress {
			out[mt.ID] = flight{mt.Referee, h.assignments(mt.ID)}
		}
	}
	return out
}

// storedResults reads every stored result by match id.
func (h *harness) storedResults() map[string]stored {
	h.t.Helper()
	out := map[string]stored{}
	for _, id := range queryStrings(h.t, h.store.DB(), `SELECT match_id FROM match_results`) {
		out[id] = h.storedResult(id)
	}
	return out
}

func sameStored(a, b stored) bool {
	return maps.Equal(a.result.Outcome, b.result.Outcome) && maps.Equal(a.result.Points, b.result.Points) && a.referee == b.referee && a.meta == b.meta
}

// A League Manager killed at any point resumes from its files: acknowledged results are
// kept, matches in flight fail and are assigned again under the same match_id (another
// referee preferred, whose report alone counts), and the league completes with every
// pair once.
func TestCrashRecovery(t *testing.T) {
	tests := []struct {
		name   string
		before func(l *testLeague)
	}{
		{"after registration", func(*testLeague) {}},
		{"mid-round with matches assigned", func(l *testLeague) {
			l.start()
			l.settle()
			_, ms := l.round()
			l.reportOK(ms[0], decided(ms[0], 0))
		}},
		{"between rounds", func(l *testLeague) {
			l.start()
			l.settle()
			_, ms := l.round()
			for _, mt := range ms {
				l.reportOK(mt, drawn(mt))
			}
			l.settle()
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			l := h.register([]string{"ref1", "ref2", "ref3"}, nil, playerIDs(6))
			tc.before(l)
			acked := l.storedResults()
			flying := l.inFlight()

			l.crash(nil)
			for id, want := range acked {
				if got := l.storedResult(id); !sameStored(got, want) {
					t.Errorf("result of %s after the crash %+v, want %+v", id, got, want)
				}
			}
			l.ok(standingsQuery(t, "player:p01", l.playerTokens["p01"], ""))
			if l.m.State() == StateRegistration {
				l.start()
			}
			l.settle()
			moved := 0
			for id, f := range flying {
				got := l.match(id)
				if got.Status != protocol.MatchStateInProgress || l.assignments(id) != f.assignments+1 {
					t.Errorf("match %s in flight at the crash: %+v assigned %d times, want in progress, assigned once more", id, got, l.assignments(id))
				}
				if got.Referee == f.referee {
					continue
				}
				moved++
				l.unchanged("report of the referee that lost the match", func() {
					l.refused(l.report(f.referee, l.refTokens[f.referee], got, decided(got, 1)), protocol.ReasonStaleAssignment)
				})
			}
			if len(flying) > 0 && moved == 0 {
				t.Errorf("no match in flight moved to another referee although referees were free")
			}
			l.playOut()
			checkEveryPairOnce(t, l.harness, l.players)
		})
	}
}

// execSQL runs statements on the database of a stopped League Manager.
func execSQL(tb testing.TB, path string, stmts ...string) {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
}

// A crash between two writes leaves files that open and resume: the result transaction
// without the round's completion, the database without the audit line, a transaction cut
// half-way, a torn audit line.
func TestCrashBetweenWrites(t *testing.T) {
	dropTrigger := func(name string) func(tb testing.TB, dir string) {
		return func(tb testing.TB, dir string) {
			execSQL(tb, filepath.Join(dir, "league.db"), `DROP TRIGGER `+name)
		}
	}
	tests := []struct {
		name string
		// cut makes the interrupted write and returns the report the referee will retry
		// after the restart (nil: none).
		cut        func(t *testing.T, l *testLeague, mt liveMatch) *protocol.Message
		repair     func(tb testing.TB, dir string)
		recoveries int // AUDIT_RECOVERY events expected
		recovered  int // results the restart writes to the log from the database
	}{
		{"result stored, round not completed", func(t *testing.T, l *testLeague, mt liveMatch) *protocol.Message {
			if _, err := l.store.DB().Exec(`CREATE TRIGGER cut BEFORE INSERT ON standings_snapshots BEGIN SELECT RAISE(ABORT, 'killed'); END`); err != nil {
				t.Fatal(err)
			}
			// The result is committed, so it is acknowledged: completing the round is the
			// League Manager's to retry, never the referee's.
			msg := l.report(mt.Referee, l.refTokens[mt.Referee], mt, decided(mt, 0))
			if ans := l.ok(msg); ans.Envelope.MessageType != protocol.MatchResultAck {
				t.Fatalf("report answered %s, want %s", ans.Envelope.MessageType, protocol.MatchResultAck)
			}
			return msg
		}, dropTrigger("cut"), 0, 0}, // acknowledged and logged; the restart completes the round
		{"result stored, audit line not written", func(t *testing.T, l *testLeague, mt liveMatch) *protocol.Message {
			msg := l.report(mt.Referee, l.refTokens[mt.Referee], mt, decided(mt, 0))
			if _, err := l.m.Handle(context.Background(), msg); err != nil {
				t.Fatal(err)
			}
			return msg
		}, nil, 0, 1},
		// The referee's retry may never come (it stopped, or the league ended first): the
		// log must still hold every result the database holds.
		{"result stored, audit line not written, no retry", func(t *testing.T, l *testLeague, mt liveMatch) *protocol.Message {
			if _, err := l.m.Handle(context.Background(), l.report(mt.Referee, l.refTokens[mt.Referee], mt, decided(mt, 0))); err != nil {
				t.Fatal(err)
			}
			return nil
		}, nil, 0, 1},
		{"result transaction cut half-way", func(t *testing.T, l *testLeague, mt liveMatch) *protocol.Message {
			if _, err := l.store.DB().Exec(`CREATE TRIGGER cut BEFORE UPDATE ON matches WHEN NEW.status = 'COMPLETED' BEGIN SELECT RAISE(ABORT, 'killed'); END`); err != nil {
				t.Fatal(err)
			}
			l.refused(l.report(mt.Referee, l.refTokens[mt.Referee], mt, decided(mt, 0)), protocol.ReasonInternal)
			return nil
		}, dropTrigger("cut"), 0, 0},
		{"audit line torn", func(t *testing.T, l *testLeague, mt liveMatch) *protocol.Message {
			l.reportOK(mt, decided(mt, 0))
			return nil
		}, func(tb testing.TB, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "audit.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				tb.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(`{"log_id":"0b1","timestamp":"2026-01-0`); err != nil {
				tb.Fatal(err)
			}
		}, 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			l := h.register([]string{"ref1"}, nil, []string{"p1", "p2", "p3"})
			l.start()
			l.settle()
			_, ms := l.round()
			retry := tc.cut(t, l, ms[0])
			l.crash(tc.repair)
			if retry != nil {
				if ans := l.ok(retry); ans.Envelope.MessageType != protocol.MatchResultAck {
					t.Fatalf("retried report answered %s, want %s", ans.Envelope.MessageType, protocol.MatchResultAck)
				}
			}
			l.playOut()
			checkEveryPairOnce(t, l.harness, l.players)
			var snapshots int
			if err := l.store.DB().QueryRow(`SELECT count(*) FROM standings_snapshots`).Scan(&snapshots); err != nil || snapshots != 3 {
				t.Errorf("%d round snapshots (%v), want 3", snapshots, err)
			}
			readAudit(t, l.auditPath()) // whole lines, hash chain intact
			if n := auditEvents(t, l.harness, "AUDIT_RECOVERY"); n != tc.recoveries {
				t.Errorf("%d AUDIT_RECOVERY events, want %d", n, tc.recoveries)
			}
			if n := auditEvents(t, l.harness, audit.EventResultRecorded); n != tc.recovered {
				t.Errorf("%d RESULT_RECORDED events, want %d recovered from the database", n, tc.recovered)
			}
			checkLogAgainstDB(t, l.harness)
		})
	}
}

// checkLogAgainstDB rebuilds the league from the audit log and compares it with the
// database, as league replay --check does: every round snapshot, the final standings,
// the ratings and the pairings.
func checkLogAgainstDB(t *testing.T, h *harness) {
	t.Helper()
	lg := h.rebuild()
	if err := lg.CheckDB(h.store); err != nil {
		t.Errorf("CheckDB: %v", err)
	}
	if _, err := lg.CheckPairings(); err != nil {
		t.Errorf("CheckPairings: %v", err)
	}
}

// A League Manager killed after its database took writes its log has not (here the log
// is cut back to an earlier line, standing for any number of writes lost between the two)
// writes what is missing when it starts again: the schedule, the rounds a Swiss format paired and the
// results, each marked recovered. The league then plays out, and the log rebuilds the
// database exactly.
func TestRestartWritesWhatTheLogLacks(t *testing.T) {
	const (
		beforeRegistration = iota // the log lacks the registrations too
		beforeStart               // it lacks the schedule too
		afterStart                // it lacks round 1's results and round 2
	)
	tests := []struct {
		name                             string
		cut                              int
		agents, schedule, rounds, result int // recovered notes expected
	}{
		{"registrations, schedule, rounds and results", beforeRegistration, 5, 1, 1, 2},
		{"schedule, rounds and results", beforeStart, 0, 1, 1, 2},
		{"rounds and results", afterStart, 0, 0, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{cfg: swissConfig(2, 3)})
			var cut int64
			at := func(point int) {
				if tc.cut == point {
					cut = fileSize(t, h.auditPath())
				}
			}
			at(beforeRegistration)
			l := h.register([]string{"ref1"}, nil, playerIDs(4))
			at(beforeStart)
			l.start()
			h.settle()
			at(afterStart)
			_, ms := h.round()
			for _, mt := range ms {
				h.settle()
				l.reportOK(h.match(mt.ID), decided(h.match(mt.ID), 0))
			}
			h.settle() // round 2 is paired and stored
			l.crash(func(tb testing.TB, dir string) {
				if err := os.Truncate(filepath.Join(dir, "audit.jsonl"), cut); err != nil {
					tb.Fatal(err)
				}
			})
			want := tc.agents + tc.schedule + tc.rounds + tc.result
			for kind, n := range map[audit.Event]int{audit.EventAgentRecovered: tc.agents, audit.EventSchedule: 1, audit.EventRoundPaired: 1, audit.EventResultRecorded: tc.result} {
				if got := auditEvents(t, l.harness, kind); got != n {
					t.Errorf("%d %s events after the restart, want %d", got, kind, n)
				}
			}
			if n := recoveredNotes(t, l.harness); n != want {
				t.Errorf("%d notes marked recovered, want %d", n, want)
			}
			checkLogAgainstDB(t, l.harness)
			l.restart() // a second start finds nothing missing
			if n := recoveredNotes(t, l.harness); n != want {
				t.Errorf("%d notes marked recovered after a clean restart, want still %d", n, want)
			}
			l.playOut()
			checkLogAgainstDB(t, l.harness)
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// recoveredNotes counts the League Manager's notes marked recovered.
func recoveredNotes(t *testing.T, h *harness) int {
	t.Helper()
	n := 0
	for _, l := range readAudit(t, h.auditPath()) {
		var ev struct {
			Body struct {
				Recovered bool `json:"recovered"`
			} `json:"body"`
		}
		if l.entry.Direction == "event" && json.Unmarshal(l.entry.Message, &ev) == nil && ev.Body.Recovered {
			n++
		}
	}
	return n
}
