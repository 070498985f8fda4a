package e2e

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/dashboards"
	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
)

// replicaAlertsConfig shortens the outbox stall and the outage alert to
// minutes, as the alert matrix does (every rule's logic stays the
// shipped one).
const replicaAlertsConfig = `
outbox: {stalled_window: 1m, stalled_for: 0s}
exporter: {source_down_for: 20s, pages_keep_firing_for: 1m, down_for: 20s, min_interval: 15s}
`

// TestTwoReplicasRaiseEachAlertOnce: two exporters on the same database, as
// the chart runs them with replicas: 2, scraped by one Prometheus of each
// flavor the way the chart's ServiceMonitor labels them (one stable
// instance, told apart by pod), evaluating the shipped rules, with
// Alertmanager routing by deploy/alertmanager.yml. Two faults, each must
// reach Alertmanager as one alert and the receiver as one notification
// holding that one alert: the outbox publisher stops (the critical
// WorkflowOutboxBacklogStalled), then the exporters lose the database
// (WorkflowExporterSourceDown, which both replicas see). Before the
// outage, every panel query of every dashboard that sums reads the same
// over the two replicas as a Prometheus scraping one of them alone reads
// (a plain sum over the replicas reads twice as much: the check can fail).
func TestTwoReplicasRaiseEachAlertOnce(t *testing.T) {
	t.Parallel() // no engine: beside every other test
	promtest.SkipIfMissing(t, promtest.PrometheusBinary(), promtest.AlertmanagerBinary())
	conn, dsn := newDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := faultproxy.StartTCP(t, u.Host)
	config := "databases:\n  - {name: orders, dsn_env: E2E_ORDERS_DSN, min_interval: 1s}\n"
	env := []string{"E2E_ORDERS_DSN=" + withHost(t, dsn, db.Addr())}
	a := exportertest.Start(t, exportertest.Options{Config: config, Env: env})
	b := exportertest.Start(t, exportertest.Options{Config: config, Env: env})

	ruleFile := promtest.GenerateRules(t, replicaAlertsConfig)
	stacks := promtest.StartAlertingEach(t, promtest.AlertingOptions{Rules: ruleFile, Replicas: []string{a.Addr, b.Addr}})
	// The baseline of the dashboards: the same rules and scrape, one
	// replica alone.
	single := map[string]*promtest.Server{}
	for _, s := range stacks {
		single[s.Flavor.Name] = s.Flavor.StartPrometheus(t, promtest.ReplicasConfig([]string{a.Addr}, ""), promtest.Files{"rules.yml": ruleFile})
	}

	w := &outboxWorkload{conn: conn, publish: true}
	defer runOutboxWorkloads(t, w)()

	// Healthy, then the publisher stops; 20s of events pile up, then the
	// workers stop too, so that the table holds still while the
	// dashboards are compared.
	time.Sleep(30 * time.Second)
	w.setPublishing(false)
	stall := time.Now()
	time.Sleep(20 * time.Second)
	w.setPaused(true)
	time.Sleep(5 * time.Second)

	promtest.Each(t, stacks, func(t *testing.T, s *promtest.Alerting) {
		compareDashboards(t, s.Prometheus, single[s.Flavor.Name])
	})

	promtest.Each(t, stacks, func(t *testing.T, s *promtest.Alerting) {
		page := s.AwaitPage(t, stall, 4*time.Minute)
		t.Logf("stall to page: %s", page.At.Sub(stall).Round(time.Second))
		expectOneAlertNotifiedOnce(t, s, rules.WorkflowOutboxBacklogStalled, 0, map[string]string{"database": "orders", "aggregate_type": "Order", "event_type": "OrderFulfillmentSubmitted", "severity": "critical"})
	})

	// The exporters lose the database: both replicas report it down.
	posts := map[string]int{}
	for _, s := range stacks {
		posts[s.Flavor.Name] = lastPost(s.Receiver)
	}
	if err := db.Set(faultproxy.Refuse); err != nil {
		t.Fatal(err)
	}
	lost := time.Now()
	promtest.Each(t, stacks, func(t *testing.T, s *promtest.Alerting) {
		var page *promtest.Notification
		for time.Since(lost) < 3*time.Minute && page == nil {
			time.Sleep(250 * time.Millisecond)
			for _, n := range s.Receiver.Notifications() {
				if n.Post > posts[s.Flavor.Name] && n.Receiver == "pager" && n.Status == "firing" && n.Labels["alertname"] == rules.WorkflowExporterSourceDown {
					page = &n
					break
				}
			}
		}
		if page == nil {
			t.Fatalf("no WorkflowExporterSourceDown page within 3m of losing the database: %+v", s.Receiver.Notifications())
		}
		t.Logf("database lost to page: %s", page.At.Sub(lost).Round(time.Second))
		time.Sleep(35 * time.Second) // the ticket route's group_wait: anything else had its chance
		expectOneAlertNotifiedOnce(t, s, rules.WorkflowExporterSourceDown, posts[s.Flavor.Name], map[string]string{"source": "database", "name": "orders", "database": "orders", "severity": "critical"})
	})
}

// expectOneAlertNotifiedOnce: Alertmanager holds exactly one alert named
// alertname, without the replicas' labels and with want's; after the
// webhook request numbered after, exactly one firing notification (the
// Watchdog's aside) reached the receiver, and it holds that one alert.
func expectOneAlertNotifiedOnce(t *testing.T, s *promtest.Alerting, alertname string, after int, want map[string]string) {
	t.Helper()
	var held []map[string]string
	for _, am := range alertmanagerAlerts(t, s.Alertmanager.URL) {
		if am.Labels["alertname"] == alertname {
			held = append(held, am.Labels)
		}
	}
	if len(held) != 1 {
		t.Errorf("Alertmanager holds %d %s alerts, want 1 for both replicas: %v", len(held), alertname, held)
	}
	for _, l := range held {
		for _, r := range rules.ReplicaLabels() {
			if l[r] != "" {
				t.Errorf("%s carries the replica label %s=%q: %v", alertname, r, l[r], l)
			}
		}
		for k, v := range want {
			if l[k] != v {
				t.Errorf("%s label %s = %q, want %q (%v)", alertname, k, l[k], v, l)
			}
		}
	}
	byPost := map[int][]promtest.Notification{}
	for _, n := range s.Receiver.Notifications() {
		if n.Post > after && n.Receiver != "watchdog" && n.PostStatus == "firing" {
			byPost[n.Post] = append(byPost[n.Post], n)
		}
	}
	if len(byPost) != 1 {
		t.Errorf("%d firing notifications, want 1: %v", len(byPost), byPost)
	}
	for _, ns := range byPost {
		if len(ns) != 1 || ns[0].Labels["alertname"] != alertname {
			var names []string
			for _, n := range ns {
				names = append(names, fmt.Sprint(n.Labels))
			}
			t.Errorf("the notification holds %d alerts, want the one %s: %s", len(ns), alertname, strings.Join(names, "; "))
		}
	}
}

// compareDashboards runs every panel query of every dashboard that sums
// over series on two Prometheus servers, one scraping both replicas and
// one scraping the first alone, and requires the same series with values
// within a third of each other (the replicas read the same table a second
// apart; a doubled sum is twice the value). The queries that take a max, a
// quantile or count alerts cannot double and are left out.
func compareDashboards(t *testing.T, two, one *promtest.Server) {
	t.Helper()
	// The check can fail: a plain sum over the replicas doubles.
	plain := `sum(workflow_outbox_events_pending{job="workflow-exporter"})`
	if p2, p1 := two.Query(t, plain), one.Query(t, plain); len(p2) != 1 || len(p1) != 1 || p1[0].Value <= 0 || p2[0].Value != 2*p1[0].Value {
		t.Fatalf("%s: %v over both replicas, %v over one: want twice the one's (and events pending)", plain, p2, p1)
	}
	qs, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, q := range qs {
		if !strings.Contains(q.Expr, "sum") || strings.Contains(q.Expr, "histogram_quantile") {
			continue
		}
		expr := dashboards.Substitute(q.Expr, "2m")
		r2, r1 := series(two.Query(t, expr)), series(one.Query(t, expr))
		if len(r1) == 0 && len(r2) == 0 {
			continue
		}
		compared++
		if len(r2) != len(r1) {
			t.Errorf("%s / %q: %d series over two replicas, %d over one: %v, %v", q.Dashboard, q.Panel, len(r2), len(r1), r2, r1)
			continue
		}
		for k, v1 := range r1 {
			v2, ok := r2[k]
			if !ok || math.Abs(v2-v1) > math.Max(math.Abs(v1), math.Abs(v2))/3 {
				t.Errorf("%s / %q: %s reads %v over two replicas, %v over one\n  %s", q.Dashboard, q.Panel, k, v2, v1, expr)
			}
		}
	}
	t.Logf("%d summing panel queries read the same over two replicas as over one", compared)
	if compared < 10 {
		t.Errorf("only %d summing panel queries returned data on the database-only stack", compared)
	}
}

// series keys a query's result by its labels.
func series(s []promtest.Sample) map[string]float64 {
	out := map[string]float64{}
	for _, x := range s {
		var ls []string
		for k, v := range x.Labels {
			ls = append(ls, k+"="+v)
		}
		sort.Strings(ls)
		out["{"+strings.Join(ls, ",")+"}"] = x.Value
	}
	return out
}
