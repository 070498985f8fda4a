// Package e2e runs the whole alerting path with real components: PostgreSQL,
// the exporter binary, Prometheus evaluating the shipped rules, and
// Alertmanager with deploy/alertmanager.yml delivering to a webhook receiver
// in the test: Debian's, and where a test says so, the current releases
// beside them (test/harness/promtest's flavors).
package e2e

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestMain runs up to four of the package's tests at a time, whatever the
// cores (unless -parallel says otherwise): they mostly wait for alert
// windows and lapsing locks, and one after another they were the longest
// package of make test.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", "4"); err != nil {
			panic(err)
		}
	}
	testkit.Main(m, camundatest.StopShared, pgtest.StopShared)
}

// outboxWorkload writes like a worker and a publisher: an event every
// 500 ms (unless paused), published within a second while the publisher
// runs.
type outboxWorkload struct {
	conn    *pgx.Conn
	mu      sync.Mutex
	publish bool
	paused  bool
}

func (w *outboxWorkload) setPublishing(on bool) { w.mu.Lock(); w.publish = on; w.mu.Unlock() }

// setPaused stops (or resumes) writing events: the table stays as it is.
func (w *outboxWorkload) setPaused(on bool) { w.mu.Lock(); w.paused = on; w.mu.Unlock() }

func (w *outboxWorkload) run(ctx context.Context, t *testing.T) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		w.mu.Lock()
		paused := w.paused
		w.mu.Unlock()
		if paused {
			continue
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

// runOutboxWorkloads runs the workloads until the stop it returns, which
// cancels them and waits until they have ended (a workload still writing
// after its test ended would report into a finished test).
func runOutboxWorkloads(t *testing.T, ws ...*outboxWorkload) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() { defer wg.Done(); w.run(ctx, t) }()
	}
	return func() { cancel(); wg.Wait() }
}

// newDatabase is a fresh database with the reference schema and the
// exporter's indexes (without the duplicate_count extension).
func newDatabase(t *testing.T) (*pgx.Conn, string) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, dsn)
	pgtest.ExecRepoFiles(t, conn, func(s string) bool { return strings.Contains(s, "duplicate_count") },
		"deploy/sql/001_reference_schema.sql", "deploy/sql/003_exporter_indexes.sql")
	return conn, dsn
}

// TestOutboxStallPagesWithRealComponents: two databases, both publishing;
// then the publisher of "orders" stops. The critical page for orders must
// reach the pager webhook within a bound, and the draining "billing" outbox
// must produce no notification at all: on the alerting stack of each
// flavor, both watching the one exporter.
func TestOutboxStallPagesWithRealComponents(t *testing.T) {
	t.Parallel() // no engine: beside every other test
	promtest.SkipIfMissing(t, promtest.PrometheusBinary(), promtest.AlertmanagerBinary())
	ordersConn, ordersDSN := newDatabase(t)
	billingConn, billingDSN := newDatabase(t)

	exporterAddr := exportertest.Start(t, exportertest.Options{Config: `
databases:
  - name: orders
    dsn_env: E2E_ORDERS_DSN
    min_interval: 1s
  - name: billing
    dsn_env: E2E_BILLING_DSN
    min_interval: 1s
`, Env: []string{"E2E_ORDERS_DSN=" + ordersDSN, "E2E_BILLING_DSN=" + billingDSN}}).Addr

	// The shipped rules with the outbox window at its 2m minimum and no
	// for: delay, so the test takes minutes, not the production 7.5.
	stacks := promtest.StartAlertingEach(t, promtest.AlertingOptions{
		Rules:  promtest.GenerateRules(t, "outbox: {stalled_window: 2m, stalled_for: 0s}\n"),
		Target: exporterAddr,
	})

	orders := &outboxWorkload{conn: ordersConn, publish: true}
	billing := &outboxWorkload{conn: billingConn, publish: true}
	defer runOutboxWorkloads(t, orders, billing)()

	// Both healthy for a while, so Prometheus has seen publishing.
	time.Sleep(20 * time.Second)
	orders.setPublishing(false)
	stall := time.Now()

	promtest.Each(t, stacks, func(t *testing.T, a *promtest.Alerting) {
		page := a.AwaitPage(t, stall, 4*time.Minute)
		promtest.ExpectOnlyOutboxStallPage(t, a, page, stall, map[string]string{
			"alertname": "WorkflowOutboxBacklogStalled", "severity": "critical", "database": "orders",
			"aggregate_type": "Order", "event_type": "OrderFulfillmentSubmitted"})
	})
}
