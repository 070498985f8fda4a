package promtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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
	stall := time.Now()
	exporter := httptest.NewServer(fakeExporter{start: stall})
	defer exporter.Close()
	a := StartAlerting(t, AlertingOptions{
		Rules:  GenerateRules(t, "outbox: {stalled_window: 2m, stalled_for: 0s}\n"),
		Target: strings.TrimPrefix(exporter.URL, "http://"),
	})
	page := a.AwaitPage(t, stall, 4*time.Minute)
	ExpectOnlyOutboxStallPage(t, a, page, stall, map[string]string{
		"alertname": "WorkflowOutboxBacklogStalled", "database": "orders", "severity": "critical"})
}
