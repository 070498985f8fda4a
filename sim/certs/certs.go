// Package certs makes a throwaway certificate authority and server
// certificates for 127.0.0.1: the fault proxy's TLS faults and the tests'
// TLS servers.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certificates is a throwaway certificate authority and a server
// certificate it signed for 127.0.0.1, ::1 and localhost, as PEM files in a
// temporary directory of the test (for configs that name files) and as
// values (for servers and clients in the test process).
type Certificates struct {
	// CAFile, CertFile and KeyFile are the CA's certificate and the server
	// certificate and key, PEM encoded.
	CAFile, CertFile, KeyFile string
	// Pool trusts the CA alone.
	Pool *x509.CertPool
	// Server is the server certificate with its key.
	Server tls.Certificate
}

// Write makes a new CA and server certificate and writes them to dir
// (created if need be).
func Write(dir string) (*Certificates, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ca, err := NewCA()
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := ca.Issue("127.0.0.1", x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, err
	}
	c := &Certificates{
		CAFile:   filepath.Join(dir, "ca.pem"),
		CertFile: filepath.Join(dir, "server.pem"),
		KeyFile:  filepath.Join(dir, "server-key.pem"),
		Pool:     x509.NewCertPool(),
	}
	c.Pool.AddCert(ca.Cert)
	for _, f := range []struct {
		path string
		pem  []byte
	}{{c.CAFile, ca.PEM()}, {c.CertFile, certPEM}, {c.KeyFile, keyPEM}} {
		if err := os.WriteFile(f.path, f.pem, 0o600); err != nil {
			return nil, err
		}
	}
	if c.Server, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return nil, err
	}
	return c, nil
}

// CA is a throwaway certificate authority, valid from an hour ago for a
// day. Tests that need more than Certificates (client certificates for
// mutual TLS, several leaves of one CA) issue their own from it.
type CA struct {
	Cert   *x509.Certificate
	der    []byte
	key    *ecdsa.PrivateKey
	serial int64
}

// NewCA makes a new CA; two calls give two unrelated CAs.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "testkit CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, der: der, key: key, serial: 1}, nil
}

// PEM is the CA's certificate, PEM encoded (what a CA file holds).
func (ca *CA) PEM() []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.der}) }

// Issue signs a certificate named name for 127.0.0.1, ::1 and localhost,
// for usage (server or client authentication), and returns it and its
// key, PEM encoded. It is not safe for concurrent use.
func (ca *CA) Issue(name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	ca.serial++
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:    []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
