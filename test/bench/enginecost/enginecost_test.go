// Package enginecost measures what the exporter costs a Camunda engine under
// live traffic: a real Camunda 7.24 engine on PostgreSQL, saturated by
// external-task workers that fetch and complete as fast as the engine lets
// them, measured in pairs of windows: one without the exporter, one with it
// (REST mode at min_interval 30s and 5s, engine-database mode at 30s),
// next to each other, the order alternating from pair to pair and the
// configurations rotating, so that the engine's drift over minutes and the
// load of other work on the machine hit both sides of a pair alike. Per
// window: completions per second, and the CPU time of the engine's JVM and
// of the PostgreSQL server (all its processes) per completion, which the
// exporter's own CPU (it runs in this process, on the same cores) does not
// enter. Per pair, the ratio with / without of each; per configuration the
// median ratio, its quartiles, extremes and a distribution-free 95%
// confidence interval. It also reads, from pg_stat_statements, the database
// time the exporter's reading costs: in engine-database mode the time of
// the exporter's own role; over REST the time of the statements only the
// exporter's requests make the engine run (those no window without the
// exporter executes).
//
// A benchmark, not a test: `make bench-engine-cost` runs it once and it
// prints its tables (docs/benchmarks.md). It needs Java, Maven and
// PostgreSQL, and takes about 80 minutes with the defaults.
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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/poll"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/proccpu"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

var (
	pairs   = flag.Int("load-pairs", 10, "pairs per configuration: a window without the exporter next to one with it, their order alternating from pair to pair")
	window  = flag.Duration("load-window", time.Minute, "how long one measurement counts completions")
	settle  = flag.Duration("load-settle", 3*time.Minute, "how long the workers run before the first window (the engine's JIT and caches warm up)")
	workers = flag.Int("load-workers", 8, "concurrent workers fetching and completing")
	only    = flag.String("load-setups", "", "measure only the configurations whose name contains this text (e.g. 'engine database'); empty: all")
)

const (
	topic     = "bench.load"
	instances = 200  // external tasks per process start
	lowWater  = 2000 // the feeder starts processes while fewer tasks wait
)

// setup is one configuration under test: the exporter as it runs, and the
// interval its scrapes come at (Prometheus's, which min_interval bounds).
type setup struct {
	name        string
	config      func(engineURL, engineDSN string) string
	scrape      time.Duration
	minInterval time.Duration
	// database: the exporter reads the engine's database (its role's
	// statements are its database time).
	database bool
}

// warmup is how long an exporter scrapes before a window with it: its first
// collection after an idle window reads the history of the whole gap, more
// than a collection in steady state, and falls before the window.
func (s setup) warmup() time.Duration { return max(s.minInterval, s.scrape) + 5*time.Second }

func setups() []setup {
	rest := func(interval string) func(string, string) string {
		return func(url, _ string) string {
			return fmt.Sprintf("camunda:\n  - name: main\n    url: %s\n    min_interval: %s\n", url, interval)
		}
	}
	return []setup{
		{name: "REST, min_interval 30s", config: rest("30s"), scrape: 15 * time.Second, minInterval: 30 * time.Second},
		{name: "REST, min_interval 5s", config: rest("5s"), scrape: 5 * time.Second, minInterval: 5 * time.Second},
		{name: "engine database, min_interval 30s", scrape: 15 * time.Second, minInterval: 30 * time.Second, database: true,
			config: func(url, dsn string) string {
				return fmt.Sprintf("camunda:\n  - name: main\n    url: %s\n    min_interval: 30s\n    database:\n      dsn: %s\n      time_zone: UTC\n", url, dsn)
			}},
	}
}

// chosen are the setups whose name contains text (all for "").
func chosen(ss []setup, text string) []setup {
	var out []setup
	for _, s := range ss {
		if strings.Contains(s.name, text) {
			out = append(out, s)
		}
	}
	return out
}

// result is one measured window.
type result struct {
	completions int64
	elapsed     time.Duration
	// engine and db are the CPU time the engine's JVM and the PostgreSQL
	// server (all its processes) used in the window; self this process's
	// (the workers, the feeder, and in a window with it the exporter).
	engine, db, self time.Duration
	// dbMillis is the exporter's database time in the window, by the
	// rule of the package comment; -1 without an exporter.
	dbMillis float64
	// statements are, over REST, the execution time of every statement in
	// the window by queryid, from which attribute takes dbMillis once the
	// run is over.
	statements map[int64]float64
	// load is the 1-minute load average at the window's end.
	load float64
	// failed is the exporter's failed collections in the window.
	failed int64
}

func (r result) perSecond() float64 { return float64(r.completions) / r.elapsed.Seconds() }

// cpuPerCompletion is the engine's and its database's CPU time per
// completion.
func (r result) cpuPerCompletion() float64 {
	return float64(r.engine+r.db) / float64(time.Millisecond) / float64(r.completions)
}

// pair is a window without the exporter and one with it, next to each other.
type pair struct{ without, with result }

// BenchmarkEngineCostUnderLoad is the whole run; it prints its table to
// stdout. Run it once:
// go test -run '^$' -bench . -benchtime 1x -timeout 150m ./test/bench/enginecost
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

	// Measured without it, the first windows ran at half the later ones'
	// pace, whichever configuration they measured.
	progress("settling for %s", *settle)
	sleep(ctx, *settle)
	loadBefore := proccpu.LoadAverage()
	started := time.Now()
	ss := chosen(setups(), *only)
	if len(ss) == 0 {
		b.Fatalf("-load-setups %q names no configuration", *only)
	}
	// One exporter per configuration for the whole run: it collects only
	// while scraped, so between its windows it costs nothing.
	exporters := make([]*exporter, len(ss))
	for i, s := range ss {
		exporters[i] = newExporter(b, ctx, env, s)
		defer exporters[i].close()
	}
	results := make([][]pair, len(ss))
	var baselineStatements map[int64]bool
	for k := range *pairs {
		for j := range ss {
			i := (j + k) % len(ss)
			var p pair
			// The order within a pair alternates, so a drift of the
			// engine's pace over minutes favours neither side.
			for _, with := range []bool{k%2 == 1, k%2 == 0} {
				if !with {
					p.without = measure(b, ctx, env, nil, &completed)
					baselineStatements = env.statementsSeen(b, ctx, baselineStatements)
					continue
				}
				p.with = measure(b, ctx, env, exporters[i], &completed)
			}
			results[i] = append(results[i], p)
			progress("pair %2d/%d %-36s without %6.1f/s, with %6.1f/s (%.3fx); engine+DB CPU per completion %.2f and %.2f ms (%.3fx); load %.1f and %.1f",
				k+1, *pairs, ss[i].name, p.without.perSecond(), p.with.perSecond(), p.with.perSecond()/p.without.perSecond(),
				p.without.cpuPerCompletion(), p.with.cpuPerCompletion(), p.with.cpuPerCompletion()/p.without.cpuPerCompletion(),
				p.without.load, p.with.load)
		}
	}
	attribute(results, baselineStatements)
	report(env, ss, results, loadBefore, proccpu.LoadAverage(), time.Since(started))
}

// env is the running engine and what the measurements need of it.
type env struct {
	// jvm and postmaster are the engine's and its database server's
	// processes, for their CPU time.
	jvm, postmaster int
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
	e := &env{client: eng.Client(), engineURL: eng.BaseURL, engineVersion: eng.Version, jvm: eng.PID}
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
	var backend int
	if err := e.admin.QueryRow(ctx, "SELECT version(), pg_backend_pid()").Scan(&e.postgresVersion, &backend); err != nil {
		b.Fatal(err)
	}
	if e.postmaster, _, _, err = proccpu.Stat(backend); err != nil {
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

// exporter is one configuration's exporter, built once, scraped only for
// its windows.
type exporter struct {
	s setup
	m *sources.Manager
	// failed counts the scrapes whose collection failed (a source down or
	// a collector's error): a window with failures did not measure a
	// working exporter.
	failed atomic.Int64
}

func newExporter(b *testing.B, ctx context.Context, e *env, s setup) *exporter {
	cfg, err := config.Parse([]byte(s.config(e.engineURL, e.engineDSN)))
	if err != nil {
		b.Fatal(err)
	}
	m := sources.New(sources.Options{})
	if _, err := m.Apply(ctx, cfg); err != nil {
		b.Fatal(err)
	}
	return &exporter{s: s, m: m}
}

func (x *exporter) close() { x.m.Close(context.Background()) }

// scrape scrapes the exporter at its interval until the returned stop.
func (x *exporter) scrape(ctx context.Context) (stop func()) {
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			refresh, rcancel := context.WithTimeout(sctx, x.s.scrape)
			// The set has one source; its snapshot says whether the
			// collection worked (Set.Refresh would hide that).
			for _, src := range x.m.Set().Sources() {
				if snap := src.Refresh(refresh); sctx.Err() == nil && !collected(snap) {
					x.failed.Add(1)
				}
			}
			rcancel()
			select {
			case <-sctx.Done():
				return
			case <-time.After(x.s.scrape):
			}
		}
	}()
	return func() { cancel(); <-done }
}

// collected reports whether a snapshot holds a working collection: the
// source up and no collector failed.
func collected(snap *poll.Snapshot) bool {
	if snap == nil || !snap.Up {
		return false
	}
	for _, r := range snap.Results {
		if r.Err != nil {
			return false
		}
	}
	return true
}

// measure runs one window: without the exporter (x nil), or with it
// scraped, after its warm-up.
func measure(b *testing.B, ctx context.Context, e *env, x *exporter, completed *atomic.Int64) result {
	var failed0 int64
	if x != nil {
		stop := x.scrape(ctx)
		defer stop()
		sleep(ctx, x.s.warmup())
		failed0 = x.failed.Load()
	}
	mustExec(b, ctx, e.admin, "SELECT pg_stat_statements_reset()")
	c0, e0, d0, s0, start := completed.Load(), cpuOf(b, e.jvm, proccpu.Process), cpuOf(b, e.postmaster, proccpu.Tree), proccpu.Self(), time.Now()
	sleep(ctx, *window)
	r := result{completions: completed.Load() - c0, elapsed: time.Since(start),
		engine: cpuOf(b, e.jvm, proccpu.Process) - e0, db: cpuOf(b, e.postmaster, proccpu.Tree) - d0, self: proccpu.Self() - s0, dbMillis: -1}
	if f := strings.Fields(proccpu.LoadAverage()); len(f) > 0 {
		r.load, _ = strconv.ParseFloat(f[0], 64)
	}
	switch {
	case x == nil:
	case x.s.database:
		r.dbMillis = e.dbTime(b, ctx, "rolname = 'workflow_exporter_engine'")
	default:
		r.statements = e.statementTimes(b, ctx)
	}
	if x != nil {
		if r.failed = x.failed.Load() - failed0; r.failed > 0 {
			b.Errorf("%s: %d collections failed in a window with the exporter: the window does not measure a working exporter", x.s.name, r.failed)
		}
	}
	return r
}

func cpuOf(b *testing.B, pid int, f func(int) (time.Duration, error)) time.Duration {
	d, err := f(pid)
	if err != nil {
		b.Fatal(err)
	}
	return d
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

// statementTimes is the execution time of every statement since the last
// reset, by queryid.
func (e *env) statementTimes(b *testing.B, ctx context.Context) map[int64]float64 {
	rows, err := e.admin.Query(ctx, `SELECT queryid, total_exec_time FROM pg_stat_statements`)
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]float64{}
	for rows.Next() {
		var id int64
		var t float64
		if err := rows.Scan(&id, &t); err != nil {
			b.Fatal(err)
		}
		out[id] += t
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return out
}

// attribute sets, over REST, each window's exporter database time: the
// statements no window without the exporter executed, those the
// exporter's requests make the engine run. The set of the workload's
// statements grows with every window without the exporter (the engine
// runs some only now and then), so every window is attributed against the
// whole run's set, not against the set so far: attributed as the run went,
// the first four pairs of a run at REST 5 s read 5.2 to 6.6 s and the
// last six 1.05 to 1.43 s (docs/benchmarks.md).
func attribute(results [][]pair, workload map[int64]bool) {
	for i := range results {
		for k := range results[i] {
			w := &results[i][k].with
			if w.statements == nil {
				continue
			}
			w.dbMillis = 0
			for id, ms := range w.statements {
				if !workload[id] {
					w.dbMillis += ms
				}
			}
		}
	}
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

// report prints, per configuration, the ratio of the windows with the
// exporter to those without, pair by pair: completions per second, and the
// engine's and its database's CPU time per completion; each as the median
// with its quartiles, its extremes and a distribution-free 95% confidence
// interval of the median (order statistics); and the exporter's database
// time per minute.
func report(e *env, ss []setup, results [][]pair, loadBefore, loadAfter string, took time.Duration) {
	fmt.Printf("\n%d pairs per configuration of %s windows (without the exporter, with it; the order alternating), %d workers, %d tasks per process start, after %s of settling; a window with the exporter follows %s to %s of its scrapes\n",
		*pairs, *window, *workers, instances, *settle, setups()[1].warmup(), setups()[0].warmup())
	fmt.Printf("engine: Camunda %s (-Xmx1g); database: %s\n", e.engineVersion, e.postgresVersion)
	fmt.Printf("load average (1, 5, 15 min) before the first window: %s; after the last: %s; %s in all\n\n", loadBefore, loadAfter, took.Round(time.Second))
	fmt.Println("| configuration | pairs | completions/s with / without: median | quartiles | min-max | 95% CI of the median | engine+DB CPU per completion, with / without: median | quartiles | 95% CI of the median | exporter's DB time, ms per minute | 1-min load, median (min-max) |")
	fmt.Println("|---|---:|---:|---|---|---|---:|---|---|---:|---|")
	for i, s := range ss {
		var tput, cpu, db, load []float64
		for _, p := range results[i] {
			tput = append(tput, p.with.perSecond()/p.without.perSecond())
			cpu = append(cpu, p.with.cpuPerCompletion()/p.without.cpuPerCompletion())
			db = append(db, p.with.dbMillis*float64(time.Minute)/float64(p.with.elapsed))
			load = append(load, p.without.load, p.with.load)
		}
		ts, cs, ls := summarize(tput), summarize(cpu), summarize(load)
		fmt.Printf("| %s | %d | %.4f | %.4f-%.4f | %.4f-%.4f | %s | %.4f | %.4f-%.4f | %s | %.1f | %.1f (%.1f-%.1f) |\n", s.name, len(tput),
			ts.median, ts.q1, ts.q3, ts.min, ts.max, ts.ci(), cs.median, cs.q1, cs.q3, cs.ci(), summarize(db).median, ls.median, ls.min, ls.max)
	}
	fmt.Println()
	fmt.Println("Every pair (completions/s without, with; engine+DB CPU ms per completion without, with; exporter's DB ms in the window):")
	fmt.Println()
	fmt.Println("| configuration | pair | without /s | with /s | ratio | CPU/completion without | with | ratio | exporter DB ms | failed collections | load without, with |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
	for i, s := range ss {
		for k, p := range results[i] {
			fmt.Printf("| %s | %d | %.1f | %.1f | %.4f | %.3f | %.3f | %.4f | %.0f | %d | %.1f, %.1f |\n", s.name, k+1, p.without.perSecond(), p.with.perSecond(),
				p.with.perSecond()/p.without.perSecond(), p.without.cpuPerCompletion(), p.with.cpuPerCompletion(),
				p.with.cpuPerCompletion()/p.without.cpuPerCompletion(), p.with.dbMillis, p.with.failed, p.without.load, p.with.load)
		}
	}
	fmt.Println()
}

// summary is a sample's median, quartiles and extremes, and the ranks of
// the distribution-free confidence interval of its median.
type summary struct {
	sorted                   []float64
	median, q1, q3, min, max float64
}

func summarize(xs []float64) summary {
	s := summary{sorted: append([]float64(nil), xs...)}
	sort.Float64s(s.sorted)
	if len(s.sorted) == 0 {
		return s
	}
	s.median, s.q1, s.q3 = quantile(s.sorted, 0.5), quantile(s.sorted, 0.25), quantile(s.sorted, 0.75)
	s.min, s.max = s.sorted[0], s.sorted[len(s.sorted)-1]
	return s
}

// quantile interpolates linearly between the order statistics.
func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	i := int(pos)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (pos-float64(i))*(sorted[i+1]-sorted[i])
}

// ci is the distribution-free 95% confidence interval of the median: the
// k-th smallest and k-th largest of the n values, with k the largest rank
// whose interval still covers the median with probability at least 95%
// (each value lies below the median with probability 1/2, so the number
// below it is Binomial(n, 1/2)): for 10 values the 2nd and the 9th
// (97.9%). It needs 6 values at least.
func (s summary) ci() string {
	n := len(s.sorted)
	k, cover := 0, 0.0
	for j := 1; 2*j <= n; j++ {
		c := 1 - 2*binomialCDF(n, j-1)
		if c < 0.95 {
			break
		}
		k, cover = j, c
	}
	if k == 0 {
		return "n/a (too few pairs)"
	}
	return fmt.Sprintf("%.4f-%.4f (%.1f%%)", s.sorted[k-1], s.sorted[n-k], 100*cover)
}

// binomialCDF is P(X <= k) for X ~ Binomial(n, 1/2).
func binomialCDF(n, k int) float64 {
	sum, c := 0.0, 1.0
	for i := 0; i <= k; i++ {
		if i > 0 {
			c = c * float64(n-i+1) / float64(i)
		}
		sum += c
	}
	return sum / math.Pow(2, float64(n))
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
