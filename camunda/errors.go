package camunda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-resty/resty/v2"
)

// maxErrorMessage bounds how much of an engine's message or of a non-JSON
// error body (a proxy's HTML page, a stack trace) ends up in an error string
// and so in logs.
const maxErrorMessage = 512

// APIError reports a failed call to the engine's REST API: either an HTTP
// error status, or no usable response at all (Status 0: timeout, connection
// refused, TLS failure). It never contains the host's credentials; Endpoint
// is the REST resource path only.
type APIError struct {
	Method string
	// Endpoint is the REST resource path below the engine root (for example
	// "/external-task/count"), without scheme, host, query or credentials.
	Endpoint string
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// Message is the engine's JSON "message" field, or a bounded excerpt of
	// a body that was not the engine's JSON error.
	Message string
	// Type is the engine's exception type (for example
	// "InvalidRequestException"), when the body had one.
	Type string
	// Attempts is how many requests were made, retries included.
	Attempts int
	// CredentialsConfigured tells whether the client sent basic auth; it
	// makes a 401 actionable. Note that after failed logins the engine
	// refuses even correct credentials for that user for a while (login
	// throttling), and locks the user after too many failures.
	CredentialsConfigured bool
	// Err is the transport error when Status is 0.
	Err error

	timeout time.Duration // set when the per-request timeout expired
	badBody bool          // a 2xx answer that is not what the endpoint returns
}

// Error names the endpoint and the HTTP status (or the transport failure).
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "camunda: %s %s: ", e.Method, e.Endpoint)
	switch {
	case e.timeout > 0:
		fmt.Fprintf(&b, "no response within %s (request timeout)", e.timeout)
	case e.Status == 0 && e.Err != nil:
		fmt.Fprintf(&b, "request failed: %v", e.Err)
	case e.Status == 0 && e.Message != "":
		fmt.Fprintf(&b, "request not sent: %s", e.Message)
	case e.Status == 0:
		b.WriteString("request failed")
	default:
		fmt.Fprintf(&b, "HTTP %d %s", e.Status, http.StatusText(e.Status))
		if e.Status == http.StatusUnauthorized {
			if e.CredentialsConfigured {
				b.WriteString(": the engine refused the configured credentials (basic auth was sent; check username and password)")
			} else {
				b.WriteString(": the engine requires authentication and no credentials are configured")
			}
		}
		if e.Message != "" {
			b.WriteString(": ")
			b.WriteString(e.Message)
		}
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// FailureClass names the kind of failure in a short phrase without
// addresses, ports or the engine's message, so an exporter logs a failure
// once while it lasts (internal/poll): "unreachable" for every transport
// failure that is not a timeout or a certificate problem (refused, reset,
// EOF, no route), "request timeout", "TLS verification failed",
// "unexpected response from GET /x" for a 2xx body of the wrong shape, and
// "HTTP 500 from GET /x" for an error status.
func (e *APIError) FailureClass() string {
	switch {
	case e.timeout > 0:
		return "request timeout"
	case e.Status == 0 && e.Err != nil:
		switch {
		case errors.Is(e.Err, context.Canceled):
			return "cancelled"
		case errors.Is(e.Err, context.DeadlineExceeded):
			return "timeout"
		case isTLSVerification(e.Err):
			return "TLS verification failed"
		case errors.Is(e.Err, resty.ErrResponseBodyTooLarge):
			return "response too large from " + e.Method + " " + e.Endpoint
		}
		var te interface{ Timeout() bool }
		if errors.As(e.Err, &te) && te.Timeout() {
			return "request timeout"
		}
		return "unreachable"
	case e.Status == 0:
		return "request not sent to " + e.Method + " " + e.Endpoint
	case e.badBody:
		return "unexpected response from " + e.Method + " " + e.Endpoint
	}
	return fmt.Sprintf("HTTP %d from %s %s", e.Status, e.Method, e.Endpoint)
}

// Unwrap returns the transport error, so errors.Is(err,
// context.DeadlineExceeded) and friends work.
func (e *APIError) Unwrap() error { return e.Err }

// Timeout reports whether the per-request timeout expired.
func (e *APIError) Timeout() bool { return e.timeout > 0 }

// IsStatus reports whether err is an *APIError with the given HTTP status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}

// engineError is the body the engine's exception handlers write:
// {"type": "InvalidRequestException", "message": "...", "code": 0}.
type engineError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// parseErrorBody extracts the engine's message, or falls back to a bounded,
// single-line excerpt of whatever the body was. Every occurrence of secret
// (the configured password, if any) becomes "***" before anything is
// collapsed or cut: in the raw body, and in the decoded JSON fields (where
// the engine may have escaped it). Scrubbing after collapsing whitespace or
// truncating would miss a password with repeated whitespace, or one that
// straddles the cut.
func parseErrorBody(body []byte, secret string) (typ, msg string) {
	scrub := func(s string) string { return s }
	if secret != "" {
		scrub = func(s string) string { return strings.ReplaceAll(s, secret, "***") }
		body = bytes.ReplaceAll(body, []byte(secret), []byte("***"))
	}
	var ee engineError
	if len(body) > 0 && body[0] == '{' && json.Unmarshal(body, &ee) == nil && (ee.Message != "" || ee.Type != "") {
		return truncate(scrub(ee.Type), 128), truncate(oneLine(scrub(ee.Message)), maxErrorMessage)
	}
	if len(body) > 4*maxErrorMessage {
		body = body[:4*maxErrorMessage]
	}
	return "", truncate(oneLine(string(body)), maxErrorMessage)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
