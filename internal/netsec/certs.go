package netsec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// MaxCertDays bounds the validity of the certificates MakeCerts writes.
const MaxCertDays = 3650

// dnsName is a host name of letters, digits and hyphens, in dot-separated labels.
var dnsName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// CertFiles names the files of host in a folder MakeCerts wrote: <host>.pem and
// <host>-key.pem.
func CertFiles(dir, host string) (cert, key string) {
	return filepath.Join(dir, host+".pem"), filepath.Join(dir, host+"-key.pem")
}

// CA files MakeCerts writes.
const (
	CAFile    = "ca.pem"
	CAKeyFile = "ca-key.pem"
)

// MakeCerts makes a certificate authority (ca.pem, ca-key.pem) in dir and, for each
// host (a DNS name or an IP), a certificate for it signed by that authority (see
// CertFiles); all ECDSA P-256, valid for days, keys mode 0600. It refuses to overwrite
// a file unless force, and checks everything before writing anything. It returns the
// files written.
func MakeCerts(dir string, hosts []string, days int, force bool) ([]string, error) {
	if err := CheckCertRequest(dir, hosts, days); err != nil {
		return nil, err
	}
	// Every file is made in memory first, so that a failure writes nothing.
	now := time.Now()
	notAfter := now.Add(time.Duration(days) * 24 * time.Hour)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ca key: %w", err)
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "Agent League test CA", Organization: []string{"Agent League"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, caCert, err := sign(caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("make ca certificate: %w", err)
	}
	files := []pemFile{{filepath.Join(dir, CAFile), "CERTIFICATE", caDER, 0o644}}
	if files, err = appendKey(files, filepath.Join(dir, CAKeyFile), caKey); err != nil {
		return nil, err
	}
	for _, h := range hosts {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("generate key of %s: %w", h, err)
		}
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: h, Organization: []string{"Agent League"}},
			NotBefore:   now.Add(-time.Hour),
			NotAfter:    notAfter,
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		}
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = []net.IP{ip}
		} else {
			tmpl.DNSNames = []string{h}
		}
		der, _, err := sign(tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return nil, fmt.Errorf("make certificate of %s: %w", h, err)
		}
		certPath, keyPath := CertFiles(dir, h)
		files = append(files, pemFile{certPath, "CERTIFICATE", der, 0o644})
		if files, err = appendKey(files, keyPath, key); err != nil {
			return nil, err
		}
	}
	if !force {
		for _, f := range files {
			if _, err := os.Lstat(f.path); err == nil {
				return nil, fmt.Errorf("%s exists: not overwritten (use --force to replace it)", f.path)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("check %s: %w", f.path, err)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create output folder: %w", err)
	}
	var written []string
	for _, f := range files {
		if err := f.write(force); err != nil {
			return written, err
		}
		written = append(written, f.path)
	}
	return written, nil
}

// ParseHosts splits a comma-separated list of hosts (DNS names and IPs) for MakeCerts,
// trimming the spaces around each; a list naming an empty host is refused.
func ParseHosts(list string) ([]string, error) {
	var hosts []string
	for h := range strings.SplitSeq(list, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, fmt.Errorf("%q names an empty host", list)
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// CheckCertRequest checks the arguments of MakeCerts without touching any file: a
// folder, at least one host, each a DNS name or an IP named once, and 1 to MaxCertDays
// days.
func CheckCertRequest(dir string, hosts []string, days int) error {
	if dir == "" {
		return errors.New("no output folder")
	}
	if len(hosts) == 0 {
		return errors.New("no host: name at least one (a DNS name or an IP)")
	}
	if days < 1 || days > MaxCertDays {
		return fmt.Errorf("days must be between 1 and %d, got %d", MaxCertDays, days)
	}
	for i, h := range hosts {
		if net.ParseIP(h) == nil && !dnsName.MatchString(h) {
			return fmt.Errorf("host %q is neither an IP address nor a DNS name", h)
		}
		if slices.Contains(hosts[:i], h) {
			return fmt.Errorf("host %q is named twice", h)
		}
	}
	return nil
}

// sign makes a certificate of tmpl signed by parent's key, with a random serial number.
func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return der, cert, err
}

// pemFile is one file MakeCerts writes.
type pemFile struct {
	path  string
	block string
	der   []byte
	mode  fs.FileMode
}

func appendKey(files []pemFile, path string, key *ecdsa.PrivateKey) ([]pemFile, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key %s: %w", path, err)
	}
	return append(files, pemFile{path, "PRIVATE KEY", der, 0o600}), nil
}

// write writes the file with its mode, also when force replaces a file of another mode.
func (f pemFile) write(force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	out, err := os.OpenFile(f.path, flags, f.mode)
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	err = out.Chmod(f.mode)
	if err == nil {
		err = pem.Encode(out, &pem.Block{Type: f.block, Bytes: f.der})
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}
