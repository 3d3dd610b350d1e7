package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"

	"github.com/agentleague/agentleague/internal/cli"
	"github.com/agentleague/agentleague/internal/netsec"
)

// certsCmd makes a small certificate authority and a certificate for each named host,
// for trying TLS out across machines.
func certsCmd(args []string) error {
	fset := flag.NewFlagSet("league certs", flag.ContinueOnError)
	out := fset.String("out", "", "folder of the files: ca.pem, ca-key.pem, and <host>.pem, <host>-key.pem per host (required)")
	hosts := fset.String("hosts", "", "comma-separated DNS names and IPs to make certificates for, e.g. localhost,127.0.0.1,10.0.0.2 (required)")
	days := fset.Int("days", 30, fmt.Sprintf("validity in days (1 to %d)", netsec.MaxCertDays))
	force := fset.Bool("force", false, "overwrite files that exist")
	rest, err := cli.Parse(fset, args)
	switch {
	case err != nil:
		return cli.UsageError{Err: err}
	case len(rest) > 0:
		return cli.UsageError{Err: fmt.Errorf("unexpected argument %q", rest[0])}
	case *out == "":
		return cli.UsageError{Err: errors.New("--out is required: the folder to write the certificates into")}
	case *hosts == "":
		return cli.UsageError{Err: errors.New("--hosts is required: the DNS names and IPs of the machines, e.g. localhost,127.0.0.1,10.0.0.2")}
	}
	list, err := netsec.ParseHosts(*hosts)
	if err != nil {
		return cli.UsageError{Err: fmt.Errorf("--hosts %w", err)}
	}
	if err := netsec.CheckCertRequest(*out, list, *days); err != nil {
		return cli.UsageError{Err: err}
	}
	files, err := netsec.MakeCerts(*out, list, *days, *force)
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Println("wrote", f)
	}
	cert, key := netsec.CertFiles(*out, list[0])
	fmt.Printf("serve with --tls-cert %s --tls-key %s (each host its own); trust with --tls-ca %s\n", cert, key, filepath.Join(*out, netsec.CAFile))
	return nil
}
