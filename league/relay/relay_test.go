package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/league/relay"
	"github.com/agentleague/agentleague/protocol"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// agents is a roster of outbound agents: token -> key.
type agents map[string]string

func (a agents) OutboundByToken(token string) (string, bool) { k, ok := a[token]; return k, ok }
func (a agents) IsOutbound(key string) bool {
	for _, k := range a {
		if k == key {
			return true
		}
	}
	return false
}

const (
	p1Token = "11111111-1111-4111-8111-111111111111"
	p2Token = "22222222-2222-4222-8222-222222222222"
)

func newRelay(t *testing.T) (*relay.Hub, *httptest.Server, *prometheus.Registry) {
	t.Helper()
	reg := prometheus.NewRegistry()
	h := relay.NewHub(agents{p1Token: "player/p1", p2Token: "player/p2"}, reg, zerolog.Nop())
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return h, srv, reg
}

// call posts body to the relay endpoint of player id, as a referee would, and returns
// the status and body of the answer.
func call(ctx context.Context, srv *httptest.Server, id, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, relay.Endpoint(srv.URL, "player", id), strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// agentDo sends an agent's request with token and decodes a JSON answer into v.
func agentDo(t *testing.T, srv *httptest.Server, method, path, token, body string, v any) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if v != nil && res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode
}

// poll polls as the agent of token, waiting for a request as the relay does.
func poll(t *testing.T, srv *httptest.Server, token, epoch string, after uint64) protocol.RelayPoll {
	t.Helper()
	var p protocol.RelayPoll
	if code := agentDo(t, srv, http.MethodGet, fmt.Sprintf("/relay/poll?epoch=%s&after=%d", epoch, after), token, "", &p); code != http.StatusOK {
		t.Fatalf("poll: HTTP %d", code)
	}
	return p
}

// A call to an outbound agent reaches it through its own polls and gets its answer,
// byte for byte; every request is answered by the agent it was addressed to.
func TestCallsReachTheirAgent(t *testing.T) {
	_, srv, _ := newRelay(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, a := range []struct{ id, token string }{{"p1", p1Token}, {"p2", p2Token}} {
		c := protocol.NewClientWith(nil, nil, protocol.ClientOptions{HTTP: srv.Client()})
		handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"agent":%q,"echo":%s}`, a.id, b)
		})
		wg.Go(func() {
			err := c.ServeOutbound(ctx, protocol.Outbound{LeagueURL: srv.URL + "/mcp", Token: a.token, Handler: handler, Log: zerolog.Nop()})
			if err != nil {
				t.Errorf("%s: ServeOutbound: %v", a.id, err)
			}
		})
	}
	var calls sync.WaitGroup
	for i := range 20 {
		id := []string{"p1", "p2"}[i%2]
		calls.Go(func() {
			code, body, err := call(ctx, srv, id, fmt.Sprintf(`{"n":%d}`, i))
			want := fmt.Sprintf(`{"agent":%q,"echo":{"n":%d}}`, id, i)
			if err != nil || code != http.StatusOK || body != want {
				t.Errorf("call %d to %s: %d %q %v, want 200 %q", i, id, code, body, err, want)
			}
		})
	}
	calls.Wait()
	cancel()
	wg.Wait()
}

// An answer sent twice counts once: the second is "gone", and the caller got the first.
// A poll whose answer was lost is repeated with the same after and hands out the same
// request again, so nothing is lost to a dropped connection.
func TestAnswerOnceAndRedelivery(t *testing.T) {
	_, srv, _ := newRelay(t)
	got := make(chan string, 1)
	go func() {
		_, body, _ := call(context.Background(), srv, "p1", `{"q":1}`)
		got <- body
	}()
	first := poll(t, srv, p1Token, "", 0)
	if len(first.Requests) != 1 || first.Requests[0].Body != `{"q":1}` {
		t.Fatalf("first poll: %+v", first)
	}
	// The agent never saw that answer: it polls again from where it was.
	again := poll(t, srv, p1Token, first.Epoch, 0)
	if len(again.Requests) != 1 || again.Requests[0].Seq != first.Requests[0].Seq {
		t.Fatalf("poll again: %+v, want the same request", again)
	}
	seq := first.Requests[0].Seq
	for i, want := range []string{protocol.RelayDelivered, protocol.RelayGone} {
		var st protocol.RelayAnswerStatus
		body := fmt.Sprintf(`{"seq":%d,"body":"{\"a\":%d}"}`, seq, i)
		if code := agentDo(t, srv, http.MethodPost, "/relay/answer", p1Token, body, &st); code != http.StatusOK || st.Status != want {
			t.Errorf("answer %d: HTTP %d %q, want %q", i, code, st.Status, want)
		}
	}
	if body := <-got; body != `{"a":0}` {
		t.Errorf("the caller got %q, want the first answer", body)
	}
	// Another epoch (a restarted relay) gets every pending request, whatever after says.
	go func() { _, _, _ = call(context.Background(), srv, "p1", `{"q":2}`) }()
	if p := poll(t, srv, p1Token, "another-epoch", 1000); len(p.Requests) != 1 || p.Requests[0].Body != `{"q":2}` {
		t.Errorf("poll with another epoch: %+v, want the pending request", p)
	}
}

// Only the holder of an outbound agent's token reads or answers its requests; an
// endpoint of no outbound agent is 404; a caller that gives up takes its request away.
func TestRelayRefuses(t *testing.T) {
	_, srv, reg := newRelay(t)
	for _, tc := range []struct{ method, path, token string }{
		{http.MethodGet, "/relay/poll", ""},
		{http.MethodGet, "/relay/poll", "not-a-token"},
		{http.MethodPost, "/relay/answer", "not-a-token"},
	} {
		if code := agentDo(t, srv, tc.method, tc.path, tc.token, `{"seq":1,"body":""}`, nil); code != http.StatusUnauthorized {
			t.Errorf("%s %s with token %q: HTTP %d, want 401", tc.method, tc.path, tc.token, code)
		}
	}
	if code, _, _ := call(context.Background(), srv, "nobody", `{}`); code != http.StatusNotFound {
		t.Errorf("a call to an agent that is not outbound: HTTP %d, want 404", code)
	}
	if code := agentDo(t, srv, http.MethodPost, "/relay/answer", p1Token, `{"seq":0}`, nil); code != http.StatusBadRequest {
		t.Errorf("an answer without seq: HTTP %d, want 400", code)
	}
	ctx, giveUp := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, _ = call(ctx, srv, "p1", `{"q":1}`)
	}()
	p := poll(t, srv, p1Token, "", 0)
	giveUp()
	<-done
	// The relay forgets the request once its handler sees the caller leave.
	waitFor(t, "the call counted gone", func() bool { return calls(t, reg, "gone") == 1 })
	var st protocol.RelayAnswerStatus
	body := fmt.Sprintf(`{"seq":%d,"body":"{}"}`, p.Requests[0].Seq)
	if agentDo(t, srv, http.MethodPost, "/relay/answer", p1Token, body, &st); st.Status != protocol.RelayGone {
		t.Errorf("an answer after the caller gave up: %q, want gone", st.Status)
	}
}

// A full queue answers 503 at once, and the relay's counters say so.
func TestQueueBounded(t *testing.T) {
	_, srv, reg := newRelay(t)
	ctx, cancel := context.WithCancel(context.Background())
	var waiting sync.WaitGroup
	for range relay.MaxPending {
		waiting.Go(func() { _, _, _ = call(ctx, srv, "p1", `{}`) })
	}
	// Every one of them is in the queue once polls have seen them all.
	var epoch string
	for seen := 0; seen < relay.MaxPending; {
		p := poll(t, srv, p1Token, epoch, uint64(seen))
		epoch = p.Epoch
		seen += len(p.Requests)
	}
	if code, _, _ := call(ctx, srv, "p1", `{}`); code != http.StatusServiceUnavailable {
		t.Errorf("call %d: HTTP %d, want 503", relay.MaxPending+1, code)
	}
	cancel()
	waiting.Wait()
	if n := calls(t, reg, "full"); n != 1 {
		t.Errorf("league_relay_calls_total{outcome=full} = %v, want 1", n)
	}
}

// Closing the relay ends the agent's ServeOutbound with ErrRelayClosed.
func TestCloseEndsTheAgent(t *testing.T) {
	h, srv, _ := newRelay(t)
	c := protocol.NewClientWith(nil, nil, protocol.ClientOptions{HTTP: srv.Client()})
	done := make(chan error, 1)
	go func() {
		done <- c.ServeOutbound(context.Background(), protocol.Outbound{LeagueURL: srv.URL + "/mcp", Token: p1Token, Handler: http.NotFoundHandler(), Log: zerolog.Nop()})
	}()
	h.Close()
	if err := <-done; !errors.Is(err, protocol.ErrRelayClosed) {
		t.Errorf("ServeOutbound after Close: %v, want ErrRelayClosed", err)
	}
}

// calls is league_relay_calls_total{outcome} in reg.
func calls(t *testing.T, reg *prometheus.Registry, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "league_relay_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// waitFor waits until cond holds: it follows work on other goroutines, and bounds a
// failure, not the time the work may take.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen", what)
		}
	}
}
