package main

import (
	"bytes"
	"context"
	"io"
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
		{"league that is not http", []string{"--league", "ftp://league"}, 2, "must be an http(s) url"},
		{"stray argument", []string{"extra"}, 2, "unexpected argument"},
		{"negative duration", []string{"--register-for", "-1s"}, 2, "must not be negative"},
		{"address taken by nothing valid", []string{"--addr", "256.0.0.1:1"}, 1, "listen on 256.0.0.1:1"},
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
