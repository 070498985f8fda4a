// Package e2e runs the whole alerting path with real components: PostgreSQL,
// the exporter binary, Debian's Prometheus evaluating the shipped rules, and
// Debian's Alertmanager with deploy/alertmanager.yml delivering to a webhook
// receiver in the test.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/internal/camundatest"
	"github.com/workflow-exporter/workflow-exporter/internal/pgtest"
	"github.com/workflow-exporter/workflow-exporter/internal/promtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	camundatest.StopShared()
	pgtest.StopShared()
	os.Exit(code)
}

func mustExec(t *testing.T, conn *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

const root = "../.."

// notification is one alert of an Alertmanager webhook payload.
type notification struct {
	receiver string
	at       time.Time
	status   string
	labels   map[string]string
}

type receiver struct {
	mu  sync.Mutex
	got []notification
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var payload struct {
		Alerts []struct {
			Status string            `json:"status"`
			Labels map[string]string `json:"labels"`
		} `json:"alerts"`
	}
	b, _ := io.ReadAll(req.Body)
	if err := json.Unmarshal(b, &payload); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, a := range payload.Alerts {
		r.got = append(r.got, notification{receiver: strings.TrimPrefix(req.URL.Path, "/"), at: time.Now(), status: a.Status, labels: a.Labels})
	}
}

func (r *receiver) snapshot() []notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]notification(nil), r.got...)
}

// outboxWorkload writes like a worker and a publisher: an event every
// 500 ms, published within a second while the publisher runs.
type outboxWorkload struct {
	conn    *pgx.Conn
	mu      sync.Mutex
	publish bool
}

func (w *outboxWorkload) setPublishing(on bool) { w.mu.Lock(); w.publish = on; w.mu.Unlock() }

func (w *outboxWorkload) run(ctx context.Context, t *testing.T) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := w.conn.Exec(ctx, `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status)
			VALUES (gen_random_uuid(), 'Order', $1, 'OrderFulfillmentSubmitted', $1, '{}', 'PENDING')`, fmt.Sprintf("order-%d", n)); err != nil && ctx.Err() == nil {
			t.Errorf("insert: %v", err)
			return
		}
		w.mu.Lock()
		on := w.publish
		w.mu.Unlock()
		if on {
			if _, err := w.conn.Exec(ctx, `UPDATE event_outbox SET status = 'PUBLISHED', published_at = now() WHERE published_at IS NULL`); err != nil && ctx.Err() == nil {
				t.Errorf("publish: %v", err)
				return
			}
		}
	}
}

func newDatabase(t *testing.T) (*pgx.Conn, string) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	for _, f := range []string{"001_reference_schema.sql", "003_exporter_indexes.sql"} {
		if err := pgtest.ExecFile(context.Background(), conn, filepath.Join(root, "deploy", "sql", f), func(s string) bool {
			return strings.Contains(s, "duplicate_count")
		}); err != nil {
			t.Fatal(err)
		}
	}
	return conn, dsn
}

// startExporter builds and runs the exporter binary with the given config.
func startExporter(t *testing.T, config string, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "workflow-exporter")
	build := exec.Command("go", "build", "-o", bin, "./cmd/exporter")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cfgFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", promtest.FreePort(t))
	cmd := exec.Command(bin, "--config.file", cfgFile, "--web.listen-address", addr)
	cmd.Env = append(os.Environ(), env...)
	logFile, err := os.Create(filepath.Join(dir, "exporter.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("exporter log:\n%s", b)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + addr + "/-/ready"); err == nil {
			resp.Body.Close()
			return addr
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("exporter not ready on %s", addr)
	return ""
}

// TestOutboxStallPagesWithRealComponents: two databases, both publishing;
// then the publisher of "orders" stops. The critical page for orders must
// reach the pager webhook within a bound, and the draining "billing" outbox
// must produce no notification at all.
func TestOutboxStallPagesWithRealComponents(t *testing.T) {
	promtest.SkipIfMissing(t, promtest.PrometheusBinary(), promtest.AlertmanagerBinary())
	if testing.Short() {
		t.Skip("waits for a 2-minute outbox stall window")
	}
	ordersConn, ordersDSN := newDatabase(t)
	billingConn, billingDSN := newDatabase(t)

	hook := &receiver{}
	hookSrv := httptest.NewServer(hook)
	defer hookSrv.Close()
	amConfig, err := os.ReadFile(filepath.Join(root, "deploy", "alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := promtest.RewriteWebhookURLs(string(amConfig), "http://127.0.0.1:5001", hookSrv.URL)
	if err != nil {
		t.Fatal(err)
	}
	am := promtest.StartAlertmanager(t, cfg)

	exporterAddr := startExporter(t, `
databases:
  - name: orders
    dsn_env: E2E_ORDERS_DSN
    min_interval: 1s
  - name: billing
    dsn_env: E2E_BILLING_DSN
    min_interval: 1s
`, "E2E_ORDERS_DSN="+ordersDSN, "E2E_BILLING_DSN="+billingDSN)

	// The shipped rules with the outbox window at its 2m minimum and no
	// for: delay, so the test takes minutes, not the production 7.5.
	rules := promtest.GenerateRules(t, "outbox: {stalled_window: 2m, stalled_for: 0s}\n")
	promtest.StartPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 900ms
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
`, am.Addr, exporterAddr), promtest.Files{"rules.yml": rules})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	orders := &outboxWorkload{conn: ordersConn, publish: true}
	billing := &outboxWorkload{conn: billingConn, publish: true}
	var wg sync.WaitGroup
	for _, w := range []*outboxWorkload{orders, billing} {
		wg.Add(1)
		go func() { defer wg.Done(); w.run(ctx, t) }()
	}
	defer wg.Wait()
	defer cancel()

	// Both healthy for a while, so Prometheus has seen publishing.
	time.Sleep(20 * time.Second)
	orders.setPublishing(false)
	stall := time.Now()

	const bound = 4 * time.Minute
	var page *notification
	for time.Since(stall) < bound && page == nil {
		time.Sleep(500 * time.Millisecond)
		for _, n := range hook.snapshot() {
			if n.receiver == "pager" && n.status == "firing" {
				n := n
				page = &n
				break
			}
		}
	}
	if page == nil {
		t.Fatalf("no page within %s of the stall; notifications: %+v", bound, hook.snapshot())
	}
	took := page.at.Sub(stall)
	t.Logf("stall to page: %s (stalled_window 2m, for 0s, scrape and evaluation 1s, exporter min_interval 1s, pager group_wait 10s)", took.Round(time.Second))
	if took < 2*time.Minute {
		t.Errorf("paged %s after the stall, before the 2m window could have passed: the rule fires on something else", took)
	}
	want := map[string]string{"alertname": "WorkflowOutboxBacklogStalled", "severity": "critical", "database": "orders", "aggregate_type": "Order", "event_type": "OrderFulfillmentSubmitted"}
	for k, v := range want {
		if page.labels[k] != v {
			t.Errorf("page label %s = %q, want %q (labels %v)", k, page.labels[k], v, page.labels)
		}
	}
	// Give Alertmanager time to send anything else it has (ticket group_wait
	// is 30s): the healthy, draining billing outbox must produce nothing,
	// and nothing but the orders stall may notify.
	time.Sleep(35 * time.Second)
	for _, n := range hook.snapshot() {
		if n.labels["database"] == "billing" {
			t.Errorf("the draining billing outbox notified: %s %v", n.receiver, n.labels)
		}
		if n.labels["alertname"] != "WorkflowOutboxBacklogStalled" {
			t.Errorf("unexpected notification: %s %v", n.receiver, n.labels)
		}
	}
}
