package camunda

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
)

// TLSConfig configures HTTPS to the engine.
type TLSConfig struct {
	// CAFile is a PEM bundle of CAs trusted in addition to the system pool,
	// for engines behind a private CA.
	CAFile string
	// CertFile and KeyFile are an optional client certificate (mutual TLS).
	// Both or neither.
	CertFile string
	KeyFile  string
	// ServerName overrides the name checked against the server certificate.
	ServerName string
	// InsecureSkipVerify disables certificate verification. For tests and
	// emergencies only.
	InsecureSkipVerify bool
}

func buildTLS(cfg TLSConfig) (*tls.Config, error) {
	tc := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         cfg.ServerName,
		InsecureSkipVerify: cfg.InsecureSkipVerify, //nolint:gosec // explicit opt-in
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("camunda: tls: reading CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("camunda: tls: no PEM certificates found in CA file %s", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("camunda: tls: client certificate needs both a cert file and a key file")
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("camunda: tls: loading client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// isTLSVerification reports certificate verification failures on either
// side, which no retry will fix: our check of the server's certificate, or a
// TLS alert from the server (for example "certificate required" when mutual
// TLS is on and no client certificate is configured).
func isTLSVerification(err error) bool {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
		verify   *tls.CertificateVerificationError
		op       *net.OpError
	)
	if errors.As(err, &op) && op.Op == "remote error" { // crypto/tls's wrapping of a received alert
		return true
	}
	return errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify)
}
