package camunda

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/sim/certs"
)

// testPKI is a CA of testkit with its certificate and the leaves it
// issued as files, for the client's TLSConfig.
type testPKI struct {
	ca     *certs.CA
	caFile string
	dir    string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	ca, err := certs.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{ca: ca, dir: t.TempDir()}
	p.caFile = filepath.Join(p.dir, "ca.pem")
	if err := os.WriteFile(p.caFile, ca.PEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// issue signs a leaf certificate and returns it with PEM files on disk.
func (p *testPKI) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (tls.Certificate, string, string) {
	t.Helper()
	certPEM, keyPEM, err := p.ca.Issue(name, usage)
	if err != nil {
		t.Fatal(err)
	}
	certFile := filepath.Join(p.dir, name+".crt")
	keyFile := filepath.Join(p.dir, name+".key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair, certFile, keyFile
}

func (p *testPKI) server(t *testing.T, requireClientCert bool) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	serverCert, _, _ := p.issue(t, "server", x509.ExtKeyUsageServerAuth)
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{"version":"7.24.0"}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}}
	if requireClientCert {
		pool := x509.NewCertPool()
		pool.AddCert(p.ca.Cert)
		srv.TLS.ClientCAs = pool
		srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are the point of some cases
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &hits
}

func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	plain, plainHits := pki.server(t, false)
	mutual, _ := pki.server(t, true)
	_, clientCert, clientKey := pki.issue(t, "client", x509.ExtKeyUsageClientAuth)

	tests := []struct {
		name    string
		url     string
		tls     TLSConfig
		wantErr bool
	}{
		{name: "custom CA trusted", url: plain.URL, tls: TLSConfig{CAFile: pki.caFile}},
		{name: "unknown CA refused", url: plain.URL, wantErr: true},
		{name: "insecure skip verify", url: plain.URL, tls: TLSConfig{InsecureSkipVerify: true}},
		{name: "wrong server name refused", url: plain.URL, tls: TLSConfig{CAFile: pki.caFile, ServerName: "engine.example"}, wantErr: true},
		{name: "mutual TLS with client cert", url: mutual.URL, tls: TLSConfig{CAFile: pki.caFile, CertFile: clientCert, KeyFile: clientKey}},
		{name: "mutual TLS without client cert refused", url: mutual.URL, tls: TLSConfig{CAFile: pki.caFile}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := plainHits.Load()
			c := newTestClient(t, tt.url+"/engine-rest", func(cfg *Config) {
				cfg.TLS = tt.tls
				cfg.Retry = fastRetry(3)
			})
			v, err := c.Version(ctxT(t))
			if !tt.wantErr {
				if err != nil || v != "7.24.0" {
					t.Fatalf("Version = %q, %v", v, err)
				}
				return
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != 0 || ae.Endpoint != "/version" {
				t.Fatalf("err = %v, want a transport APIError", err)
			}
			if tt.url == plain.URL && plainHits.Load() != before {
				t.Errorf("the handler ran despite the failed handshake")
			}
			if ae.Attempts != 1 {
				t.Errorf("attempts = %d; certificate errors must not be retried (%v)", ae.Attempts, err)
			}
		})
	}
}

func TestTLSBadCAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(f, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{BaseURL: "https://localhost/engine-rest", TLS: TLSConfig{CAFile: f}}); err == nil {
		t.Fatal("a CA file without certificates was accepted")
	}
}
