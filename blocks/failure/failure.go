// Package failure names the kind of a collection failure in a short phrase:
// its class. It is the one classifier of the exporter: the log names a
// failure by it (and logs a failure once while its class stays the same),
// the status page shows it, and the errors of the camunda client,
// blocks/pgsource and blocks/pgschema class themselves in the same
// words. A class never carries an error's text, an address, a user name or
// a value from the data: the log line has the full error, the page only
// the class.
package failure

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"regexp"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// The classes every source shares.
const (
	// Unreachable is the class of every error that says the source could
	// not be reached or was lost: refused, reset or closed connections, an
	// unexpected EOF, a name that does not resolve, a server shutting down
	// or starting up. One outage produces all of these in turn (a
	// PostgreSQL restart resets the connections, refuses new ones, then
	// answers "starting up"), so they are one failure, logged once.
	Unreachable = "unreachable"
	// Timeout is the class of a collection that ran out of time (its own
	// deadline, not a server-side timeout: those name themselves).
	Timeout = "timeout"
	// Cancelled is the class of a collection stopped by Close (a reload, a
	// shutdown).
	Cancelled = "cancelled"
	// TLS is the class of a certificate the exporter did not accept.
	TLS = "TLS verification failed"
	// Unclassified is the class of any other error: its text stays in the
	// log, where the page points.
	Unclassified = "error (see the exporter's log)"
)

// Classer is an error that names its own class ("statement_timeout", "HTTP
// 500 from GET /incident/count", "column missing (databases[0]...)").
type Classer interface {
	FailureClass() string
}

// Class returns the class of err: what the error says about itself
// (Classer), otherwise one of the shared classes above, "SQLSTATE x" for a
// PostgreSQL error that no source classed, and Unclassified for the rest.
func Class(err error) string {
	var pg *pgconn.PgError
	switch {
	case err == nil:
		return ""
	case ownClass(err) != "":
		return ownClass(err)
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Cancelled
	case IsConnectionError(err):
		return Unreachable
	case isCertificateError(err):
		return TLS
	case errors.As(err, &pg):
		return "SQLSTATE " + pg.Code
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return Timeout
	}
	return Unclassified
}

// Fingerprint tells failures apart for the log, which logs a failure once
// while it lasts: it is the class, except for an unclassified error, whose
// text (with network addresses and ports masked, since they differ on every
// attempt) is its fingerprint, so a different unclassified error is logged
// as a new failure. It is never shown on the page.
func Fingerprint(err error) string {
	if c := Class(err); c != Unclassified {
		return c
	}
	return addrRE.ReplaceAllString(err.Error(), "ADDR")
}

// addrRE matches IPv4 addresses, bracketed IPv6 addresses (with a colon
// inside, unlike a config key's [0]) and localhost, each with an optional
// port.
var addrRE = regexp.MustCompile(`(\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f.%a-z]*:[0-9A-Fa-f:.%a-z]*\]|localhost)(:\d+)?`)

// ownClass is the first non-empty class an error in err's tree names: a
// wrapper may class itself with "" (it does not know) around an error that
// does.
func ownClass(err error) string {
	if fc, ok := err.(Classer); ok && fc.FailureClass() != "" {
		return fc.FailureClass()
	}
	switch u := err.(type) { //nolint:errorlint // the walk down the chain, one link at a time, is the point
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			return ownClass(inner)
		}
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if c := ownClass(inner); c != "" {
				return c
			}
		}
	}
	return ""
}

// IsConnectionError reports transport failures that mean the peer cannot be
// reached or went away: refused, reset, aborted or closed connections, an
// EOF where an answer was due, a failed name lookup, no route. Timeouts are
// not among them.
func IsConnectionError(err error) bool {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && !dns.IsTimeout {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" && !op.Timeout() {
		return true
	}
	return false
}

func isCertificateError(err error) bool {
	var unknownCA x509.UnknownAuthorityError
	var badCert x509.CertificateInvalidError
	var badHost x509.HostnameError
	var verify *tls.CertificateVerificationError
	return errors.As(err, &unknownCA) || errors.As(err, &badCert) || errors.As(err, &badHost) || errors.As(err, &verify)
}
