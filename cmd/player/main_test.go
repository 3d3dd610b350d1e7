package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/netsec"
	"github.com/agentleague/agentleague/protocol"
	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Every message the player sends or answers is checked against its schema too, and
	// so is every message the tests send.
	if err := os.Setenv(protocol.SelfCheckEnv, "1"); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m)
}

// fakeLeague registers players (refusing every registration when refuse is set) and
// reports each AGENT_READY on ready.
type fakeLeague struct {
	refuse protocol.Reason
	url    string
	ready  chan string

	mu        sync.Mutex
	tokens    map[string]string
	endpoints map[string]string // endpoint_url of each registration
}

func startLeague(t *testing.T, refuse protocol.Reason) *fakeLeague {
	t.Helper()
	return startLeagueTLS(t, refuse, nil)
}

// startLeagueTLS is startLeague serving HTTPS with cfg (plain HTTP when nil).
func startLeagueTLS(t *testing.T, refuse protocol.Reason, cfg *tls.Config) *fakeLeague {
	t.Helper()
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLeague{refuse: refuse, ready: make(chan string, 8), tokens: map[string]string{}, endpoints: map[string]string{}}
	srv, err := httpserve.StartTLS("127.0.0.1:0", protocol.NewServer(protocol.HandlerFunc(f.handle), v, nil, testLog(t)), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.url = srv.URL()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shut down fake league: %v", err)
		}
	})
	return f
}

func (f *fakeLeague) handle(_ context.Context, m *protocol.Message) (*protocol.Message, error) {
	_, id := protocol.ParseSender(m.Envelope.Sender)
	var typ string
	var payload map[string]any
	switch m.Envelope.MessageType {
	case protocol.RegisterPlayerRequest:
		if f.refuse != "" {
			return nil, protocol.Errorf(f.refuse, "refused by the test")
		}
		var p protocol.PlayerRegistration
		if err := m.Decode(&p); err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.endpoints[id] = p.EndpointURL
		f.mu.Unlock()
		typ = protocol.RegisterPlayerResponse
		payload = map[string]any{"status": "registered", "auth_token": f.token(id), "league_id": "league-test",
			"features": []string{protocol.FeatureSignedAssignments, protocol.FeatureMatchCredentials}}
	case protocol.AgentReadyRequest:
		if !protocol.TokenEqual(m.Envelope.AuthToken, f.token(id)) {
			return nil, protocol.Errorf(protocol.ReasonUnauthorized, "bad token")
		}
		f.ready <- id
		typ = protocol.AgentReadyResponse
		payload = map[string]any{"status": "acknowledged", "agent_id": id, "agent_type": "player", "agent_state": "ACTIVE"}
	default:
		return nil, protocol.Errorf(protocol.ReasonUnsupportedMessage, "not here")
	}
	out, err := m.Reply(typ, protocol.SenderLeagueManager, payload)
	if err != nil {
		return nil, err
	}
	out.Envelope.LeagueID = "league-test"
	return out, nil
}

func (f *fakeLeague) token(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tokens[id] == "" {
		f.tokens[id] = uuid.NewString()
	}
	return f.tokens[id]
}

// shutdown sends LEAGUE_SHUTDOWN to a player as the League Manager.
func (f *fakeLeague) shutdown(t *testing.T, id, url string) {
	t.Helper()
	f.shutdownTLS(t, id, url, nil)
}

// shutdownTLS is shutdown trusting cfg's roots.
func (f *fakeLeague) shutdownTLS(t *testing.T, id, url string, cfg *tls.Config) {
	t.Helper()
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	c := protocol.NewClientWith(v, nil, protocol.ClientOptions{TLS: cfg})
	defer c.Close()
	m, err := protocol.NewMessage(protocol.LeagueShutdown, protocol.SenderLeagueManager, map[string]any{"reason": "league completed"})
	if err != nil {
		t.Fatal(err)
	}
	m.Envelope.AuthToken = f.token(id)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	ans, err := c.Call(ctx, url, m, protocol.CallOptions{Timeout: callTimeout})
	if err != nil {
		t.Fatalf("LEAGUE_SHUTDOWN: %v", err)
	}
	if ans.Envelope.MessageType != protocol.LeagueShutdownAck {
		t.Fatalf("LEAGUE_SHUTDOWN answered with %s", ans.Envelope.MessageType)
	}
}

// requestMove sends one REQUEST_MOVE of a tic_tac_toe match as its referee would.
func (f *fakeLeague) requestMove(t *testing.T, id, url string) error {
	t.Helper()
	v, err := protocol.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	c := protocol.NewClient(v, nil)
	defer c.Close()
	m, err := protocol.NewMessage(protocol.RequestMove, protocol.RefereeSender("ref1"), map[string]any{
		"step_number": 1, "step_context": map[string]any{"board": [][]string{{"", "", ""}, {"", "", ""}, {"", "", ""}}, "your_mark": "X", "move_number": 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Envelope.MatchID, m.Envelope.GameType = "R1M1", "tic_tac_toe"
	m.Envelope.AuthToken = protocol.MatchCredential(f.token(id), "R1M1")
	_, err = c.Call(context.Background(), url, m, protocol.CallOptions{Timeout: callTimeout})
	return err
}

// callTimeout bounds each call a test makes to a player: a hang guard, generous so that a
// loaded machine never fails a test (a player that is gone refuses the connection at once).
const callTimeout = 10 * time.Second

func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "player")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tests := []struct {
		name     string
		args     []string
		stop     func(t *testing.T, lg *fakeLeague, cmd *exec.Cmd, url string)
		wantCode int
	}{
		{"league shutdown", nil, func(t *testing.T, lg *fakeLeague, _ *exec.Cmd, url string) { lg.shutdown(t, "p01", url) }, 0},
		{"sigterm", nil, func(t *testing.T, _ *fakeLeague, cmd *exec.Cmd, _ string) {
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"sigint", nil, func(t *testing.T, _ *fakeLeague, cmd *exec.Cmd, _ string) {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
		}, 0},
		{"fault crash-after:2", []string{"--fault", "crash-after:2"}, func(t *testing.T, lg *fakeLeague, _ *exec.Cmd, url string) {
			if err := lg.requestMove(t, "p01", url); err != nil {
				t.Fatalf("first REQUEST_MOVE: %v", err)
			}
			if err := lg.requestMove(t, "p01", url); err == nil {
				t.Error("second REQUEST_MOVE answered, want the process gone")
			}
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lg := startLeague(t, "")
			logDir := t.TempDir()
			args := append([]string{"--id", "p01", "--addr", "127.0.0.1:0", "--league", lg.url, "--strategy", "perfect", "--log-dir", logDir}, tt.args...)
			cmd := exec.Command(bin, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			lines := make(chan []string, 2)
			// Ends at EOF, when the process exits.
			go func() {
				var all []string
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					all = append(all, sc.Text())
					if len(all) == 1 {
						lines <- all[:1:1]
					}
				}
				exited <- cmd.Wait()
				lines <- all
			}()
			t.Cleanup(func() { _ = cmd.Process.Kill() })

			var url string
			select {
			case first := <-lines:
				var ok bool
				if url, ok = strings.CutPrefix(first[0], "player p01 listening on "); !ok {
					t.Fatalf("first stdout line %q", first[0])
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no listening line; stderr:\n%s", stderr.String())
			}
			select {
			case <-lg.ready:
			case <-time.After(5 * time.Second):
				t.Fatalf("no AGENT_READY; stderr:\n%s", stderr.String())
			}
			tt.stop(t, lg, cmd, url)
			select {
			case err := <-exited:
				code := 0
				var exitErr *exec.ExitError
				if errors.As(err, &exitErr) {
					code = exitErr.ExitCode()
				} else if err != nil {
					t.Fatal(err)
				}
				if code != tt.wantCode {
					t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
				}
			case <-time.After(10 * time.Second):
				t.Fatal("player did not exit")
			}
			if all := <-lines; len(all) != 1 {
				t.Errorf("stdout %q, want only the listening line", all)
			}
			checkLogFile(t, filepath.Join(logDir, "player_p01.log"))
		})
	}
}

// checkLogFile wants JSON lines, each naming the component and the player.
func checkLogFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 3 {
		t.Fatalf("log file has %d lines, want at least listening, registered and stopped", len(lines))
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if rec["component"] != "player" || rec["player_id"] != "p01" {
			t.Errorf("log line %q lacks component=player or player_id=p01", l)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	refusing := startLeague(t, protocol.ReasonRegistrationClosed)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"help", []string{"-h"}, 0, "-strategy"},
		{"unknown flag", []string{"--id", "p01", "--colour", "red"}, 2, "flag provided but not defined"},
		{"missing id", []string{"--league", refusing.url}, 2, "--id is required"},
		{"id that is a path", []string{"--id", "../p01"}, 2, "player id"},
		{"unknown strategy", []string{"--id", "p01", "--strategy", "clairvoyant"}, 2, "unknown strategy"},
		{"unknown fault", []string{"--id", "p01", "--fault", "sleepy"}, 2, "unknown fault"},
		{"fault without its argument", []string{"--id", "p01", "--fault", "slow"}, 2, "slow:DURATION"},
		{"stray argument", []string{"--id", "p01", "extra"}, 2, "unexpected argument"},
		{"unknown log level", []string{"--id", "p01", "--log-level", "chatty"}, 2, `--log-level: unknown log level "chatty"`},
		{"registration refused", []string{"--id", "p01", "--league", refusing.url}, 1, string(protocol.ReasonRegistrationClosed)},
		{"uci without an engine", []string{"--id", "p01", "--strategy", "uci"}, 2, "strategy uci: no engine path"},
		{"uci with two limits", []string{"--id", "p01", "--strategy", "uci", "--engine", "/usr/games/stockfish", "--nodes", "9", "--depth", "9"}, 2,
			"set one search limit"},
		{"engine option without a name", []string{"--id", "p01", "--strategy", "uci", "--engine", "e", "--engine-option", "=5"}, 2, "empty name"},
		{"advertise that is not a url", []string{"--id", "p01", "--advertise", "host:9001"}, 2, `--advertise "host:9001" is not an absolute http(s) url`},
		{"plain league url off loopback", []string{"--id", "p01", "--league", "http://10.0.0.1:8000/mcp"}, 2,
			"--league http://10.0.0.1:8000/mcp is plain http off loopback: 10.0.0.1 is not loopback"},
		{"plain server off loopback", []string{"--id", "p01", "--addr", "10.0.0.3:9001"}, 2, "--addr 10.0.0.3:9001 serves plain http off loopback"},
		{"every interface without advertise", []string{"--id", "p01", "--addr", "0.0.0.0:9001"}, 2, "set --advertise"},
		{"certificate without key", []string{"--id", "p01", "--tls-cert", "p01.pem"}, 2, "--tls-cert and --tls-key go together"},
		{"certificate not there", []string{"--id", "p01", "--tls-cert", "/nonexistent/p01.pem", "--tls-key", "/nonexistent/p01-key.pem"}, 1, "load tls certificate"},
		{"engine that is not there", []string{"--id", "p01", "--league", refusing.url, "--strategy", "uci", "--engine", "/nonexistent/stockfish"}, 1,
			"player: engine /nonexistent/stockfish: start: fork/exec /nonexistent/stockfish: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			// A hang guard: every case ends before any registration, or at the first refusal.
			args := append([]string{"--log-dir", t.TempDir(), "--register-for", "1m"}, tt.args...)
			code := run(context.Background(), args, io.Discard, &stderr)
			if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("run: code %d, stderr %q; want code %d and stderr mentioning %q", code, stderr.String(), tt.wantCode, tt.wantStderr)
			}
		})
	}
}

// tlsLeague is a fake League Manager serving HTTPS with a certificate of a test CA, and
// what an agent needs to join it over TLS: a free port to listen on, the certificate and
// key of localhost (another name of that port), and the CA.
type tlsLeague struct {
	*fakeLeague
	port          int
	cert, key, ca string
	// client trusts the CA.
	client *tls.Config
}

func startTLSLeague(t *testing.T) *tlsLeague {
	t.Helper()
	dir := t.TempDir()
	if _, err := netsec.MakeCerts(dir, []string{"127.0.0.1", "localhost"}, 1, false); err != nil {
		t.Fatal(err)
	}
	cert, key := netsec.CertFiles(dir, "127.0.0.1")
	scfg, err := netsec.ServerConfig(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	l := &tlsLeague{fakeLeague: startLeagueTLS(t, "", scfg), ca: filepath.Join(dir, netsec.CAFile)}
	l.cert, l.key = netsec.CertFiles(dir, "localhost")
	if l.client, err = netsec.ClientConfig(l.ca); err != nil {
		t.Fatal(err)
	}
	// A free port, so that an advertised URL can name it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return l
}

// runAsync runs the command in a goroutine; its exit code arrives on code.
func runAsync(ctx context.Context, args []string) (stdout, stderr *syncBuffer, code <-chan int) {
	stdout, stderr = &syncBuffer{}, &syncBuffer{}
	c := make(chan int, 1)
	go func() { c <- run(ctx, args, stdout, stderr) }()
	return stdout, stderr, c
}

// Over TLS the player trusts --tls-ca for the League Manager, serves HTTPS with its
// certificate and registers the advertised endpoint.
func TestRegistersOverTLSWithTheAdvertisedEndpoint(t *testing.T) {
	lg := startTLSLeague(t)
	advertise := fmt.Sprintf("https://localhost:%d/mcp", lg.port)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr, code := runAsync(ctx, []string{"--id", "p01", "--addr", fmt.Sprintf("127.0.0.1:%d", lg.port), "--advertise", advertise, "--league", lg.url,
		"--tls-cert", lg.cert, "--tls-key", lg.key, "--tls-ca", lg.ca, "--log-dir", t.TempDir(), "--register-for", "1m"})
	select {
	case <-lg.ready:
	case c := <-code:
		t.Fatalf("player exited with %d; stderr:\n%s", c, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("no AGENT_READY; stderr:\n%s", stderr.String())
	}
	lg.mu.Lock()
	got := lg.endpoints["p01"]
	lg.mu.Unlock()
	if got != advertise {
		t.Errorf("registered endpoint %s, want the advertised %s", got, advertise)
	}
	if want := "player p01 listening on " + advertise + "\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	lg.shutdownTLS(t, "p01", advertise, lg.client)
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d, want 0; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("player did not stop after LEAGUE_SHUTDOWN")
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestBadFlagsCreateNoLogFile(t *testing.T) {
	dir := t.TempDir()
	if code := run(context.Background(), []string{"--id", "../p01", "--log-dir", dir}, io.Discard, io.Discard); code != 2 {
		t.Fatalf("code %d, want 2", code)
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("log folder holds %d entries after bad flags, want none", len(entries))
	}
}

func testLog(t *testing.T) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).With().Str("component", "fake_league").Logger()
}
