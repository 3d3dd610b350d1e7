package league

import (
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/league/store"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
)

// flakyAudit is the harness's audit log with appends that fail on demand, as a full disk
// makes them fail: nothing is written, the failure is counted and reported as
// *audit.Log reports its own.
type flakyAudit struct {
	*audit.Log
	fail      atomic.Bool
	failures  atomic.Int64
	onFailure atomic.Pointer[func()]
}

func (f *flakyAudit) failed() error {
	f.failures.Add(1)
	if fn := f.onFailure.Load(); fn != nil {
		(*fn)()
	}
	return fmt.Errorf("%w: append: %w", audit.ErrUnavailable, syscall.ENOSPC)
}

func (f *flakyAudit) Record(ex protocol.Exchange) error {
	if f.fail.Load() {
		return f.failed()
	}
	return f.Log.Record(ex)
}

func (f *flakyAudit) Note(kind audit.Event, body any) error {
	if f.fail.Load() {
		return f.failed()
	}
	return f.Log.Note(kind, body)
}

func (f *flakyAudit) Probe() error {
	if f.fail.Load() {
		return fmt.Errorf("%w: reopen: %w", audit.ErrUnavailable, syscall.ENOSPC)
	}
	return f.Log.Probe()
}

func (f *flakyAudit) Failures() int64 { return f.Log.Failures() + f.failures.Load() }

func (f *flakyAudit) OnFailure(fn func()) {
	f.onFailure.Store(&fn)
	f.Log.OnFailure(fn)
}

// writeFailures reads league_storage_write_failures_total for one store.
func writeFailures(t *testing.T, h *harness, store string) float64 {
	t.Helper()
	mfs, err := h.m.Metrics().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "league_storage_write_failures_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "store" && l.GetValue() == store {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("no league_storage_write_failures_total{store=%q}", store)
	return 0
}

func setQueryOnly(t *testing.T, h *harness, on bool) {
	t.Helper()
	// The store has one connection, so the pragma holds for every write it makes.
	if _, err := h.store.DB().Exec(fmt.Sprintf(`PRAGMA query_only = %v`, on)); err != nil {
		t.Fatal(err)
	}
}

// While the database takes no writes, a result is refused STORAGE_UNAVAILABLE and
// changes nothing, /health says degraded with the cause, and no deadline passes against
// an agent however long it lasts. Once writes succeed again the same report is
// acknowledged, the matches in flight keep their clocks, and the league completes with
// every pair played once and a log that rebuilds the database.
func TestDatabaseOutagePausesTheLeague(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock})
	l := h.register([]string{"ref1", "ref2"}, nil, []string{"p1", "p2", "p3", "p4"})
	l.start()
	l.settle()
	_, ms := l.round()
	if len(ms) != 2 || ms[0].Status != protocol.MatchStateInProgress || ms[1].Status != protocol.MatchStateInProgress {
		t.Fatalf("round 1 is %+v, want 2 matches in progress", ms)
	}
	if got := h.m.Health(); got.Status != "ok" {
		t.Fatalf("health %+v before the outage", got)
	}

	setQueryOnly(t, h, true)
	report := l.report(ms[0].Referee, l.refTokens[ms[0].Referee], ms[0], decided(ms[0], 0))
	h.unchanged("a result refused for storage", func() {
		perr := h.refused(report, protocol.ReasonStorageUnavailable)
		if perr.Data.Details != "database: attempt to write a readonly database" {
			t.Errorf("details %q, want the database's cause", perr.Data.Details)
		}
	})
	hl := h.m.Health()
	if hl.Status != "degraded" || hl.Storage == nil || !strings.Contains(hl.Storage.Cause, "readonly") || hl.Storage.Since == "" {
		t.Errorf("health %+v during the outage, want degraded with the cause", hl)
	}
	if n := writeFailures(t, h, "database"); n < 1 {
		t.Errorf("league_storage_write_failures_total{store=database} = %v, want at least 1", n)
	}
	if v, err := h.m.LeagueView(web.Page{}); err != nil || v.StorageFailure == "" {
		t.Errorf("dashboard view says no storage failure (%v)", err)
	}
	// Far past every match deadline: nothing is failed while nothing can be written.
	for range 30 {
		clock.Advance(10 * time.Second)
	}
	for _, mt := range ms {
		if got := h.match(mt.ID).Status; got != protocol.MatchStateInProgress {
			t.Errorf("match %s is %s after the outage, want %s", mt.ID, got, protocol.MatchStateInProgress)
		}
	}

	setQueryOnly(t, h, false)
	clock.Advance(time.Second) // the alarm's next try finds the database writable
	if got := h.m.Health(); got.Status != "ok" || got.Storage != nil {
		t.Errorf("health %+v after the outage, want ok", got)
	}
	if ans := l.ok(report); ans.Envelope.MessageType != protocol.MatchResultAck {
		t.Fatalf("retried report answered %s", ans.Envelope.MessageType)
	}
	// The outage is given back: the other match is still in flight until its own
	// deadline, counted without the outage.
	clock.Advance(time.Second)
	if got := h.match(ms[1].ID).Status; got != protocol.MatchStateInProgress {
		t.Errorf("match %s is %s right after the outage, want %s", ms[1].ID, got, protocol.MatchStateInProgress)
	}
	l.playOut()
	checkEveryPairOnce(t, h, l.players)
	checkLogAgainstDB(t, h)
}

// A registration refused for storage registers nothing; the same registration is taken
// once the database takes writes, and the league starts.
func TestRegistrationDuringADatabaseOutage(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	l := h.register([]string{"ref1"}, nil, []string{"p1"})
	setQueryOnly(t, h, true)
	msg := playerRegistration(t, "p2")
	h.unchanged("a registration refused for storage", func() {
		h.refused(msg, protocol.ReasonStorageUnavailable)
	})
	setQueryOnly(t, h, false)
	l.playerTokens["p2"] = l.registrationToken(h.ok(msg))
	l.players = append(l.players, "p2")
	l.start()
	l.settle()
	l.playOut()
	checkEveryPairOnce(t, h, l.players)
	checkLogAgainstDB(t, h)
}

// An exchange the audit log could not take is acknowledged (the database holds it) and
// written to the log as recovered before the League Manager decides anything else;
// meanwhile every request that would change the league is refused STORAGE_UNAVAILABLE.
func TestAuditOutageIsReconciledLive(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock, flakyAudit: true})
	l := h.register([]string{"ref1", "ref2"}, nil, []string{"p1", "p2", "p3", "p4"})
	l.start()
	l.settle()
	_, ms := l.round()

	h.flaky.fail.Store(true)
	l.reportOK(ms[0], decided(ms[0], 0)) // committed: the answer stands
	clock.Advance(time.Second)           // the check the failed append armed
	hl := h.m.Health()
	if hl.Status != "degraded" || hl.Storage == nil || hl.Storage.Cause != "audit log: no space left on device" {
		t.Errorf("health %+v, want degraded by the audit log", hl)
	}
	second := l.report(ms[1].Referee, l.refTokens[ms[1].Referee], ms[1], decided(ms[1], 1))
	perr := h.refused(second, protocol.ReasonStorageUnavailable)
	if perr.Data.Details != "audit log: no space left on device" {
		t.Errorf("details %q", perr.Data.Details)
	}
	if got := h.match(ms[1].ID).Status; got != protocol.MatchStateInProgress {
		t.Errorf("refused result changed match %s to %s", ms[1].ID, got)
	}
	if n := writeFailures(t, h, "audit_log"); n < 1 {
		t.Errorf("league_storage_write_failures_total{store=audit_log} = %v", n)
	}

	h.flaky.fail.Store(false)
	clock.Advance(time.Second)
	if got := h.m.Health(); got.Status != "ok" {
		t.Errorf("health %+v after the log came back", got)
	}
	if n := auditEvents(t, h, audit.EventResultRecorded); n != 1 {
		t.Errorf("%d RESULT_RECORDED events, want the lost exchange's result recovered", n)
	}
	l.reportOK(ms[1], decided(ms[1], 1))
	l.playOut()
	checkEveryPairOnce(t, h, l.players)
	checkLogAgainstDB(t, h)
	if n := auditEvents(t, h, audit.EventResultRecorded); n != 1 {
		t.Errorf("%d RESULT_RECORDED events at the end, want 1", n)
	}
}

// A League Manager restarted while its database takes no writes comes up degraded
// instead of exiting, and resumes the league (the matches in flight at the restart are
// failed and assigned again) once writes succeed.
func TestRestartDuringADatabaseOutage(t *testing.T) {
	clock := newFakeClock()
	h := newHarness(t, harnessOptions{clock: clock})
	l := h.register([]string{"ref1", "ref2"}, nil, []string{"p1", "p2", "p3", "p4"})
	l.start()
	l.settle()
	assigned := func() int { return len(l.refs["ref1"].assignments()) + len(l.refs["ref2"].assignments()) }
	before := assigned()
	h.opt.beforeStart = func(st *store.Store) {
		if _, err := st.DB().Exec(`PRAGMA query_only = ON`); err != nil {
			t.Fatal(err)
		}
	}
	h.restart() // fails the test if Start returns an error
	h.opt.beforeStart = nil
	if got := h.m.Health(); got.Status != "degraded" {
		t.Fatalf("health %+v after a restart on a database that takes no writes", got)
	}
	clock.Advance(10 * time.Second)
	_, ms := l.round()
	for _, mt := range ms {
		if mt.Status != protocol.MatchStateInProgress {
			t.Errorf("match %s is %s while the League Manager cannot write, want it left as it was", mt.ID, mt.Status)
		}
	}
	if n := assigned(); n != before {
		t.Errorf("%d assignments during the outage, want %d", n, before)
	}
	setQueryOnly(t, h, false)
	clock.Advance(time.Second)
	if got := h.m.Health(); got.Status != "ok" {
		t.Fatalf("health %+v once writes succeed", got)
	}
	l.settle()
	if n := assigned(); n != before+len(ms) {
		t.Errorf("%d assignments after the resume, want the %d matches in flight at the restart assigned again (%d)", n, len(ms), before+len(ms))
	}
	l.playOut()
	checkEveryPairOnce(t, h, l.players)
	checkLogAgainstDB(t, h)
}
