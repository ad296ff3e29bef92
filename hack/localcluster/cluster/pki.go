package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI is the set of credentials the local control plane uses, as file paths
// under one directory. Every file is generated once and reused by later runs
// (that is most of why a second `localcluster up` is fast).
type PKI struct {
	Dir string
}

// Certificate and key file names inside PKI.Dir.
const (
	CACert          = "ca.crt"
	CAKey           = "ca.key"
	ServingCert     = "apiserver.crt"
	ServingKey      = "apiserver.key"
	SAKey           = "sa.key"
	SAPub           = "sa.pub"
	AdminCert       = "admin.crt"
	AdminKey        = "admin.key"
	KCMCert         = "kube-controller-manager.crt"
	KCMKey          = "kube-controller-manager.key"
	SchedulerCert   = "kube-scheduler.crt"
	SchedulerKey    = "kube-scheduler.key"
	certLifetime    = 10 * 365 * 24 * time.Hour
	certRenewBefore = 30 * 24 * time.Hour
)

// ClientIdentity names a client certificate: its common name (user) and
// organisations (groups).
type ClientIdentity struct {
	Cert, Key string
	User      string
	Groups    []string
}

// ClientIdentities are the client certificates of the control plane: the
// admin's (the kubeconfig's), the controller manager's and the scheduler's.
// The real nodes' kubelet, kube-proxy and NetworkPolicy enforcer get their
// own (RealNode).
var ClientIdentities = []ClientIdentity{
	{AdminCert, AdminKey, "kubernetes-admin", []string{"system:masters"}},
	{KCMCert, KCMKey, "system:kube-controller-manager", nil},
	{SchedulerCert, SchedulerKey, "system:kube-scheduler", nil},
}

// ServingNames are the DNS names in the API server's serving certificate.
var ServingNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}

// Path returns the path of a file of the PKI.
func (p PKI) Path(name string) string { return filepath.Join(p.Dir, name) }

// Ensure generates whatever is missing or about to expire: the CA, the API
// server's serving certificate (for 127.0.0.1, ServingNames, serviceIP and
// extraIPs),
// the service-account signing key and the client certificates.
func (p PKI) Ensure(now time.Time, serviceIP net.IP, extraIPs ...net.IP) error {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return err
	}
	ca, caKey, err := p.ensureCA(now)
	if err != nil {
		return fmt.Errorf("certificate authority: %w", err)
	}
	ips := []net.IP{net.ParseIP("127.0.0.1")}
	if serviceIP != nil {
		ips = append(ips, serviceIP)
	}
	ips = append(ips, extraIPs...)
	serving := leafSpec{cn: "kube-apiserver", dns: ServingNames, ips: ips, server: true}
	if err := p.ensureLeaf(now, ServingCert, ServingKey, serving, ca, caKey); err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	for _, id := range ClientIdentities {
		if err := p.ensureLeaf(now, id.Cert, id.Key, leafSpec{cn: id.User, orgs: id.Groups}, ca, caKey); err != nil {
			return fmt.Errorf("client certificate %s: %w", id.User, err)
		}
	}
	if err := p.ensureSAKey(); err != nil {
		return fmt.Errorf("service-account key: %w", err)
	}
	return nil
}

// EnsureClient generates the client certificate of id when it is missing
// or about to expire (a real node's kubelet: system:node:NAME in
// system:nodes, which the API server's Node authorizer confines to its own
// node's objects).
func (p PKI) EnsureClient(now time.Time, id ClientIdentity) error {
	ca, caKey, err := p.ensureCA(now)
	if err != nil {
		return fmt.Errorf("certificate authority: %w", err)
	}
	if err := p.ensureLeaf(now, id.Cert, id.Key, leafSpec{cn: id.User, orgs: id.Groups}, ca, caKey); err != nil {
		return fmt.Errorf("client certificate %s: %w", id.User, err)
	}
	return nil
}

type leafSpec struct {
	cn     string
	orgs   []string
	dns    []string
	ips    []net.IP
	server bool
}

func (p PKI) ensureCA(now time.Time) (*x509.Certificate, crypto.Signer, error) {
	if cert, key, err := p.load(CACert, CAKey); err == nil && fresh(cert, now) {
		return cert, key, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "repot-localcluster-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	if err := p.write(CACert, CAKey, der, key); err != nil {
		return nil, nil, err
	}
	// A new CA invalidates every leaf: remove them so they are regenerated.
	for _, name := range []string{ServingCert, AdminCert, KCMCert, SchedulerCert} {
		_ = os.Remove(p.Path(name))
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

func (p PKI) ensureLeaf(now time.Time, certName, keyName string, spec leafSpec, ca *x509.Certificate, caKey crypto.Signer) error {
	if cert, _, err := p.load(certName, keyName); err == nil && fresh(cert, now) && matches(cert, spec) && cert.CheckSignatureFrom(ca) == nil {
		return nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	usage := []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if spec.server {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: spec.cn, Organization: spec.orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certLifetime),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usage,
		DNSNames:     spec.dns,
		IPAddresses:  spec.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return err
	}
	return p.write(certName, keyName, der, key)
}

// ensureSAKey writes an RSA key pair for service-account tokens (RS256 is
// what every Kubernetes component accepts).
func (p PKI) ensureSAKey() error {
	if _, err := os.Stat(p.Path(SAKey)); err == nil {
		if _, err := os.Stat(p.Path(SAPub)); err == nil {
			return nil
		}
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := writeAtomic(p.Path(SAKey), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	return writeAtomic(p.Path(SAPub), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644)
}

func (p PKI) load(certName, keyName string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(p.Path(certName))
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(p.Path(keyName))
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func (p PKI) write(certName, keyName string, der []byte, key *ecdsa.PrivateKey) error {
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := writeAtomic(p.Path(keyName), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return err
	}
	return writeAtomic(p.Path(certName), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func fresh(cert *x509.Certificate, now time.Time) bool {
	return now.After(cert.NotBefore) && now.Add(certRenewBefore).Before(cert.NotAfter)
}

// matches reports whether an existing certificate has the subject and names
// that spec asks for (so a changed service IP regenerates the serving cert).
func matches(cert *x509.Certificate, spec leafSpec) bool {
	if cert.Subject.CommonName != spec.cn || fmt.Sprint(cert.Subject.Organization) != fmt.Sprint(nonNil(spec.orgs)) {
		return false
	}
	if fmt.Sprint(cert.DNSNames) != fmt.Sprint(nonNil(spec.dns)) || len(cert.IPAddresses) != len(spec.ips) {
		return false
	}
	for i, ip := range spec.ips {
		if !cert.IPAddresses[i].Equal(ip) {
			return false
		}
	}
	return true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return n
}

// writeAtomic writes data to a temporary file next to path and renames it.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
