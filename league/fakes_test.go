package league

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/audit"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

// fakeClock is a manual clock and timer source for Options.Now and Options.AfterFunc:
// timers fire in time order, on the goroutine that advances the clock.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c    *fakeClock
	at   time.Time
	f    func()
	done bool // fired or stopped
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	return was
}

// Advance moves the clock by d, firing every timer that falls due on the way (timers
// set by a firing timer included) at its own time.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *fakeTimer
		for _, t := range c.timers {
			if !t.done && !t.at.After(end) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			c.now = end
			c.timers = slices.DeleteFunc(c.timers, func(t *fakeTimer) bool { return t.done })
			c.mu.Unlock()
			return
		}
		next.done = true
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

// fakePlayer is a player's endpoint that records what the League Manager sends it. It
// acknowledges LEAGUE_SHUTDOWN, and MATCH_CANCELLED unless it plays an agent that does
// not know that message; when hang is set it answers nothing until the caller gives up.
type fakePlayer struct {
	id  string
	srv *httptest.Server

	mu         sync.Mutex
	got        []*protocol.Message
	noCancelOK bool
	hang       bool
}

func newFakePlayer(tb testing.TB, id string) *fakePlayer {
	tb.Helper()
	f := &fakePlayer{id: id}
	h := protocol.HandlerFunc(func(ctx context.Context, msg *protocol.Message) (*protocol.Message, error) {
		f.mu.Lock()
		f.got = append(f.got, msg)
		noCancelOK, hang := f.noCancelOK, f.hang
		f.mu.Unlock()
		if hang {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		switch msg.Envelope.MessageType {
		case protocol.LeagueShutdown:
			return msg.Reply(protocol.LeagueShutdownAck, protocol.PlayerSender(id), map[string]string{"status": "acknowledged"})
		case protocol.LeagueCompleted:
			return msg.Reply(protocol.LeagueCompletedAck, protocol.PlayerSender(id), map[string]string{"status": "acknowledged"})
		case protocol.MatchCancelled:
			if !noCancelOK {
				return msg.Reply(protocol.MatchCancelledAck, protocol.PlayerSender(id), map[string]string{"status": "acknowledged"})
			}
		}
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "a player does not accept %s", msg.Envelope.MessageType)
	})
	f.srv = httptest.NewServer(protocol.NewServer(h, testValidator(tb), nil, zerolog.Nop()))
	tb.Cleanup(f.srv.Close)
	return f
}

func (f *fakePlayer) url() string { return f.srv.URL + "/mcp" }

func (f *fakePlayer) set(noCancelOK, hang bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noCancelOK, f.hang = noCancelOK, hang
}

// messages returns what the player received of one message type.
func (f *fakePlayer) messages(messageType string) []*protocol.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*protocol.Message
	for _, m := range f.got {
		if m.Envelope.MessageType == messageType {
			out = append(out, m)
		}
	}
	return out
}

// heartbeatMsg is a HEARTBEAT_REQUEST of referee id.
func heartbeatMsg(tb testing.TB, id, token string, active ...string) *protocol.Message {
	return withToken(newMsg(tb, protocol.HeartbeatRequest, protocol.RefereeSender(id), map[string]any{"active_matches": append([]string{}, active...)}), token)
}

// crash stops the League Manager the way a killed process stops: its files are copied
// as they are between two transactions (the database with its write-ahead log, the
// audit log as written), the old Manager is dropped without any graceful step, and a
// new one starts on the copy, after repair (if not nil) edited the copied files.
func (l *testLeague) crash(repair func(tb testing.TB, dir string)) {
	l.t.Helper()
	dir := l.t.TempDir()
	l.m.e.mu.Lock() // every write to the database happens under mu
	for _, name := range []string{"league.db", "league.db-wal", "audit.jsonl"} {
		copyFile(l.t, filepath.Join(l.dir, name), filepath.Join(dir, name))
	}
	l.m.e.mu.Unlock()
	if repair != nil {
		repair(l.t, dir)
	}
	secrets := l.secretList()
	l.harness.stop()
	l.harness = openHarness(l.t, dir, l.cfg, l.opt)
	for _, s := range secrets {
		l.addSecret(s)
	}
}

func copyFile(tb testing.TB, from, to string) {
	tb.Helper()
	in, err := os.Open(from)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
}

// playOut reports a result for every match in flight, round after round, each from the
// referee it is assigned to, until the league is complete.
func (l *testLeague) playOut() {
	l.t.Helper()
	for l.m.State() == StateActive {
		var ms []liveMatch
		waitFor(l.t, "matches in progress", func() bool {
			_, all := l.round()
			ms = slices.DeleteFunc(all, func(mt liveMatch) bool { return mt.Status != protocol.MatchStateInProgress })
			return len(ms) > 0 || l.m.State() != StateActive
		})
		for _, mt := range ms {
			l.reportOK(mt, decided(mt, 0))
		}
	}
}

// checkEveryPairOnce checks that the league is complete with one result for each pair
// of players, and nothing else.
func checkEveryPairOnce(t *testing.T, h *harness, players []string) {
	t.Helper()
	if got := h.m.State(); got != StateCompleted {
		t.Fatalf("state %s, want %s", got, StateCompleted)
	}
	got := queryStrings(t, h.store.DB(), `SELECT m.players FROM match_results r JOIN matches m ON m.match_id = r.match_id WHERE m.status = 'COMPLETED'`)
	var want []string
	for i, a := range players {
		for _, b := range players[i+1:] {
			want = append(want, a+" "+b)
		}
	}
	var pairs []string
	for _, p := range got {
		var ps [2]string
		if err := json.Unmarshal([]byte(p), &ps); err != nil {
			t.Fatal(err)
		}
		sort.Strings(ps[:])
		pairs = append(pairs, ps[0]+" "+ps[1])
	}
	sort.Strings(pairs)
	if !slices.Equal(pairs, want) {
		t.Errorf("results for pairs %q, want each of %q once", pairs, want)
	}
	var matches int
	if err := h.store.DB().QueryRow(`SELECT count(*) FROM matches`).Scan(&matches); err != nil || matches != len(want) {
		t.Errorf("%d matches (%v), want %d", matches, err, len(want))
	}
}

// auditEvents counts the League Manager events (and recoveries) of a type in the audit
// log.
func auditEvents(t *testing.T, h *harness, kind audit.Event) int {
	t.Helper()
	n := 0
	for _, l := range readAudit(t, h.auditPath()) {
		var ev struct {
			Type audit.Event `json:"type"`
		}
		if (l.entry.Direction == "event" || l.entry.Direction == "recovery") && json.Unmarshal(l.entry.Message, &ev) == nil && ev.Type == kind {
			n++
		}
	}
	return n
}
