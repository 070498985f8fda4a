package e2e

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/dashboards"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
)

// TestNativeAndClassicHistogramsOnCurrentPrometheus: the current Prometheus
// (3.x) scrapes the exporter with native histograms on and the classic
// ones kept (scrape_native_histograms, always_scrape_classic_histograms).
// Publish delays of 2 s to 100 s: the dashboards' classic queries of the
// delay answer, a native histogram_quantile answers, the native count and
// sum equal the classic ones, and the native median lies within one
// classic bucket of the classic estimate (docs/metrics.md).
func TestNativeAndClassicHistogramsOnCurrentPrometheus(t *testing.T) {
	t.Parallel() // no engine: beside every other test
	flavor := promtest.Current(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	conn, dsn := newDatabase(t)
	exporterAddr := exportertest.Start(t, exportertest.Options{Config: `
databases:
  - name: orders
    dsn_env: E2E_ORDERS_DSN
    min_interval: 1s
    tables:
      outbox: {}
`, Env: []string{"E2E_ORDERS_DSN=" + dsn}}).Addr
	waitForBaselines(t, exporterAddr, "outbox")

	config := promtest.PrometheusConfig(exporterAddr, "") +
		"    scrape_native_histograms: true\n    always_scrape_classic_histograms: true\n"
	prom := flavor.StartPrometheus(t, config, promtest.Files{"rules.yml": "groups: []\n"})

	// The events come after Prometheus's first scrapes, so the dashboards'
	// rate() over the histogram sees them arrive.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if up := prom.Query(t, `up{job="workflow-exporter"} == 1`); len(up) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Prometheus did not scrape the exporter within a minute")
		}
	}
	time.Sleep(2 * time.Second)
	// Twenty events published after the baseline and the first scrapes, their delays spread
	// from 2 s to 100 s.
	for i := range 20 {
		delay := 2 + float64(i)*98/19
		pgtest.Exec(t, conn, fmt.Sprintf(`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
			VALUES (gen_random_uuid(), 'Order', 'o-%[1]d', 'OrderFulfillmentSubmitted', 'o-%[1]d', '{}', 'PUBLISHED', now() - interval '%[2]f seconds', now())`, i, delay))
	}

	const metric = "workflow_outbox_publish_delay_seconds"
	one := func(expr string) (float64, bool) {
		s := prom.Query(t, expr)
		if len(s) != 1 || math.IsNaN(s[0].Value) {
			return 0, false
		}
		return s[0].Value, true
	}
	var classicCount, nativeCount, classicSum, nativeSum, classicMedian, nativeMedian float64
	deadline := time.Now().Add(90 * time.Second)
	for {
		var ok [6]bool
		classicCount, ok[0] = one(`sum(` + metric + `_count{job="workflow-exporter"})`)
		nativeCount, ok[1] = one(`histogram_count(sum(` + metric + `{job="workflow-exporter"}))`)
		classicSum, ok[2] = one(`sum(` + metric + `_sum{job="workflow-exporter"})`)
		nativeSum, ok[3] = one(`histogram_sum(sum(` + metric + `{job="workflow-exporter"}))`)
		classicMedian, ok[4] = one(`histogram_quantile(0.5, sum by (le) (` + metric + `_bucket{job="workflow-exporter"}))`)
		nativeMedian, ok[5] = one(`histogram_quantile(0.5, sum(` + metric + `{job="workflow-exporter"}))`)
		if ok == [6]bool{true, true, true, true, true, true} && classicCount == 20 && nativeCount == 20 {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("no answer from both: classic count %v, native count %v, classic median %v, native median %v (answered %v)",
				classicCount, nativeCount, classicMedian, nativeMedian, ok)
		}
		time.Sleep(time.Second)
	}
	if math.Abs(classicSum-nativeSum) > 1e-6*classicSum {
		t.Errorf("sum: classic %v, native %v", classicSum, nativeSum)
	}
	// The classic buckets of the delay (the default publish_delay_buckets);
	// the native median must lie in the classic estimate's bucket or next
	// to it.
	bounds := []float64{0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600}
	bucket := func(v float64) int {
		for i, b := range bounds {
			if v <= b {
				return i
			}
		}
		return len(bounds)
	}
	if d := bucket(nativeMedian) - bucket(classicMedian); d < -1 || d > 1 {
		t.Errorf("native median %v is more than one classic bucket from the classic estimate %v", nativeMedian, classicMedian)
	}
	t.Logf("count %v, sum %.1f; median: classic %.1f s, native %.1f s (the delays' median is %.1f s)", classicCount, classicSum, classicMedian, nativeMedian, 2+9.5*98/19)

	// The dashboards' classic queries of the delay answer too.
	qs, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	var delayQueries []dashboards.Query
	for _, q := range qs {
		if strings.Contains(q.Expr, metric) {
			delayQueries = append(delayQueries, q)
		}
	}
	if len(delayQueries) == 0 {
		t.Fatal("no dashboard panel reads the publish delay")
	}
	results, err := dashboards.LiveCheck(ctx, nil, prom.URL, "1m", delayQueries)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range dashboards.Failed(results) {
		t.Errorf("no data with native histograms on: %s", r)
	}
}
