package failure

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/camunda"
)

// TestClass: one class per kind of failure, the same for the log and the
// page, and never the error's text: an error can carry host names, user
// names or values from the data. An error that classes itself (the camunda
// client, blocks/pgsource, blocks/pgschema) gives its own class,
// also behind a wrapper that classes itself with "".
func TestClass(t *testing.T) {
	secret := "postgres://u:hunter2@db.internal:5432/orders"
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"refused dial", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, Unreachable},
		{"EOF", fmt.Errorf("x: %w", io.EOF), Unreachable},
		{"no such host", &net.DNSError{Err: "no such host", Name: "db.internal"}, Unreachable},
		{"deadline", fmt.Errorf("%s: %w", secret, context.DeadlineExceeded), Timeout},
		{"cancelled", fmt.Errorf("collect: %w", context.Canceled), Cancelled},
		{"column missing", fmt.Errorf("database orders: %w", &pgschema.Error{Table: "t", Column: "c", Key: "databases[0].tables.inbox.columns.received_at"}),
			"column missing (databases[0].tables.inbox.columns.received_at)"},
		{"table missing", fmt.Errorf("database orders: %w", &pgschema.Error{Table: "t", Key: "databases[0].tables.inbox.table"}), "table missing (databases[0].tables.inbox.table)"},
		{"bare SQLSTATE", fmt.Errorf("x: %w", &pgconn.PgError{Code: "42501", Message: secret}), "SQLSTATE 42501"},
		{"HTTP status", &camunda.APIError{Method: "GET", Endpoint: "/external-task/count", Status: 500, Message: secret}, "HTTP 500 from GET /external-task/count"},
		{"camunda refused", &camunda.APIError{Method: "GET", Endpoint: "/version", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, Unreachable},
		{"camunda DNS", &camunda.APIError{Method: "GET", Endpoint: "/version", Err: &net.DNSError{Name: "db.internal"}}, Unreachable},
		{"camunda certificate", &camunda.APIError{Method: "GET", Endpoint: "/version", Err: x509.UnknownAuthorityError{}}, TLS},
		{"bare certificate", fmt.Errorf("get: %w", x509.HostnameError{Host: "db.internal"}), TLS},
		{"classes itself", fmt.Errorf("wrapped: %w", classed("HTTP 500 from GET /x")), "HTTP 500 from GET /x"},
		{"empty class around a classed one", blank{classed("statement_timeout")}, "statement_timeout"},
		{"joined", errors.Join(errors.New(secret), classed("lock_timeout")), "lock_timeout"},
		{"anything else", errors.New(secret), Unclassified},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Class(c.err)
			if got != c.want || strings.Contains(got, "hunter2") || strings.Contains(got, "db.internal") {
				t.Errorf("Class(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}

// TestFingerprint: the log tells unclassified failures apart by their text,
// without the addresses and ports that change on every attempt.
func TestFingerprint(t *testing.T) {
	cases := []struct{ err, same, other error }{
		{errors.New(`relation "x" does not exist at 10.0.0.7:5432`), errors.New(`relation "x" does not exist at 10.0.0.9:6543`), errors.New(`permission denied for table x`)},
		{errors.New(`lost [::1]:5432 and localhost:80`), errors.New(`lost [::1]:5433 and localhost:81`), errors.New(`lost [::1]:5432`)},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, fmt.Errorf("read: %w", io.EOF), context.DeadlineExceeded},
	}
	for _, c := range cases {
		if Fingerprint(c.err) != Fingerprint(c.same) {
			t.Errorf("%q and %q are one failure: %q, %q", c.err, c.same, Fingerprint(c.err), Fingerprint(c.same))
		}
		if Fingerprint(c.err) == Fingerprint(c.other) {
			t.Errorf("%q and %q are two failures: both %q", c.err, c.other, Fingerprint(c.err))
		}
	}
}

// classed is an error that names its own class.
type classed string

func (c classed) Error() string        { return "dial tcp 10.0.0.1:5432: " + string(c) }
func (c classed) FailureClass() string { return string(c) }

// blank classes itself with "" (it does not know) around an error that does.
type blank struct{ err error }

func (b blank) Error() string        { return "blank: " + b.err.Error() }
func (b blank) Unwrap() error        { return b.err }
func (b blank) FailureClass() string { return "" }
