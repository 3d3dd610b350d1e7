package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

// The tests of this package run the built `league` binary where the process is the
// point: signals, exit codes, stdout and the command line. The League Manager's own
// end-to-end tests run it in-process (league/server).

// leagueBin is the `league` binary built once for every test of this package.
var leagueBin string

const e2eAdminToken = "e2e-admin-token-7f3c9a1b5d"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "league-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	leagueBin = filepath.Join(dir, "league")
	root, _ := filepath.Abs("../..")
	build := exec.Command("go", "build", "-o", leagueBin, "./cmd/league")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build league: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// ---- the League Manager process ----

// syncBuffer collects a child's output; first is closed at the first newline.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	first chan struct{}
	once  sync.Once
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{first: make(chan struct{})} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if bytes.IndexByte(b.buf.Bytes(), '\n') >= 0 {
		b.once.Do(func() { close(b.first) })
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lmProc is a running `league serve`.
type lmProc struct {
	t              *testing.T
	cmd            *exec.Cmd
	url, base      string
	stdout, stderr *syncBuffer
	done           chan error
	stopped        bool
}

func configPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../config/league.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// runLeague runs the binary to completion (for commands that must fail).
func runLeague(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, leagueBin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("run league: %v", err)
	return 0, "", ""
}

func (p *lmProc) status(t *testing.T) map[string]any {
	t.Helper()
	res, err := http.Get(p.base + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var s map[string]any
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /status: %d %v", res.StatusCode, err)
	}
	return s
}

func matchesIn(s map[string]any, status string) int {
	by, _ := s["matches_by_status"].(map[string]any)
	n, _ := by[status].(float64)
	return int(n)
}

// waitStatus polls GET /status until cond holds or a deadline passes.
func (p *lmProc) waitStatus(t *testing.T, what string, cond func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := p.status(t)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; status %v", what, s)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// ---- a client acting as referees, players and admin ----

// wire sends messages to one League Manager; secrets are what must never be written
// to its files.
type wire struct {
	t       *testing.T
	lm      *lmProc
	client  *protocol.Client
	v       *protocol.Validator
	secrets map[string]bool
}

func newWire(t *testing.T, lm *lmProc) *wire {
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	v.SelfCheck = true // the client checks what it sends; answers are always checked
	c := protocol.NewClient(v, nil)
	t.Cleanup(c.Close)
	return &wire{t: t, lm: lm, client: c, v: v, secrets: map[string]bool{e2eAdminToken: true}}
}

func (w *wire) noSecretIn(what string, b []byte) {
	w.t.Helper()
	for s := range w.secrets {
		if bytes.Contains(b, []byte(s)) {
			w.t.Errorf("%s holds secret %s", what, s)
		}
	}
}

// ok sends a valid message and fails the test unless it is accepted.
func (w *wire) ok(msg *protocol.Message) *protocol.Message {
	w.t.Helper()
	ans, err := w.client.Call(context.Background(), w.lm.url, msg, protocol.CallOptions{Timeout: 10 * time.Second})
	if err != nil {
		w.t.Fatalf("%s from %s: %v", msg.Envelope.MessageType, msg.Envelope.Sender, err)
	}
	if ans.Envelope.ConversationID != msg.Envelope.ConversationID {
		w.t.Errorf("answer conversation_id %s, want %s", ans.Envelope.ConversationID, msg.Envelope.ConversationID)
	}
	return ans
}

func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro&_busy_timeout=5000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ---- fake referee ----

// fakeRef acknowledges every assignment and remembers it.
type fakeRef struct {
	id  string
	srv *httptest.Server
	mu  sync.Mutex
	got []*protocol.Message
}

func newFakeRef(t *testing.T, v *protocol.Validator, id string) *fakeRef {
	f := &fakeRef{id: id}
	h := protocol.HandlerFunc(func(_ context.Context, msg *protocol.Message) (*protocol.Message, error) {
		if msg.Envelope.MessageType != protocol.MatchAssignment {
			return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "assignments only")
		}
		f.mu.Lock()
		f.got = append(f.got, msg)
		f.mu.Unlock()
		ack, err := msg.Reply(protocol.MatchAssignmentAck, protocol.RefereeSender(id), map[string]string{"status": "acknowledged", "match_id": msg.Envelope.MatchID})
		if err != nil {
			return nil, err
		}
		ack.Envelope.MatchID = msg.Envelope.MatchID
		return ack, nil
	})
	f.srv = httptest.NewServer(protocol.NewServer(h, v, nil, zerolog.Nop()))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeRef) url() string { return f.srv.URL + "/mcp" }

// ---- messages ----

func msgOf(t *testing.T, typ, sender string, payload any) *protocol.Message {
	t.Helper()
	m, err := protocol.NewMessage(typ, sender, payload)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func playerURL(id string) string { return "http://127.0.0.1:9/" + id + "/mcp" }

func regReferee(t *testing.T, id, endpoint string) *protocol.Message {
	return msgOf(t, protocol.RegisterRefereeRequest, protocol.RefereeSender(id), map[string]any{"referee_id": id, "endpoint_url": endpoint})
}

func regPlayer(t *testing.T, id string) *protocol.Message {
	return msgOf(t, protocol.RegisterPlayerRequest, protocol.PlayerSender(id), map[string]any{"player_id": id, "endpoint_url": playerURL(id)})
}

func adminStartMsg(t *testing.T, token string) *protocol.Message {
	m := msgOf(t, protocol.AdminStartLeagueRequest, protocol.SenderAdmin, map[string]any{})
	m.Envelope.AuthToken = token
	return m
}
