package camunda

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestVersionAt(t *testing.T) {
	f := newFakeEngine(t)
	date := time.Date(2026, 12, 2, 13, 4, 5, 0, time.UTC)
	f.handle("/version", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Date", date.Format(http.TimeFormat))
		_, _ = w.Write([]byte(`{"version":"7.24.0"}`))
	})
	c := newTestClient(t, f.URL+"/engine-rest", nil)
	v, now, err := c.VersionAt(context.Background())
	if err != nil || v != "7.24.0" || !now.Equal(date) {
		t.Fatalf("VersionAt = %q, %s, %v; want 7.24.0, %s", v, now, err, date)
	}

	// No usable Date header: an error naming the endpoint, not the exporter's clock.
	f.handle("/version", func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Date"] = nil // net/http would add one
		w.Header().Set("Date", "yesterday")
		_, _ = w.Write([]byte(`{"version":"7.24.0"}`))
	})
	if _, _, err := c.VersionAt(context.Background()); err == nil || !strings.Contains(err.Error(), "GET /version") || !strings.Contains(err.Error(), "Date header") {
		t.Fatalf("bad Date header: err = %v", err)
	}

	// 401 says the credentials were refused and never carries the password.
	f.handle("/version", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"type":"AuthenticationException","message":"wrong password hunter2"}`))
	})
	ca, err := New(Config{BaseURL: f.URL + "/engine-rest", Username: "u", Password: "hunter2"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ca.VersionAt(context.Background())
	if !IsStatus(err, http.StatusUnauthorized) || !strings.Contains(err.Error(), "refused the configured credentials") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("401: err = %v", err)
	}
}
