// Package netsec holds the network rules every role shares: plain HTTP only on loopback
// unless a role is told otherwise (--insecure), so that tokens never cross a network in
// clear; the TLS settings of servers and clients; and a small certificate authority for
// trying TLS out (certs.go).
package netsec

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
)

// MinVersion is the oldest TLS version servers and clients accept.
const MinVersion = tls.VersionTLS12

// ErrPlainHTTP marks plain HTTP to or on an address that is not loopback.
var ErrPlainHTTP = errors.New("plain http off loopback")

// IsLoopback reports whether host (a name or an IP, brackets allowed) is loopback:
// 127.0.0.0/8, ::1 or the name localhost.
func IsLoopback(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsWildcard reports whether host (of a listen address) means every interface: empty,
// 0.0.0.0 or ::.
func IsWildcard(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsUnspecified()
}

// ParseURL checks that raw is an absolute http or https URL with a host.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%q is not an absolute http(s) url", raw)
	}
	return u, nil
}

// CheckURL checks an endpoint others are called at: an absolute http(s) URL, plain http
// only to a loopback host (ErrPlainHTTP otherwise).
func CheckURL(raw string) error {
	u, err := ParseURL(raw)
	if err != nil {
		return err
	}
	if u.Scheme == "http" && !IsLoopback(u.Hostname()) {
		return fmt.Errorf("%w: %s is not loopback, so tokens would cross the network in clear", ErrPlainHTTP, u.Hostname())
	}
	return nil
}

// CheckListen checks that a server without TLS listens on loopback only (ErrPlainHTTP
// otherwise): anyone on the network could read its tokens.
func CheckListen(addr string, withTLS bool) error {
	if withTLS {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if !IsLoopback(host) {
		where := host
		if IsWildcard(host) {
			where = "every interface"
		}
		return fmt.Errorf("%w: listening on %s, which is not loopback, so tokens would cross the network in clear", ErrPlainHTTP, where)
	}
	return nil
}

// ServerConfig is the TLS configuration of a server with the certificate and key of
// certFile and keyFile (PEM).
func ServerConfig(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load tls certificate %s and key %s: %w", certFile, keyFile, err)
	}
	return &tls.Config{MinVersion: MinVersion, Certificates: []tls.Certificate{cert}}, nil
}

// ClientConfig is the TLS configuration of calls: the system's roots plus the
// certificates of caFile (PEM), or the system's roots alone when caFile is empty.
func ClientConfig(caFile string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: MinVersion}
	if caFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read tls ca: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		// No system roots here: the CA alone is trusted.
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tls ca %s holds no PEM certificate", caFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}
