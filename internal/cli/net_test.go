package cli

import (
	"flag"
	"strings"
	"testing"
)

func TestNetCheck(t *testing.T) {
	league := func(url string) Call { return Call{Flag: "league", URL: url} }
	tests := []struct {
		name  string
		args  []string
		addr  string
		calls []Call
		want  string // "" for accepted
	}{
		{"loopback plain", nil, "127.0.0.1:8001", []Call{league("http://127.0.0.1:8000/mcp")}, ""},
		{"localhost plain", nil, "localhost:0", []Call{league("http://localhost:8000/mcp")}, ""},
		{"tls off loopback", []string{"--tls-cert", "c", "--tls-key", "k"}, "10.0.0.2:8001", []Call{league("https://10.0.0.1:8000/mcp")}, ""},
		{"every interface advertised", []string{"--tls-cert", "c", "--tls-key", "k", "--advertise", "https://10.0.0.2:8001/mcp"}, "0.0.0.0:8001", nil, ""},
		{"behind a proxy", []string{"--advertise", "https://agents.example.org/ref1/mcp"}, "127.0.0.1:8001", nil, ""},
		{"insecure", []string{"--insecure", "--advertise", "http://10.0.0.2:8001/mcp"}, "0.0.0.0:8001", []Call{league("http://10.0.0.1:8000/mcp")}, ""},
		{"cert without key", []string{"--tls-cert", "c"}, "127.0.0.1:0", nil, "--tls-cert and --tls-key go together"},
		{"addr without port", nil, "127.0.0.1", nil, `--addr "127.0.0.1" is not host:port`},
		{"advertise not absolute", []string{"--advertise", "10.0.0.2:8001"}, "127.0.0.1:0", nil, `--advertise "10.0.0.2:8001" is not an absolute http(s) url`},
		{"advertise ftp", []string{"--advertise", "ftp://h/mcp"}, "127.0.0.1:0", nil, "not an absolute http(s) url"},
		{"advertise plain off loopback", []string{"--advertise", "http://10.0.0.2:8001/mcp"}, "127.0.0.1:0", nil,
			"--advertise http://10.0.0.2:8001/mcp is plain http off loopback: 10.0.0.2 is not loopback, so tokens would cross the network in clear; advertise an https:// url or pass --insecure"},
		{"advertise http with tls", []string{"--tls-cert", "c", "--tls-key", "k", "--advertise", "http://127.0.0.1:8001/mcp"}, "127.0.0.1:0", nil, "advertise an https:// url"},
		{"every interface", []string{"--tls-cert", "c", "--tls-key", "k"}, "0.0.0.0:8001", nil, "--addr 0.0.0.0:8001 listens on every interface, so the URL derived from it reaches no one: set --advertise"},
		{"every interface v6", []string{"--insecure"}, "[::]:8001", nil, "set --advertise"},
		{"every interface empty host", nil, ":8001", nil, "set --advertise"},
		{"plain server off loopback", nil, "10.0.0.2:8001", nil,
			"--addr 10.0.0.2:8001 serves plain http off loopback: listening on 10.0.0.2, which is not loopback, so tokens would cross the network in clear; give --tls-cert and --tls-key, or pass --insecure"},
		{"plain server on every interface", []string{"--advertise", "https://proxy.example.org/mcp"}, "0.0.0.0:8001", nil, "listening on every interface"},
		{"plain league off loopback", nil, "127.0.0.1:0", []Call{league("http://10.0.0.1:8000/mcp")},
			"--league http://10.0.0.1:8000/mcp is plain http off loopback: 10.0.0.1 is not loopback, so tokens would cross the network in clear; use an https:// url"},
		{"league not a url", nil, "127.0.0.1:0", []Call{league("10.0.0.1:8000")}, `--league "10.0.0.1:8000" is not an absolute http(s) url`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n Net
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			n.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := n.Check(tc.addr, tc.calls...)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
