// Package benchmemory measures the exporter's resident memory with what it
// remembers at its largest: 1M idempotency records that absorbed a
// duplicate (the duplicate memory) and 200k external tasks under lock
// tracking, against a named baseline, the same exporter binary and config
// over empty tables, in one run (docs/benchmarks.md, "Memory with what the
// exporter remembers"; the Helm chart's resources come from it). It runs
// only with `make bench-memory` (go test -bench); `make test` compiles it
// and runs nothing.
//
// Setup: one throwaway PostgreSQL (test/harness/pgtest.Start) with two
// databases: one for a Camunda 7.24 engine (test/harness/camundatest, which
// creates its schema and answers the exporter's probe, GET /version), one
// for the worker tables (the reference schema, the duplicate_count
// extension, the exporter's indexes). The baseline runs first, with the
// engine holding one external task and the worker tables empty. Then, by
// SQL: 200,000 external tasks cloned from the engine's one (20 topics, 50
// workers, locked for a day), and 1,000,000 idempotency records with
// duplicate_count 1, COMPLETED, updated over the last 30 days. The exporter
// binary (test/harness/exportertest) reads the engine in engine-database
// mode (max_listed_tasks 250000: every task is tracked) and the worker
// database; it is scraped until it remembers every task and every record,
// then -samples more times. Per scrape: the process's VmRSS from /proc; at
// the end its VmHWM (peak RSS), and the Go heap in use from /metrics. A
// third run repeats the loaded one with GOMEMLIMIT set (-gomemlimit).
package benchmemory

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/bench/benchkit"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var (
	tasksFlag   = flag.Int("tasks", 200000, "external tasks under lock tracking")
	recordsFlag = flag.Int("records", 1000000, "idempotency records with a duplicate_count")
	samplesFlag = flag.Int("samples", 10, "scrapes sampled once everything is remembered")
	memLimit    = flag.String("gomemlimit", "230MiB", "GOMEMLIMIT of the third run (the chart's: 90% of its memory limit)")
)

// run is one exporter run's measurements.
type run struct {
	name                     string
	rss                      []float64 // MiB per sampled scrape
	hwm, heap                float64   // MiB
	collections              int
	locks, dups, collectSecs float64
}

func BenchmarkExporterMemory(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	pg, err := pgtest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pg.Stop)
	admin := connect(b, ctx, pg.AdminURL)
	pgtest.Exec(b, admin, `CREATE DATABASE camunda`)
	pgtest.Exec(b, admin, `CREATE DATABASE orders`)
	camundaURL, ordersURL := pgtest.WithDatabase(pg.AdminURL, "camunda"), pgtest.WithDatabase(pg.AdminURL, "orders")
	orders := connect(b, ctx, ordersURL)
	pgtest.ExecRepoFiles(b, orders, nil, "deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql")

	eng, err := camundatest.Start(ctx, camundatest.Options{Flavor: camundatest.FlavorCamunda, PostgresURL: camundaURL, TimeZone: "UTC", StartTimeout: 5 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(eng.Stop)
	c := eng.Client()
	if _, err := c.Deploy(ctx, "bench_memory", map[string][]byte{"bench_memory.bpmn": engineclient.ExternalTaskProcess("bench_memory", "bench.topic-00")}); err != nil {
		b.Fatal(err)
	}
	if _, err := c.StartProcess(ctx, "bench_memory", "order-0", nil); err != nil {
		b.Fatal(err)
	}
	camunda := connect(b, ctx, camundaURL)

	cfg := fmt.Sprintf(`
camunda:
  - name: bench
    url: %s
    min_interval: 1ms
    timeout: 120s
    max_listed_tasks: %d
    database: {dsn: %q, time_zone: UTC, statement_timeout: 60s}
databases:
  - name: orders
    dsn: %q
    min_interval: 1ms
    timeout: 120s
    statement_timeout: 60s
`, eng.BaseURL, *tasksFlag+50000, camundaURL, ordersURL)
	bin := exportertest.Build(b)

	baseline := measure(b, ctx, bin, cfg, "baseline: empty tables", nil, func(r *run) bool { return r.collections >= 3 })

	start := time.Now()
	cloneTasks(b, ctx, camunda, *tasksFlag)
	pgtest.Exec(b, orders, fmt.Sprintf(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at, duplicate_count)
SELECT 'SCOPE_' || (i %% 20), 'key-' || i, 'order-' || i, 'task-' || i, 'COMPLETED', now() - (i %% 2592000) * interval '1 second', 1
FROM generate_series(1, %d) i`, *recordsFlag))
	pgtest.Exec(b, orders, `VACUUM ANALYZE workflow_idempotency_record`)
	pgtest.Exec(b, camunda, `VACUUM ANALYZE act_ru_ext_task`)
	built := time.Since(start)

	full := func(r *run) bool { return r.locks >= float64(*tasksFlag) && r.dups >= float64(*recordsFlag) }
	loaded := measure(b, ctx, bin, cfg, "loaded", nil, full)
	limited := measure(b, ctx, bin, cfg, "loaded, GOMEMLIMIT="+*memLimit, []string{"GOMEMLIMIT=" + *memLimit}, full)
	report(b, baseline, loaded, limited, built)
}

func connect(b *testing.B, ctx context.Context, url string) *pgx.Conn {
	b.Helper()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// cloneTasks copies the engine's one external task n times (new ids, 20
// topics, 50 workers, locked for a day): tasks the engine's tables hold as
// its own, as the exporter reads them.
func cloneTasks(b *testing.B, ctx context.Context, conn *pgx.Conn, n int) {
	b.Helper()
	rows, err := conn.Query(ctx, `SELECT column_name FROM information_schema.columns WHERE table_name = 'act_ru_ext_task' ORDER BY ordinal_position`)
	if err != nil {
		b.Fatal(err)
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatal(err)
	}
	override := map[string]string{
		"id_":            "'bench-' || i",
		"topic_name_":    "'bench.topic-' || lpad((i % 20)::text, 2, '0')",
		"worker_id_":     "'worker-' || (i % 50)",
		"lock_exp_time_": "(now() at time zone 'UTC') + interval '1 day'",
		"retries_":       "NULL",
	}
	exprs := make([]string, len(cols))
	for i, col := range cols {
		if e, ok := override[col]; ok {
			exprs[i] = e
		} else {
			exprs[i] = "t." + col
		}
	}
	pgtest.Exec(b, conn, fmt.Sprintf(`INSERT INTO act_ru_ext_task (%s) SELECT %s FROM (SELECT * FROM act_ru_ext_task LIMIT 1) t, generate_series(1, %d) i`,
		strings.Join(cols, ", "), strings.Join(exprs, ", "), n))
}

// measure runs the exporter binary and scrapes it until done says
// everything is remembered, then *samplesFlag more times.
func measure(b *testing.B, ctx context.Context, bin, cfg, name string, env []string, done func(*run) bool) *run {
	b.Helper()
	x := exportertest.Start(b, exportertest.Options{Binary: bin, Config: cfg, Env: env})
	defer func() { _ = x.Stop() }()
	r := &run{name: name}
	client := &http.Client{Timeout: 5 * time.Minute}
	scrape := func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, x.URL+"/metrics", nil)
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "240")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("scrape: %d %v", resp.StatusCode, err)
		}
		r.collections++
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
		if err != nil {
			b.Fatal(err)
		}
		value := func(name string, labels map[string]string) float64 {
			for _, m := range mfs[name].GetMetric() {
				ok := true
				for _, l := range m.GetLabel() {
					if want, has := labels[l.GetName()]; has && want != l.GetValue() {
						ok = false
					}
				}
				if ok {
					if m.GetGauge() != nil {
						return m.GetGauge().GetValue()
					}
					return m.GetUntyped().GetValue()
				}
			}
			return 0
		}
		r.locks = value("workflow_exporter_remembered_entries", map[string]string{"source": "camunda", "kind": "locks"})
		r.dups = value("workflow_exporter_remembered_entries", map[string]string{"source": "database", "kind": "duplicate_counts"})
		r.heap = value("go_memstats_heap_inuse_bytes", nil) / (1 << 20)
		r.collectSecs = value("workflow_exporter_collect_duration_seconds", map[string]string{"source": "camunda", "collector": "camunda"})
		for _, mf := range []string{"workflow_exporter_collector_up"} {
			for _, m := range mfs[mf].GetMetric() {
				if m.GetGauge().GetValue() != 1 {
					b.Fatalf("%s: a collector is down: %v\n%s", name, m, testkit.Tail(x.Log.String(), 20))
				}
			}
		}
	}
	for i := 0; !done(r); i++ {
		if i > 200 {
			b.Fatalf("%s: after %d scrapes the exporter remembers %v locks and %v duplicate counts\n%s", name, r.collections, r.locks, r.dups, testkit.Tail(x.Log.String(), 20))
		}
		scrape()
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < *samplesFlag; i++ {
		time.Sleep(time.Second)
		scrape()
		rss, hwm, err := benchkit.ResidentMemory(x.PID())
		if err != nil {
			b.Fatal(err)
		}
		r.rss = append(r.rss, rss)
		r.hwm = hwm
	}
	progress("%s: %d scrapes, RSS %.1f MiB (median), peak %.1f MiB", name, r.collections, benchkit.Median(r.rss), r.hwm)
	return r
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench-memory: "+format+"\n", args...)
}

func report(b *testing.B, base, loaded, limited *run, built time.Duration) {
	b.Helper()
	cpu := "unknown"
	if s, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(s), "\n") {
			if strings.HasPrefix(line, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
				break
			}
		}
	}
	fmt.Printf("\n### Memory with what the exporter remembers (make bench-memory)\n\n")
	fmt.Printf("%s, %d CPUs, %s; data built by SQL in %s.\n\n", cpu, runtime.NumCPU(), runtime.Version(), built.Round(time.Second))
	fmt.Println("| run | remembered locks | remembered duplicate counts | RSS median MiB | RSS peak (VmHWM) MiB | Go heap in use MiB | ratio of RSS to the baseline | engine collection s |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range []*run{base, loaded, limited} {
		fmt.Printf("| %s | %.0f | %.0f | %.1f | %.1f | %.1f | %.2fx | %.2f |\n", r.name, r.locks, r.dups, benchkit.Median(r.rss), r.hwm, r.heap, benchkit.Median(r.rss)/benchkit.Median(base.rss), r.collectSecs)
	}
	fmt.Println()
}
