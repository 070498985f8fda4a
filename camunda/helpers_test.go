package camunda

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// recorded is what a fake engine saw of one request.
type recorded struct {
	Method   string
	Path     string
	RawQuery string
	Header   http.Header
}

// fakeEngine is an httptest server that answers by path and records every
// request. Handlers for a path can be swapped in per test.
type fakeEngine struct {
	*httptest.Server
	mu       sync.Mutex
	requests []recorded
	handlers map[string]http.HandlerFunc
}

func newFakeEngine(t *testing.T) *fakeEngine {
	t.Helper()
	f := &fakeEngine{handlers: map[string]http.HandlerFunc{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeEngine) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, recorded{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Header: r.Header.Clone()})
	h, ok := f.handlers[r.URL.Path]
	f.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	h(w, r)
}

// handle registers h for path (below /engine-rest).
func (f *fakeEngine) handle(path string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers["/engine-rest"+path] = h
}

// fixture registers a fixture file as the 200 answer for path.
func (f *fakeEngine) fixture(t *testing.T, path, file string) {
	t.Helper()
	body := readFixture(t, file)
	f.handle(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

func (f *fakeEngine) reqs() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.requests...)
}

func (f *fakeEngine) last(t *testing.T) recorded {
	t.Helper()
	r := f.reqs()
	if len(r) == 0 {
		t.Fatal("no request reached the fake engine")
	}
	return r[len(r)-1]
}

func (f *fakeEngine) url() string { return f.URL + "/engine-rest" }

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonStatus writes a fixture (or raw body) with a status.
func jsonStatus(status int, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// fastRetry keeps retry tests quick while still exercising backoff.
func fastRetry(n int) *RetryPolicy {
	return &RetryPolicy{MaxRetries: n, InitialBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond}
}

// newTestClient builds a client against url with overrides applied.
func newTestClient(t *testing.T, url string, mod func(*Config)) *Client {
	t.Helper()
	cfg := Config{BaseURL: url, Timeout: 2 * time.Second, Retry: fastRetry(0), Version: "test"}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// newCapturingLogger returns a JSON logger at debug level and what it wrote.
func newCapturingLogger() (*slog.Logger, *testkit.LogBuffer) {
	lb := &testkit.LogBuffer{}
	return slog.New(slog.NewJSONHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug})), lb
}

func ctxT(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
