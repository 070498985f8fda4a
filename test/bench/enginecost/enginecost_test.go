// Package enginecost measures what the exporter costs a Camunda engine under
// live traffic: a real Camunda 7.24 engine on PostgreSQL, saturated by
// external-task workers that fetch and complete as fast as the engine lets
// them, and its completions per second without the exporter and with it
// (REST mode at min_interval 30s and 5s, engine-database mode at 30s), in
// alternating runs. It also reads, from pg_stat_statements, the database
// time the exporter's reading costs: in engine-database mode the time of
// the exporter's own role; over REST the time of the statements only the
// exporter's requests make the engine run (those no run without the
// exporter executes).
//
// A benchmark, not a test: `make bench-engine-cost` runs it once and it
// prints its table (docs/benchmarks.md). It needs Java, Maven and
// PostgreSQL, and takes about half an hour with the defaults.
package enginecost

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var (
	runs    = flag.Int("load-runs", 5, "rounds; each round measures every configuration once, in an order that rotates")
	window  = flag.Duration("load-window", time.Minute, "how long one measurement counts completions")
	warmup  = flag.Duration("load-warmup", 15*time.Second, "how long a configuration runs before its window (the exporter's first collections)")
	settle  = flag.Duration("load-settle", 3*time.Minute, "how long the workers run before the first round (the engine's JIT and caches warm up)")
	workers = flag.Int("load-workers", 8, "concurrent workers fetching and completing")
)

const (
	topic     = "bench.load"
	instances = 200  // external tasks per process start
	lowWater  = 2000 // the feeder starts processes while fewer tasks wait
)

// setup is one configuration under test: the exporter as it runs (nil: no
// exporter), with the interval its scrapes come at.
type setup struct {
	name   string
	config func(engineURL, engineDSN string) string // "" for no exporter
	scrape time.Duration
}

func setups() []setup {
	rest := func(interval string) func(string, string) string {
		return func(url, _ string) string {
			return fmt.Sprintf("camunda:\n  - name: main\n    url: %s\n    min_interval: %s\n", url, interval)
		}
	}
	return []setup{
		{name: "no exporter"},
		{name: "REST, min_interval 30s", config: rest("30s"), scrape: 15 * time.Second},
		{name: "REST, min_interval 5s", config: rest("5s"), scrape: 5 * time.Second},
		{name: "engine database, min_interval 30s", scrape: 15 * time.Second, config: func(url, dsn string) string {
			return fmt.Sprintf("camunda:\n  - name: main\n    url: %s\n    min_interval: 30s\n    database:\n      dsn: %s\n      time_zone: UTC\n", url, dsn)
		}},
	}
}

// result is one measured window.
type result struct {
	perSecond float64
	// dbMillis is the exporter's database time in the window, by the
	// rule of the package comment; -1 without an exporter.
	dbMillis float64
}

// BenchmarkEngineCostUnderLoad is the whole run; it prints its table to
// stdout. Run it once:
// go test -run '^$' -bench . -benchtime 1x -timeout 90m ./test/bench/enginecost
func BenchmarkEngineCostUnderLoad(b *testing.B) {
	testkit.SkipIfShort(b, "PostgreSQL and a Camunda engine")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := start(b, ctx)

	var completed atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Add(1)
	go func() { defer wg.Done(); feed(ctx, env.client, env.key) }()
	for i := range *workers {
		wg.Add(1)
		go func() { defer wg.Done(); work(ctx, env.client, fmt.Sprintf("worker-%d", i), &completed) }()
	}

	// Measured without it, the first round's windows ran at half the
	// later rounds' pace, whichever configuration they measured.
	progress("settling for %s", *settle)
	sleep(ctx, *settle)
	ss := setups()
	results := make([][]result, len(ss))
	var baselineStatements map[int64]bool
	for round := range *runs {
		for k := range ss {
			i := (k + round) % len(ss)
			r := measure(b, ctx, env, ss[i], &completed, baselineStatements)
			if ss[i].config == nil {
				baselineStatements = env.statementsSeen(b, ctx, baselineStatements)
			}
			results[i] = append(results[i], r)
			progress("round %d/%d %-36s %8.1f completions/s", round+1, *runs, ss[i].name, r.perSecond)
		}
	}
	report(ss, results)
}

// env is the running engine and what the measurements need of it.
type env struct {
	client          *engineclient.Client
	engineURL       string
	engineDSN       string // the exporter role's DSN to the engine's database
	admin           *pgx.Conn
	key             string
	engineVersion   string
	postgresVersion string
}

func start(b *testing.B, ctx context.Context) *env {
	srv := pgtest.NewServer(b, "shared_preload_libraries=pg_stat_statements", "pg_stat_statements.track=all")
	admin, err := pgx.Connect(ctx, srv.AdminURL)
	if err != nil {
		b.Fatal(err)
	}
	mustExec(b, ctx, admin, "CREATE DATABASE camunda")
	admin.Close(ctx)
	dbURL := pgtest.WithDatabase(srv.AdminURL, "camunda")
	eng, err := camundatest.Start(ctx, camundatest.Options{Flavor: camundatest.FlavorCamunda, PostgresURL: dbURL, TimeZone: "UTC",
		JVMArgs: []string{"-Xmx1g"}, StartTimeout: 5 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(eng.Stop)
	e := &env{client: eng.Client(), engineURL: eng.BaseURL, engineVersion: eng.Version}
	e.client.HTTP = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: *workers + 4}}
	if e.admin, err = pgx.Connect(ctx, dbURL); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.admin.Close(context.Background()) })
	mustExec(b, ctx, e.admin, "CREATE EXTENSION pg_stat_statements")
	// The history index the docs ask REST users to create: without it every
	// collection sorts the whole external task log.
	index, err := os.ReadFile(testkit.Path(b, "deploy/sql/camunda/001_history_timestamp_index.sql"))
	if err != nil {
		b.Fatal(err)
	}
	// One statement (one line each) at a time: CREATE INDEX CONCURRENTLY
	// refuses a transaction block, which several statements in one Exec
	// make.
	for _, line := range strings.Split(string(index), "\n") {
		if strings.HasPrefix(line, "CREATE INDEX") {
			mustExec(b, ctx, e.admin, line)
		}
	}
	role, err := os.ReadFile(testkit.Path(b, "deploy/sql/camunda/002_exporter_role.sql"))
	if err != nil {
		b.Fatal(err)
	}
	mustExec(b, ctx, e.admin, strings.Replace(string(role), "'change-me'", "'bench'", 1))
	e.engineDSN = strings.Replace(dbURL, "://"+userInfo(dbURL)+"@", "://workflow_exporter_engine:bench@", 1)
	if err := e.admin.QueryRow(ctx, "SELECT version()").Scan(&e.postgresVersion); err != nil {
		b.Fatal(err)
	}
	e.key = camundatest.UniqueName("load")
	if _, err := e.client.Deploy(ctx, e.key, map[string][]byte{e.key + ".bpmn": engineclient.Chain(e.key, engineclient.Task{Topic: topic, Instances: instances})}); err != nil {
		b.Fatal(err)
	}
	return e
}

// userInfo is the user:password part of a URL.
func userInfo(u string) string {
	s := strings.SplitN(strings.SplitN(u, "://", 2)[1], "@", 2)
	if len(s) < 2 {
		return ""
	}
	return s[0]
}

// feed keeps at least lowWater tasks waiting, so the workers never wait for
// work: the engine, not the workload, sets the pace.
func feed(ctx context.Context, c *engineclient.Client, key string) {
	for ctx.Err() == nil {
		n, err := c.Count(ctx, "/external-task/count", url.Values{"notLocked": {"true"}})
		if err == nil && n < lowWater {
			_, err = c.StartProcess(ctx, key, "", nil)
		}
		if err != nil || n >= lowWater {
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// work fetches and completes tasks as fast as the engine answers.
func work(ctx context.Context, c *engineclient.Client, id string, completed *atomic.Int64) {
	w := engineclient.NewWorker(c, id)
	for ctx.Err() == nil {
		tasks, err := w.FetchAndLock(ctx, topic, 5*time.Minute, 10)
		if err != nil || len(tasks) == 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		for _, t := range tasks {
			if w.Complete(ctx, t.ID, nil) == nil {
				completed.Add(1)
			}
		}
	}
}

// measure runs one configuration: the exporter started (when it has one)
// and scraped at its interval, a warm-up, then the window.
func measure(b *testing.B, ctx context.Context, e *env, s setup, completed *atomic.Int64, baseline map[int64]bool) result {
	stop := func() {}
	if s.config != nil {
		cfg, err := config.Parse([]byte(s.config(e.engineURL, e.engineDSN)))
		if err != nil {
			b.Fatal(err)
		}
		m := sources.New(sources.Options{})
		if _, err := m.Apply(ctx, cfg); err != nil {
			b.Fatal(err)
		}
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				refresh, rcancel := context.WithTimeout(sctx, s.scrape)
				m.Set().Refresh(refresh)
				rcancel()
				select {
				case <-sctx.Done():
					return
				case <-time.After(s.scrape):
				}
			}
		}()
		stop = func() {
			cancel()
			<-done
			m.Close(context.Background())
		}
	}
	defer stop()
	sleep(ctx, *warmup)
	mustExec(b, ctx, e.admin, "SELECT pg_stat_statements_reset()")
	before, start := completed.Load(), time.Now()
	sleep(ctx, *window)
	n, elapsed := completed.Load()-before, time.Since(start)
	r := result{perSecond: float64(n) / elapsed.Seconds(), dbMillis: -1}
	switch {
	case s.config == nil:
	case strings.Contains(s.name, "database"):
		r.dbMillis = e.dbTime(b, ctx, "rolname = 'workflow_exporter_engine'")
	default:
		r.dbMillis = e.dbTimeOutside(b, ctx, baseline)
	}
	return r
}

// dbTime is the execution time of the statements matching cond since the
// last reset, in milliseconds.
func (e *env) dbTime(b *testing.B, ctx context.Context, cond string) float64 {
	var ms float64
	if err := e.admin.QueryRow(ctx, `SELECT coalesce(sum(total_exec_time), 0) FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE `+cond).Scan(&ms); err != nil {
		b.Fatal(err)
	}
	return ms
}

// dbTimeOutside is the execution time of the statements no run without the
// exporter executed: those the exporter's requests make the engine run.
func (e *env) dbTimeOutside(b *testing.B, ctx context.Context, baseline map[int64]bool) float64 {
	rows, err := e.admin.Query(ctx, `SELECT queryid, total_exec_time FROM pg_stat_statements`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var ms float64
	for rows.Next() {
		var id int64
		var t float64
		if err := rows.Scan(&id, &t); err != nil {
			b.Fatal(err)
		}
		if !baseline[id] {
			ms += t
		}
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return ms
}

// statementsSeen adds the statements executed since the last reset to seen.
func (e *env) statementsSeen(b *testing.B, ctx context.Context, seen map[int64]bool) map[int64]bool {
	if seen == nil {
		seen = map[int64]bool{}
	}
	rows, err := e.admin.Query(ctx, `SELECT queryid FROM pg_stat_statements`)
	if err != nil {
		b.Fatal(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		b.Fatal(err)
	}
	for _, id := range ids {
		seen[id] = true
	}
	return seen
}

// report prints one row per configuration: the mean and spread of its
// completions per second, its ratio to the mean without the exporter, and
// the exporter's database time per minute.
func report(ss []setup, results [][]result) {
	base := meanOf(results[0], func(r result) float64 { return r.perSecond })
	fmt.Printf("\n%d rounds of %s windows, %d workers, %d tasks per process start, after %s of settling and a %s warm-up each\n\n", *runs, *window, *workers, instances, *settle, *warmup)
	fmt.Println("| configuration | completions/s, mean | spread (min-max) | stddev | vs no exporter | exporter's DB time, ms per minute |")
	fmt.Println("|---|---|---|---|---|---|")
	for i, s := range ss {
		rs := results[i]
		ps := make([]float64, len(rs))
		for j, r := range rs {
			ps[j] = r.perSecond
		}
		sort.Float64s(ps)
		m := meanOf(rs, func(r result) float64 { return r.perSecond })
		db := "-"
		if s.config != nil {
			db = fmt.Sprintf("%.1f", meanOf(rs, func(r result) float64 { return r.dbMillis })*float64(time.Minute)/float64(*window))
		}
		fmt.Printf("| %s | %.1f | %.1f-%.1f | %.1f | %.3fx | %s |\n", s.name, m, ps[0], ps[len(ps)-1], stddev(ps, m), m/base, db)
	}
}

func meanOf(rs []result, f func(result) float64) float64 {
	var sum float64
	for _, r := range rs {
		sum += f(r)
	}
	return sum / float64(len(rs))
}

func stddev(xs []float64, mean float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func mustExec(b *testing.B, ctx context.Context, conn *pgx.Conn, sql string) {
	b.Helper()
	if _, err := conn.Exec(ctx, sql); err != nil {
		b.Fatalf("%s: %v", sql, err)
	}
}

// progress goes to stderr so stdout carries only the report.
func progress(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
