package testkit

import (
	"testing"

	"github.com/workflow-exporter/workflow-exporter/sim/certs"
)

// NewCertificates makes a new CA and server certificate in a temporary
// directory of the test. Two calls give two unrelated CAs: a client trusting
// one refuses the other's certificate.
func NewCertificates(t testing.TB) *certs.Certificates {
	t.Helper()
	c, err := certs.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}
