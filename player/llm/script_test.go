package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// testKey is a distinctive fake API key: no log line, error or metadata may show it.
const testKey = "sk-test-K3Y-7f3a9c1e5b-never-print-me"

// script is a scripted OpenAI-compatible server: each call to /v1/chat/completions gets
// the next of its steps (the last one repeats), and it keeps what it was asked.
type script struct {
	mu    sync.Mutex
	steps []step
	calls []call
}

// step answers one call.
type step func(w http.ResponseWriter, r *http.Request)

// call is one request the server received.
type call struct {
	at   time.Time
	auth string
	body chatRequest
}

// chatRequest is what the tests read of a Chat Completions request.
type chatRequest struct {
	Model          string          `json:"model"`
	Temperature    float64         `json:"temperature"`
	MaxTokens      int             `json:"max_tokens"`
	ResponseFormat json.RawMessage `json:"response_format"`
	Messages       []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var body chatRequest
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, "bad request body", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.calls = append(s.calls, call{at: time.Now(), auth: r.Header.Get("Authorization"), body: body})
	st := s.steps[min(len(s.calls), len(s.steps))-1]
	s.mu.Unlock()
	st(w, r)
}

func (s *script) recorded() []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]call(nil), s.calls...)
}

// completion answers with content as the model's message.
func completion(content string) step {
	return completionWith(content, "stop")
}

func completionWith(content, finish string) step {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish,
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}
}

// failure answers with status, the headers given and an error body that echoes the key,
// as a careless server might.
func failure(status int, header ...string) step {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"key %s refused","type":"server_error","code":"x"}}`, testKey)
	}
}

// stall answers only when the client has gone (or after an hour of fake time).
func stall(w http.ResponseWriter, r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-time.After(time.Hour):
	}
}

// pipeListener is an in-memory listener: connections are net.Pipe pairs, which block on
// channels, so a server and client in a synctest bubble run on fake time.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// serve starts s as an httptest server on an in-memory listener and returns its base URL
// (with /v1) and a client that reaches it. Call it inside the synctest bubble; both are
// closed when the test ends.
func serve(t *testing.T, s *script) (string, *http.Client) {
	t.Helper()
	srv := httptest.NewUnstartedServer(s)
	if err := srv.Listener.Close(); err != nil {
		t.Fatal(err)
	}
	l := &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
	srv.Listener = l
	srv.Start()
	tr := &http.Transport{DialContext: l.dial}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return srv.URL + "/v1", &http.Client{Transport: tr}
}

// logBuffer collects log lines, safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// lines are the log's JSON lines, decoded.
func (l *logBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(strings.NewReader(l.String()))
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("log is not JSON lines: %v", err)
		}
		out = append(out, m)
	}
}
