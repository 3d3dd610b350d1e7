package httpserve

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentleague/agentleague/internal/netsec"
)

func hello(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }

func shutdown(t *testing.T, s *Server) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
}

func get(t *testing.T, c *http.Client, url string) (string, error) {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}

func TestStartPlain(t *testing.T) {
	s, err := Start("127.0.0.1:0", http.HandlerFunc(hello))
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	if want := "http://" + s.Addr() + "/mcp"; s.URL() != want {
		t.Errorf("URL() = %s, want %s", s.URL(), want)
	}
	if body, err := get(t, http.DefaultClient, s.URL()); err != nil || body != "hello" {
		t.Errorf("GET %s = %q, %v", s.URL(), body, err)
	}
}

// testTLS makes certificates of a private CA for 127.0.0.1: the server's config and a
// client that trusts the CA.
func testTLS(t *testing.T) (*tls.Config, *http.Client) {
	t.Helper()
	dir := t.TempDir()
	if _, err := netsec.MakeCerts(dir, []string{"127.0.0.1"}, 1, false); err != nil {
		t.Fatal(err)
	}
	cert, key := netsec.CertFiles(dir, "127.0.0.1")
	cfg, err := netsec.ServerConfig(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	ccfg, err := netsec.ClientConfig(dir + "/" + netsec.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: ccfg}}
	t.Cleanup(trusting.CloseIdleConnections)
	return cfg, trusting
}

func TestStartTLS(t *testing.T) {
	cfg, trusting := testTLS(t)
	s, err := StartTLS("127.0.0.1:0", http.HandlerFunc(hello), cfg)
	if err != nil {
		t.Fatal(err)
	}
	shutdown(t, s)
	if want := "https://" + s.Addr() + "/mcp"; s.URL() != want || s.Base()+"/mcp" != want {
		t.Errorf("URL() = %s, Base() = %s, want %s", s.URL(), s.Base(), want)
	}
	if body, err := get(t, trusting, s.URL()); err != nil || body != "hello" {
		t.Errorf("GET %s trusting the CA = %q, %v", s.URL(), body, err)
	}
	// Without the CA the certificate is unknown; plain HTTP gets no answer of the handler.
	if _, err := get(t, &http.Client{}, s.URL()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("GET without the CA = %v, want a certificate error", err)
	}
	plain := "http://" + s.Addr() + "/mcp"
	if body, err := get(t, http.DefaultClient, plain); err == nil && body == "hello" {
		t.Errorf("GET %s over plain HTTP reached the handler", plain)
	}
}

func TestWriteJSON(t *testing.T) {
	for _, tt := range []struct {
		status int
		v      any
		body   string
	}{
		{http.StatusOK, map[string]string{"status": "ok"}, "{\"status\":\"ok\"}\n"},
		{http.StatusBadGateway, map[string]string{"error": "<no answer>"}, "{\"error\":\"\\u003cno answer\\u003e\"}\n"},
	} {
		w := httptest.NewRecorder()
		w.Header().Set("Cache-Control", "no-store")
		WriteJSON(w, tt.status, tt.v)
		if w.Code != tt.status || w.Body.String() != tt.body {
			t.Errorf("got %d %q, want %d %q", w.Code, w.Body, tt.status, tt.body)
		}
		if got := w.Header(); got.Get("Content-Type") != "application/json" || got.Get("Cache-Control") != "no-store" {
			t.Errorf("headers %v, want JSON and the caller's Cache-Control", got)
		}
	}
}
