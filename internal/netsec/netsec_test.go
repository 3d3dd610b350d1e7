package netsec

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestIsLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "[::1]": true, "localhost": true, "LocalHost": true, "localhost.": true,
		"10.0.0.2": false, "0.0.0.0": false, "::": false, "": false, "example.com": false, "localhost.example.com": false,
		"128.0.0.1": false, "::ffff:10.0.0.1": false, "mylocalhost": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestIsWildcard(t *testing.T) {
	for host, want := range map[string]bool{"": true, "0.0.0.0": true, "::": true, "[::]": true, "127.0.0.1": false, "10.0.0.2": false, "host": false} {
		if got := IsWildcard(host); got != want {
			t.Errorf("IsWildcard(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{
		"http://127.0.0.1:8000/mcp", "http://localhost:8000/mcp", "http://[::1]:9000/mcp", "https://10.0.0.2:8000/mcp",
		"https://league.example.org/mcp", "http://127.0.0.5/mcp",
	} {
		if err := CheckURL(ok); err != nil {
			t.Errorf("CheckURL(%q): %v", ok, err)
		}
	}
	for _, plain := range []string{"http://10.0.0.2:8000/mcp", "http://league.example.org/mcp", "http://0.0.0.0:8000/mcp", "HTTP://10.0.0.2/mcp"} {
		err := CheckURL(plain)
		if !errors.Is(err, ErrPlainHTTP) {
			t.Errorf("CheckURL(%q) = %v, want ErrPlainHTTP", plain, err)
		}
	}
	for _, bad := range []string{"", "10.0.0.2:8000", "/mcp", "ftp://10.0.0.2/mcp", "https://", "http://:8000/mcp", "league"} {
		err := CheckURL(bad)
		if err == nil || errors.Is(err, ErrPlainHTTP) || !strings.Contains(err.Error(), "absolute http(s) url") {
			t.Errorf("CheckURL(%q) = %v, want a not-a-url error", bad, err)
		}
	}
}

func TestCheckListen(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:8000", "localhost:0", "[::1]:8000"} {
		if err := CheckListen(addr, false); err != nil {
			t.Errorf("CheckListen(%q): %v", addr, err)
		}
	}
	for _, addr := range []string{"10.0.0.2:8000", "0.0.0.0:8000", ":8000", "[::]:8000", "myhost:8000"} {
		if err := CheckListen(addr, false); !errors.Is(err, ErrPlainHTTP) {
			t.Errorf("CheckListen(%q) = %v, want ErrPlainHTTP", addr, err)
		}
		if err := CheckListen(addr, true); err != nil {
			t.Errorf("CheckListen(%q) with tls: %v", addr, err)
		}
	}
	if err := CheckListen("8000", false); err == nil || errors.Is(err, ErrPlainHTTP) {
		t.Errorf("CheckListen without port = %v, want an address error", err)
	}
}

// serveTLS serves one TLS handshake and a greeting with the certificate of host in dir,
// on 127.0.0.1, and returns the address.
func serveTLS(t *testing.T, dir, host string) string {
	t.Helper()
	cert, key := CertFiles(dir, host)
	cfg, err := ServerConfig(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	// Ends when the listener closes.
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, "hello")
			c.Close()
		}
	}()
	return ln.Addr().String()
}

func dialTLS(t *testing.T, dir, addr, serverName string) error {
	t.Helper()
	cfg, err := ClientConfig(filepath.Join(dir, CAFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServerName = serverName
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if err == nil && string(b) != "hello" {
		t.Errorf("read %q, want hello", b)
	}
	return err
}

func TestMakeCertsServeAndTrust(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	files, err := MakeCerts(dir, []string{"localhost", "127.0.0.1", "league.test", "::1"}, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 10 {
		t.Errorf("wrote %d files, want 10: %v", len(files), files)
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o644)
		if strings.HasSuffix(f, "-key.pem") {
			want = 0o600
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", f, st.Mode().Perm(), want)
		}
	}
	addr := serveTLS(t, dir, "127.0.0.1")
	if err := dialTLS(t, dir, addr, "127.0.0.1"); err != nil {
		t.Errorf("client trusting ca.pem, server 127.0.0.1: %v", err)
	}
	// The certificate of 127.0.0.1 is not one of another host.
	if err := dialTLS(t, dir, addr, "league.test"); err == nil {
		t.Error("a certificate of 127.0.0.1 was accepted for league.test")
	}
	addr = serveTLS(t, dir, "localhost")
	if err := dialTLS(t, dir, addr, "localhost"); err != nil {
		t.Errorf("server localhost: %v", err)
	}
	// A client that does not trust the CA refuses the server.
	c, err := tls.Dial("tcp", addr, &tls.Config{MinVersion: MinVersion, ServerName: "localhost"})
	if err == nil {
		c.Close()
		t.Error("a client without the CA accepted the server")
	}
	// TLS 1.1 is refused.
	cfg, _ := ClientConfig(filepath.Join(dir, CAFile))
	cfg.ServerName, cfg.MinVersion, cfg.MaxVersion = "localhost", tls.VersionTLS11, tls.VersionTLS11
	if c, err := tls.Dial("tcp", addr, cfg); err == nil {
		c.Close()
		t.Error("a TLS 1.1 client was accepted")
	}
}

func TestMakeCertsRefusesOverwriteUnlessForce(t *testing.T) {
	dir := t.TempDir()
	if _, err := MakeCerts(dir, []string{"localhost"}, 1, false); err != nil {
		t.Fatal(err)
	}
	ca, _ := os.ReadFile(filepath.Join(dir, CAFile))
	_, err := MakeCerts(dir, []string{"localhost"}, 1, false)
	if err == nil || !strings.Contains(err.Error(), "exists") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("second run = %v, want a refusal naming --force", err)
	}
	// A new host beside existing files is refused too: nothing is written.
	if _, err := MakeCerts(dir, []string{"other.test", "localhost"}, 1, false); err == nil {
		t.Fatal("overwrote existing files")
	}
	if _, err := os.Stat(filepath.Join(dir, "other.test.pem")); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote other.test.pem (%v)", err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, CAFile)); string(again) != string(ca) {
		t.Error("a refused run changed ca.pem")
	}
	// --force replaces them, and a key's mode is 0600 again.
	keyPath := filepath.Join(dir, CAKeyFile)
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := MakeCerts(dir, []string{"localhost"}, 1, true); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(dir, CAFile)); string(again) == string(ca) {
		t.Error("--force kept the old ca.pem")
	}
	if st, _ := os.Stat(keyPath); st.Mode().Perm() != 0o600 {
		t.Errorf("ca-key.pem has mode %v after --force, want 0600", st.Mode().Perm())
	}
}

func TestMakeCertsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hosts []string
		days  int
		want  string
	}{
		{"no host", nil, 1, "no host"},
		{"bad name", []string{"bad_host!"}, 1, "neither an IP address nor a DNS name"},
		{"path", []string{"../etc"}, 1, "neither"},
		{"twice", []string{"a.test", "a.test"}, 1, "named twice"},
		{"zero days", []string{"a.test"}, 0, "days"},
		{"too many days", []string{"a.test"}, MaxCertDays + 1, "days"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			_, err := MakeCerts(dir, tc.hosts, tc.days, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("bad input created the folder (%v)", err)
			}
		})
	}
}

func TestParseHosts(t *testing.T) {
	if got, err := ParseHosts("localhost, 127.0.0.1,10.0.0.2 "); err != nil || !slices.Equal(got, []string{"localhost", "127.0.0.1", "10.0.0.2"}) {
		t.Errorf("got %q (%v), want the three hosts trimmed", got, err)
	}
	for _, list := range []string{"", " ", "a.test,,b.test", "a.test,"} {
		if got, err := ParseHosts(list); err == nil || !strings.Contains(err.Error(), "empty host") {
			t.Errorf("ParseHosts(%q) = %q, %v; want an empty host refused", list, got, err)
		}
	}
}

func TestClientConfig(t *testing.T) {
	cfg, err := ClientConfig("")
	if err != nil || cfg.RootCAs != nil || cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("ClientConfig(\"\") = %+v, %v; want system roots, TLS 1.2", cfg, err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ClientConfig(notPEM); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("ClientConfig(not PEM) = %v", err)
	}
	if _, err := ClientConfig(filepath.Join(t.TempDir(), "missing.pem")); err == nil {
		t.Error("ClientConfig of a missing file succeeded")
	}
	if _, err := ServerConfig(notPEM, notPEM); err == nil || !strings.Contains(err.Error(), "load tls certificate") {
		t.Errorf("ServerConfig(not PEM) = %v", err)
	}
}

// The hosts of a certificate are its SANs: an IP in IPAddresses, a name in DNSNames.
func TestMakeCertsSANs(t *testing.T) {
	dir := t.TempDir()
	if _, err := MakeCerts(dir, []string{"10.77.0.1", "league.test"}, 1, false); err != nil {
		t.Fatal(err)
	}
	for host, ip := range map[string]bool{"10.77.0.1": true, "league.test": false} {
		cert, key := CertFiles(dir, host)
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		leaf := pair.Leaf
		if ip && (len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(net.ParseIP(host)) || len(leaf.DNSNames) != 0) {
			t.Errorf("%s: SANs %v %v", host, leaf.IPAddresses, leaf.DNSNames)
		}
		if !ip && !slices.Equal(leaf.DNSNames, []string{host}) {
			t.Errorf("%s: DNS SANs %v", host, leaf.DNSNames)
		}
	}
}
