package protocol_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/httpserve"
	"github.com/agentleague/agentleague/internal/netsec"
	"github.com/agentleague/agentleague/protocol"
	"github.com/rs/zerolog"
)

func TestClientTLSTrustsTheGivenCA(t *testing.T) {
	dir := t.TempDir()
	if _, err := netsec.MakeCerts(dir, []string{"127.0.0.1"}, 1, false); err != nil {
		t.Fatal(err)
	}
	cert, key := netsec.CertFiles(dir, "127.0.0.1")
	scfg, err := netsec.ServerConfig(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := httpserve.StartTLS("127.0.0.1:0", protocol.NewServer(echoHandler(t), validator(t), nil, zerolog.Nop()), scfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	if !strings.HasPrefix(srv.URL(), "https://") {
		t.Fatalf("URL %s is not https", srv.URL())
	}
	ccfg, err := netsec.ClientConfig(filepath.Join(dir, netsec.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	c := protocol.NewClientWith(validator(t), nil, protocol.ClientOptions{TLS: ccfg})
	defer c.Close()
	opt := protocol.CallOptions{Timeout: 5 * time.Second}
	if _, err := c.Call(context.Background(), srv.URL(), heartbeat(t), opt); err != nil {
		t.Errorf("call trusting the CA: %v", err)
	}
	// The system's roots alone do not know the test CA.
	plain := newClient(t, nil)
	if _, err := plain.Call(context.Background(), srv.URL(), heartbeat(t), opt); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("call without the CA = %v, want a certificate error", err)
	}
}

func TestClientRefusesPlainHTTPOffLoopback(t *testing.T) {
	rec := &recorder{}
	c := newClient(t, rec)
	// 192.0.2.0/24 is TEST-NET-1: nothing answers there.
	const url = "http://192.0.2.1:9/mcp"
	opt := protocol.CallOptions{Timeout: 200 * time.Millisecond, Retry: protocol.RetryPolicy{Attempts: 3, Backoff: time.Millisecond}}
	_, err := c.Call(context.Background(), url, heartbeat(t), opt)
	if err == nil || !strings.Contains(err.Error(), "refuse to send") || !strings.Contains(err.Error(), "not loopback") || !strings.Contains(err.Error(), "--insecure") {
		t.Fatalf("call = %v, want a refusal naming loopback and --insecure", err)
	}
	if n := len(rec.exchanges()); n != 0 {
		t.Errorf("a refused call recorded %d attempts", n)
	}
	// Told --insecure, the client tries (and fails on the network instead).
	rec = &recorder{}
	insecure := protocol.NewClientWith(validator(t), rec, protocol.ClientOptions{Insecure: true})
	defer insecure.Close()
	opt.Retry = protocol.RetryPolicy{}
	_, err = insecure.Call(context.Background(), url, heartbeat(t), opt)
	if err == nil || strings.Contains(err.Error(), "refuse to send") {
		t.Errorf("insecure call = %v, want a network error", err)
	}
	if n := len(rec.exchanges()); n != 1 {
		t.Errorf("an insecure call recorded %d attempts, want 1", n)
	}
}
