package httpserve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The tests below serve a JSON-RPC endpoint as every role does (protocol.Server): a POST
// to /mcp is read up to a limit (413 above it) and processed; nothing to answer is 204.

// processFunc answers one request body; nil means nothing to send back.
type processFunc func(ctx context.Context, body []byte) []byte

// echo answers {"got": body}; an empty body gets no answer.
func echo(_ context.Context, body []byte) []byte {
	if len(body) == 0 {
		return nil
	}
	return []byte(`{"got":` + string(body) + `}`)
}

// rpcRoutes serves process at POST /mcp with bodies up to maxBody, and GET /hello; other
// methods on /mcp get 405.
func rpcRoutes(process processFunc, maxBody int64) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", hello)
	mux.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "cannot read request body", http.StatusBadRequest)
			return
		}
		out := process(r.Context(), body)
		if out == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
	})
	return mux
}

func serveRPC(t *testing.T, process processFunc, maxBody int64) *Server {
	t.Helper()
	s, err := Start("127.0.0.1:0", rpcRoutes(process, maxBody))
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	return s
}

// raw sends one request on conn and reads its answer's status and body.
func raw(t *testing.T, conn net.Conn, br *bufio.Reader, req string) (int, string) {
	t.Helper()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func post(body string) string {
	return fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

func dial(t *testing.T, s *Server) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

// Requests on one kept connection reach the endpoint or the other routes; a body over
// the limit is answered 413, which the client reads, and never processed; nor is a body
// shorter than announced. Answers carry a Date.
func TestServeRPC(t *testing.T) {
	var calls atomic.Int32
	s := serveRPC(t, func(ctx context.Context, b []byte) []byte { calls.Add(1); return echo(ctx, b) }, 64)
	conn, br := dial(t, s)
	for i := range 2 {
		if code, body := raw(t, conn, br, post(fmt.Sprintf(`[%d]`, i))); code != 200 || body != fmt.Sprintf(`{"got":[%d]}`, i) {
			t.Fatalf("POST %d: %d %q", i, code, body)
		}
	}
	if code, body := raw(t, conn, br, post("")); code != http.StatusNoContent || body != "" {
		t.Errorf("POST without an answer: %d %q, want 204", code, body)
	}
	chunked := "POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n[7]\r\n0\r\n\r\n"
	if code, body := raw(t, conn, br, chunked); code != 200 || body != `{"got":[7]}` {
		t.Errorf("chunked POST: %d %q", code, body)
	}
	if code, body := raw(t, conn, br, "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"); code != 200 || body != "hello" {
		t.Errorf("GET /hello: %d %q", code, body)
	}
	if code, _ := raw(t, conn, br, "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /mcp: %d, want 405", code)
	}
	if n := calls.Load(); n != 4 {
		t.Fatalf("the endpoint processed %d requests, want 4", n)
	}

	for _, n := range []int{65, 129, 64 << 10} {
		conn, br := dial(t, s)
		if code, _ := raw(t, conn, br, post(strings.Repeat("1", n))); code != http.StatusRequestEntityTooLarge {
			t.Errorf("POST of %d bytes with a limit of 64: %d, want 413", n, code)
		}
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("the endpoint processed %d requests, want 4: none over the limit", n)
	}

	short, _ := dial(t, s)
	if _, err := io.WriteString(short, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n[1]"); err != nil {
		t.Fatal(err)
	}
	_ = short.(*net.TCPConn).CloseWrite()
	if res, err := http.ReadResponse(bufio.NewReader(short), nil); err == nil {
		res.Body.Close()
		if res.StatusCode < 400 {
			t.Errorf("a body shorter than announced: %d, want an error status or no answer", res.StatusCode)
		}
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("the endpoint processed a body shorter than announced")
	}

	for _, path := range []string{"/mcp", "/hello"} {
		method, body := http.MethodPost, io.Reader(strings.NewReader(`1`))
		if path == "/hello" {
			method, body = http.MethodGet, nil
		}
		res, err := http.DefaultClient.Do(must(http.NewRequest(method, s.Base()+path, body)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if d, err := http.ParseTime(res.Header.Get("Date")); err != nil || time.Since(d) > time.Minute {
			t.Errorf("%s %s: Date %q (%v)", method, path, res.Header.Get("Date"), err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A handler that waits on its context hears the client go away; one that does not wait
// finds its context ended once it has returned, and the connection serves on.
func TestServeRPCContext(t *testing.T) {
	waiting, gone := make(chan struct{}), make(chan error, 1)
	after := make(chan context.Context, 1)
	s := serveRPC(t, func(ctx context.Context, b []byte) []byte {
		switch string(b) {
		case `"wait"`:
			close(waiting)
			<-ctx.Done()
			gone <- ctx.Err()
			return nil
		case `"watch"`:
			_ = ctx.Done()
			return echo(ctx, b)
		default:
			after <- ctx
			return echo(ctx, b)
		}
	}, 1<<10)

	conn, br := dial(t, s)
	for _, b := range []string{`"watch"`, `"watch"`, `1`} {
		if code, body := raw(t, conn, br, post(b)); code != 200 || body != `{"got":`+b+`}` {
			t.Fatalf("POST %s: %d %q", b, code, body)
		}
	}
	if ctx := <-after; !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("context after its handler returned: %v, want context.Canceled", ctx.Err())
	}

	hanging, _ := dial(t, s)
	if _, err := io.WriteString(hanging, post(`"wait"`)); err != nil {
		t.Fatal(err)
	}
	<-waiting
	hanging.Close()
	waitCanceled(t, gone, "the handler never heard that its client left")
}

// waitCanceled waits for the context error a handler saw once its client left, and
// fails with never when none comes.
func waitCanceled(t *testing.T, gone <-chan error, never string) {
	t.Helper()
	select {
	case err := <-gone:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("context of a request whose client left: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // a guard against a hang, not a measure
		t.Fatal(never)
	}
}

// A handler that waits on its context past the request's read timeout (a model thinking
// longer than it) still hears the client go away.
//
// The read timeout is a second, not 50 ms: it also bounds the reading of the request,
// which a loaded machine could stretch past 50 ms (and the handler never ran).
func TestServeRPCContextOutlivesReadTimeout(t *testing.T) {
	waiting, gone := make(chan struct{}), make(chan error, 1)
	short := DefaultTimeouts
	short.Read = time.Second
	s, err := StartWith("127.0.0.1:0", rpcRoutes(func(ctx context.Context, _ []byte) []byte {
		close(waiting)
		<-ctx.Done()
		gone <- ctx.Err()
		return nil
	}, 64), short)
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	conn, _ := dial(t, s)
	if _, err := io.WriteString(conn, post(`1`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waiting:
	case <-time.After(10 * time.Second): // a guard against a hang, not a measure
		t.Fatal("the handler never ran")
	}
	// Past the read timeout: a socket deadline runs on the real clock only.
	time.Sleep(2 * short.Read)
	select {
	case err := <-gone:
		t.Fatalf("the context ended (%v) while the client still waited", err)
	default:
	}
	conn.Close()
	waitCanceled(t, gone, "the handler never heard that its client left once the read timeout had passed")
}

// A handler that lifts the write timeout (the player's endpoint: a move may think for as
// long as its deadline) answers after it has passed.
func TestServeLiftedWriteTimeout(t *testing.T) {
	short := DefaultTimeouts
	short.Write = 300 * time.Millisecond
	s, err := StartWith("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/lifted" {
			_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		}
		time.Sleep(2 * short.Write)
		hello(w, r)
	}), short)
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	if body, err := get(t, http.DefaultClient, s.Base()+"/lifted"); err != nil || body != "hello" {
		t.Errorf("GET /lifted = %q, %v; want hello", body, err)
	}
	if body, err := get(t, http.DefaultClient, s.Base()+"/bounded"); err == nil && body == "hello" {
		t.Errorf("GET /bounded answered past the write timeout")
	}
}

// Shutdown lets a request in flight finish and be answered.
func TestShutdownWaits(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s, err := Start("127.0.0.1:0", rpcRoutes(func(ctx context.Context, b []byte) []byte {
		close(started)
		<-release
		return echo(ctx, b)
	}, 64))
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		res, err := http.Post(s.URL(), "application/json", strings.NewReader(`[2]`))
		if err != nil {
			answered <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		answered <- string(b)
	}()
	<-started
	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	close(release)
	if got := <-answered; got != `{"got":[2]}` {
		t.Errorf("the request in flight at Shutdown got %q", got)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// A Shutdown right after the start (a player whose engine fails at once) ends the server.
func TestShutdownRightAfterStart(t *testing.T) {
	for range 20 {
		s, err := Start("127.0.0.1:0", http.NotFoundHandler())
		if err != nil {
			t.Fatal(err)
		}
		stopped := make(chan error, 1)
		go func() { stopped <- s.Shutdown(context.Background()) }()
		select {
		case err := <-stopped:
			if err != nil {
				t.Fatalf("Shutdown: %v", err)
			}
		case <-time.After(10 * time.Second): // a guard against a hang, not a measure
			t.Fatal("Serve still accepting 10 s after Shutdown")
		}
	}
}

// A request still in flight when Shutdown's deadline passes is cut: Shutdown closes its
// connection and ends without an error, and Stragglers says it had to.
func TestShutdownClosesStragglers(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	s, err := Start("127.0.0.1:0", rpcRoutes(func(ctx context.Context, b []byte) []byte {
		close(started)
		<-release
		return echo(ctx, b)
	}, 64))
	if err != nil {
		t.Fatal(err)
	}
	cut := make(chan error, 1)
	go func() {
		res, err := http.Post(s.URL(), "application/json", strings.NewReader(`[2]`))
		if err == nil {
			res.Body.Close()
		}
		cut <- err
	}()
	<-started
	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	if err := s.Shutdown(expired); err != nil {
		t.Errorf("Shutdown past its deadline: %v, want nil", err)
	}
	if !s.Stragglers() {
		t.Error("Stragglers is false after a request was cut")
	}
	if err := <-cut; err == nil {
		t.Error("the request in flight was answered, not cut")
	}
}
