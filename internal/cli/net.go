package cli

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"

	"github.com/agentleague/agentleague/internal/netsec"
)

// Net holds the network flags every role shares: the endpoint it advertises, TLS for
// its server and for its calls, and --insecure (internal/netsec has the rules).
type Net struct {
	Advertise       string
	TLSCert, TLSKey string
	TLSCA           string
	Insecure        bool
	// Outbound (players and referees, AddOutbound): listen on nothing and take requests
	// from the League Manager's relay.
	Outbound bool
}

// Call is an endpoint a role calls, named by its flag (e.g. "league").
type Call struct{ Flag, URL string }

// AddFlags registers --advertise, --tls-cert, --tls-key, --tls-ca and --insecure.
func (n *Net) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&n.Advertise, "advertise", "", "URL others call this process at, e.g. https://host:8001/mcp (default: derived from --addr, https with --tls-cert)")
	fs.StringVar(&n.TLSCert, "tls-cert", "", "certificate (PEM) of this process's server: serve HTTPS (with --tls-key)")
	fs.StringVar(&n.TLSKey, "tls-key", "", "private key (PEM) of --tls-cert")
	fs.StringVar(&n.TLSCA, "tls-ca", "", "CA certificates (PEM) to trust for https calls, besides the system's")
	fs.BoolVar(&n.Insecure, "insecure", false, "allow plain HTTP on and to addresses that are not loopback: tokens then cross the network in clear")
}

// AddOutbound registers --outbound, for an agent that accepts no connections.
func (n *Net) AddOutbound(fs *flag.FlagSet) {
	fs.BoolVar(&n.Outbound, "outbound", false, "accept no connections (behind NAT, in a sandbox): listen on no port, register without an endpoint and take every request from the League Manager's relay over connections this process opens")
}

// Check checks the flags against the listen address addr and the endpoints the role
// calls, before anything is opened; an error is a bad command line. Plain HTTP off
// loopback is refused unless --insecure, and an address on every interface needs
// --advertise: the URL derived from it would reach no one.
func (n *Net) Check(addr string, calls ...Call) error {
	if (n.TLSCert == "") != (n.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together: give both or neither")
	}
	if n.Outbound {
		if n.Advertise != "" || n.TLSCert != "" {
			return errors.New("--outbound serves nothing: --advertise, --tls-cert and --tls-key do not go with it")
		}
		return n.checkCalls(calls)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q is not host:port: %w", addr, err)
	}
	withTLS := n.TLSCert != ""
	if n.Advertise != "" {
		u, err := netsec.ParseURL(n.Advertise)
		if err != nil {
			return fmt.Errorf("--advertise %w, e.g. https://host:8001/mcp", err)
		}
		if withTLS && u.Scheme == "http" {
			return fmt.Errorf("--advertise %s is http, but the server serves https (--tls-cert): advertise an https:// url", n.Advertise)
		}
		if err := netsec.CheckURL(n.Advertise); err != nil && !n.Insecure {
			return fmt.Errorf("--advertise %s is %w; advertise an https:// url or pass --insecure", n.Advertise, err)
		}
	} else if netsec.IsWildcard(host) {
		return fmt.Errorf("--addr %s listens on every interface, so the URL derived from it reaches no one: set --advertise to the URL others should call, e.g. https://HOST:PORT/mcp", addr)
	}
	if err := netsec.CheckListen(addr, withTLS); err != nil && !n.Insecure {
		return fmt.Errorf("--addr %s serves %w; give --tls-cert and --tls-key, or pass --insecure", addr, err)
	}
	return n.checkCalls(calls)
}

// checkCalls refuses plain HTTP off loopback to the endpoints the role calls, unless
// --insecure.
func (n *Net) checkCalls(calls []Call) error {
	for _, c := range calls {
		err := netsec.CheckURL(c.URL)
		switch {
		case errors.Is(err, netsec.ErrPlainHTTP):
			if !n.Insecure {
				return fmt.Errorf("--%s %s is %w; use an https:// url (the other side with --tls-cert and --tls-key) or pass --insecure", c.Flag, c.URL, err)
			}
		case err != nil:
			return fmt.Errorf("--%s %w", c.Flag, err)
		}
	}
	return nil
}

// Load reads the certificates the flags name: the server's TLS configuration (nil
// without --tls-cert) and the calls' (the system's roots plus --tls-ca).
func (n *Net) Load() (server, client *tls.Config, err error) {
	if n.TLSCert != "" {
		if server, err = netsec.ServerConfig(n.TLSCert, n.TLSKey); err != nil {
			return nil, nil, err
		}
	}
	if client, err = netsec.ClientConfig(n.TLSCA); err != nil {
		return nil, nil, err
	}
	return server, client, nil
}
