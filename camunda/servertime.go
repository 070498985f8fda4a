package camunda

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// VersionAt returns the engine's version (GET /version) together with the
// engine's clock at the time of the answer, read from the response's Date
// header (RFC 9110: the origin server's clock; for Camunda's embedded
// servlet container that is the engine JVM's clock, the one that sets lock
// expirations and create times).
//
// The Date header has a resolution of one second and is truncated, so the
// returned time is up to one second behind the engine's clock, plus network
// latency. Collectors use it only to compute ages; state decisions use the
// engine's own SQL filters (see the collectors package). If an intermediary
// strips or rewrites the header, err names the problem rather than
// silently falling back to the exporter's clock.
//
// It makes one attempt, under the per-request timeout, without retries: it
// is the first call of a collection, and the next scrape tries again.
func (c *Client) VersionAt(ctx context.Context) (version string, engineNow time.Time, err error) {
	const path = "/version"
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	start := time.Now()
	resp, err := c.rc.R().SetContext(actx).Get(c.root + path)
	if err != nil {
		ae := &APIError{Method: http.MethodGet, Endpoint: path, CredentialsConfigured: c.hasCreds, Err: transportCause(err), Attempts: 1}
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			ae.timeout = c.timeout
		}
		return "", time.Time{}, ae
	}
	status := resp.StatusCode()
	if status < 200 || status > 299 {
		typ, msg := parseErrorBody(resp.Body(), c.password)
		return "", time.Time{}, &APIError{Method: http.MethodGet, Endpoint: path, Status: status, Type: typ, Message: msg, CredentialsConfigured: c.hasCreds, Attempts: 1}
	}
	var res versionResult
	if err := decode(resp.Body(), &res); err != nil {
		return "", time.Time{}, &APIError{Method: http.MethodGet, Endpoint: path, Status: status, CredentialsConfigured: c.hasCreds, Attempts: 1, badBody: true,
			Message: "response is not the expected JSON: " + truncate(err.Error(), maxErrorMessage)}
	}
	date := resp.Header().Get("Date")
	now, perr := http.ParseTime(date)
	if perr != nil {
		return "", time.Time{}, &APIError{Method: http.MethodGet, Endpoint: path, Status: status, CredentialsConfigured: c.hasCreds, Attempts: 1, badBody: true,
			Message: "response has no valid Date header (" + truncate(date, 64) + "); the engine's clock is unknown"}
	}
	c.log.Debug("camunda request", "method", http.MethodGet, "endpoint", path, "attempt", 1, "duration", time.Since(start))
	return res.Version, now, nil
}
