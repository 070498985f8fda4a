package poll

import (
	"context"
	"errors"
	"io"
	"net"
	"regexp"
	"syscall"

	"github.com/workflow-exporter/workflow-exporter/internal/status"
)

// ClassUnreachable is the failure class of every error that says the source
// could not be reached or was lost: refused, reset or closed connections, an
// unexpected EOF, a name that does not resolve, a server shutting down or
// starting up. One outage produces all of these in turn (a PostgreSQL restart
// resets the connections, refuses new ones, then answers "starting up"), so
// they are one failure, logged once.
const ClassUnreachable = "unreachable"

// ClassTimeout is the failure class of a collection that ran out of time (its
// own timeout, not a server-side one: those name themselves).
const ClassTimeout = "timeout"

// FailureClasser is implemented by errors that know what kind of failure they
// report (collectors/pgsource and the camunda client). Two failures of one
// step with the same class are the same failure: logged once. Its home is
// internal/status, whose page names failures by the same class.
type FailureClasser = status.FailureClasser

// FailureClass returns the class of err: what the error says about itself
// (FailureClasser), otherwise "unreachable" for connection-level errors,
// "timeout" for an expired deadline, and otherwise the error's message with
// network addresses and ports taken out (they differ on every attempt).
func FailureClass(err error) string {
	if err == nil {
		return ""
	}
	var fc FailureClasser
	if errors.As(err, &fc) {
		if c := fc.FailureClass(); c != "" {
			return c
		}
	}
	if IsConnectionError(err) {
		return ClassUnreachable
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ClassTimeout
	}
	return addrRE.ReplaceAllString(err.Error(), "ADDR")
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

// addrRE matches IPv4 addresses, bracketed IPv6 addresses (with a colon
// inside, unlike a config key's [0]) and localhost, each with an optional
// port.
var addrRE = regexp.MustCompile(`(\d{1,3}(\.\d{1,3}){3}|\[[0-9A-Fa-f.%a-z]*:[0-9A-Fa-f:.%a-z]*\]|localhost)(:\d+)?`)
