package camunda

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// statusSequence answers with the given statuses in turn, then 200 with body.
func statusSequence(body []byte, statuses ...int) (http.HandlerFunc, *atomic.Int32) {
	var n atomic.Int32
	return func(w http.ResponseWriter, _ *http.Request) {
		i := int(n.Add(1)) - 1
		if i < len(statuses) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(statuses[i])
			_, _ = w.Write([]byte(`{"type":"RestException","message":"status ` + http.StatusText(statuses[i]) + `"}`))
			return
		}
		_, _ = w.Write(body)
	}, &n
}

func TestRetryPolicy(t *testing.T) {
	count := []byte(`{"count":7}`)
	tests := []struct {
		name       string
		statuses   []int
		maxRetries int
		wantHits   int32
		wantStatus int // 0: success
	}{
		{"503 then 200 is retried", []int{503}, 2, 2, 0},
		{"429 is retried", []int{429}, 2, 2, 0},
		{"502 and 504 are retried", []int{502, 504}, 2, 3, 0},
		{"400 is not retried", []int{400}, 3, 1, 400},
		{"401 is not retried", []int{401}, 3, 1, 401},
		{"403 is not retried", []int{403}, 3, 1, 403},
		{"404 is not retried", []int{404}, 3, 1, 404},
		{"500 is not retried", []int{500}, 3, 1, 500},
		{"retries stop at the limit", []int{503, 503, 503, 503, 503}, 3, 4, 503},
		{"no retries when disabled", []int{503}, 0, 1, 503},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEngine(t)
			h, hits := statusSequence(count, tt.statuses...)
			f.handle("/job/count", h)
			c := newTestClient(t, f.url(), func(cfg *Config) { cfg.Retry = fastRetry(tt.maxRetries) })
			n, err := c.CountJobs(ctxT(t), JobQuery{})
			if got := hits.Load(); got != tt.wantHits {
				t.Errorf("requests = %d, want %d", got, tt.wantHits)
			}
			if tt.wantStatus == 0 {
				if err != nil || n != 7 {
					t.Fatalf("CountJobs = %d, %v", n, err)
				}
				return
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != tt.wantStatus {
				t.Fatalf("err = %v, want APIError with status %d", err, tt.wantStatus)
			}
			if ae.Attempts != int(tt.wantHits) {
				t.Errorf("Attempts = %d, want %d", ae.Attempts, tt.wantHits)
			}
		})
	}
}

// The waits between attempts grow exponentially, carry jitter, and never
// exceed MaxBackoff.
func TestRetryBackoffBounded(t *testing.T) {
	f := newFakeEngine(t)
	h, hits := statusSequence(nil, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503, 503)
	f.handle("/version", h)
	policy := &RetryPolicy{MaxRetries: 6, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 500 * time.Millisecond}
	c := newTestClient(t, f.url(), func(cfg *Config) { cfg.Retry = policy })
	var mu sync.Mutex
	var waits []time.Duration
	c.sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return nil
	}
	_, err := c.Version(ctxT(t))
	if !IsStatus(err, 503) {
		t.Fatalf("err = %v", err)
	}
	if hits.Load() != 7 || len(waits) != 6 {
		t.Fatalf("requests = %d, waits = %d; want 7 and 6", hits.Load(), len(waits))
	}
	nominal := []time.Duration{100, 200, 400, 500, 500, 500}
	for i, w := range waits {
		hi := nominal[i] * time.Millisecond
		if w < hi/2 || w > hi {
			t.Errorf("wait %d = %s, want within [%s, %s]", i+1, w, hi/2, hi)
		}
	}
}

func TestBackoffJitterRange(t *testing.T) {
	p := RetryPolicy{MaxRetries: 3, InitialBackoff: time.Second, MaxBackoff: 3 * time.Second}
	lo := func(int64) int64 { return 0 }
	hi := func(n int64) int64 { return n - 1 }
	for n, want := range map[int][2]time.Duration{
		1: {500 * time.Millisecond, time.Second},
		2: {time.Second, 2 * time.Second},
		3: {1500 * time.Millisecond, 3 * time.Second},
		9: {1500 * time.Millisecond, 3 * time.Second},
	} {
		if got := p.backoff(n, lo); got != want[0] {
			t.Errorf("backoff(%d) low = %s, want %s", n, got, want[0])
		}
		if got := p.backoff(n, hi); got != want[1] {
			t.Errorf("backoff(%d) high = %s, want %s", n, got, want[1])
		}
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name      string
		header    string
		wantHits  int32
		wantWaits int
	}{
		{"short Retry-After is honoured", "0", 2, 1},
		{"Retry-After beyond MaxBackoff ends retries", "120", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeEngine(t)
			var hits atomic.Int32
			f.handle("/version", func(w http.ResponseWriter, _ *http.Request) {
				if hits.Add(1) == 1 {
					w.Header().Set("Retry-After", tt.header)
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				_, _ = w.Write([]byte(`{"version":"7.24.0"}`))
			})
			c := newTestClient(t, f.url(), func(cfg *Config) { cfg.Retry = fastRetry(2) })
			waits := 0
			c.sleep = func(context.Context, time.Duration) error { waits++; return nil }
			_, _ = c.Version(ctxT(t))
			if hits.Load() != tt.wantHits || waits != tt.wantWaits {
				t.Errorf("requests = %d, waits = %d; want %d, %d", hits.Load(), waits, tt.wantHits, tt.wantWaits)
			}
		})
	}
}

// Cancelling the caller's context during the backoff stops the retries.
func TestRetryStopsOnContextCancel(t *testing.T) {
	f := newFakeEngine(t)
	ctx, cancel := context.WithCancel(ctxT(t))
	var hits atomic.Int32
	f.handle("/version", func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		cancel() // the caller gives up while we are failing
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	c := newTestClient(t, f.url(), func(cfg *Config) {
		cfg.Retry = &RetryPolicy{MaxRetries: 5, InitialBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second}
	})
	start := time.Now()
	_, err := c.Version(ctx)
	if err == nil {
		t.Fatal("want error")
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s: the backoff did not stop on cancel", time.Since(start))
	}
	if hits.Load() != 1 {
		t.Errorf("requests = %d, want 1", hits.Load())
	}
	if !IsStatus(err, 503) && !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

// Cancelling during the backoff sleep itself: the error says both what
// failed and why retrying stopped.
func TestRetryStopsDuringBackoff(t *testing.T) {
	f := newFakeEngine(t)
	h, hits := statusSequence(nil, 503, 503, 503)
	f.handle("/version", h)
	c := newTestClient(t, f.url(), func(cfg *Config) {
		cfg.Retry = &RetryPolicy{MaxRetries: 3, InitialBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second}
	})
	ctx, cancel := context.WithTimeout(ctxT(t), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Version(ctx)
	if time.Since(start) > 5*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	if !errors.Is(err, context.DeadlineExceeded) || !IsStatus(err, 503) {
		t.Errorf("err = %v, want both the 503 and the context error", err)
	}
	if hits.Load() != 1 {
		t.Errorf("requests = %d, want 1", hits.Load())
	}
}

// Connection refused is a network error and is retried.
func TestRetryNetworkError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	c := newTestClient(t, "http://"+addr+"/engine-rest", func(cfg *Config) { cfg.Retry = fastRetry(2) })
	waits := 0
	c.sleep = func(context.Context, time.Duration) error { waits++; return nil }
	_, err = c.Version(ctxT(t))
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %T %v", err, err)
	}
	if ae.Status != 0 || ae.Attempts != 3 || waits != 2 {
		t.Errorf("status %d attempts %d waits %d; want 0, 3, 2", ae.Status, ae.Attempts, waits)
	}
	msg := err.Error()
	for _, want := range []string{"GET /version", "connection refused", "after 3 attempts"} {
		if !contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
}

func TestRetryPolicyValidation(t *testing.T) {
	for _, p := range []RetryPolicy{
		{MaxRetries: -1},
		{MaxRetries: 11, InitialBackoff: time.Millisecond, MaxBackoff: time.Second},
		{MaxRetries: 1},
		{MaxRetries: 1, InitialBackoff: time.Second, MaxBackoff: time.Millisecond},
		{MaxRetries: 1, InitialBackoff: time.Second, MaxBackoff: 2 * time.Minute},
	} {
		if _, err := New(Config{BaseURL: "http://localhost:8080/engine-rest", Retry: &p}); err == nil {
			t.Errorf("policy %+v accepted", p)
		}
	}
	if _, err := New(Config{BaseURL: "http://localhost:8080/engine-rest", Retry: &RetryPolicy{}}); err != nil {
		t.Errorf("disabling retries: %v", err)
	}
}
