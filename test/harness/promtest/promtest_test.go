package promtest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Rules that fire at once, one per severity, plus a database outage that
// must inhibit the page for that database but not for another one.
const rules = `groups:
  - name: promtest
    interval: 1s
    rules:
      - alert: PromtestPage
        expr: vector(1)
        labels: {severity: critical, job: workflow-exporter, instance: "exporter:7840", database: billing}
        annotations: {summary: page}
      - alert: PromtestPage
        expr: vector(1)
        labels: {severity: critical, job: workflow-exporter, instance: "exporter:7840", database: orders}
        annotations: {summary: page muted by the orders outage}
      - alert: WorkflowExporterSourceDown
        expr: vector(0)
        labels: {severity: warning, job: workflow-exporter, instance: "exporter:7840", source: database, name: orders, database: orders}
        annotations: {summary: orders down}
      - alert: PromtestInfo
        expr: vector(1)
        labels: {severity: info, job: workflow-exporter, instance: "exporter:7840", database: billing}
        annotations: {summary: info goes nowhere}
`

// TestRuleReachesWebhookThroughShippedAlertmanagerConfig runs real
// Prometheus and Alertmanager with deploy/alertmanager.yml (webhook URLs
// pointed at this test): the critical alert reaches /pager, the warning
// reaches /ticket, the info alert reaches nothing, and the page for the
// database whose source is down is inhibited.
func TestRuleReachesWebhookThroughShippedAlertmanagerConfig(t *testing.T) {
	a := StartAlerting(t, AlertingOptions{Rules: rules, PrometheusFlags: []string{"--rules.alert.resend-delay=1s"}})
	hook := a.Receiver

	// The warning's group waits the root group_wait (30s); the page 10s.
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if len(hook.Firing("ticket")) > 0 && len(hook.Firing("pager")) > 0 {
			break
		}
		if a.Exited() {
			t.Fatalf("a server exited early\nprometheus:\n%s\nalertmanager:\n%s", testkit.Tail(a.Prometheus.Log.String(), 20), testkit.Tail(a.Alertmanager.Log.String(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Give any wrongly routed or uninhibited notification the same chance to arrive.
	time.Sleep(5 * time.Second)

	if got, want := hook.Firing("pager"), []string{"PromtestPage/billing"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pager got %v, want %v (orders must be inhibited by its source outage)", got, want)
	}
	if got, want := hook.Firing("ticket"), []string{"WorkflowExporterSourceDown/orders"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ticket got %v, want %v", got, want)
	}
	if got := hook.Receivers(); strings.Join(got, ",") != "pager,ticket" {
		t.Errorf("notifications on paths %v, want only /pager and /ticket", got)
	}
	for _, p := range hook.Receivers() {
		for _, n := range hook.Firing(p) {
			if strings.HasPrefix(n, "PromtestInfo") {
				t.Errorf("info alert reached %s", p)
			}
		}
	}
}

func TestRewriteWebhookURLs(t *testing.T) {
	in := "receivers:\n  - name: pager\n    webhook_configs:\n      - url: http://127.0.0.1:5001/pager\n"
	out, err := RewriteWebhookURLs(in, "http://127.0.0.1:5001", "http://127.0.0.1:4242")
	if err != nil || !strings.Contains(out, "url: http://127.0.0.1:4242/pager") {
		t.Fatalf("got %q, %v", out, err)
	}
	if _, err := RewriteWebhookURLs(in, "http://elsewhere", "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
}
