package promtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeExporter serves the outbox series of two databases, computed from the
// time since the test started: "orders" whose publisher stopped at the start
// (events keep arriving, none is published), and "billing" whose publisher
// drains a backlog. It stands in for the exporter until the end-to-end test
// runs the real one against PostgreSQL.
type fakeExporter struct{ start time.Time }

func (f fakeExporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s := time.Since(f.start).Seconds()
	var b strings.Builder
	series := func(name, db string, v float64) {
		fmt.Fprintf(&b, "%s{database=%q,aggregate_type=\"Order\",event_type=\"OrderPlaced\"} %g\n", name, db, v)
	}
	fmt.Fprintf(&b, "workflow_exporter_source_up{source=\"database\",name=\"orders\"} 1\n")
	fmt.Fprintf(&b, "workflow_exporter_source_up{source=\"database\",name=\"billing\"} 1\n")
	// orders: stalled since the start, one event a second created, none published.
	series("workflow_outbox_events_created_total", "orders", 100+s)
	series("workflow_outbox_events_published_total", "orders", 100)
	series("workflow_outbox_events_pending", "orders", 1+s)
	series("workflow_outbox_oldest_pending_age_seconds", "orders", s)
	// billing: draining 300 pending at 2/s net while 1/s is created.
	pending := 300 - 2*s
	if pending < 0 {
		pending = 0
	}
	series("workflow_outbox_events_created_total", "billing", 500+s)
	series("workflow_outbox_events_published_total", "billing", 200+3*s)
	series("workflow_outbox_events_pending", "billing", pending)
	age := 0.0
	if pending > 0 {
		age = 20
	}
	series("workflow_outbox_oldest_pending_age_seconds", "billing", age)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	_, _ = w.Write([]byte(b.String()))
}

// TestOutboxStallPagesAndDrainingOutboxIsQuiet runs the shipped outbox rules
// (windows shortened to the 2m minimum, for: 0s) in real Prometheus against a
// fake exporter, through real Alertmanager with deploy/alertmanager.yml: the
// stalled database pages, the draining one produces no notification at all.
// It logs the time from the stall to the page.
func TestOutboxStallPagesAndDrainingOutboxIsQuiet(t *testing.T) {
	SkipIfMissing(t, PrometheusBinary(), AlertmanagerBinary())
	if testing.Short() {
		t.Skip("waits for a 2m outbox stall window; about 2.5 minutes")
	}
	root := filepath.Join("..", "..")
	rules := GenerateRules(t, "outbox: {stalled_window: 2m, stalled_for: 0s}\n")

	var mu sync.Mutex
	var pages []notifiedAlert
	var paged time.Time
	other := map[string]int{}
	hook := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wh := &webhook{got: map[string][]notifiedAlert{}}
		wh.ServeHTTP(w, r)
		mu.Lock()
		defer mu.Unlock()
		for path, as := range wh.got {
			if path != "/pager" {
				other[path] += len(as)
				continue
			}
			if paged.IsZero() {
				paged = time.Now()
			}
			pages = append(pages, as...)
		}
	})
	receiver := httptest.NewServer(hook)
	defer receiver.Close()

	amConfig, err := os.ReadFile(filepath.Join(root, "deploy", "alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := RewriteWebhookURLs(string(amConfig), "http://127.0.0.1:5001", receiver.URL)
	if err != nil {
		t.Fatal(err)
	}
	am := StartAlertmanager(t, cfg)

	stall := time.Now()
	exporter := httptest.NewServer(fakeExporter{start: stall})
	defer exporter.Close()
	prom := StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [rules.yml]
alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
scrape_configs:
  - job_name: workflow-exporter
    static_configs:
      - targets: [%q]
`, am.Addr, strings.TrimPrefix(exporter.URL, "http://")), Files{"rules.yml": rules})

	deadline := stall.Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		mu.Lock()
		done := !paged.IsZero()
		mu.Unlock()
		if done || prom.Exited() || am.Exited() {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	// Anything else Alertmanager would send (a page for the draining outbox,
	// or a ticket: that route's group_wait is 30s) must have time to arrive
	// before "nothing else notified" means anything.
	time.Sleep(35 * time.Second)

	mu.Lock()
	defer mu.Unlock()
	if paged.IsZero() {
		t.Fatalf("no page within %s of the stall", time.Since(stall).Round(time.Second))
	}
	took := paged.Sub(stall)
	t.Logf("stall to page: %s (window 2m, for 0s, scrape/eval 1s, pager group_wait 10s)", took.Round(time.Second))
	if took < 2*time.Minute {
		t.Errorf("paged after %s, before the 2m window could have passed", took)
	}
	for _, a := range pages {
		if a.Labels["alertname"] != "WorkflowOutboxBacklogStalled" || a.Labels["database"] != "orders" || a.Labels["severity"] != "critical" {
			t.Errorf("unexpected page %v", a.Labels)
		}
	}
	if len(other) != 0 {
		t.Errorf("notifications other than the page: %v", other)
	}
}
