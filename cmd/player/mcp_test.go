package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPStdio runs the gateway as an MCP client starts it, as a subprocess speaking on
// stdin and stdout, and joins the league through it.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "player")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	lg := startLeague(t, "")
	cmd := exec.Command(bin, "mcp", "--stdio", "--addr", "127.0.0.1:0", "--league", lg.url, "--log-dir", t.TempDir())
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "stdio-test", Version: "v0"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr:\n%s", err, stderr)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "join_league", Arguments: map[string]any{"player_id": "p01"}})
	if err != nil || res.IsError {
		t.Fatalf("join_league: %+v, %v; stderr:\n%s", res, err, stderr)
	}
	select {
	case <-lg.ready:
	case <-time.After(5 * time.Second):
		t.Fatal("the seat did not announce AGENT_READY")
	}
	// Closing stdin ends the session, and the gateway with it.
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v; stderr:\n%s", err, stderr)
	}
	if cmd.ProcessState == nil {
		t.Fatal("the gateway is still running after its session closed")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, stderr)
	}
}

func TestMCPCommandLine(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"help", []string{"-h"}, 0, "-stdio"},
		{"league that is not http", []string{"--league", "ftp://league"}, 2, `--league "ftp://league" is not an absolute http(s) url`},
		{"stray argument", []string{"extra"}, 2, "unexpected argument"},
		{"negative duration", []string{"--register-for", "-1s"}, 2, "must not be negative"},
		{"address taken by nothing valid", []string{"--addr", "256.0.0.1:1", "--insecure"}, 1, "listen on 256.0.0.1:1"},
		{"plain league url off loopback", []string{"--league", "http://10.0.0.1:8000/mcp"}, 2,
			"--league http://10.0.0.1:8000/mcp is plain http off loopback: 10.0.0.1 is not loopback"},
		{"plain server off loopback", []string{"--addr", "10.0.0.3:9400"}, 2, "--addr 10.0.0.3:9400 serves plain http off loopback"},
		{"every interface without advertise", []string{"--addr", "0.0.0.0:9400", "--insecure"}, 2, "set --advertise"},
		{"any address without advertise", []string{"--addr", ":9400", "--insecure"}, 2, "set --advertise"},
		{"plain advertise off loopback", []string{"--addr", "0.0.0.0:9400", "--advertise", "http://10.0.0.3:9400/mcp"}, 2,
			"--advertise http://10.0.0.3:9400/mcp is plain http off loopback"},
		{"advertise that is not a url", []string{"--advertise", "host:9400"}, 2, `--advertise "host:9400" is not an absolute http(s) url`},
		{"advertise that is not the mcp endpoint", []string{"--advertise", "https://gw.example.org:9400/"}, 2,
			"advertised endpoint https://gw.example.org:9400/ must end in /mcp"},
		{"certificate without key", []string{"--tls-cert", "gw.pem"}, 2, "--tls-cert and --tls-key go together"},
		{"certificate not there", []string{"--tls-cert", "/nonexistent/gw.pem", "--tls-key", "/nonexistent/gw-key.pem"}, 1, "load tls certificate"},
		{"ca not there", []string{"--tls-ca", "/nonexistent/ca.pem"}, 1, "read tls ca"},
		{"stdio outbound serves nothing", []string{"--stdio", "--advertise", "https://gw.example.org:9400/mcp"}, 2, "--advertise, --tls-cert and --tls-key go with --inbound only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			args := append([]string{"mcp", "--log-dir", t.TempDir()}, tt.args...)
			code := run(context.Background(), args, io.Discard, &stderr)
			if code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("run: code %d, stderr %q; want code %d and stderr mentioning %q", code, stderr.String(), tt.wantCode, tt.wantStderr)
			}
		})
	}
}

// Over TLS the gateway serves HTTPS with its certificate, trusts --tls-ca for the League
// Manager, and its seats register https endpoints beside the advertised MCP endpoint,
// where the League Manager reaches them.
func TestMCPGatewayOverTLS(t *testing.T) {
	lg := startTLSLeague(t)
	advertise := fmt.Sprintf("https://localhost:%d/mcp", lg.port)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr, code := runAsync(ctx, []string{"mcp", "--inbound", "--addr", fmt.Sprintf("127.0.0.1:%d", lg.port), "--advertise", advertise, "--league", lg.url,
		"--tls-cert", lg.cert, "--tls-key", lg.key, "--tls-ca", lg.ca, "--log-dir", t.TempDir(), "--register-for", "1m"})
	tr := &http.Transport{TLSClientConfig: lg.client}
	defer tr.CloseIdleConnections()
	// The gateway listens once it prints its endpoint.
	want := "mcp gateway listening on " + advertise + "\n"
	deadline := time.After(10 * time.Second)
	for stdout.String() != want {
		select {
		case c := <-code:
			t.Fatalf("gateway exited with %d; stdout %q, stderr:\n%s", c, stdout.String(), stderr.String())
		case <-deadline:
			t.Fatalf("stdout %q, want %q; stderr:\n%s", stdout.String(), want, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "tls-test", Version: "v0"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: advertise, HTTPClient: &http.Client{Transport: tr}}, nil)
	if err != nil {
		t.Fatalf("connect over https: %v; stderr:\n%s", err, stderr.String())
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "join_league", Arguments: map[string]any{"player_id": "p01"}})
	if err != nil || res.IsError {
		t.Fatalf("join_league: %+v, %v; stderr:\n%s", res, err, stderr.String())
	}
	select {
	case <-lg.ready:
	case <-time.After(10 * time.Second):
		t.Fatalf("the seat did not announce AGENT_READY; stderr:\n%s", stderr.String())
	}
	lg.mu.Lock()
	got := lg.endpoints["p01"]
	lg.mu.Unlock()
	seat := fmt.Sprintf("https://localhost:%d/seats/p01", lg.port)
	if got != seat {
		t.Errorf("registered endpoint %s, want %s", got, seat)
	}
	// The League Manager reaches the seat at that endpoint, trusting the same CA.
	lg.shutdownTLS(t, "p01", seat, lg.client)
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	// A connection the client dialled but never used would hold the gateway's shutdown.
	tr.CloseIdleConnections()
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d, want 0; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway did not stop")
	}
}
