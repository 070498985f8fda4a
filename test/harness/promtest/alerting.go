package promtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/notify"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// Notification is one alert of an Alertmanager webhook notification.
type Notification struct {
	// Receiver is the webhook path without its slash: deploy/alertmanager.yml
	// sends pages to /pager and tickets to /ticket.
	Receiver string
	// At is when the notification arrived.
	At     time.Time
	Status string // firing or resolved
	Labels map[string]string
	// Post numbers the webhook request the alert came in, from 1: the
	// alerts of one notification share it.
	Post int
	// PostStatus is the notification's status: firing while any of its
	// alerts fires.
	PostStatus string
	// GroupLabels are the labels of the notification's group (group_by).
	GroupLabels map[string]string
}

// Receiver is a webhook receiver for Alertmanager that keeps every
// notification it gets.
type Receiver struct {
	mu    sync.Mutex
	got   []Notification
	posts int
}

// ServeHTTP implements http.Handler for Alertmanager's webhook payload.
func (r *Receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	msg, ok := notify.Decode(w, req)
	if !ok {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.posts++
	for _, a := range msg.Alerts {
		r.got = append(r.got, Notification{Receiver: strings.TrimPrefix(req.URL.Path, "/"), At: now, Status: a.Status, Labels: a.Labels,
			Post: r.posts, PostStatus: msg.Status, GroupLabels: msg.GroupLabels})
	}
}

// Notifications returns what arrived so far, in order.
func (r *Receiver) Notifications() []Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Notification(nil), r.got...)
}

// Firing returns "alertname/database" of the firing alerts the receiver got,
// sorted, each once.
func (r *Receiver) Firing(receiver string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range r.Notifications() {
		k := n.Labels["alertname"] + "/" + n.Labels["database"]
		if n.Receiver == receiver && n.Status == "firing" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// Receivers returns the receivers that got anything, sorted.
func (r *Receiver) Receivers() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range r.Notifications() {
		if !seen[n.Receiver] {
			seen[n.Receiver] = true
			out = append(out, n.Receiver)
		}
	}
	sort.Strings(out)
	return out
}

// AlertingOptions configure StartAlerting.
type AlertingOptions struct {
	// Rules is the rule file Prometheus evaluates (GenerateRules renders the
	// bundle's).
	Rules string
	// Target is the host:port Prometheus scrapes every second as job
	// workflow-exporter; empty for none.
	Target string
	// Replicas are host:ports of replicas of one exporter, scraped every
	// second as job workflow-exporter the way the chart's ServiceMonitor
	// labels them (ReplicasConfig); instead of Target.
	Replicas []string
	// PrometheusFlags are appended to Prometheus's command line.
	PrometheusFlags []string
}

// Alerting is the shipped alerting path with real components: Prometheus
// evaluating rules every second, and Alertmanager routing with
// deploy/alertmanager.yml to Receiver instead of the example's webhooks.
type Alerting struct {
	Prometheus, Alertmanager *Server
	Receiver                 *Receiver
	// Flavor is the flavor of both binaries.
	Flavor Flavor
}

// FlavorName implements Flavored.
func (a *Alerting) FlavorName() string { return a.Flavor.Name }

// StartAlerting starts Debian's Alertmanager and Prometheus; both stop when
// the test ends. It skips the test when either binary is missing (see
// SkipIfMissing).
func StartAlerting(t testing.TB, o AlertingOptions) *Alerting {
	t.Helper()
	return Debian().StartAlerting(t, o)
}

// StartAlerting starts this flavor's Alertmanager and Prometheus (see the
// package's StartAlerting).
func (f Flavor) StartAlerting(t testing.TB, o AlertingOptions) *Alerting {
	t.Helper()
	f.need(t, f.Prometheus, f.Alertmanager)
	a := &Alerting{Receiver: &Receiver{}, Flavor: f}
	hook := httptest.NewServer(a.Receiver)
	t.Cleanup(hook.Close)
	amConfig, err := os.ReadFile(testkit.Path(t, "deploy/alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := RewriteWebhookURLs(string(amConfig), "http://127.0.0.1:5001", hook.URL)
	if err != nil {
		t.Fatal(err)
	}
	a.Alertmanager = f.StartAlertmanager(t, cfg)
	cfg = PrometheusConfig(o.Target, a.Alertmanager.Addr)
	if len(o.Replicas) > 0 {
		cfg = ReplicasConfig(o.Replicas, a.Alertmanager.Addr)
	}
	a.Prometheus = f.StartPrometheus(t, cfg, Files{"rules.yml": o.Rules}, o.PrometheusFlags...)
	return a
}

// ReplicaInstance is the instance label ReplicasConfig gives every replica:
// one stable value, as the chart's ServiceMonitor sets the Service's
// address.
const ReplicaInstance = "workflow-exporter.monitoring.svc:7840"

// ReplicasConfig is PrometheusConfig for replicas of one exporter (host:port
// each): scraped as job workflow-exporter, each target labeled as the
// Prometheus Operator and the chart's ServiceMonitor label a pod's: the
// stable instance ReplicaInstance, and pod replica-0, replica-1, ...
func ReplicasConfig(replicas []string, alertmanager string) string {
	var b strings.Builder
	b.WriteString(PrometheusConfig("", alertmanager))
	b.WriteString("scrape_configs:\n  - job_name: workflow-exporter\n    static_configs:\n")
	for i, r := range replicas {
		fmt.Fprintf(&b, "      - targets: [%q]\n        labels: {pod: replica-%d}\n", r, i)
	}
	fmt.Fprintf(&b, "    relabel_configs:\n      - {target_label: instance, replacement: %q}\n", ReplicaInstance)
	return b.String()
}

// PrometheusConfig is the prometheus.yml of the end-to-end tests: scraping
// and rule evaluation every second, the rules in rules.yml (pass it in
// Files), target (host:port) scraped as job workflow-exporter, and alerts
// sent to alertmanager (host:port); either may be empty.
func PrometheusConfig(target, alertmanager string) string {
	var b strings.Builder
	b.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 900ms\n  evaluation_interval: 1s\nrule_files: [rules.yml, " + SLORulesFile + "]\n")
	if alertmanager != "" {
		fmt.Fprintf(&b, "alerting:\n  alertmanagers:\n    - static_configs:\n        - targets: [%q]\n", alertmanager)
	}
	if target != "" {
		fmt.Fprintf(&b, "scrape_configs:\n  - job_name: workflow-exporter\n    static_configs:\n      - targets: [%q]\n", target)
	}
	return b.String()
}

// Exited reports whether Prometheus or Alertmanager has ended early.
func (a *Alerting) Exited() bool { return a.Prometheus.Exited() || a.Alertmanager.Exited() }

// ticketGroupWait is the group_wait of deploy/alertmanager.yml's ticket
// route (the root's), with a margin: after it, anything else Alertmanager
// had to send for alerts firing at the same time has arrived.
const ticketGroupWait = 35 * time.Second

// AwaitPage waits up to bound after since for the first firing page, then
// waits out the ticket route's group_wait, so that a test asserting "nothing
// else notified" asserts it after everything else had its chance to
// arrive. It fails the test when no page came.
func (a *Alerting) AwaitPage(t testing.TB, since time.Time, bound time.Duration) Notification {
	t.Helper()
	var page *Notification
	for time.Since(since) < bound && page == nil && !a.Exited() {
		time.Sleep(250 * time.Millisecond)
		for _, n := range a.Receiver.Notifications() {
			if n.Receiver == "pager" && n.Status == "firing" {
				page = &n
				break
			}
		}
	}
	if page == nil {
		t.Fatalf("no page within %s of %s; notifications: %+v", bound, since.Format(time.TimeOnly), a.Receiver.Notifications())
	}
	time.Sleep(ticketGroupWait)
	return *page
}

// ExpectOnlyOutboxStallPage is the verdict of the outbox stall tests: the
// page came no earlier than the 2m stalled_window after the stall, it
// carries want's labels, and every notification was that page (the
// WorkflowOutboxBacklogStalled alert of database "orders"), so a draining
// outbox elsewhere stayed quiet. The Watchdog's dead man's switch, which
// the rule files always fire, is the one other notification allowed, at
// its own receiver.
func ExpectOnlyOutboxStallPage(t testing.TB, a *Alerting, page Notification, stall time.Time, want map[string]string) {
	t.Helper()
	took := page.At.Sub(stall)
	t.Logf("stall to page: %s (stalled_window 2m, for 0s, scrape and evaluation 1s, pager group_wait 10s)", took.Round(time.Second))
	if took < 2*time.Minute {
		t.Errorf("paged %s after the stall, before the 2m window could have passed: the rule fires on something else", took)
	}
	for k, v := range want {
		if page.Labels[k] != v {
			t.Errorf("page label %s = %q, want %q (labels %v)", k, page.Labels[k], v, page.Labels)
		}
	}
	for _, n := range a.Receiver.Notifications() {
		if n.Receiver == "watchdog" && n.Labels["alertname"] == "WorkflowExporterWatchdog" {
			continue
		}
		if n.Receiver != "pager" || n.Labels["alertname"] != "WorkflowOutboxBacklogStalled" || n.Labels["database"] != "orders" {
			t.Errorf("unexpected notification: %s %s %v", n.Receiver, n.Status, n.Labels)
		}
	}
}
