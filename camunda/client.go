// Package camunda is a read-only client for the Camunda 7 REST API (and the
// API-compatible forks Operaton and CIB seven), built for an exporter that
// polls an engine: typed queries, explicit paging, engine date handling,
// bounded retries for transient failures, and errors that never carry
// credentials.
//
// Every call in this package is a read (GET). The exporter never changes
// engine state, which is also what makes retrying safe.
package camunda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-resty/resty/v2"
)

// Defaults applied by New when a Config field is left at its zero value.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 32 << 20
	DefaultDefinitionCache  = 1024
)

// Config configures a Client.
type Config struct {
	// BaseURL is the REST root, for example http://localhost:8080/engine-rest.
	// It must not contain credentials (use Username/Password), a query or a
	// fragment.
	BaseURL string
	// Engine selects a named process engine (/engine/{name}/...). Empty means
	// the default engine.
	Engine string

	// Username and Password enable HTTP basic auth. Both or neither.
	Username string
	Password string

	TLS TLSConfig

	// Timeout bounds each single request attempt (connect, headers and
	// body). Retries get a fresh timeout each; the caller's context bounds
	// the whole call. Zero means DefaultTimeout.
	Timeout time.Duration

	// Retry is the retry policy for transient failures. Nil means
	// DefaultRetryPolicy(); a non-nil policy with MaxRetries 0 disables
	// retries.
	Retry *RetryPolicy

	// Logger receives debug lines per request and per retry. Nil
	// discards. Lines never contain credentials.
	Logger *slog.Logger

	// Version is the exporter's version, sent as User-Agent
	// "workflow-exporter/<version>". Empty means "dev".
	Version string

	// MaxResponseBytes bounds how much of a response body is read. Zero
	// means DefaultMaxResponseBytes.
	MaxResponseBytes int

	// DefinitionCacheSize bounds the process-definition id -> key cache.
	// Zero means DefaultDefinitionCache.
	DefinitionCacheSize int

	// MaxResultsLimit is the engine's queryMaxResultsLimit, when it sets one
	// (it then answers 400 to authenticated list requests asking for more).
	// Zero means none known. With a limit, list calls never ask for more:
	// a Page without MaxResults gets min(DefaultPageSize, limit), a Page
	// asking for more fails before sending, and process-definition lookups
	// batch by at most this many ids.
	MaxResultsLimit int
}

// RetryPolicy says which failed reads are tried again and how long to wait.
// Only transient failures are retried: transport errors other than timeouts
// and TLS verification failures, and HTTP 429, 502, 503 and 504. Other 4xx
// and 5xx answers are the engine's considered reply and retrying would only
// repeat them; a retried 401 would even do harm, because the engine delays
// and eventually locks out a user after failed logins (observed on 7.24 and
// Operaton: right after a wrong password, the right one is refused too). Timeouts are not retried either: a slow engine is usually a
// busy engine, and sending the same expensive query again makes it worse.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt (0..10).
	MaxRetries int
	// InitialBackoff is the wait before the first retry; it doubles for
	// each further retry, with jitter, up to MaxBackoff.
	InitialBackoff time.Duration
	// MaxBackoff caps each wait (at most one minute). A Retry-After header
	// asking for longer than this ends the retries instead.
	MaxBackoff time.Duration
}

// DefaultRetryPolicy is 2 retries, waiting about 200ms and then 400ms. It is
// short on purpose: a scrape has a deadline, and the next scrape retries
// anyway.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxRetries: 2, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second}
}

// maxQueryLength keeps the request line under the 8 KiB header limit of
// Spring Boot's embedded Tomcat (server.max-http-request-header-size) with
// room for the path and headers.
const maxQueryLength = 6000

const (
	maxRetriesLimit = 10
	maxBackoffLimit = time.Minute
)

func (p RetryPolicy) validate() error {
	switch {
	case p.MaxRetries < 0 || p.MaxRetries > maxRetriesLimit:
		return fmt.Errorf("camunda: retry: max retries must be between 0 and %d, got %d", maxRetriesLimit, p.MaxRetries)
	case p.MaxRetries == 0:
		return nil
	case p.InitialBackoff <= 0:
		return errors.New("camunda: retry: initial backoff must be positive")
	case p.MaxBackoff < p.InitialBackoff:
		return errors.New("camunda: retry: max backoff must not be below the initial backoff")
	case p.MaxBackoff > maxBackoffLimit:
		return fmt.Errorf("camunda: retry: max backoff must not exceed %s", maxBackoffLimit)
	}
	return nil
}

// backoff returns the wait before retry number n (1-based): exponential,
// capped, with "equal jitter" (half fixed, half random) so that several
// exporters hitting the same failing engine do not retry in lockstep, while
// the wait never drops below half the nominal value.
func (p RetryPolicy) backoff(n int, rnd func(int64) int64) time.Duration {
	d := p.InitialBackoff
	for i := 1; i < n && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	half := int64(d / 2)
	return time.Duration(half + rnd(int64(d)-half+1))
}

// Client is a read-only Camunda 7 REST client. It is safe for concurrent use.
type Client struct {
	rc       *resty.Client
	root     string // BaseURL plus engine prefix, no trailing slash
	log      *slog.Logger
	timeout  time.Duration
	retry    RetryPolicy
	hasCreds bool
	password string // kept only to scrub it from engine-supplied messages
	defs     *definitionCache
	// maxResultsLimit is Config.MaxResultsLimit (0: none known).
	maxResultsLimit int
	// learnedLimit is the limit the engine named when it refused a page
	// (0: none yet); limit() takes the lower of the two.
	learnedLimit atomic.Int64

	// Seams for tests; production uses real timers and math/rand/v2.
	sleep func(context.Context, time.Duration) error
	rnd   func(int64) int64
}

// New validates cfg and builds a Client. It does not contact the engine.
// Errors never echo the base URL, since a malformed one may hold a password.
func New(cfg Config) (*Client, error) {
	root, err := rootURL(cfg.BaseURL, cfg.Engine)
	if err != nil {
		return nil, err
	}
	if cfg.Password != "" && cfg.Username == "" {
		return nil, errors.New("camunda: a password is configured without a username")
	}
	retry := DefaultRetryPolicy()
	if cfg.Retry != nil {
		retry = *cfg.Retry
	}
	if err := retry.validate(); err != nil {
		return nil, err
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if timeout < 0 {
		return nil, errors.New("camunda: timeout must not be negative")
	}
	maxBody := cfg.MaxResponseBytes
	if maxBody == 0 {
		maxBody = DefaultMaxResponseBytes
	}
	cacheSize := cfg.DefinitionCacheSize
	if cacheSize == 0 {
		cacheSize = DefaultDefinitionCache
	}
	if maxBody < 0 || cacheSize < 0 || cfg.MaxResultsLimit < 0 {
		return nil, errors.New("camunda: max response bytes, definition cache size and max results limit must not be negative")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	version := cfg.Version
	if version == "" {
		version = "dev"
	}

	tlsCfg, err := buildTLS(cfg.TLS)
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tlsCfg
	// One exporter polls one engine with a handful of concurrent queries.
	transport.MaxIdleConnsPerHost = 4
	hc := &http.Client{Transport: transport, CheckRedirect: checkRedirect}

	rc := resty.NewWithClient(hc).
		SetHeader("User-Agent", "workflow-exporter/"+version).
		SetHeader("Accept", "application/json").
		SetResponseBodyLimit(maxBody).
		// resty's own warnings (for example "basic auth over HTTP") would
		// go to stderr on every request; the exporter warns once per
		// source about a plain HTTP URL instead (internal/sources).
		SetDisableWarn(true).
		SetLogger(restyLogger{logger})
	if cfg.Username != "" {
		rc.SetBasicAuth(cfg.Username, cfg.Password)
	}

	return &Client{
		rc:              rc,
		root:            root,
		log:             logger,
		timeout:         timeout,
		retry:           retry,
		hasCreds:        cfg.Username != "",
		password:        cfg.Password,
		defs:            newDefinitionCache(cacheSize),
		maxResultsLimit: cfg.MaxResultsLimit,
		sleep:           sleepCtx,
		rnd:             rand.Int64N,
	}, nil
}

// rootURL validates the base URL and appends the named-engine prefix.
func rootURL(base, engine string) (string, error) {
	if strings.TrimSpace(base) == "" {
		return "", errors.New("camunda: base URL is empty")
	}
	u, err := url.Parse(base)
	if err != nil {
		// url.Error repeats the input, which may hold a password.
		return "", errors.New("camunda: base URL is not a valid URL")
	}
	if u.User != nil {
		return "", errors.New("camunda: base URL must not contain credentials; configure username and password instead")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", errors.New("camunda: base URL must start with http:// or https://")
	}
	if u.Host == "" {
		return "", errors.New("camunda: base URL has no host")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return "", errors.New("camunda: base URL must not have a query or fragment")
	}
	root := strings.TrimRight(u.String(), "/")
	if engine != "" {
		root += "/engine/" + url.PathEscape(engine)
	}
	return root, nil
}

// checkRedirect refuses redirects that leave the host or downgrade to plain
// HTTP: net/http would forward basic auth to the same host over http.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("stopped after 5 redirects")
	}
	orig := via[0].URL
	if req.URL.Host != orig.Host || (orig.Scheme == "https" && req.URL.Scheme != "https") {
		return fmt.Errorf("refusing redirect to a different host or scheme (%s://%s)", req.URL.Scheme, req.URL.Host)
	}
	return nil
}

// Root returns the REST root requests go to (base URL plus engine prefix).
// It holds no credentials.
func (c *Client) Root() string { return c.root }

// DefaultPageSize is the page size this client uses when a Page leaves
// MaxResults at zero: DefaultPageSize, or the engine's max results limit
// if that is smaller (limit). Pass it to Collect.
func (c *Client) DefaultPageSize() int {
	if l := c.limit(); l > 0 {
		return min(DefaultPageSize, l)
	}
	return DefaultPageSize
}

// PageSize is want, or the engine's max results limit if that is smaller
// (limit): the largest page a list request of this client may ask for.
// Large pages cut the number of requests of a long list (each request
// carries the engine's per-request overhead, and every offset page re-runs
// the query).
func (c *Client) PageSize(want int) int {
	if want <= 0 {
		want = DefaultPageSize
	}
	if l := c.limit(); l > 0 {
		return min(want, l)
	}
	return want
}

// limit is the engine's queryMaxResultsLimit as known: the configured
// MaxResultsLimit, or the limit the engine named when it refused a page,
// whichever is lower (0: none known).
func (c *Client) limit() int {
	l, learned := c.maxResultsLimit, int(c.learnedLimit.Load())
	switch {
	case l == 0:
		return learned
	case learned == 0:
		return l
	}
	return min(l, learned)
}

// limitRefusal is the engine's answer (HTTP 400) to a page above its
// queryMaxResultsLimit, on Camunda 7.x and its forks.
var limitRefusal = regexp.MustCompile(`Max results limit of (\d+) exceeded`)

// learnLimit keeps the limit an engine named when it refused a page, so
// later pages stay within it (the request that learned it still fails: a
// pager cannot shrink a page it has begun without losing its place), and
// warns once: the configuration should say it.
func (c *Client) learnLimit(ae *APIError) {
	if ae.Status != http.StatusBadRequest {
		return
	}
	m := limitRefusal.FindStringSubmatch(ae.Message)
	if m == nil {
		return
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n <= 0 {
		return
	}
	if old := c.learnedLimit.Swap(int64(n)); old != int64(n) {
		c.log.Warn("camunda: the engine refuses list pages above its max results limit; later pages stay within it (set camunda[].max_results_limit to it to avoid this failed request)",
			"endpoint", ae.Endpoint, "limit", n)
	}
}

// refuse reports a request the client will not send.
func (c *Client) refuse(path string, err error) *APIError {
	return &APIError{Method: http.MethodGet, Endpoint: path, CredentialsConfigured: c.hasCreds, Message: err.Error()}
}

// get performs GET {root}{path}?{query} with retries, and decodes a 2xx JSON
// body into out. The query is encoded with url.Values.Encode, so '+' in
// dates becomes %2B and keys come out sorted (stable, testable URLs).
//
// GET is used for every call, including the external-task queries that also
// have a POST form: every filter we need exists as a query parameter, GET
// is unambiguously a read for proxies, gateways and access logs, and it
// keeps one code path for all endpoints. The price is URL length for long
// *In lists; callers chunk those (see ProcessDefinitionKeys).
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	target := c.root + path
	if len(query) > 0 {
		encoded := query.Encode()
		if len(encoded) > maxQueryLength {
			// Fail here with a clear message rather than get an opaque
			// 400/414 from the servlet container.
			return c.refuse(path, fmt.Errorf("query string of %d bytes exceeds %d; split the *In id lists into smaller batches", len(encoded), maxQueryLength))
		}
		target += "?" + encoded
	}
	for attempt := 1; ; attempt++ {
		start := time.Now()
		ae, retryAfter := c.attempt(ctx, path, target, out)
		if ae == nil {
			c.log.Debug("camunda request", "method", http.MethodGet, "endpoint", path, "attempt", attempt, "duration", time.Since(start))
			return nil
		}
		ae.Attempts = attempt
		c.learnLimit(ae)
		retryable := ae.retryable()
		if !retryable || attempt > c.retry.MaxRetries || ctx.Err() != nil {
			c.log.Debug("camunda request failed", "method", http.MethodGet, "endpoint", path, "attempt", attempt, "status", ae.Status, "error", ae.Error())
			return ae
		}
		wait := c.retry.backoff(attempt, c.rnd)
		if retryAfter > 0 {
			if retryAfter > c.retry.MaxBackoff {
				// The engine asks for more patience than the policy has:
				// give up now rather than hammer it early.
				return ae
			}
			wait = max(wait, retryAfter)
		}
		// Debug, not warn: an outage would log this at every poll; the
		// collection's failure, if the retries do not help, is logged
		// once by its poll (internal/poll).
		c.log.Debug("camunda request failed, retrying", "method", http.MethodGet, "endpoint", path,
			"attempt", attempt, "status", ae.Status, "error", ae.Error(), "backoff", wait)
		if err := c.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%w; retries stopped: %w", ae, err)
		}
	}
}

// attempt makes one request under its own timeout.
func (c *Client) attempt(ctx context.Context, path, target string, out any) (*APIError, time.Duration) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.rc.R().SetContext(actx).Get(target)
	if err != nil {
		ae := &APIError{Method: http.MethodGet, Endpoint: path, CredentialsConfigured: c.hasCreds, Err: transportCause(err)}
		if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			ae.timeout = c.timeout
		}
		return ae, 0
	}
	status := resp.StatusCode()
	if status >= 200 && status < 300 {
		if out == nil {
			return nil, 0
		}
		if err := decode(resp.Body(), out); err != nil {
			return &APIError{Method: http.MethodGet, Endpoint: path, Status: status, CredentialsConfigured: c.hasCreds, badBody: true,
				Message: "response is not the expected JSON: " + truncate(err.Error(), maxErrorMessage)}, 0
		}
		return nil, 0
	}
	typ, msg := parseErrorBody(resp.Body(), c.password)
	ae := &APIError{Method: http.MethodGet, Endpoint: path, Status: status, Type: typ, Message: msg, CredentialsConfigured: c.hasCreds}
	return ae, retryAfterHeader(resp.Header().Get("Retry-After"))
}

// retryable applies the RetryPolicy's rules to one failed attempt.
func (e *APIError) retryable() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	case 0:
		return e.Err != nil && !e.Timeout() && transientTransport(e.Err)
	}
	return false
}

// transportCause drops the *url.Error wrapper, whose text repeats the full
// request URL; the endpoint is already in the APIError.
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// transientTransport reports whether a transport error may go away on its
// own (refused or reset connections, DNS hiccups). Cancellation, timeouts,
// certificate problems and oversized bodies will not.
func transientTransport(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, resty.ErrResponseBodyTooLarge) {
		return false
	}
	if isTLSVerification(err) {
		return false
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return false
	}
	return true
}

// retryAfterHeader parses a Retry-After value given in seconds; HTTP dates
// are rare from Camunda's proxies and are ignored (the backoff applies).
func retryAfterHeader(v string) time.Duration {
	if v == "" {
		return 0
	}
	secs, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || secs <= 0 {
		return 0
	}
	return time.Duration(secs) * time.Second
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// restyLogger routes resty's internal messages to slog at debug level.
type restyLogger struct{ l *slog.Logger }

func (r restyLogger) Errorf(format string, v ...any) { r.debug(format, v...) }
func (r restyLogger) Warnf(format string, v ...any)  { r.debug(format, v...) }
func (r restyLogger) Debugf(format string, v ...any) { r.debug(format, v...) }

func (r restyLogger) debug(format string, v ...any) {
	r.l.Debug("resty: " + fmt.Sprintf(format, v...))
}
