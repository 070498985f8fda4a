package camunda

import (
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTimeout(t *testing.T) {
	f := newFakeEngine(t)
	var hits atomic.Int32
	f.handle("/external-task/count", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	c := newTestClient(t, f.url(), func(cfg *Config) {
		cfg.Timeout = 50 * time.Millisecond
		cfg.Retry = fastRetry(3)
	})
	start := time.Now()
	_, err := c.CountExternalTasks(ctxT(t), ExternalTaskQuery{TopicName: "t"})
	if time.Since(start) > 3*time.Second {
		t.Fatalf("took %s; the per-request timeout did not apply", time.Since(start))
	}
	var ae *APIError
	if !errors.As(err, &ae) || !ae.Timeout() {
		t.Fatalf("err = %v, want an APIError with Timeout()", err)
	}
	if hits.Load() != 1 {
		t.Errorf("requests = %d; timeouts must not be retried", hits.Load())
	}
	msg := err.Error()
	if !strings.Contains(msg, "GET /external-task/count") || !strings.Contains(msg, "timeout") {
		t.Errorf("error %q should name the endpoint and the timeout", msg)
	}
	if strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "topicName") {
		t.Errorf("error %q should carry the endpoint, not the full URL", msg)
	}
}

func TestHeadersSent(t *testing.T) {
	tests := []struct {
		name, user, pass string
		wantAuth         bool
	}{
		{"with basic auth", "exporter", "s3cret", true},
		{"without credentials", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEngine(t)
			registerAll(t, f, "")
			c := newTestClient(t, f.url(), func(cfg *Config) {
				cfg.Username, cfg.Password, cfg.Version = tt.user, tt.pass, "1.2.3"
			})
			if _, err := c.Version(ctxT(t)); err != nil {
				t.Fatal(err)
			}
			h := f.last(t).Header
			if got := h.Get("User-Agent"); got != "workflow-exporter/1.2.3" {
				t.Errorf("User-Agent = %q", got)
			}
			if got := h.Get("Accept"); got != "application/json" {
				t.Errorf("Accept = %q", got)
			}
			auth := h.Get("Authorization")
			if !tt.wantAuth {
				if auth != "" {
					t.Errorf("Authorization = %q, want none", auth)
				}
				return
			}
			want := "Basic " + base64.StdEncoding.EncodeToString([]byte(tt.user+":"+tt.pass))
			if auth != want {
				t.Errorf("Authorization = %q, want %q", auth, want)
			}
		})
	}
}

func TestHTTPErrors(t *testing.T) {
	tests := []struct {
		name      string
		status    int
		body      []byte
		user      string
		wantParts []string
	}{
		{
			name: "401 with credentials", status: 401, user: "exporter",
			wantParts: []string{"GET /version", "HTTP 401", "refused the configured credentials"},
		},
		{
			name: "401 without credentials", status: 401,
			wantParts: []string{"GET /version", "HTTP 401", "no credentials are configured"},
		},
		{
			name: "400 unbound result", status: 400, body: readFixture(t, "error_400_unbound.json"),
			wantParts: []string{"GET /version", "HTTP 400", "An unbound number of results is forbidden!"},
		},
		{
			name: "403 with the engine's message", status: 403, body: readFixture(t, "error_403.json"),
			wantParts: []string{"HTTP 403", "does not have 'READ' permission"},
		},
		{
			name: "404 with the engine's message", status: 404, body: readFixture(t, "error_404.json"),
			wantParts: []string{"HTTP 404", "does not exist"},
		},
		{
			name: "502 from a proxy, HTML body excerpt", status: 502, body: []byte("<html>\n<body>Bad   gateway</body></html>"),
			wantParts: []string{"HTTP 502", "<html> <body>Bad gateway</body></html>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEngine(t)
			f.handle("/version", func(w http.ResponseWriter, _ *http.Request) {
				if tt.status == 401 {
					w.Header().Set("WWW-Authenticate", `Basic realm="default"`)
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write(tt.body)
			})
			c := newTestClient(t, f.url(), func(cfg *Config) {
				if tt.user != "" {
					cfg.Username, cfg.Password = tt.user, "pw-not-in-errors"
				}
			})
			_, err := c.Version(ctxT(t))
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tt.status || ae.Endpoint != "/version" || ae.Method != http.MethodGet {
				t.Fatalf("err = %#v", err)
			}
			for _, p := range tt.wantParts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("error %q does not contain %q", err, p)
				}
			}
		})
	}
}

// A huge error body must not end up in the error string (or in logs).
func TestErrorBodyBounded(t *testing.T) {
	f := newFakeEngine(t)
	huge := strings.Repeat("stack frame at org.camunda.bpm.Something(Something.java:42)\n", 20000)
	f.handle("/incident/count", jsonStatus(500, []byte(huge)))
	f.handle("/job/count", jsonStatus(500, []byte(`{"type":"ProcessEngineException","message":"`+strings.Repeat("x", 100000)+`"}`)))
	c := newTestClient(t, f.url(), nil)
	_, err := c.CountIncidents(ctxT(t), IncidentQuery{})
	if err == nil || len(err.Error()) > 1024 {
		t.Errorf("error length %d, want bounded", len(err.Error()))
	}
	_, err = c.CountJobs(ctxT(t), JobQuery{})
	if err == nil || len(err.Error()) > 1024 || !strings.Contains(err.Error(), "HTTP 500") {
		t.Errorf("error length %d, want bounded", len(err.Error()))
	}
}

// Responses larger than MaxResponseBytes are refused, not buffered.
func TestResponseSizeLimit(t *testing.T) {
	f := newFakeEngine(t)
	f.handle("/external-task", jsonStatus(200, []byte("["+strings.Repeat(`{"id":"x"},`, 1000)+`{"id":"y"}]`)))
	c := newTestClient(t, f.url(), func(cfg *Config) { cfg.MaxResponseBytes = 1024; cfg.Retry = fastRetry(2) })
	_, err := c.ListExternalTasks(ctxT(t), ExternalTaskQuery{}, Page{})
	if err == nil {
		t.Fatal("want error for an oversized body")
	}
	if n := len(f.reqs()); n != 1 {
		t.Errorf("requests = %d; an oversized body is not retried", n)
	}
}

func TestNamedEngine(t *testing.T) {
	f := newFakeEngine(t)
	f.fixture(t, "/engine/second/version", "version.json")
	c := newTestClient(t, f.url()+"/", func(cfg *Config) { cfg.Engine = "second" })
	if _, err := c.Version(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := f.last(t).Path; got != "/engine-rest/engine/second/version" {
		t.Errorf("path = %q", got)
	}
	if got := c.Root(); got != f.url()+"/engine/second" {
		t.Errorf("Root = %q", got)
	}
}

func TestConfigValidation(t *testing.T) {
	const secret = "hunter2-secret"
	tests := []struct {
		name string
		cfg  Config
	}{
		{"empty URL", Config{}},
		{"not a URL", Config{BaseURL: "http://exporter:" + secret + "@[::1"}},
		{"credentials in URL", Config{BaseURL: "http://exporter:" + secret + "@localhost:8080/engine-rest"}},
		{"no scheme", Config{BaseURL: "localhost:8080/engine-rest"}},
		{"ftp scheme", Config{BaseURL: "ftp://localhost/engine-rest"}},
		{"query in URL", Config{BaseURL: "http://localhost:8080/engine-rest?token=" + secret}},
		{"password without user", Config{BaseURL: "http://localhost:8080/engine-rest", Password: secret}},
		{"negative timeout", Config{BaseURL: "http://localhost:8080/engine-rest", Timeout: -time.Second}},
		{"half a client cert", Config{BaseURL: "https://localhost/engine-rest", TLS: TLSConfig{CertFile: "c.pem"}}},
		{"missing CA file", Config{BaseURL: "https://localhost/engine-rest", TLS: TLSConfig{CAFile: "/nonexistent/ca.pem"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error leaks the secret: %v", err)
			}
		})
	}
}

// Redirects to another host would carry (or silently drop) credentials.
func TestRedirectToOtherHostRefused(t *testing.T) {
	other := newFakeEngine(t)
	registerAll(t, other, "")
	f := newFakeEngine(t)
	f.handle("/version", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, strings.Replace(other.url(), "127.0.0.1", "localhost", 1)+"/version", http.StatusFound)
	})
	c := newTestClient(t, f.url(), func(cfg *Config) { cfg.Username, cfg.Password = "u", "p" })
	if _, err := c.Version(ctxT(t)); err == nil {
		t.Fatal("redirect to another host followed")
	}
	if n := len(other.reqs()); n != 0 {
		t.Errorf("other host got %d requests", n)
	}
}

func TestQueryLengthGuard(t *testing.T) {
	f := newFakeEngine(t)
	registerAll(t, f, "")
	c := newTestClient(t, f.url(), nil)
	ids := make([]string, 200)
	for i := range ids {
		ids[i] = "6f0c1d2f-f9a1-11f0-9c1e-0242ac120002"
	}
	_, err := c.CountExternalTasks(ctxT(t), ExternalTaskQuery{ExternalTaskIDIn: ids})
	if err == nil || !strings.Contains(err.Error(), "split the *In id lists") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.reqs()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	if _, err := c.CountExternalTasks(ctxT(t), ExternalTaskQuery{ExternalTaskIDIn: ids[:100]}); err != nil {
		t.Errorf("100 ids: %v", err)
	}
}

func TestMaxResultsLimit(t *testing.T) {
	f := newFakeEngine(t)
	registerAll(t, f, "")
	c := newTestClient(t, f.url(), func(cfg *Config) { cfg.MaxResultsLimit = 20 })
	ctx := ctxT(t)
	if c.DefaultPageSize() != 20 {
		t.Errorf("DefaultPageSize = %d", c.DefaultPageSize())
	}
	if _, err := c.ListExternalTasks(ctx, ExternalTaskQuery{}, Page{}); err != nil {
		t.Fatal(err)
	}
	if q := f.last(t).RawQuery; q != "firstResult=0&maxResults=20" {
		t.Errorf("query = %s", q)
	}
	sent := len(f.reqs())
	for name, call := range map[string]func() error{
		"external tasks": func() error {
			_, err := c.ListExternalTasks(ctx, ExternalTaskQuery{}, Page{MaxResults: 21})
			return err
		},
		"incidents": func() error { _, err := c.ListIncidents(ctx, IncidentQuery{}, Page{MaxResults: 21}); return err },
		"jobs":      func() error { _, err := c.ListJobs(ctx, JobQuery{}, Page{MaxResults: 21}); return err },
	} {
		err := call()
		var ae *APIError
		if !errors.As(err, &ae) || ae.Status != 0 || !strings.Contains(err.Error(), "request not sent: page of 21 results exceeds the engine's max results limit of 20") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if len(f.reqs()) != sent {
		t.Error("a page beyond the limit was sent")
	}

	ids := make([]string, 45)
	for i := range ids {
		ids[i] = fmt.Sprintf("p:1:%d", i)
	}
	if _, err := c.ProcessDefinitionKeys(ctx, ids); err != nil {
		t.Fatal(err)
	}
	if n := len(f.reqs()) - sent; n != 3 {
		t.Errorf("definition lookups = %d requests, want 3 batches of at most 20", n)
	}
	if _, err := New(Config{BaseURL: "http://localhost/engine-rest", MaxResultsLimit: -1}); err == nil {
		t.Error("negative limit accepted")
	}
	if d := newTestClient(t, f.url(), nil).DefaultPageSize(); d != DefaultPageSize {
		t.Errorf("DefaultPageSize without limit = %d", d)
	}
}

// TestMaxResultsLimitLearned: an engine with queryMaxResultsLimit that the
// configuration does not name refuses a larger page with HTTP 400 and the
// limit in its message (as Camunda 7 and the forks answer, camunda/
// engine_test.go); the client learns it, warns once, and later pages stay
// within it.
func TestMaxResultsLimitLearned(t *testing.T) {
	f := newFakeEngine(t)
	f.handle("/external-task", func(w http.ResponseWriter, r *http.Request) {
		if n, _ := strconv.Atoi(r.URL.Query().Get("maxResults")); n > 50 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"type":"BadUserRequestException","message":"Max results limit of 50 exceeded!","code":0}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	})
	logs := &strings.Builder{}
	var mu sync.Mutex
	c := newTestClient(t, f.url(), func(cfg *Config) {
		cfg.Logger = slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) }), nil))
	})
	ctx := ctxT(t)
	if got := c.PageSize(10000); got != 10000 {
		t.Fatalf("PageSize before any refusal = %d", got)
	}
	if _, err := c.ListExternalTasks(ctx, ExternalTaskQuery{}, Page{MaxResults: 10000}); !IsStatus(err, http.StatusBadRequest) {
		t.Fatalf("a page above the limit: err = %v", err)
	}
	// Learned: such a page is no longer sent.
	sent := len(f.reqs())
	if _, err := c.ListExternalTasks(ctx, ExternalTaskQuery{}, Page{MaxResults: 10000}); err == nil || !strings.Contains(err.Error(), "request not sent") || len(f.reqs()) != sent {
		t.Fatalf("a page above the learned limit: err = %v, %d requests more", err, len(f.reqs())-sent)
	}
	if got := c.PageSize(10000); got != 50 {
		t.Fatalf("PageSize after the refusal = %d, want the engine's 50", got)
	}
	if _, err := c.ListExternalTasks(ctx, ExternalTaskQuery{}, Page{MaxResults: c.PageSize(10000)}); err != nil {
		t.Fatalf("a page within the learned limit: %v", err)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	if n := strings.Count(out, "level=WARN"); n != 1 || !strings.Contains(out, "limit=50") {
		t.Fatalf("%d warnings, want one naming the limit:\n%s", n, out)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
