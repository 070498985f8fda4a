// Package benchreplicas measures what a second replica of the exporter
// costs the sources: the statements PostgreSQL runs for the exporter's role
// (pg_stat_statements) and the requests a Camunda engine answers (counted
// at a proxy in front of it), with one exporter and then with two on the
// same sources, scraped at the same interval. It runs only with
// `make bench-replicas` (go test -bench); `make test` compiles it.
//
// Setup: one throwaway PostgreSQL (pg_stat_statements preloaded) with the
// reference schema, the exporter's indexes and role (deploy/sql) and rows in
// every table; one Camunda 7.24 engine (test/harness/camundatest) with
// external tasks on one topic, behind a counting proxy; the exporter binary
// (REST mode, the four tables and the idempotency table's Camunda join),
// min_interval -interval, scraped every -interval plus a second as
// Prometheus would (a scrape exactly every min_interval finds the snapshot
// a hair younger than min_interval about every other time, and collects
// every second scrape then: the counts would measure that coin, not the
// replicas). Phase one: exporter A alone for -phase. Phase two: A and a
// second exporter B, each scraped the same way, for -phase. Each phase
// starts counting after three scrapes of every exporter (B's first
// collections read what it has not seen yet), half a scrape interval after
// a scrape, so that no scrape falls on the window's edges. Reported: the statements,
// requests and collections of each phase and their ratios (two over one).
package benchreplicas

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var (
	phase    = flag.Duration("phase", 2*time.Minute, "how long each phase (one exporter, then two) runs")
	interval = flag.Duration("interval", 5*time.Second, "the exporters' min_interval and the scrape interval")
)

func TestMain(m *testing.M) { testkit.Main(m, camundatest.StopShared, pgtest.StopShared) }

func BenchmarkReplicaLoad(b *testing.B) {
	testkit.SkipIfShort(b, "PostgreSQL, a Camunda engine and the exporter")
	ctx := context.Background()
	srv := pgtest.NewServer(b, "shared_preload_libraries=pg_stat_statements")
	admin := pgtest.Connect(b, srv.AdminURL)
	pgtest.Exec(b, admin, "CREATE DATABASE bench_replicas")
	dbURL := pgtest.WithDatabase(srv.AdminURL, "bench_replicas")
	db := pgtest.Connect(b, dbURL)
	pgtest.Exec(b, db, "CREATE EXTENSION pg_stat_statements")
	pgtest.ExecRepoFiles(b, db, nil, "deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql", "tools/demo/sample.sql")
	role, secret := "wfx_bench_replicas", "Bench-Replicas-Secret"
	roleSQL, err := os.ReadFile(testkit.Path(b, "deploy/sql/004_exporter_role.sql"))
	if err != nil {
		b.Fatal(err)
	}
	pgtest.Exec(b, db, strings.NewReplacer("workflow_exporter", role, "change-me", secret).Replace(string(roleSQL)))
	u, err := url.Parse(dbURL)
	if err != nil {
		b.Fatal(err)
	}
	u.User = url.UserPassword(role, secret)
	// Every database collection runs its probe once (as TestLoad counts).
	probes := func() int64 {
		var n int64
		if err := db.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements s
			JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1 AND s.query IN ('SELECT 1', 'SELECT $1')`, role).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	statements := func() int64 {
		var n int64
		if err := db.QueryRow(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements s
			JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = $1`, role).Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}

	e := camundatest.Shared(b, camundatest.FlavorCamunda)
	c := e.Client()
	key := camundatest.UniqueName("replicas")
	topic := key + ".charge"
	if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil {
		b.Fatal(err)
	}
	for i := range 20 {
		if _, err := c.StartProcess(ctx, key, fmt.Sprintf("order-%d", i), nil); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := engineclient.NewWorker(c, "worker-1").FetchAndLock(ctx, topic, time.Hour, 5); err != nil {
		b.Fatal(err)
	}
	proxy := faultproxy.Start(b, e.BaseURL, faultproxy.Options{})
	requests := func() int {
		n := 0
		for _, v := range proxy.Counts() {
			n += v
		}
		return n
	}

	cfg := fmt.Sprintf(`
camunda:
  - {name: main, url: %q, min_interval: %s, topics: [%s]}
databases:
  - name: orders
    dsn_env: WFX_BENCH_DSN
    min_interval: %s
    tables:
      idempotency: {camunda: {engine: main}}
      processed_jobs: {}
      inbox: {}
      outbox: {}
`, proxy.URL, *interval, topic, *interval)
	start := func() *exportertest.Exporter {
		return exportertest.Start(b, exportertest.Options{Config: cfg, Env: []string{"WFX_BENCH_DSN=" + u.String()}})
	}
	// scrape scrapes each exporter every interval until stop, as a
	// Prometheus with that scrape interval (and a 10s timeout) would.
	scrape := func(stop <-chan struct{}, xs ...*exportertest.Exporter) *sync.WaitGroup {
		var wg sync.WaitGroup
		for _, x := range xs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tick := time.NewTicker(*interval + time.Second)
				defer tick.Stop()
				for {
					req, _ := http.NewRequest(http.MethodGet, x.URL+"/metrics", nil)
					req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
					select {
					case <-stop:
						return
					case <-tick.C:
					}
				}
			}()
		}
		return &wg
	}
	type load struct {
		statements, probes int64
		requests, versions int
	}
	measure := func(name string, xs ...*exportertest.Exporter) load {
		for _, x := range xs {
			if body := x.Get(b, "/metrics"); !strings.Contains(body, `workflow_exporter_source_up{name="orders",source="database"} 1`) ||
				!strings.Contains(body, `camunda_up{engine="main"} 1`) {
				b.Fatalf("%s: sources not up:\n%s", name, body)
			}
		}
		stop := make(chan struct{})
		wg := scrape(stop, xs...)
		// Three scrapes of each, then count from half a scrape interval
		// on: the window (a whole number of scrape intervals) holds the
		// same number of scrapes of each exporter, none on its edges.
		time.Sleep(3*(*interval+time.Second) + (*interval+time.Second)/2)
		s0, p0 := statements(), probes()
		requests()
		time.Sleep(*phase)
		s1, p1, counts := statements(), probes(), proxy.Counts()
		close(stop)
		wg.Wait()
		l := load{statements: s1 - s0, probes: p1 - p0, versions: counts["/version"]}
		for _, v := range counts {
			l.requests += v
		}
		b.Logf("%s: %d statements on PostgreSQL (%d database collections), %d requests to the engine (%d engine collections) in %s (min_interval %s, scraped every %s)",
			name, l.statements, l.probes, l.requests, l.versions, *phase, *interval, *interval+time.Second)
		return l
	}

	a := start()
	one := measure("one exporter", a)
	x := start()
	two := measure("two exporters", a, x)
	ratio := func(a, b float64) float64 { return a / b }
	sr, rr := ratio(float64(two.statements), float64(one.statements)), ratio(float64(two.requests), float64(one.requests))
	b.ReportMetric(sr, "pg-statements-ratio")
	b.ReportMetric(rr, "engine-requests-ratio")
	b.Logf("two exporters over one: PostgreSQL statements %.2fx (%d / %d; collections %d / %d), engine requests %.2fx (%d / %d; collections %d / %d)",
		sr, two.statements, one.statements, two.probes, one.probes, rr, two.requests, one.requests, two.versions, one.versions)
	b.Logf("per collection: %.1f and %.1f statements, %.1f and %.1f requests (one exporter, two)",
		float64(one.statements)/float64(one.probes), float64(two.statements)/float64(two.probes),
		float64(one.requests)/float64(one.versions), float64(two.requests)/float64(two.versions))
	// At most double: a collection of either exporter costs what one
	// exporter's does (within 5%), and each exporter collects as often as
	// one alone (the window's edges may catch one collection more or less
	// of each).
	perStatements := (float64(two.statements) / float64(two.probes)) / (float64(one.statements) / float64(one.probes))
	perRequests := (float64(two.requests) / float64(two.versions)) / (float64(one.requests) / float64(one.versions))
	if perStatements > 1.05 || perRequests > 1.05 {
		b.Errorf("a collection costs more with two exporters: statements %.2fx, requests %.2fx per collection", perStatements, perRequests)
	}
	if d := two.probes - 2*one.probes; d > 2 || d < -2 {
		b.Errorf("two exporters made %d database collections, one made %d: want twice as many, give or take one each", two.probes, one.probes)
	}
	if d := two.versions - 2*one.versions; d > 2 || d < -2 {
		b.Errorf("two exporters made %d engine collections, one made %d: want twice as many, give or take one each", two.versions, one.versions)
	}
}
