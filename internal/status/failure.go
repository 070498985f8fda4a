package status

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/pgschema"
)

// FailureClasser is an error that names its own class: a short phrase
// without addresses, ids, data or times ("unreachable", "statement_timeout",
// "HTTP 500 from GET /incident/count"). The camunda client and
// collectors/pgsource implement it; the log (internal/poll) and the page
// both name a failure by it.
type FailureClasser interface {
	FailureClass() string
}

// FailureClass names the kind of a collection failure for the page. The
// page never shows an error's text: it can carry host names, user names or
// values from the data. The log has the full error.
func FailureClass(err error) string {
	var fc FailureClasser
	var schema *pgschema.Error
	var pg *pgconn.PgError
	var api *camunda.APIError
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var badCert x509.CertificateInvalidError
	var badHost x509.HostnameError
	var op *net.OpError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &fc) && fc.FailureClass() != "":
		return fc.FailureClass()
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &schema) && schema.Column == "":
		return "table missing (" + schema.Key + ")"
	case errors.As(err, &schema):
		return "column missing (" + schema.Key + ")"
	case errors.As(err, &pg):
		return "SQLSTATE " + pg.Code
	case errors.As(err, &api) && api.Status != 0:
		return fmt.Sprintf("HTTP %d from %s %s", api.Status, api.Method, api.Endpoint)
	case errors.As(err, &unknownCA), errors.As(err, &badCert), errors.As(err, &badHost):
		return "TLS certificate not accepted"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &dns):
		return "host name not resolved"
	case errors.As(err, &op), errors.As(err, &api):
		return "network error"
	}
	return "error (see the exporter's log)"
}
