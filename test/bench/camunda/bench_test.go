package benchcamunda

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/sim/faultproxy"
	"github.com/workflow-exporter/workflow-exporter/test/bench/benchkit"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// env is the running engine and server.
type env struct {
	pg       *pgtest.Server
	dbURL    string
	engine   *camundatest.Engine
	direct   *engineclient.Client // straight to the engine: workload and checks, not counted
	proxy    *faultproxy.Proxy    // counts the requests
	conn     *pgx.Conn            // the engine's database, for checks and the physical limit
	meter    cpuMeter
	jvmFlags []string
	pgInfo   []string // version and settings
}

// size is one measured state of the engine.
type size struct {
	name      string
	topics    int
	open      int64
	history   int64
	historyMB float64
	incidents int64
	built     time.Duration // building this size's workload
	idle      cpuSample     // engine and server CPU per second, idle
	load      [2]string     // load average before and after measuring
	warmups   int           // untimed rounds
	lastJIT   float64       // share of the engine's CPU its JIT took in the last round
	results   map[string]*measurement
	order     []string
	states    map[string]float64 // REST mode's camunda_external_tasks summed per state
	notes     []string
}

// BenchmarkCamundaCollection is the whole run; it prints its tables to
// stdout. Run it once:
// go test -run '^$' -bench . -benchtime 1x -timeout 90m ./test/bench/camunda
func BenchmarkCamundaCollection(b *testing.B) {
	if *smallFlag <= 0 || *topicsFlag <= *smallFlag || *samplesFlag <= 0 || *warmupFlag < 0 {
		b.Fatal("want 0 < -small-topics < -topics, -samples > 0, -warmup >= 0")
	}
	runStart := time.Now()
	ctx := context.Background()
	e := setUp(b, ctx)
	progress("engine %s up in %s (JVM %s)", e.engine.Version, e.engine.StartupTime.Round(100*time.Millisecond), strings.Join(e.jvmFlags, " "))
	loadBefore := loadAverage()

	var sizes []*size
	wanted, last, err := sizesWanted(*sizesFlag)
	if err != nil {
		b.Fatal(err)
	}
	// measure measures the engine as it stands as a size (name, topics,
	// built in built, notes on how) and keeps it for the report; a size
	// -sizes leaves out is built (the later ones grow from it) but not
	// measured.
	measure := func(name string, topics int, built time.Duration, notes ...string) {
		if !wanted[name] {
			return
		}
		s := &size{name: name, topics: topics, built: built, notes: notes}
		measureSize(b, ctx, e, s)
		sizes = append(sizes, s)
	}
	// done says every wanted size is measured: the rest is not built.
	done := func(name string) bool { return name == last }
	var ipc []ipcRow
	finish := func() {
		loadAfter := loadAverage()
		report(e, sizes, ipc, loadBefore, loadAfter, time.Since(runStart))
	}
	// A: the small engine.
	t0 := time.Now()
	if err := addTopics(ctx, e.direct, 0, *smallFlag); err != nil {
		b.Fatalf("building size A: %v\n%s", err, e.engine.LogTail(4000))
	}
	built := time.Since(t0)
	progress("size A built in %s", built.Round(time.Second))
	pgtest.Exec(b, e.conn, `VACUUM (ANALYZE)`)
	measure("A", *smallFlag, built)
	if done("A") {
		finish()
		return
	}

	// B: the same engine with more topics.
	t0 = time.Now()
	if err := addTopics(ctx, e.direct, *smallFlag, *topicsFlag); err != nil {
		b.Fatalf("building size B: %v\n%s", err, e.engine.LogTail(4000))
	}
	built = time.Since(t0)
	progress("size B built in %s", built.Round(time.Second))
	pgtest.Exec(b, e.conn, `VACUUM (ANALYZE)`)
	measure("B", *topicsFlag, built)
	if wanted["B"] {
		ipc = measureItemsPerCount(b, ctx, e)
	}
	if done("B") {
		finish()
		return
	}

	// C: B with the history grown by SQL.
	t0 = time.Now()
	inserted, cutoff, err := growHistory(ctx, e.conn, *historyFlag)
	if err != nil {
		b.Fatalf("growing the history: %v", err)
	}
	built = time.Since(t0)
	progress("size C: %d history rows inserted and vacuumed in %s", inserted, built.Round(time.Second))
	measure("C", *topicsFlag, built, fmt.Sprintf("%d history rows inserted by SQL, then VACUUM (ANALYZE)", inserted))
	if done("C") {
		finish()
		return
	}

	// C+index: the recommended index on the history's timestamp.
	t0 = time.Now()
	pgtest.Exec(b, e.conn, historyIndex)
	pgtest.Exec(b, e.conn, `ANALYZE act_hi_ext_task_log`)
	built = time.Since(t0)
	progress("size C+index: index built in %s", built.Round(100*time.Millisecond))
	measure("C+index", *topicsFlag, built, historyIndex)
	if done("C+index") {
		finish()
		return
	}

	// B again: the synthetic history and the index removed, a control for
	// drift (machine load, the JVM's state) between the first and the last
	// measurements of the same engine.
	t0 = time.Now()
	pgtest.Exec(b, e.conn, `DROP INDEX bench_hi_ext_task_log_timestamp`)
	deleted, err := shrinkHistory(ctx, e.conn, cutoff)
	if err != nil {
		b.Fatalf("shrinking the history: %v", err)
	}
	built = time.Since(t0)
	progress("size B again: %d rows deleted and table rewritten in %s", deleted, built.Round(time.Second))
	measure("B again", *topicsFlag, built, fmt.Sprintf("index dropped, %d synthetic history rows deleted, then VACUUM (FULL, ANALYZE)", deleted))
	finish()
}

// sizeOrder is the order the sizes are built and measured in.
var sizeOrder = []string{"A", "B", "C", "C+index", "B again"}

// sizesWanted parses -sizes: the sizes to measure, and the last of them in
// sizeOrder.
func sizesWanted(s string) (map[string]bool, string, error) {
	wanted := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		name := strings.TrimSpace(f)
		if !slices.Contains(sizeOrder, name) {
			return nil, "", fmt.Errorf("-sizes %q: %q is none of %v", s, name, sizeOrder)
		}
		wanted[name] = true
	}
	last := ""
	for _, name := range sizeOrder {
		if wanted[name] {
			last = name
		}
	}
	return wanted, last, nil
}

// setUp starts the server, the engine on its database and the proxy; all
// are stopped when the benchmark ends, fails, or the process gets a signal.
func setUp(b *testing.B, ctx context.Context) *env {
	e := &env{jvmFlags: strings.Fields(*jvmFlag)}
	pg, err := pgtest.StartWith(profileSettings())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(onCleanup(pg.Stop))
	e.pg = pg
	admin, err := pgx.Connect(ctx, pg.AdminURL)
	if err != nil {
		b.Fatal(err)
	}
	pgtest.Exec(b, admin, `CREATE DATABASE camunda`)
	admin.Close(ctx)
	e.dbURL = pgtest.WithDatabase(pg.AdminURL, "camunda")
	if *profileFlag != "" {
		camunda, err := pgx.Connect(ctx, e.dbURL)
		if err != nil {
			b.Fatal(err)
		}
		pgtest.Exec(b, camunda, `CREATE EXTENSION pg_stat_statements`)
		camunda.Close(ctx)
	}

	startCtx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	eng, err := camundatest.Start(startCtx, camundatest.Options{Flavor: camundatest.FlavorCamunda,
		PostgresURL: e.dbURL, TimeZone: "UTC", JVMArgs: e.jvmFlags, StartTimeout: 5 * time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(onCleanup(eng.Stop))
	e.engine = eng
	e.direct = eng.Client()
	e.direct.HTTP = longClient()

	e.proxy, err = faultproxy.New(eng.BaseURL, faultproxy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(onCleanup(e.proxy.Close))

	e.conn, err = pgx.Connect(ctx, e.dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.conn.Close(context.Background()) })
	pm, err := postmasterPID(ctx, e.conn)
	if err != nil {
		b.Fatal(err)
	}
	e.meter = cpuMeter{jvm: eng.PID, postmaster: pm}
	var version, settings string
	if err := e.conn.QueryRow(ctx, `SELECT version(),
	format('shared_buffers %s, work_mem %s, max_parallel_workers_per_gather %s, jit %s, random_page_cost %s, fsync %s, synchronous_commit %s',
		current_setting('shared_buffers'), current_setting('work_mem'), current_setting('max_parallel_workers_per_gather'),
		current_setting('jit'), current_setting('random_page_cost'), current_setting('fsync'), current_setting('synchronous_commit'))`).Scan(&version, &settings); err != nil {
		b.Fatal(err)
	}
	e.pgInfo = []string{version, settings}
	return e
}

// jitSettled is the share of the engine's CPU in a warm-up round below
// which its JIT compiler counts as settled.
const jitSettled = 0.05

// measureSize runs every contender in warm-up rounds, then -samples timed
// rounds, round-robin in an order that rotates from round to round, and
// checks their counts.
func measureSize(b *testing.B, ctx context.Context, e *env, sz *size) {
	truth, err := sqlCounts(ctx, e.conn)
	if err != nil {
		b.Fatal(err)
	}
	if len(truth) != sz.topics {
		b.Fatalf("size %s: the engine holds tasks of %d topics, want %d", sz.name, len(truth), sz.topics)
	}
	for _, g := range truth {
		sz.open += g.total
	}
	if err := e.conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM act_hi_ext_task_log),
	pg_total_relation_size('act_hi_ext_task_log') / 1048576.0, (SELECT count(*) FROM act_ru_incident)`).Scan(&sz.history, &sz.historyMB, &sz.incidents); err != nil {
		b.Fatal(err)
	}
	// Idle consumption, to judge the per-collection figures against.
	s0, err := e.meter.sample()
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	s1, err := e.meter.sample()
	if err != nil {
		b.Fatal(err)
	}
	sz.idle = cpuSample{jvm: (s1.jvm - s0.jvm) / 5, db: (s1.db - s0.db) / 5}

	// The exporters talk to the engine directly and count their requests
	// themselves (requestCounter); the list-everything baseline goes
	// through the counting proxy.
	rest, err := newExporter(restMode, exporterConfig(e.engine.BaseURL, ""), false)
	if err != nil {
		b.Fatal(err)
	}
	db, err := newExporter(databaseMode, exporterConfig(e.engine.BaseURL, e.dbURL), false)
	if err != nil {
		b.Fatal(err)
	}
	dbStatus, err := newExporter(databaseStatus, exporterConfig(e.engine.BaseURL, e.dbURL), true)
	if err != nil {
		b.Fatal(err)
	}
	listClient := &engineclient.Client{BaseURL: e.proxy.URL, HTTP: longClient()}
	contenders := []*contender{rest, db, dbStatus, newListEverything(listClient), newPhysical(e.conn), newFairFloor(e.conn)}
	defer func() {
		for _, c := range contenders {
			c.close()
		}
	}()
	sz.results = map[string]*measurement{}
	for _, c := range contenders {
		sz.order = append(sz.order, c.name)
		sz.results[c.name] = &measurement{}
	}
	start := time.Now()
	sz.load[0] = loadAverage()
	// Warm-up lasts -warmup rounds, and longer while the engine's JIT
	// compiler is still busy (more than jitSettled of the engine's CPU in
	// the last round), up to -max-warmup rounds: a production engine has
	// long compiled its hot paths, and the first large size exercises them
	// harder than the small one did.
	timed, warm := 0, false
	for round := 0; timed < *samplesFlag; round++ {
		var roundJVM, roundJIT time.Duration
		if !warm && round >= *warmupFlag && (round >= *maxWarmupFlag || sz.lastJIT <= jitSettled) {
			warm, sz.warmups = true, round
		}
		for i := range contenders {
			c := contenders[(i+round)%len(contenders)]
			m := sz.results[c.name]
			e.proxy.Counts()
			if c.paths != nil {
				c.paths()
			}
			before, err := e.meter.sample()
			if err != nil {
				b.Fatal(err)
			}
			self0, t0 := selfCPU(), time.Now()
			err = c.collect(ctx)
			d, self1 := time.Since(t0), selfCPU()
			after, serr := e.meter.sample()
			paths := e.proxy.Counts()
			if c.paths != nil {
				paths = c.paths()
			}
			n := requests(paths)
			if err != nil {
				b.Fatalf("size %s, %s, round %d: %v\n%s", sz.name, c.name, round, err, tail(c.logs))
			}
			if serr != nil {
				b.Fatal(serr)
			}
			roundJVM += after.jvm - before.jvm
			roundJIT += after.jit - before.jit
			if !warm {
				continue
			}
			m.wall = append(m.wall, d)
			m.requests = append(m.requests, n)
			m.paths = paths
			m.cpu.jvm += after.jvm - before.jvm
			m.cpu.jit += after.jit - before.jit
			m.cpu.gc += after.gc - before.gc
			m.cpu.db += after.db - before.db
			m.cpu.self += self1 - self0
		}
		if roundJVM > 0 {
			sz.lastJIT = float64(roundJIT) / float64(roundJVM)
		}
		if warm {
			timed++
		}
	}
	sz.load[1] = loadAverage()
	progress("size %s measured in %s", sz.name, time.Since(start).Round(time.Second))
	profileSize(b, ctx, e, sz, contenders)

	// Every contender's last collection against the engine's tables.
	var restStates, dbStates map[string]map[string]float64
	for _, c := range contenders {
		got, states, err := c.counts()
		if err != nil {
			b.Fatal(err)
		}
		bad := compare(truth, got)
		m := sz.results[c.name]
		if len(bad) == 0 {
			m.checked = fmt.Sprintf("%d/%d topics equal", len(truth), len(truth))
		} else {
			m.checked = fmt.Sprintf("%d of %d topics differ", len(bad), len(truth))
			b.Errorf("size %s, %s: counts differ from the engine's tables:\n%s", sz.name, c.name, strings.Join(bad, "\n"))
		}
		switch c.name {
		case restMode:
			restStates = states
		case databaseMode:
			dbStates = states
		}
		if c.logs != nil {
			for _, l := range strings.Split(c.logs.String(), "\n") {
				if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
					sz.notes = append(sz.notes, c.name+" logged: "+l)
				}
			}
		}
	}
	if d := diffStates(restStates, dbStates); d != "" {
		b.Errorf("size %s: REST and engine-database mode differ: %s", sz.name, d)
		sz.notes = append(sz.notes, "REST and engine-database mode differ: "+d)
	}
	sz.states = map[string]float64{}
	for topic, s := range restStates {
		for state, v := range s {
			sz.states[state] += v
		}
		i, _ := strconv.Atoi(strings.TrimPrefix(topic, "bench.topic-"))
		want := map[string]int{"suspended": openPerTopic}
		if !suspended(i) {
			want = mix
		}
		for state, v := range s {
			if int(v) != want[state] {
				b.Errorf("size %s, topic %s: %s = %v, the workload makes %d", sz.name, topic, state, v, want[state])
			}
		}
	}
}

// compare lists the topics whose groups differ from the engine's.
func compare(truth, got map[string]groups) []string {
	var bad []string
	for _, t := range slices.Sorted(maps.Keys(truth)) {
		if got[t] != truth[t] {
			bad = append(bad, fmt.Sprintf("  %s: got %+v, engine %+v (waiting %d)", t, got[t], truth[t], truth[t].waiting()))
		}
	}
	for t := range got {
		if _, ok := truth[t]; !ok {
			bad = append(bad, fmt.Sprintf("  %s: got %+v, the engine holds no task of it", t, got[t]))
		}
	}
	return bad
}

func diffStates(a, b map[string]map[string]float64) string {
	var d []string
	for topic, s := range a {
		for state, v := range s {
			if b[topic][state] != v {
				d = append(d, fmt.Sprintf("%s/%s %v vs %v", topic, state, v, b[topic][state]))
			}
		}
	}
	for topic, s := range b {
		for state := range s {
			if _, ok := a[topic][state]; !ok {
				d = append(d, fmt.Sprintf("%s/%s only in engine-database mode", topic, state))
			}
		}
	}
	sort.Strings(d)
	if len(d) > 10 {
		d = append(d[:10], fmt.Sprintf("... %d more", len(d)-10))
	}
	return strings.Join(d, "; ")
}

// ipcRow is one request shape of the items-per-count measurement.
type ipcRow struct {
	shape string
	items int // per request (0 for a count), as returned
	n     int
	wall  time.Duration
	cpu   cpuSample
}

// measureItemsPerCount compares one count request with one 1000-item list
// page, straight to the engine (no proxy), one request at a time: the
// per-request engine and server CPU and wall time, summed over
// -ipc-repeat rounds of one count per topic and 10 pages per list shape.
func measureItemsPerCount(b *testing.B, ctx context.Context, e *env) []ipcRow {
	var topics []string
	for i := 0; i < *topicsFlag; i++ {
		topics = append(topics, topicName(i))
	}
	page := func(extra url.Values) url.Values {
		q := url.Values{"sortBy": {"id"}, "sortOrder": {"asc"}, "firstResult": {"0"}, "maxResults": {strconv.Itoa(listPage)}}
		for k, v := range extra {
			q[k] = v
		}
		return q
	}
	lists := []struct {
		shape string
		q     url.Values
	}{
		{"GET /external-task?sortBy=id&maxResults=1000 (all tasks, first page)", page(nil)},
		{"GET /external-task?suspended=true&sortBy=id&maxResults=1000 (first page)", page(url.Values{"suspended": {"true"}})},
		{"GET /external-task?active=true&withRetriesLeft=true&locked=true&sortBy=id&maxResults=1000 (first page, the collector's locked list)",
			page(url.Values{"active": {"true"}, "withRetriesLeft": {"true"}, "locked": {"true"}})},
	}
	rows := []ipcRow{{shape: "GET /external-task/count?topicName=T (one per topic)"}}
	for _, l := range lists {
		rows = append(rows, ipcRow{shape: l.shape, items: listPage})
	}
	timed := func(r *ipcRow, f func() (int, error)) {
		before, err := e.meter.sample()
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		items, err := f()
		r.wall += time.Since(t0)
		after, _ := e.meter.sample()
		if err != nil {
			b.Fatal(err)
		}
		if r.items > 0 {
			// Fewer than a page when the engine holds fewer such tasks.
			r.items = items
		}
		r.n++
		r.cpu.jvm += after.jvm - before.jvm
		r.cpu.db += after.db - before.db
	}
	// One untimed round warms the paths up.
	for round := 0; round <= *ipcFlag; round++ {
		scratch := make([]ipcRow, len(rows))
		copy(scratch, rows)
		target := rows
		if round == 0 {
			target = scratch
		}
		for _, t := range topics {
			timed(&target[0], func() (int, error) {
				_, err := e.direct.Count(ctx, "/external-task/count", url.Values{"topicName": {t}})
				return 0, err
			})
		}
		for k := 0; k < 10; k++ {
			for i, l := range lists {
				timed(&target[i+1], func() (int, error) {
					tasks, err := e.direct.ExternalTasks(ctx, l.q)
					return len(tasks), err
				})
			}
		}
	}
	for i := range rows {
		r := &rows[i]
		n := time.Duration(r.n)
		r.wall, r.cpu.jvm, r.cpu.db = r.wall/n, r.cpu.jvm/n, r.cpu.db/n
	}
	return rows
}

// progress goes to stderr so stdout carries only the report.
var progress = benchkit.Progress("bench-camunda")

func tail(s *testkit.LogBuffer) string {
	if s == nil {
		return ""
	}
	out := s.String()
	if len(out) > 4000 {
		out = out[len(out)-4000:]
	}
	return out
}
