package events

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readEvents reads n events from an SSE stream.
func readEvents(t *testing.T, sc *bufio.Scanner, n int) []Event {
	t.Helper()
	var out []Event
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			var e Event
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("bad event %q: %v", data, err)
			}
			out = append(out, e)
		}
	}
	if len(out) < n {
		t.Fatalf("stream ended after %d of %d events: %v", len(out), n, sc.Err())
	}
	return out
}

func open(t *testing.T, srv *httptest.Server, path, lastID string) (*bufio.Scanner, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("got content type %q", ct)
	}
	return bufio.NewScanner(res.Body), func() { cancel(); res.Body.Close() }
}

func newServer(h *Hub) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) { h.ServeSSE(w, r, nil) })
	mux.HandleFunc("GET /matches/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		h.ServeSSE(w, r, func(e Event) bool { return e.MatchID == id })
	})
	return httptest.NewServer(mux)
}

func TestStreamInOrderAndResume(t *testing.T) {
	h := NewHub(100)
	srv := newServer(h)
	defer srv.Close()
	defer h.Close()
	for i := range 5 {
		h.Publish(MoveMade, "m1", map[string]int{"n": i})
	}
	sc, stop := open(t, srv, "/events", "")
	got := readEvents(t, sc, 5)
	for i, e := range got {
		if e.ID != uint64(i+1) {
			t.Errorf("event %d has id %d", i, e.ID)
		}
	}
	h.Publish(MatchFinished, "m1", nil)
	if e := readEvents(t, sc, 1)[0]; e.ID != 6 || e.Type != MatchFinished {
		t.Errorf("got live event %+v", e)
	}
	stop()
	// A reconnect with Last-Event-ID 3 gets 4, 5, 6 and nothing twice.
	h.Publish(LeagueCompleted, "", nil)
	sc, stop = open(t, srv, "/events", "3")
	defer stop()
	got = readEvents(t, sc, 4)
	for i, e := range got {
		if want := uint64(4 + i); e.ID != want {
			t.Errorf("resumed event %d: got id %d, want %d", i, e.ID, want)
		}
	}
}

func TestMatchStreamFilters(t *testing.T) {
	h := NewHub(100)
	srv := newServer(h)
	defer srv.Close()
	defer h.Close()
	h.Publish(MoveMade, "a", nil)
	h.Publish(MoveMade, "b", nil)
	h.Publish(MoveMade, "a", nil)
	sc, stop := open(t, srv, "/matches/a/events", "")
	defer stop()
	for _, e := range readEvents(t, sc, 2) {
		if e.MatchID != "a" {
			t.Errorf("got event of match %s", e.MatchID)
		}
	}
}

func TestResumeBeyondTheRingSaysReset(t *testing.T) {
	h := NewHub(3)
	srv := newServer(h)
	defer srv.Close()
	defer h.Close()
	for range 10 {
		h.Publish(MoveMade, "m", nil)
	}
	sc, stop := open(t, srv, "/events", "2")
	defer stop()
	if !sc.Scan() || sc.Text() != "event: "+Reset {
		t.Fatalf("got %q, want a reset event", sc.Text())
	}
	got := readEvents(t, sc, 4) // the reset's data line, then the 3 kept events
	if got[1].ID != 8 || got[3].ID != 10 {
		t.Errorf("got %v", got)
	}
}

func TestStalledSubscriberNeverBlocksPublish(t *testing.T) {
	h := NewHub(10)
	defer h.Close()
	_, s, _ := h.subscribe(0, nil)
	// Nobody reads s: publishing far more than its buffer must still return, and the
	// subscriber is dropped so it resumes from the ring instead.
	for i := range subBuffer * 4 {
		h.Publish(MoveMade, strconv.Itoa(i), nil)
	}
	select {
	case <-s.lagged:
	default:
		t.Fatal("stalled subscriber was not dropped")
	}
	if got := len(h.Since(0, nil)); got != 10 {
		t.Errorf("ring holds %d events, want 10", got)
	}
}

func TestCloseEndsStreams(t *testing.T) {
	h := NewHub(10)
	srv := newServer(h)
	defer srv.Close()
	sc, stop := open(t, srv, "/events", "")
	defer stop()
	h.Close()
	for sc.Scan() {
	}
	h.Publish(MoveMade, "m", nil) // after Close: ignored, no panic
}

// A stream outlives the server's read and write timeouts: it sets its own deadlines.
//
// The timeouts are a second, not 50 ms: they also bound the reading of the stream's
// request, which a loaded machine could stretch past 50 ms. The sleep starts once the
// request was read, so the timeouts have passed when it ends.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	const timeout = time.Second
	h := NewHub(10)
	defer h.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) { h.ServeSSE(w, r, nil) })
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ReadTimeout, srv.Config.WriteTimeout = timeout, timeout
	srv.Start()
	defer srv.Close()
	sc, stop := open(t, srv, "/events", "")
	defer stop()
	time.Sleep(timeout + timeout/2)
	h.Publish(MoveMade, "m1", nil)
	if e := readEvents(t, sc, 1)[0]; e.ID != 1 {
		t.Errorf("got %+v", e)
	}
}

// A client that stops reading is cut off once a write has waited writeWait, so its
// connection and goroutine end.
func TestStalledClientIsCutOff(t *testing.T) {
	defer func(w time.Duration) { writeWait = w }(writeWait)
	writeWait = 50 * time.Millisecond
	h := NewHub(10)
	defer h.Close()
	done := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		h.ServeSSE(w, r, nil)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /events HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	// 16 MiB in events the client never reads: more than a loopback connection holds,
	// fewer events than the subscription buffers (the hub does not drop the client).
	big := strings.Repeat("x", 1<<20)
	for range 16 {
		h.Publish(MoveMade, "m1", big)
	}
	// writeWait (50 ms) cuts the client off. 5 s is a guard against a hang, not a measure
	// (writing 16 MiB on a loaded machine may take longer than 500 ms), and still shorter
	// than the default writeWait.
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream of a client that does not read is still open")
	}
}

// The frame Publish encodes once is what encoding an Event would give, byte for byte:
// with and without a match id, and with strings encoding/json escapes.
func TestFrameIsTheEncodedEvent(t *testing.T) {
	h := NewHub(8)
	h.Publish(MatchFinished, `m<1>&"x"`, map[string]any{"points": map[string]int{"p01": 3}, "note": "a<b>&é\u2028"})
	h.Publish(StandingsChanged, "", []string{"p01", "p02"})
	h.Publish(MoveMade, "m2", func() {}) // cannot be encoded: data null
	backlog, s, _ := h.subscribe(0, nil)
	defer h.unsubscribe(s)
	if len(backlog) != 3 {
		t.Fatalf("got %d events, want 3", len(backlog))
	}
	for _, e := range backlog {
		body, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		want := "id: " + strconv.FormatUint(e.ID, 10) + "\nevent: " + e.Type + "\ndata: " + string(body) + "\n\n"
		rec := httptest.NewRecorder()
		if err := writeEvent(rec, e); err != nil {
			t.Fatal(err)
		}
		if got := rec.Body.String(); got != want {
			t.Errorf("event %d:\ngot  %q\nwant %q", e.ID, got, want)
		}
	}
}

// BenchmarkPublishStandings publishes a hundred players' standings to one stream, as the
// League Manager does after every result.
func BenchmarkPublishStandings(b *testing.B) {
	type row struct {
		Rank                        int
		PlayerID                    string
		Played, Wins, Draws, Losses int
		Points                      int
		Buchholz, SonnebornBerger   float64
	}
	rows := make([]row, 100)
	for i := range rows {
		rows[i] = row{Rank: i + 1, PlayerID: "p" + strconv.Itoa(i), Played: 99, Wins: 50, Draws: 9, Losses: 40, Points: 159}
	}
	h := NewHub(16)
	b.ReportAllocs()
	for b.Loop() {
		h.Publish(StandingsChanged, "", map[string]any{"standings": rows})
		h.mu.Lock()
		e := h.ring[len(h.ring)-1]
		h.mu.Unlock()
		if err := writeEvent(discardWriter{}, e); err != nil {
			b.Fatal(err)
		}
	}
}

type discardWriter struct{ http.ResponseWriter }

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }

// flushCounter is a ResponseWriter that counts flushes and holds its first frame until
// release is closed, so that events pile up behind it.
type flushCounter struct {
	mu      sync.Mutex
	header  http.Header
	body    bytes.Buffer
	flushes int
	held    chan struct{} // closed when the first frame is being written
	release chan struct{}
	once    sync.Once
}

func (f *flushCounter) Header() http.Header { return f.header }
func (f *flushCounter) WriteHeader(int)     {}
func (f *flushCounter) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("id: ")) {
		f.once.Do(func() { close(f.held); <-f.release })
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.body.Write(p)
}
func (f *flushCounter) Flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushes++
}

// TestBurstIsOneFlush: events that wait for the stream go out together, one flush for
// all of them, in order.
func TestBurstIsOneFlush(t *testing.T) {
	h := NewHub(100)
	defer h.Close()
	w := &flushCounter{header: http.Header{}, held: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/events", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeSSE(w, req, nil)
	}()
	for {
		h.mu.Lock()
		n := len(h.subs)
		h.mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	h.Publish(MoveMade, "m1", map[string]int{"n": 0})
	<-w.held
	for i := 1; i < 10; i++ {
		h.Publish(MoveMade, "m1", map[string]int{"n": i})
	}
	close(w.release)
	for {
		w.mu.Lock()
		frames := bytes.Count(w.body.Bytes(), []byte("\nevent: "))
		w.mu.Unlock()
		if frames == 10 {
			break
		}
		runtime.Gosched()
	}
	cancel()
	<-done
	// One flush after the (empty) backlog, one for the first event and one for the nine
	// that waited behind it; one each would be eleven.
	if w.flushes > 3 {
		t.Errorf("%d flushes for 10 events", w.flushes)
	}
	sc := bufio.NewScanner(bytes.NewReader(w.body.Bytes()))
	for i, e := range readEvents(t, sc, 10) {
		if e.ID != uint64(i+1) {
			t.Errorf("event %d has id %d", i, e.ID)
		}
	}
}
