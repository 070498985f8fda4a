package dashboards

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

func TestSubstitute(t *testing.T) {
	for in, want := range map[string]string{
		`rate(x{job=~"$job",topic=~"${topic:regex}"}[$__rate_interval])`: `rate(x{job=~".+",topic=~".+"}[1m])`,
		`sum(y{instance=~"${instance}"}) [$__range]`:                     `sum(y{instance=~".+"}) [1m]`,
		`up`: `up`,
		`label_replace(z{database=~"$database"}, "consumer_database", "$1", "database", "(.*)")`: `label_replace(z{database=~".+"}, "consumer_database", "$1", "database", "(.*)")`,
	} {
		if got := Substitute(in, "1m"); got != want {
			t.Errorf("Substitute(%s) = %s, want %s", in, got, want)
		}
	}
}

// leftVariable is a Grafana variable left in a query; $1 is a capture
// group of label_replace.
var leftVariable = regexp.MustCompile(`\$(\{|\$|[A-Za-z_])`)

// fakePrometheus answers /api/v1/query like Prometheus: series for the
// metrics in present, an empty vector for others, a bad_data error for
// queries that still contain a Grafana variable.
func fakePrometheus(t *testing.T, present []string) (*httptest.Server, *[]string) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		q := r.Form.Get("query")
		if r.Form.Get("time") == "" {
			t.Errorf("query without time: %s", q)
		}
		mu.Lock()
		seen = append(seen, q)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if leftVariable.MatchString(q) {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": "parse error: unexpected $"})
			return
		}
		result := []any{}
		for _, m := range present {
			if strings.Contains(q, m) {
				result = append(result, map[string]any{"metric": map[string]string{"__name__": m}, "value": []any{1.7e9, "1"}})
				break
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": result}})
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestLiveCheckReportsEmptyAndFailingQueries(t *testing.T) {
	srv, seen := fakePrometheus(t, []string{"workflow_outbox_oldest_pending_age_seconds", "camunda_up"})
	qs := []Query{
		{Dashboard: "d", Panel: "present", RefID: "A", Expr: `max(workflow_outbox_oldest_pending_age_seconds{job=~"$job",database=~"${database:regex}"})`},
		{Dashboard: "d", Panel: "absent", RefID: "A", Expr: `sum(rate(workflow_outbox_events_published_total{job=~"$job"}[$__rate_interval]))`},
		{Dashboard: "d", Panel: "present too", RefID: "B", Expr: `sum(1 - camunda_up{engine=~"$engine"})`},
		{Dashboard: "d", Panel: "rejected", RefID: "A", Expr: `sum(x{a="$$"})`},
	}
	rs, err := LiveCheck(context.Background(), srv.Client(), srv.URL+"/", "", qs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != len(qs) {
		t.Fatalf("%d results for %d queries", len(rs), len(qs))
	}
	failed := Failed(rs)
	var names []string
	for _, f := range failed {
		names = append(names, f.Panel)
	}
	if strings.Join(names, ",") != "absent,rejected" {
		t.Fatalf("failed = %v, want absent,rejected; all: %v", names, rs)
	}
	if failed[0].Err != nil || failed[0].Series != 0 {
		t.Errorf("empty query reported as %v", failed[0])
	}
	if failed[1].Err == nil || !strings.Contains(failed[1].Err.Error(), "bad_data") {
		t.Errorf("rejected query reported as %v", failed[1])
	}
	if (*seen)[1] != `sum(rate(workflow_outbox_events_published_total{job=~".+"}[1m]))` {
		t.Errorf("sent %s", (*seen)[1])
	}
}

// TestLiveCheckAllDashboardQueries runs the real panel queries against the
// fake: with every metric present, every query must come back OK, so the
// substitution leaves no variable behind.
func TestLiveCheckAllDashboardQueries(t *testing.T) {
	qs := mustQueries(t)
	// Every series a query can name: the catalog's names match as substrings.
	srv, _ := fakePrometheus(t, []string{"workflow_", "camunda_", "ALERTS", "up{", "process_", "go_"})
	rs, err := LiveCheck(context.Background(), srv.Client(), srv.URL, "30s", qs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Failed(rs) {
		t.Errorf("%s", r)
	}
}

func TestLiveCheckRejectsBadURL(t *testing.T) {
	if _, err := LiveCheck(context.Background(), nil, "ftp://x", "", nil); err == nil {
		t.Error("accepted a non-HTTP base URL")
	}
	rs, err := LiveCheck(context.Background(), nil, "http://127.0.0.1:1", "", []Query{{Expr: "up"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(Failed(rs)) != 1 || rs[0].Err == nil {
		t.Errorf("unreachable Prometheus not reported: %v", rs)
	}
}
