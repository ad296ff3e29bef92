package cluster

import (
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(data)
	if b == nil {
		t.Fatalf("%s: not PEM", path)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPKIEnsure(t *testing.T) {
	p := PKI{Dir: t.TempDir()}
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	svc := net.ParseIP("10.0.0.1")
	if err := p.Ensure(now, svc); err != nil {
		t.Fatal(err)
	}
	ca := readCert(t, p.Path(CACert))
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	serving := readCert(t, p.Path(ServingCert))
	if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: "kubernetes.default.svc", CurrentTime: now}); err != nil {
		t.Errorf("serving cert for kubernetes.default.svc: %v", err)
	}
	if err := serving.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("serving cert for 127.0.0.1: %v", err)
	}
	for _, id := range ClientIdentities {
		c := readCert(t, p.Path(id.Cert))
		if c.Subject.CommonName != id.User {
			t.Errorf("%s: CN %q, want %q", id.Cert, c.Subject.CommonName, id.User)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, CurrentTime: now}); err != nil {
			t.Errorf("%s: %v", id.Cert, err)
		}
	}

	// A second run reuses every file (what makes a warm start fast).
	before := map[string][]byte{}
	files, _ := filepath.Glob(filepath.Join(p.Dir, "*"))
	for _, f := range files {
		before[f], _ = os.ReadFile(f)
	}
	if err := p.Ensure(now.Add(time.Hour), svc); err != nil {
		t.Fatal(err)
	}
	for f, data := range before {
		after, _ := os.ReadFile(f)
		if string(after) != string(data) {
			t.Errorf("%s regenerated on a warm start", filepath.Base(f))
		}
	}

	// A different service IP regenerates only the serving certificate.
	if err := p.Ensure(now, net.ParseIP("10.96.0.1")); err != nil {
		t.Fatal(err)
	}
	if got := readCert(t, p.Path(ServingCert)); got.Equal(serving) {
		t.Errorf("serving certificate kept although the service IP changed")
	}
	if got := readCert(t, p.Path(CACert)); !got.Equal(ca) {
		t.Errorf("CA regenerated although it was valid")
	}
}
