// Package benchtables measures what a collection of each table collector costs as
// a table's terminal history grows (this file), and what a scrape served from
// the snapshot costs at about 10k series (scrape_test.go), each against a
// named baseline in the same run on the same data. It runs only with
// `make bench` (go test -bench); `make test` compiles it and runs nothing.
//
// The claim it checks (docs/collection.md): a collection's cost grows
// with the open and recent rows, not with the table's history.
//
// Setup: one throwaway PostgreSQL database (test/harness/pgtest); per history
// size two copies of the four reference tables (deploy/sql/001), filled by the
// same deterministic generator:
//
//   - exporter_<size>: the reference tables plus the exporter's indexes (the
//     collectors' requirements, which deploy/sql/003 is generated from),
//     read by the exporter's own collectors, built with
//     sources.NewDatabase from a config as the binary builds them;
//   - baseline_<size>: the reference tables only (their primary keys), read by
//     the queries a generic SQL exporter typically runs for the same gauges
//     and counters (see baselineQueries).
//
// Every table is measured at the -history sizes, the idempotency table also
// at the -idempotency-history sizes (10M rows by default: production size).
// Per table there are always 100 open rows and 100 rows finished within the
// last minute; the terminal history (older than a day) has the size's rows.
// After loading: VACUUM ANALYZE, then -warmup untimed and -samples timed
// rounds; each round collects every table at every size with both sides.
package benchtables

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/test/bench/benchkit"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/proccpu"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestMain(m *testing.M) { testkit.BenchMain(m, "wfx-bench-", pgtest.StopShared) }

var (
	historyFlag = flag.String("history", "10000,100000,1000000", "terminal history rows per table, comma-separated, ascending")
	// The idempotency table alone also goes to production size: the other
	// three at 10M rows would triple the run for the same finding.
	idempotencyHistoryFlag = flag.String("idempotency-history", "10000000", "further terminal history sizes for the idempotency table only, comma-separated, ascending, above the last -history size; empty for none")
	samplesFlag            = flag.Int("samples", 21, "timed collections per table and size (the median is reported)")
	warmupFlag             = flag.Int("warmup", 3, "untimed collections before the timed ones")
)

// Fixed live work per table, the same at every size.
const (
	openRows   = 100
	recentRows = 100
)

// benchTable is a reference table with its exporter collector's name.
type benchTable struct{ collector, table string }

// tables lists the four reference tables in the order of the report; the
// idempotency table comes first (plan.tablesAt relies on it).
var tables = []benchTable{
	{"idempotency", "workflow_idempotency_record"},
	{"processed_jobs", "workflow_processed_job"},
	{"inbox", "message_inbox"},
	{"outbox", "event_outbox"},
}

// inSchema puts a schema for {s} and the live row counts for {open} and
// {recent}.
func inSchema(sql, schema string) string {
	return strings.NewReplacer("{s}", schema, "{open}", strconv.Itoa(openRows), "{recent}", strconv.Itoa(recentRows)).Replace(sql)
}

// baselineQueries are what a generic SQL exporter (sql_exporter,
// postgres_exporter custom queries) typically runs for the same series: the
// gauge as a GROUP BY over the open rows with no index that holds only them,
// and the counter as a count of the whole table by status. {s} is the schema.
var baselineQueries = map[string][]string{
	"idempotency": {
		`SELECT scope, status, count(*), min(updated_at) FROM {s}.workflow_idempotency_record
WHERE status NOT IN ('COMPLETED', 'FAILED_FINAL', 'RECONCILED') GROUP BY 1, 2`,
		`SELECT scope, status, count(*) FROM {s}.workflow_idempotency_record GROUP BY 1, 2`,
	},
	"processed_jobs": {
		`SELECT engine, activity_id, status, count(*) FROM {s}.workflow_processed_job GROUP BY 1, 2, 3`,
	},
	"inbox": {
		`SELECT source_system, message_type, processing_status, count(*), min(received_at) FROM {s}.message_inbox
WHERE processing_status NOT IN ('PROCESSED', 'FAILED_FINAL', 'IGNORED_DUPLICATE') GROUP BY 1, 2, 3`,
		`SELECT source_system, message_type, processing_status, count(*) FROM {s}.message_inbox GROUP BY 1, 2, 3`,
	},
	"outbox": {
		`SELECT aggregate_type, event_type, count(*), min(created_at) FROM {s}.event_outbox
WHERE published_at IS NULL GROUP BY 1, 2`,
		`SELECT status, count(*) FROM {s}.event_outbox GROUP BY status`,
	},
}

// openCountQueries check that the open work is what the fixture says.
var openCountQueries = map[string]string{
	"idempotency": `SELECT count(*) FROM {s}.workflow_idempotency_record WHERE status NOT IN ('COMPLETED', 'FAILED_FINAL', 'RECONCILED')`,
	"inbox":       `SELECT count(*) FROM {s}.message_inbox WHERE processing_status NOT IN ('PROCESSED', 'FAILED_FINAL', 'IGNORED_DUPLICATE')`,
	"outbox":      `SELECT count(*) FROM {s}.event_outbox WHERE published_at IS NULL`,
}

// historySQL inserts terminal rows lo..hi ($2, $3) with timestamps going
// back from $1 (a day before the run) two seconds per row. Deterministic,
// so both schemas hold the same rows. One INSERT ... SELECT generate_series
// per table and schema: the fastest load PostgreSQL offers short of COPY,
// with no round trip per row.
var historySQL = map[string]string{
	"idempotency": `INSERT INTO {s}.workflow_idempotency_record (scope, idempotency_key, business_entity_id, process_instance_id, job_reference,
	status, request_hash, result_payload, error_code, created_at, updated_at, completed_at)
SELECT 'scope-' || (g % 5), 'h-' || g, 'order-' || g, 'pi-' || g, 'task-h-' || g,
	CASE WHEN g % 50 = 0 THEN 'FAILED_FINAL' ELSE 'COMPLETED' END, md5(g::text), jsonb_build_object('n', g),
	CASE WHEN g % 50 = 0 THEN 'IDEMPOTENCY_CONFLICT' END,
	$1::timestamptz - make_interval(secs => g * 2 + 5), $1::timestamptz - make_interval(secs => g * 2), $1::timestamptz - make_interval(secs => g * 2)
FROM generate_series($2::bigint, $3::bigint) g`,
	"processed_jobs": `INSERT INTO {s}.workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at, result_payload)
SELECT 'main', 'h-' || g, 'pi-' || g, 'activity-' || (g % 5), 'worker-' || (g % 4),
	CASE WHEN g % 20 = 0 THEN 'FAILED' ELSE 'COMPLETED' END, $1::timestamptz - make_interval(secs => g * 2), jsonb_build_object('n', g)
FROM generate_series($2::bigint, $3::bigint) g`,
	"inbox": `INSERT INTO {s}.message_inbox (source_system, message_id, message_type, correlation_key, payload_hash, processing_status, received_at, processed_at)
SELECT 'kafka-' || (g % 2), 'h-' || g, 'Type' || (g % 5), 'corr-' || g, md5(g::text),
	CASE g % 40 WHEN 0 THEN 'FAILED_FINAL' WHEN 1 THEN 'IGNORED_DUPLICATE' ELSE 'PROCESSED' END,
	$1::timestamptz - make_interval(secs => g * 2 + 1), $1::timestamptz - make_interval(secs => g * 2)
FROM generate_series($2::bigint, $3::bigint) g`,
	"outbox": `INSERT INTO {s}.event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
SELECT md5('h-' || g)::uuid, 'Agg' || (g % 3), 'agg-' || g, 'Event' || (g % 5), 'k-' || g,
	jsonb_build_object('order', g, 'amount', g % 1000, 'currency', 'EUR'), 'PUBLISHED',
	$1::timestamptz - make_interval(secs => g * 2 + 2), $1::timestamptz - make_interval(secs => g * 2)
FROM generate_series($2::bigint, $3::bigint) g`,
}

// liveSQL replaces the live rows: openRows open ones and recentRows
// finished within the last minute, by the database clock at load time.
var liveSQL = map[string][]string{
	"idempotency": {
		`DELETE FROM {s}.workflow_idempotency_record WHERE idempotency_key LIKE 'live-%'`,
		`INSERT INTO {s}.workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
SELECT 'scope-' || (g % 5), 'live-open-' || g, 'order-live-' || g, 'task-live-' || g,
	(ARRAY['STARTED', 'SIDE_EFFECT_SUBMITTED', 'FAILED_RETRYABLE', 'UNKNOWN_OUTCOME'])[g % 4 + 1], now() - make_interval(mins => g)
FROM generate_series(1, {open}) g`,
		`INSERT INTO {s}.workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at, completed_at)
SELECT 'scope-' || (g % 5), 'live-done-' || g, 'order-live-' || g, 'task-done-' || g, 'COMPLETED', now() - make_interval(secs => g / 2.0), now() - make_interval(secs => g / 2.0)
FROM generate_series(1, {recent}) g`,
	},
	"processed_jobs": {
		`DELETE FROM {s}.workflow_processed_job WHERE job_reference LIKE 'live-%'`,
		`INSERT INTO {s}.workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
SELECT 'main', 'live-' || g, 'pi-live-' || g, 'activity-' || (g % 5), 'worker-' || (g % 4), 'COMPLETED', now() - make_interval(secs => g / 2.0)
FROM generate_series(1, {recent}) g`,
	},
	"inbox": {
		`DELETE FROM {s}.message_inbox WHERE message_id LIKE 'live-%'`,
		`INSERT INTO {s}.message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
SELECT 'kafka-' || (g % 2), 'live-open-' || g, 'Type' || (g % 5), 'corr-live-' || g,
	(ARRAY['RECEIVED', 'PROCESSING', 'FAILED_RETRYABLE'])[g % 3 + 1], now() - make_interval(secs => g * 3)
FROM generate_series(1, {open}) g`,
		`INSERT INTO {s}.message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
SELECT 'kafka-' || (g % 2), 'live-done-' || g, 'Type' || (g % 5), 'corr-live-' || g, 'PROCESSED',
	now() - make_interval(secs => g / 2.0 + 1), now() - make_interval(secs => g / 2.0)
FROM generate_series(1, {recent}) g`,
	},
	"outbox": {
		`DELETE FROM {s}.event_outbox WHERE aggregate_id LIKE 'live-%'`,
		`INSERT INTO {s}.event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at)
SELECT gen_random_uuid(), 'Agg' || (g % 3), 'live-open-' || g, 'Event' || (g % 5), 'k-live-' || g, '{"live": true}',
	CASE WHEN g % 10 = 0 THEN 'FAILED' ELSE 'PENDING' END, now() - make_interval(secs => g * 3)
FROM generate_series(1, {open}) g`,
		`INSERT INTO {s}.event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
SELECT gen_random_uuid(), 'Agg' || (g % 3), 'live-done-' || g, 'Event' || (g % 5), 'k-live-done-' || g, '{"live": true}', 'PUBLISHED',
	now() - make_interval(secs => g / 2.0 + 1), now() - make_interval(secs => g / 2.0)
FROM generate_series(1, {recent}) g`,
	},
}

// result is one table at one history size.
type result struct {
	exporterMS, baselineMS     float64
	exporterRows, baselineRows float64
	// Pages: shared buffers hit or read by the queries' plans.
	exporterPages, baselinePages float64
	heapMB                       float64
	// At a table's largest size only (measureStatus): the list queries of
	// the status page alone; the collection with the lists and, right
	// after it, without; the list queries' rows read under EXPLAIN; how
	// many list queries and items there were.
	listsMS, withListsMS, warmMS float64
	statusRows                   float64
	statusQueries                int
	statusItems                  int
}

// Each history size has its own pair of schemas, so every measurement round
// visits every size: a change in the machine's load during the run hits all
// sizes alike instead of skewing the growth factors.
func exporterSchema(size int) string { return "exporter_" + strconv.Itoa(size) }
func baselineSchema(size int) string { return "baseline_" + strconv.Itoa(size) }

// plan says which tables are measured at which history size: every table
// at the -history sizes, the idempotency table also at the
// -idempotency-history sizes.
type plan struct {
	common, extra []int
}

func (p plan) sizesOf(collector string) []int {
	if collector == "idempotency" {
		return append(slices.Clone(p.common), p.extra...)
	}
	return p.common
}

func (p plan) all() []int { return append(slices.Clone(p.common), p.extra...) }

// tablesAt returns the tables measured at a size, in report order.
func (p plan) tablesAt(size int) []benchTable {
	if slices.Contains(p.common, size) {
		return tables
	}
	return tables[:1] // idempotency
}

func newPlan() (plan, error) {
	common, err := parseSizes("-history", *historyFlag, false)
	if err != nil {
		return plan{}, err
	}
	extra, err := parseSizes("-idempotency-history", *idempotencyHistoryFlag, true)
	if err != nil {
		return plan{}, err
	}
	if len(extra) > 0 && extra[0] <= common[len(common)-1] {
		return plan{}, fmt.Errorf("-idempotency-history %q: every size must exceed the last -history size %d", *idempotencyHistoryFlag, common[len(common)-1])
	}
	return plan{common, extra}, nil
}

// timing is how long one load step took for one table copy.
type timing struct {
	size      int
	collector string
	schema    string
	d         time.Duration
}

// BenchmarkCollectionVersusHistory is the whole run; it prints its tables
// to stdout. Run it once: go test -run '^$' -bench . -benchtime 1x ./test/bench/tables
func BenchmarkCollectionVersusHistory(b *testing.B) {
	p, err := newPlan()
	if err != nil {
		b.Fatal(err)
	}
	srv := benchkit.NewServer(b)
	url, admin, pgVersion, settings := srv.URL, srv.Admin, srv.Version, srv.Settings

	start := time.Now()
	dbs := map[int]*sources.DatabaseSource{}
	for _, size := range p.all() {
		for _, schema := range []string{exporterSchema(size), baselineSchema(size)} {
			srv.ReferenceSchema(b, schema)
		}
		db := newExporter(b, url, exporterSchema(size), p.tablesAt(size))
		defer db.DB.Close()
		dbs[size] = db
		// The exporter's indexes, from the collectors' requirements (what
		// deploy/sql/003 is generated from), before the history arrives, as
		// in production.
		for _, c := range db.Collectors {
			srv.CreateIndexes(b, c.Requirements())
		}
	}
	loaded := load(b, url, p)
	loadWall := time.Since(start)
	start = time.Now()
	var vacuumed []timing
	for _, size := range p.all() {
		for _, schema := range []string{exporterSchema(size), baselineSchema(size)} {
			for _, t := range p.tablesAt(size) {
				for _, q := range liveSQL[t.collector] {
					pgtest.Exec(b, admin, inSchema(q, schema))
				}
				vstart := time.Now()
				pgtest.Exec(b, admin, "VACUUM (ANALYZE) "+schema+"."+t.table)
				vacuumed = append(vacuumed, timing{size, t.collector, schema, time.Since(vstart)})
			}
		}
		checkFixture(b, admin, size, p.tablesAt(size))
	}
	vacuumWall := time.Since(start)
	progress("loaded %v history rows per table (idempotency also %v) in %s, vacuumed and checked in %s",
		p.common, p.extra, loadWall.Round(time.Second), vacuumWall.Round(time.Second))

	start = time.Now()
	loadBefore := loadAverage()
	results := measure(b, url, p, dbs)
	loadAfter := loadAverage()
	progress("measured in %s", time.Since(start).Round(time.Second))
	report(p, results, pgVersion, settings+"\nload average (1, 5, 15 min) before measuring: "+loadBefore+"; after: "+loadAfter,
		loadWall, vacuumWall, loaded, vacuumed)
}

// newExporter builds the database source of one size's exporter schema as
// the binary builds it from a config file, with the given tables and
// further settings of the database (YAML lines, e.g. "timeout: 2m").
func newExporter(b *testing.B, url, schema string, tabs []benchTable, settings ...string) *sources.DatabaseSource {
	var y strings.Builder
	fmt.Fprintf(&y, "databases:\n  - name: bench\n    dsn: %q\n    min_interval: 1ms\n", url)
	for _, s := range settings {
		fmt.Fprintf(&y, "    %s\n", s)
	}
	fmt.Fprintf(&y, "    tables:\n")
	for _, t := range tabs {
		fmt.Fprintf(&y, "      %s: {table: %s.%s}\n", t.collector, schema, t.table)
	}
	cfg, err := config.Parse([]byte(y.String()))
	if err != nil {
		b.Fatalf("%v\n%s", err, y.String())
	}
	if time.Duration(cfg.Databases[0].LateCommitWindow) != lateCommitWindow {
		b.Fatalf("late_commit_window default %s, the fixture assumes %s", time.Duration(cfg.Databases[0].LateCommitWindow), lateCommitWindow)
	}
	db, err := sources.NewDatabase(cfg.Databases[0], "databases[0]", sources.DatabaseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// lateCommitWindow is the default lookback of the counters: the recent rows
// of the fixture lie inside it, the history far outside.
const lateCommitWindow = 5 * time.Minute

// load inserts the history rows of every size into both of its schemas,
// two statements at a time (one per core of the reference machine), the
// largest sizes first, and returns how long each statement took.
func load(b *testing.B, url string, p plan) []timing {
	base := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	type job struct {
		sql string
		timing
	}
	all := p.all()
	var jobs []job
	for i := len(all) - 1; i >= 0; i-- {
		for _, t := range p.tablesAt(all[i]) {
			for _, schema := range []string{exporterSchema(all[i]), baselineSchema(all[i])} {
				jobs = append(jobs, job{inSchema(historySQL[t.collector], schema), timing{size: all[i], collector: t.collector, schema: schema}})
			}
		}
	}
	benchkit.Parallel(b, url, 2, len(jobs), func(ctx context.Context, conn *pgx.Conn, i int) error {
		start := time.Now()
		_, err := conn.Exec(ctx, jobs[i].sql, base, 1, jobs[i].size)
		jobs[i].d = time.Since(start)
		if err != nil {
			return fmt.Errorf("%w\n%s", err, jobs[i].sql)
		}
		return nil
	})
	out := make([]timing, len(jobs))
	for i, j := range jobs {
		out[i] = j.timing
	}
	return out
}

// checkFixture verifies both schemas of a size hold the rows the report
// claims.
func checkFixture(b *testing.B, conn *pgx.Conn, size int, tabs []benchTable) {
	ctx := context.Background()
	for _, schema := range []string{exporterSchema(size), baselineSchema(size)} {
		for _, t := range tabs {
			var n int
			if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.%s", schema, t.table)).Scan(&n); err != nil {
				b.Fatal(err)
			}
			want := size + recentRows
			if t.collector != "processed_jobs" {
				want += openRows
			}
			if n != want {
				b.Fatalf("%s.%s holds %d rows, want %d", schema, t.table, n, want)
			}
			if q, ok := openCountQueries[t.collector]; ok {
				if err := conn.QueryRow(ctx, inSchema(q, schema)).Scan(&n); err != nil {
					b.Fatal(err)
				}
				if n != openRows {
					b.Fatalf("%s.%s holds %d open rows, want %d", schema, t.table, n, openRows)
				}
			}
		}
	}
}

// measure times the exporter's collectors and the baseline queries. Every
// round collects every table at each of its sizes, exporter then baseline,
// in an order that rotates from round to round; the first -warmup rounds
// are not timed.
func measure(b *testing.B, url string, p plan, dbs map[int]*sources.DatabaseSource) map[int]map[string]result {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	collector := func(size int, name string) sources.TableCollector {
		for _, c := range dbs[size].Collectors {
			if c.Name() == name {
				return c
			}
		}
		b.Fatalf("no %s collector", name)
		return nil
	}
	baseline := func(size int, name string) []string {
		var qs []string
		for _, q := range baselineQueries[name] {
			qs = append(qs, inSchema(q, baselineSchema(size)))
		}
		return qs
	}
	type key struct {
		size      int
		collector string
	}
	exp, bas := map[key][]float64{}, map[key][]float64{}
	lists, withLists, warm := map[key][]float64{}, map[key][]float64{}, map[key][]float64{}
	statusItems := map[key]int{}
	for round := 0; round < *warmupFlag+*samplesFlag; round++ {
		for ti := range tables {
			t := tables[(ti+round)%len(tables)]
			sizes := p.sizesOf(t.collector)
			for si := range sizes {
				size := sizes[(si+round)%len(sizes)]
				k := key{size, t.collector}
				start := time.Now()
				ms, err := collector(size, t.collector).Collect(ctx, nil)
				d := time.Since(start)
				if err != nil {
					b.Fatalf("%s at %d: %v", t.collector, size, err)
				}
				if len(ms) == 0 {
					b.Fatalf("%s at %d: no metrics", t.collector, size)
				}
				// At the largest size, right after the collection above
				// and so on the same warm cache: the status page's list
				// queries alone, then the collection with them and
				// without them, back to back, which one first in turns
				// (the second of two runs finds the connection warmer).
				if size == sizes[len(sizes)-1] {
					c := collector(size, t.collector)
					l := timeQueries(b, ctx, conn, statusQueries(c))
					plain := func() time.Duration {
						start := time.Now()
						if _, err := c.Collect(ctx, nil); err != nil {
							b.Fatalf("%s at %d: %v", t.collector, size, err)
						}
						return time.Since(start)
					}
					var w, wo time.Duration
					if round%2 == 0 {
						w, statusItems[k] = collectWithStatus(b, ctx, c)
						wo = plain()
					} else {
						wo = plain()
						w, statusItems[k] = collectWithStatus(b, ctx, c)
					}
					if round >= *warmupFlag {
						lists[k] = append(lists[k], ms2(l))
						withLists[k] = append(withLists[k], ms2(w))
						warm[k] = append(warm[k], ms2(wo))
					}
				}
				start = time.Now()
				if err := runBaseline(ctx, conn, baseline(size, t.collector)); err != nil {
					b.Fatalf("%s baseline at %d: %v", t.collector, size, err)
				}
				bd := time.Since(start)
				if round >= *warmupFlag {
					exp[k] = append(exp[k], ms2(d))
					bas[k] = append(bas[k], ms2(bd))
				}
			}
		}
	}

	out := map[int]map[string]result{}
	for _, t := range tables {
		for _, size := range p.sizesOf(t.collector) {
			if out[size] == nil {
				out[size] = map[string]result{}
			}
			// Rows read by the scans of every query, from EXPLAIN ANALYZE;
			// the exporter's window arguments are its lookback, as in a
			// real poll.
			var expRows, basRows, expPages, basPages, statusRows float64
			var statusQueries int
			for _, q := range collector(size, t.collector).Requirements().Queries {
				if q.Requires != "" {
					continue
				}
				args := slices.Clone(q.Args)
				for i, a := range args {
					if _, ok := a.(time.Time); ok {
						args[i] = time.Now().Add(-lateCommitWindow)
					}
				}
				r, p := explain(b, conn, q.SQL, args)
				// The status page's list queries are reported on their
				// own (reportStatus); the comparison with the baseline
				// is the collection the metrics need.
				if strings.HasPrefix(q.Name, "status_") {
					statusRows += r
					statusQueries++
					continue
				}
				expRows, expPages = expRows+r, expPages+p
			}
			for _, q := range baseline(size, t.collector) {
				r, p := explain(b, conn, q, nil)
				basRows, basPages = basRows+r, basPages+p
			}
			var heap int64
			if err := conn.QueryRow(ctx, "SELECT pg_relation_size($1::regclass)", baselineSchema(size)+"."+t.table).Scan(&heap); err != nil {
				b.Fatal(err)
			}
			k := key{size, t.collector}
			r := result{exporterMS: median(exp[k]), baselineMS: median(bas[k]),
				exporterRows: expRows, baselineRows: basRows, exporterPages: expPages, baselinePages: basPages,
				heapMB: float64(heap) / (1 << 20), statusRows: statusRows, statusQueries: statusQueries, statusItems: statusItems[k]}
			if len(lists[k]) > 0 {
				r.listsMS, r.withListsMS, r.warmMS = median(lists[k]), median(withLists[k]), median(warm[k])
			}
			out[size][t.collector] = r
		}
	}
	return out
}

// statusQueries are the status page's list queries a collector declares.
func statusQueries(c sources.TableCollector) []pgschema.Query {
	var out []pgschema.Query
	for _, q := range c.Requirements().Queries {
		if strings.HasPrefix(q.Name, "status_") {
			out = append(out, q)
		}
	}
	return out
}

// timeQueries runs queries with their declared arguments (the limit of the
// default max_items, the default stale_after) in a read-only transaction,
// reading every row, and returns how long the queries took (not the
// transaction's begin and commit: in a collection they run in the
// collector's transaction).
func timeQueries(b *testing.B, ctx context.Context, conn *pgx.Conn, qs []pgschema.Query) time.Duration {
	var d time.Duration
	err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		start := time.Now()
		defer func() { d = time.Since(start) }()
		for _, q := range qs {
			rows, err := tx.Query(ctx, q.SQL, q.Args...)
			if err != nil {
				return err
			}
			for rows.Next() {
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// collectWithStatus runs one collection with the status page on (a sink
// of the default max_items, as poll gives each collector)
// and returns its time and the items the lists got.
func collectWithStatus(b *testing.B, ctx context.Context, c sources.TableCollector) (time.Duration, int) {
	sink := collectors.NewSink(collectors.SourceRef{Kind: "database", Name: "bench"}, config.DefaultStatusMaxItems)
	start := time.Now()
	if _, err := c.Collect(ctx, sink); err != nil {
		b.Fatalf("%s with the status lists: %v", c.Name(), err)
	}
	d := time.Since(start)
	n := 0
	for _, l := range sink.Lists() {
		n += len(l.Items)
	}
	return d, n
}

// runBaseline runs a baseline collection: its queries in one read-only
// transaction, every row read, as a generic exporter does.
func runBaseline(ctx context.Context, conn *pgx.Conn, queries []string) error {
	return pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		for _, q := range queries {
			if err := benchkit.Drain(ctx, tx, q); err != nil {
				return err
			}
		}
		return nil
	})
}

// explain runs a query under EXPLAIN ANALYZE and returns the rows its scans
// read and the shared buffers (pages) its plan hit or read.
func explain(b *testing.B, conn *pgx.Conn, sql string, args []any) (rows, pages float64) {
	plan, pages := benchkit.Explain(b, conn, sql, args...)
	return benchkit.ScanRows(plan, readsRows), pages
}

// readsRows picks the scan nodes. A bitmap index scan's rows are counted
// once, by the heap scan above it.
func readsRows(n map[string]any) bool {
	typ := benchkit.NodeType(n)
	return strings.Contains(typ, "Scan") && typ != "Bitmap Index Scan"
}

func report(p plan, results map[int]map[string]result, pgVersion, settings string, loadWall, vacuumWall time.Duration, loaded, vacuumed []timing) {
	w := os.Stdout
	fmt.Fprintf(w, "\n## Collection cost versus table history\n\n")
	fmt.Fprintln(w, benchkit.RunInfo(pgVersion))
	fmt.Fprintf(w, "server: %s\n", settings)
	fmt.Fprintf(w, "per table: %d open rows, %d rows finished in the last minute, plus the terminal history below; median of %d collections after %d warm-up\n",
		openRows, recentRows, *samplesFlag, *warmupFlag)
	fmt.Fprintf(w, "load: all history rows in %s (one INSERT ... SELECT generate_series per table copy, two at a time, largest first); live rows, VACUUM (ANALYZE) and row checks in %s\n",
		roundDuration(loadWall), roundDuration(vacuumWall))
	took := func(ts []timing, size int, schema string) string {
		for _, t := range ts {
			if t.size == size && t.collector == "idempotency" && t.schema == schema {
				return roundDuration(t.d)
			}
		}
		return "?"
	}
	for _, size := range p.extra {
		fmt.Fprintf(w, "idempotency %s history rows: insert %s into the exporter copy (with its indexes), %s into the baseline copy (primary key only), the two in parallel; VACUUM (ANALYZE) %s and %s\n",
			human(size), took(loaded, size, exporterSchema(size)), took(loaded, size, baselineSchema(size)),
			took(vacuumed, size, exporterSchema(size)), took(vacuumed, size, baselineSchema(size)))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| table | history rows | heap MB | exporter ms | baseline ms | baseline / exporter | exporter rows read | baseline rows read | exporter pages | baseline pages |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, t := range tables {
		for _, s := range p.sizesOf(t.collector) {
			r := results[s][t.collector]
			fmt.Fprintf(w, "| %s | %s | %.1f | %.2f | %.2f | %.1fx | %s | %s | %.0f | %.0f |\n", t.collector, human(s), r.heapMB, r.exporterMS, r.baselineMS,
				r.baselineMS/r.exporterMS, human(int(r.exporterRows)), human(int(r.baselineRows)), r.exporterPages, r.baselinePages)
		}
	}
	fmt.Fprintf(w, "\nGrowth between two history sizes (each figure: the value at the larger size / the value at the smaller):\n\n")
	fmt.Fprintln(w, "| table | history | history growth | exporter time | baseline time | exporter rows read | baseline rows read | exporter pages | baseline pages |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, t := range tables {
		for _, span := range p.spans(t.collector) {
			a, z := results[span[0]][t.collector], results[span[1]][t.collector]
			fmt.Fprintf(w, "| %s | %s → %s | %.4gx | %.2fx | %.1fx | %s | %s | %s | %s |\n", t.collector, human(span[0]), human(span[1]),
				float64(span[1])/float64(span[0]), z.exporterMS/a.exporterMS, z.baselineMS/a.baselineMS,
				growth(a.exporterRows, z.exporterRows), growth(a.baselineRows, z.baselineRows),
				growth(a.exporterPages, z.exporterPages), growth(a.baselinePages, z.baselinePages))
		}
	}
	fmt.Fprintln(w)
	reportStatus(w, p, results)
}

// reportStatus prints what the status page's lists add to a collection, at
// each table's largest history size, measured in the same rounds as the
// table above: the list queries alone against the collection without them,
// and a collection with the lists against one without, back to back.
func reportStatus(w io.Writer, p plan, results map[int]map[string]result) {
	fmt.Fprintf(w, "## The status page's lists (largest history size)\n\n")
	fmt.Fprintf(w, "per round, right after the timed collection above: the list queries alone (in a read-only transaction, limit %d; its begin and commit not timed), then a collection with the lists (a status sink in its context) and one without, back to back, which first in turns; median of %d each\n\n",
		config.DefaultStatusMaxItems, *samplesFlag)
	fmt.Fprintln(w, "| table | history rows | collection ms | list queries ms | list queries / collection | with the lists ms | without, right after, ms | with / without | list queries | items listed | list rows read |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, t := range tables {
		sizes := p.sizesOf(t.collector)
		s := sizes[len(sizes)-1]
		r := results[s][t.collector]
		fmt.Fprintf(w, "| %s | %s | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2fx | %d | %d | %s |\n", t.collector, human(s), r.exporterMS,
			r.listsMS, r.listsMS/r.exporterMS, r.withListsMS, r.warmMS, r.withListsMS/r.warmMS, r.statusQueries, r.statusItems, human(int(r.statusRows)))
	}
	fmt.Fprintln(w)
}

// spans are the pairs of history sizes the growth table compares for a
// table: the smallest and largest common size, and for the idempotency
// table also the largest common size and the smallest to each further size.
func (p plan) spans(collector string) [][2]int {
	first, last := p.common[0], p.common[len(p.common)-1]
	out := [][2]int{{first, last}}
	if collector == "idempotency" {
		for _, e := range p.extra {
			out = append(out, [2]int{last, e}, [2]int{first, e})
		}
	}
	return out
}

func growth(a, z float64) string {
	if a == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", z/a)
}

func human(n int) string {
	switch {
	case n >= 1000000 && n%1000000 == 0:
		return strconv.Itoa(n/1000000) + "M"
	case n >= 1000 && n%1000 == 0:
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

var median, ms2, loadAverage = benchkit.Median, benchkit.MS, proccpu.LoadAverage

// roundDuration keeps two or three significant digits.
func roundDuration(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(time.Second).String()
	}
	return d.Round(10 * time.Millisecond).String()
}

func parseSizes(name, s string, emptyOK bool) ([]int, error) {
	var out []int
	if strings.TrimSpace(s) == "" && emptyOK {
		return nil, nil
	}
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(out) > 0 && n <= out[len(out)-1]) {
			return nil, fmt.Errorf("%s %q: want ascending positive row counts", name, s)
		}
		out = append(out, n)
	}
	return out, nil
}

// progress goes to stderr so stdout carries only the report.
var progress = benchkit.Progress("bench")
