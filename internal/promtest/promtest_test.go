package promtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// webhook collects Alertmanager notifications by path (/pager, /ticket).
type webhook struct {
	mu  sync.Mutex
	got map[string][]notifiedAlert
}

type notifiedAlert struct {
	Receiver string
	Status   string
	Labels   map[string]string
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	var msg struct {
		Receiver string `json:"receiver"`
		Alerts   []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, a := range msg.Alerts {
		w.got[r.URL.Path] = append(w.got[r.URL.Path], notifiedAlert{msg.Receiver, a.Status, a.Labels})
	}
}

// names returns "alertname/database" of the firing alerts received on path.
func (w *webhook) names(path string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, a := range w.got[path] {
		k := a.Labels["alertname"] + "/" + a.Labels["database"]
		if a.Status == "firing" && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func (w *webhook) paths() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for p := range w.got {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

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
	SkipIfMissing(t, PrometheusBinary(), AlertmanagerBinary())
	if testing.Short() {
		t.Skip("starts Prometheus and Alertmanager; about 40s")
	}
	hook := &webhook{got: map[string][]notifiedAlert{}}
	srv := httptest.NewServer(hook)
	defer srv.Close()

	amConfig, err := os.ReadFile(filepath.Join("..", "..", "deploy", "alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := RewriteWebhookURLs(string(amConfig), "http://127.0.0.1:5001", srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	am := StartAlertmanager(t, cfg)

	prom := StartPrometheus(t, fmt.Sprintf(`global:
  evaluation_interval: 1s
rule_files: [rules.yml]
alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
`, am.Addr), Files{"rules.yml": rules}, "--rules.alert.resend-delay=1s")

	// The warning's group waits the root group_wait (30s); the page 10s.
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if len(hook.names("/ticket")) > 0 && len(hook.names("/pager")) > 0 {
			break
		}
		if prom.Exited() || am.Exited() {
			t.Fatalf("a server exited early\nprometheus:\n%s\nalertmanager:\n%s", tail(prom.Log(), 20), tail(am.Log(), 20))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Give any wrongly routed or uninhibited notification the same chance to arrive.
	time.Sleep(5 * time.Second)

	if got, want := hook.names("/pager"), []string{"PromtestPage/billing"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("pager got %v, want %v (orders must be inhibited by its source outage)", got, want)
	}
	if got, want := hook.names("/ticket"), []string{"WorkflowExporterSourceDown/orders"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ticket got %v, want %v", got, want)
	}
	if got := hook.paths(); strings.Join(got, ",") != "/pager,/ticket" {
		t.Errorf("notifications on paths %v, want only /pager and /ticket", got)
	}
	for _, p := range hook.paths() {
		for _, n := range hook.names(p) {
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
	if _, err := RewriteWebhookURLs(in, "http://elsewhere", "x"); err != ErrNotFound {
		t.Fatalf("want ErrNotFound, got %v", err)
	}
}
