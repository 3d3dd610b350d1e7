package league

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/league/events"
	"github.com/agentleague/agentleague/league/web"
	"github.com/agentleague/agentleague/protocol"
)

// serveHTTP serves the harness's League Manager over real HTTP, as league serve does,
// with the timeouts t.
func (h *harness) serveHTTP(t httpserve.Timeouts) string {
	h.t.Helper()
	srv, err := httpserve.StartWith("127.0.0.1:0", Routes(h.m, h.srv), t)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			h.t.Errorf("shutdown: %v", err)
		}
	})
	return "http://" + srv.Addr()
}

// stream is an open SSE connection; its reader goroutine ends when close closes the body.
type stream struct {
	body   io.ReadCloser
	events chan events.Event
	done   chan struct{}
}

func openStream(t *testing.T, url, lastID string) *stream {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode != http.StatusOK || ct != "text/event-stream" {
		res.Body.Close()
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, ct)
	}
	s := &stream{body: res.Body, events: make(chan events.Event, 1024), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var e events.Event
				if json.Unmarshal([]byte(data), &e) == nil {
					s.events <- e
				}
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

// take reads n events, failing after 5 s without one.
func (s *stream) take(t *testing.T, n int) []events.Event {
	t.Helper()
	var out []events.Event
	for len(out) < n {
		select {
		case e, ok := <-s.events:
			if !ok {
				t.Fatalf("stream ended after %d of %d events", len(out), n)
			}
			out = append(out, e)
		case <-time.After(5 * time.Second):
			t.Fatalf("got %d of %d events: %v", len(out), n, out)
		}
	}
	return out
}

func (s *stream) close() {
	s.body.Close()
	<-s.done
}

func eventTypes(es []events.Event) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

// The event stream of the League Manager's own HTTP server outlives its timeouts, and a
// client that reconnects with Last-Event-ID gets exactly the events it missed. A match's
// stream has that match's events only.
//
// The timeouts are a second, not 100 ms: they also bound every request of the test (the
// streams' and the pages' reads and answers), which a loaded machine could stretch past
// 100 ms.
func TestEventStreamResumesOverHTTP(t *testing.T) {
	const timeout = time.Second
	h := newHarness(t, harnessOptions{})
	base := h.serveHTTP(httpserve.Timeouts{ReadHeader: timeout, Read: timeout, Write: timeout, Idle: timeout})
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(4))
	s := openStream(t, base+"/events", "")
	got := s.take(t, 6)
	// Past every timeout of the server (they began before the stream's request was read),
	// the stream is still open.
	time.Sleep(timeout + timeout/2)
	l.start()
	h.settle()
	got = append(got, s.take(t, 3)...)
	s.close()

	// Missed while disconnected: a result and the standings it changed.
	_, ms := h.round()
	l.reportOK(ms[0], decided(ms[0], 0))
	s = openStream(t, base+"/events", strconv.FormatUint(got[len(got)-1].ID, 10))
	got = append(got, s.take(t, 2)...)
	for i, e := range got {
		if e.ID != uint64(i+1) {
			t.Errorf("event %d has id %d: ids must follow on without gaps or repeats", i, e.ID)
		}
	}
	want := []string{events.AgentRegistered, events.AgentRegistered, events.AgentRegistered, events.AgentRegistered, events.AgentRegistered, events.AgentRegistered,
		events.RoundStarted, events.MatchAssigned, events.MatchAssigned, events.MatchFinished, events.StandingsChanged}
	if types := eventTypes(got); !slices.Equal(types, want) {
		t.Errorf("got events %v, want %v", types, want)
	}

	// The stream of one match.
	ms1 := openStream(t, base+"/matches/"+ms[1].ID+"/events", "")
	l.reportOK(ms[1], decided(ms[1], 1))
	for _, e := range ms1.take(t, 2) {
		if e.MatchID != ms[1].ID {
			t.Errorf("match stream of %s got %+v", ms[1].ID, e)
		}
	}

	// The pages and the JSON API are served beside the streams.
	for path, wantBody := range map[string]string{"/": "<title>Agent League</title>", "/api/league": `"league_id"`, "/api/matches/" + ms[0].ID: `"steps"`} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), wantBody) {
			t.Errorf("GET %s: %d %.200s", path, res.StatusCode, body)
		}
		h.checkNoSecret("GET "+path, body)
	}
}

// The events of a whole league come in the order of its decisions: registrations, then
// each round's start, assignments and results (each result followed by the standings it
// changed), and the league's completion last.
func TestEventsOfALeagueInOrder(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	refs, players := []string{"ref1", "ref2"}, playerIDs(4)
	l := h.register(refs, nil, players)
	l.start()
	l.playOut()
	evs := h.hubEvents()
	index := map[string]int{} // "type match_id" -> position
	rounds := 0
	for i, e := range evs {
		if e.ID != uint64(i+1) {
			t.Fatalf("event %d has id %d", i, e.ID)
		}
		index[e.Type+" "+e.MatchID] = i
		var d struct {
			ID          string `json:"id"`
			RoundNumber int    `json:"round_number"`
		}
		_ = json.Unmarshal(e.Data, &d)
		switch e.Type {
		case events.AgentRegistered:
			if want := append(slices.Clone(refs), players...)[i]; i >= 6 || d.ID != want {
				t.Errorf("event %d registers %q, want the registrations first, in order (%s)", i, d.ID, want)
			}
		case events.RoundStarted:
			rounds++
			if d.RoundNumber != rounds {
				t.Errorf("round %d started as round %d", rounds, d.RoundNumber)
			}
		case events.MatchFinished:
			if i+1 >= len(evs) || evs[i+1].Type != events.StandingsChanged {
				t.Errorf("match_finished %s is not followed by standings_changed", e.MatchID)
			}
		}
	}
	h.m.e.mu.Lock()
	final := h.m.e.fx.table.Rows()
	var ms []*match
	for _, r := range h.m.e.fx.rounds {
		ms = append(ms, r.matches...)
	}
	nRounds := len(h.m.e.fx.rounds)
	h.m.e.mu.Unlock()
	if rounds != nRounds {
		t.Errorf("%d rounds started, want %d", rounds, nRounds)
	}
	for _, mt := range ms {
		a, okA := index[events.MatchAssigned+" "+mt.id]
		f, okF := index[events.MatchFinished+" "+mt.id]
		if !okA || !okF || a > f {
			t.Errorf("match %s: assigned at %d (%v), finished at %d (%v)", mt.id, a, okA, f, okF)
		}
	}
	last := evs[len(evs)-1]
	var done struct {
		Standings []protocol.StandingsRow `json:"standings"`
	}
	if err := json.Unmarshal(last.Data, &done); err != nil || last.Type != events.LeagueCompleted || !slices.Equal(done.Standings, final) {
		t.Errorf("last event %s %s, want league_completed with the final standings %v", last.Type, last.Data, final)
	}
	var changed struct {
		Standings []protocol.StandingsRow `json:"standings"`
	}
	// The last standings_changed holds the final rows of the last match's two players.
	var lastMatch struct {
		Players []string `json:"players"`
	}
	_ = json.Unmarshal(evs[len(evs)-3].Data, &lastMatch)
	var want []protocol.StandingsRow
	for _, r := range final {
		if slices.Contains(lastMatch.Players, r.PlayerID) {
			want = append(want, r)
		}
	}
	if err := json.Unmarshal(evs[len(evs)-2].Data, &changed); err != nil || len(want) != 2 || !slices.Equal(changed.Standings, want) {
		t.Errorf("last standings_changed %s, want the rows of %v: %v", evs[len(evs)-2].Data, lastMatch.Players, want)
	}
	v, err := h.m.LeagueView(web.Page{})
	if err != nil || v.LastEventID != last.ID || v.State != StateCompleted {
		t.Errorf("league view: last event %d, state %s (%v); want %d and COMPLETED", v.LastEventID, v.State, err, last.ID)
	}
}

// filler is an event of about 512 KiB.
func filler() map[string]any {
	s := map[string]any{}
	for i := range 64 {
		s[fmt.Sprintf("pad%02d", i)] = strings.Repeat("x", 8000)
	}
	return s
}

// A client that opens the event stream and never reads cannot slow the league. Its
// connection is filled first (16 events of 512 KiB: more than a loopback connection
// holds, Linux lets a send buffer grow to 4 MiB by default); then a whole league with 20
// move events per match completes while it stalls: more events than its subscription
// buffers, so the hub drops it and its stream ends. A client that reads gets every event.
func TestStalledStreamDoesNotSlowTheLeague(t *testing.T) {
	h := newHarness(t, harnessOptions{})
	base := h.serveHTTP(httpserve.DefaultTimeouts)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /events HTTP/1.1\r\nHost: league\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	reader := openStream(t, base+"/events", "")
	big := filler()
	for range 16 {
		h.m.hub.Publish(events.MoveMade, "filler", big)
	}
	l := h.register([]string{"ref1", "ref2"}, nil, playerIDs(6))
	l.start()
	moves, views := tttPlay(t, [2]int{0, 0})
	for h.m.State() == StateActive {
		var ms []liveMatch
		waitFor(t, "matches in progress", func() bool {
			_, all := h.round()
			ms = slices.DeleteFunc(all, func(mt liveMatch) bool { return mt.Status != protocol.MatchStateInProgress })
			return len(ms) > 0 || h.m.State() != StateActive
		})
		for _, mt := range ms {
			for step := range 20 {
				h.ok(h.moveEventMsg(mt.Referee, l.refTokens[mt.Referee], mt, step+1, mt.Players[step%2], moves[0], views[0]))
			}
			l.reportOK(mt, decided(mt, 0))
		}
	}
	checkEveryPairOnce(t, h, l.players)
	all := h.hubEvents()
	got := reader.take(t, len(all))
	if last := got[len(got)-1]; last.Type != events.LeagueCompleted || last.ID != all[len(all)-1].ID {
		t.Errorf("the reading client's last event is %+v, want league_completed", last)
	}

	// The stalled stream was dropped: it ends without the league's last events.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The stream ends with its last chunk, or, when the server was blocked writing to the
	// stalled connection until its write timeout, with the connection cut: both end it.
	body, err := io.ReadAll(res.Body)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("the stalled stream did not end: %v", err)
	}
	if strings.Contains(string(body), "event: "+events.LeagueCompleted) {
		t.Errorf("the stalled stream got every event (%d bytes): it was never stalled", len(body))
	}
}
