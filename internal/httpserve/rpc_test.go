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
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/valyala/fasthttp"
)

// processFunc is a Processor made of a function.
type processFunc func(ctx context.Context, body []byte) []byte

func (f processFunc) Process(ctx context.Context, body []byte) []byte { return f(ctx, body) }

// echo answers {"got": body}; an empty body gets no answer.
func echo(_ context.Context, body []byte) []byte {
	if len(body) == 0 {
		return nil
	}
	return []byte(`{"got":` + string(body) + `}`)
}

func serveRPC(t *testing.T, rpc Processor, maxBody int) *Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", hello)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
	})
	s, err := StartRPC("127.0.0.1:0", mux, rpc, maxBody, nil, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	return s
}

// raw sends one request on conn and reads its answer's status line and body.
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

// The endpoint goes to the Processor, everything else to the handler; limits and
// malformed requests are answered before the Processor sees anything.
func TestStartRPCRoutes(t *testing.T) {
	calls := 0
	s := serveRPC(t, processFunc(func(ctx context.Context, b []byte) []byte { calls++; return echo(ctx, b) }), 64)
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	// Two requests on one connection: it is kept.
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
		t.Errorf("GET /mcp: %d, want 405 from the handler", code)
	}
	if calls != 4 {
		t.Fatalf("the Processor saw %d requests, want 4", calls)
	}
	if code, _ := raw(t, conn, br, post(strings.Repeat("1", 65))); code != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of 65 bytes with a limit of 64: %d, want 413", code)
	}
	// Up to twice the limit the body is read and the connection kept.
	if code, body := raw(t, conn, br, post(`[5]`)); code != 200 || body != `{"got":[5]}` {
		t.Errorf("POST after a 413: %d %q", code, body)
	}
	if code, _ := raw(t, conn, br, post(strings.Repeat("1", 129))); code != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of 129 bytes with a limit of 64: %d, want 413", code)
	}
	if calls != 5 {
		t.Errorf("the Processor saw %d requests, want 5: none over the limit", calls)
	}

	// A body shorter than its Content-Length is never processed.
	short, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer short.Close()
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
	if calls != 5 {
		t.Errorf("the Processor saw a body shorter than announced")
	}
}

// A handler that waits on its context hears the client go away; one that does not wait
// finds its context ended once it has returned, and the connection serves on.
func TestStartRPCContext(t *testing.T) {
	waiting, gone := make(chan struct{}), make(chan error, 1)
	after := make(chan context.Context, 1)
	s := serveRPC(t, processFunc(func(ctx context.Context, b []byte) []byte {
		switch string(b) {
		case `"wait"`:
			close(waiting)
			<-ctx.Done()
			gone <- ctx.Err()
			return nil
		case `"watch"`:
			// Done starts the watch; the answer ends it and the connection serves on.
			_ = ctx.Done()
			return echo(ctx, b)
		default:
			after <- ctx
			return echo(ctx, b)
		}
	}), 1<<10)

	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for _, b := range []string{`"watch"`, `"watch"`, `1`} {
		if code, body := raw(t, conn, br, post(b)); code != 200 || body != `{"got":`+b+`}` {
			t.Fatalf("POST %s: %d %q", b, code, body)
		}
	}
	if ctx := <-after; !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("context after its handler returned: %v, want context.Canceled", ctx.Err())
	}
	conn.Close()

	hanging, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
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

// Answers carry a Date, as net/http's do.
func TestStartRPCDate(t *testing.T) {
	s := serveRPC(t, processFunc(echo), 64)
	for _, req := range []*http.Request{
		must(http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(`1`))),
		must(http.NewRequest(http.MethodGet, s.Base()+"/hello", nil)),
	} {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if d, err := http.ParseTime(res.Header.Get("Date")); err != nil || time.Since(d) > time.Minute {
			t.Errorf("%s %s: Date %q (%v)", req.Method, req.URL.Path, res.Header.Get("Date"), err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// StartRPC serves HTTPS with a TLS config, as StartTLS does.
func TestStartRPCTLS(t *testing.T) {
	cfg, trusting := testTLS(t)
	s, err := StartRPC("127.0.0.1:0", http.HandlerFunc(hello), processFunc(echo), 64, cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	if want := "https://" + s.Addr() + "/mcp"; s.URL() != want {
		t.Errorf("URL() = %s, want %s", s.URL(), want)
	}
	res, err := trusting.Post(s.URL(), "application/json", strings.NewReader(`[1]`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != `{"got":[1]}` {
		t.Errorf("POST over TLS: %d %q", res.StatusCode, b)
	}
	if body, err := get(t, trusting, s.Base()+"/hello"); err != nil || body != "hello" {
		t.Errorf("GET /hello over TLS = %q, %v", body, err)
	}
}

// Shutdown lets a request in flight finish and be answered.
func TestStartRPCShutdownWaits(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s, err := StartRPC("127.0.0.1:0", http.HandlerFunc(hello), processFunc(func(ctx context.Context, b []byte) []byte {
		close(started)
		<-release
		return echo(ctx, b)
	}), 64, nil, zerolog.Nop())
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

// A Shutdown that comes before fasthttp's Serve has registered its listener (a player
// whose engine fails at once) still ends Serve: fasthttp's own Shutdown then returns at
// once and would leave Serve accepting for ever.
func TestStartRPCShutdownBeforeServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: func(*fasthttp.RequestCtx) {}}
	shutDown := make(chan struct{})
	s := serve(ln, "http", func(ln net.Listener) error {
		<-shutDown // Serve starts only once fasthttp's Shutdown has returned
		return srv.Serve(ln)
	}, func(ctx context.Context) error {
		defer close(shutDown)
		return srv.ShutdownWithContext(ctx)
	})
	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second): // a guard against a hang, not a measure
		t.Fatal("Serve still accepting 10 s after Shutdown")
	}
	// And through StartRPC: stopped at once after it starts, many times.
	for range 20 {
		s, err := StartRPC("127.0.0.1:0", http.NotFoundHandler(), processFunc(echo), 64, nil, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}
}

// BenchmarkServe measures one JSON-RPC exchange of a move's size on a kept connection,
// served by net/http (Start) and by StartRPC, with the same raw client.
func BenchmarkServe(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":1,"method":"league.handle","params":{"envelope":{"protocol":"league.v2","message_type":"REQUEST_MOVE"},"payload":{"step_context":{"board":[["X","",""],["","O",""],["","",""]]}}}}`
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"envelope":{"message_type":"MOVE_RESPONSE"},"payload":{"move_payload":{"row":0,"col":1}}}}`)
	rpc := processFunc(func(context.Context, []byte) []byte { return answer })
	mux := http.NewServeMux()
	for _, tc := range []struct {
		name  string
		start func() (*Server, error)
	}{
		{"net_http", func() (*Server, error) {
			h := http.NewServeMux()
			h.HandleFunc("POST /mcp", func(w http.ResponseWriter, r *http.Request) {
				in, _ := io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(rpc.Process(r.Context(), in))
			})
			return Start("127.0.0.1:0", h)
		}},
		{"fasthttp", func() (*Server, error) { return StartRPC("127.0.0.1:0", mux, rpc, 1<<20, nil, zerolog.Nop()) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := tc.start()
			if err != nil {
				b.Fatal(err)
			}
			defer s.Shutdown(context.Background())
			conn, err := net.Dial("tcp", s.Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
			req := []byte(post(body))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.Write(req); err != nil {
					b.Fatal(err)
				}
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, res.Body); err != nil || res.StatusCode != 200 {
					b.Fatalf("answer %d, %v", res.StatusCode, err)
				}
				res.Body.Close()
			}
		})
	}
}

// A handler that waits on its context past the request's read timeout (a model thinking
// longer than it) still hears the client go away.
//
// The read timeout is a second, not 50 ms: it also bounds the reading of the request,
// which a loaded machine could stretch past 50 ms (and the handler never ran).
func TestStartRPCContextOutlivesReadTimeout(t *testing.T) {
	waiting, gone := make(chan struct{}), make(chan error, 1)
	short := DefaultTimeouts
	short.Read = time.Second
	s, err := startRPC("127.0.0.1:0", http.NotFoundHandler(), processFunc(func(ctx context.Context, _ []byte) []byte {
		done := ctx.Done()
		close(waiting)
		<-done
		gone <- ctx.Err()
		return nil
	}), 64, nil, zerolog.Nop(), short)
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	conn, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, post(`1`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waiting:
	case <-time.After(10 * time.Second): // a guard against a hang, not a measure
		t.Fatal("the handler never ran")
	}
	// Past the read timeout, set before the request was read: a socket deadline runs on
	// the real clock only. The second half leaves the deadline time to end the watch
	// before the close below, if the watch did not clear it.
	time.Sleep(2 * short.Read)
	select {
	case err := <-gone:
		t.Fatalf("the context ended (%v) while the client still waited", err)
	default:
	}
	conn.Close()
	waitCanceled(t, gone, "the handler never heard that its client left once the read timeout had passed")
}
