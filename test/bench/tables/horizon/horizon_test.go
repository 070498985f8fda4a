// Package benchhorizon measures what reading the retention horizon of an
// idempotency table costs (collectors/tables/horizon.go: one index descent
// per scope, a loose index scan) against the query a generic SQL exporter
// would run for the same numbers (a GROUP BY over the finished rows), on
// tables of millions of rows, in one run. It runs only with `make
// bench-horizon` (go test -bench); `make test` compiles it and runs nothing.
//
// Setup: one throwaway PostgreSQL database (test/harness/pgtest); per case
// (rows, scopes) one copy of the reference idempotency table
// (deploy/sql/001) with the horizon's index from the collector's own
// requirements (what deploy/sql/003 is generated from), created before the
// rows arrive, as in production. The rows are finished records (COMPLETED,
// one in 50 FAILED_FINAL) spread evenly over the scopes, one every 2 s
// going back from a day ago, and 100 open records older than all of them
// (which the horizon must not count). Both sides read the same table.
package benchhorizon

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/test/bench/benchkit"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/proccpu"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

func TestMain(m *testing.M) { testkit.BenchMain(m, "wfx-bench-horizon-", pgtest.StopShared) }

var (
	casesFlag   = flag.String("cases", "1000000:10,5000000:10,5000000:100,5000000:1000", "rows:scopes of each table, comma-separated")
	samplesFlag = flag.Int("samples", 11, "timed readings per case and side (the median is reported)")
	warmupFlag  = flag.Int("warmup", 2, "untimed rounds before the timed ones")
)

type benchCase struct{ rows, scopes int }

func (c benchCase) schema() string { return fmt.Sprintf("h_%d_%d", c.rows, c.scopes) }

func parseCases(s string) ([]benchCase, error) {
	var out []benchCase
	for _, part := range strings.Split(s, ",") {
		r, sc, ok := strings.Cut(strings.TrimSpace(part), ":")
		rows, err1 := strconv.Atoi(r)
		scopes, err2 := strconv.Atoi(sc)
		if !ok || err1 != nil || err2 != nil || rows < 1 || scopes < 1 || scopes > rows {
			return nil, fmt.Errorf("-cases: %q is not rows:scopes with 1 <= scopes <= rows", part)
		}
		out = append(out, benchCase{rows, scopes})
	}
	return out, nil
}

// openRecords are open records older than every finished one: the horizon
// leaves them out, the baseline's filter too.
const openRecords = 100

const fillSQL = `INSERT INTO {s}.workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at, created_at)
SELECT 'scope-' || lpad((g % $4)::text, 5, '0'), 'h-' || g, 'order-' || g, 'task-' || g,
	CASE WHEN g % 50 = 0 THEN 'FAILED_FINAL' ELSE 'COMPLETED' END,
	$1::timestamptz - make_interval(secs => g * 2), $1::timestamptz - make_interval(secs => g * 2 + 5)
FROM generate_series($2::bigint, $3::bigint) g`

var openSQL = `INSERT INTO {s}.workflow_idempotency_record (scope, idempotency_key, business_entity_id, status, updated_at)
SELECT 'scope-' || lpad((g % $2)::text, 5, '0'), 'open-' || g, 'order-open-' || g, 'STARTED', $1::timestamptz - interval '400 days' - make_interval(secs => g)
FROM generate_series(1, ` + strconv.Itoa(openRecords) + `) g`

// baselineSQL is what a generic SQL exporter runs for the oldest finished
// record per scope.
const baselineSQL = `SELECT scope, extract(epoch FROM now() - min(updated_at))::float8 FROM {s}.workflow_idempotency_record
WHERE status IN ('COMPLETED', 'FAILED_FINAL', 'RECONCILED') GROUP BY scope`

func in(sql string, c benchCase) string { return strings.ReplaceAll(sql, "{s}", c.schema()) }

type result struct {
	exporterMS, baselineMS     float64
	exporterRows, baselineRows float64
	exporterPages              float64
	baselinePages              float64
	heapMB, indexMB            float64
	series                     int
}

// BenchmarkRetentionHorizon is the whole run; it prints its table to
// stdout. Run it once: make bench-horizon.
func BenchmarkRetentionHorizon(b *testing.B) {
	cases, err := parseCases(*casesFlag)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	srv := benchkit.NewServer(b)
	url, admin, pgVersion, settings := srv.URL, srv.Admin, srv.Version, srv.Settings

	start := time.Now()
	horizons := map[benchCase]sources.TableCollector{}
	for _, c := range cases {
		srv.ReferenceSchema(b, c.schema())
		h := newHorizon(b, url, c)
		horizons[c] = h
		srv.CreateIndexes(b, h.Requirements())
	}
	load(b, url, cases)
	for _, c := range cases {
		pgtest.Exec(b, admin, in(openSQL, c), time.Now().UTC(), c.scopes)
		pgtest.Exec(b, admin, "VACUUM (ANALYZE) "+c.schema()+".workflow_idempotency_record")
	}
	progress("loaded and vacuumed %d cases in %s", len(cases), time.Since(start).Round(time.Second))

	loadBefore := loadAverage()
	results := measure(b, ctx, admin, cases, horizons)
	loadAfter := loadAverage()
	report(cases, results, pgVersion, settings, "load average (1, 5, 15 min) before measuring: "+loadBefore+"; after: "+loadAfter)
}

// newHorizon builds the case's collectors as the binary builds them and
// returns the retention horizon's.
func newHorizon(b *testing.B, url string, c benchCase) sources.TableCollector {
	cfg, err := config.Parse([]byte(fmt.Sprintf("databases:\n  - name: bench\n    dsn: %q\n    min_interval: 1ms\n    tables:\n      idempotency: {table: %s.workflow_idempotency_record}\n", url, c.schema())))
	if err != nil {
		b.Fatal(err)
	}
	db, err := sources.NewDatabase(cfg.Databases[0], "databases[0]", sources.DatabaseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.DB.Close)
	for _, col := range db.Collectors {
		if col.Name() == "idempotency_horizon" {
			return col
		}
	}
	b.Fatal("no idempotency_horizon collector")
	return nil
}

// load fills every case's table, two statements at a time (one per core of
// the reference machine), the largest first.
func load(b *testing.B, url string, cases []benchCase) {
	base := time.Now().Add(-24 * time.Hour).UTC().Truncate(time.Second)
	order := slices.Clone(cases)
	slices.SortFunc(order, func(x, y benchCase) int { return y.rows - x.rows })
	benchkit.Parallel(b, url, 2, len(order), func(ctx context.Context, conn *pgx.Conn, i int) error {
		c := order[i]
		t := time.Now()
		if _, err := conn.Exec(ctx, in(fillSQL, c), base, 1, c.rows, c.scopes); err != nil {
			return fmt.Errorf("%s: %w", c.schema(), err)
		}
		progress("%s: %d rows in %s", c.schema(), c.rows, time.Since(t).Round(time.Second))
		return nil
	})
}

// measure times the collector's Collect and the baseline query, alternating
// which goes first from round to round, and checks that both report the
// same scopes with the same ages.
func measure(b *testing.B, ctx context.Context, conn *pgx.Conn, cases []benchCase, horizons map[benchCase]sources.TableCollector) map[benchCase]result {
	exp, bas := map[benchCase][]float64{}, map[benchCase][]float64{}
	series := map[benchCase]int{}
	for round := 0; round < *warmupFlag+*samplesFlag; round++ {
		for i := range cases {
			c := cases[(i+round)%len(cases)]
			var de, db time.Duration
			var got map[string]float64
			var want map[string]float64
			exporter := func() {
				t := time.Now()
				ms, err := horizons[c].Collect(ctx, nil)
				de = time.Since(t)
				if err != nil {
					b.Fatalf("%s: %v", c.schema(), err)
				}
				got = values(b, ms)
			}
			baseline := func() {
				t := time.Now()
				want = runBaseline(b, ctx, conn, in(baselineSQL, c))
				db = time.Since(t)
			}
			if round%2 == 0 {
				exporter()
				baseline()
			} else {
				baseline()
				exporter()
			}
			if round == 0 {
				compare(b, c, got, want)
			}
			series[c] = len(got)
			if round >= *warmupFlag {
				exp[c] = append(exp[c], ms(de))
				bas[c] = append(bas[c], ms(db))
			}
		}
	}
	out := map[benchCase]result{}
	for _, c := range cases {
		r := result{exporterMS: median(exp[c]), baselineMS: median(bas[c]), series: series[c]}
		r.exporterRows, r.exporterPages = explain(b, conn, horizons[c].Requirements().Queries[0].SQL)
		r.baselineRows, r.baselinePages = explain(b, conn, in(baselineSQL, c))
		var heap, index int64
		if err := conn.QueryRow(ctx, `SELECT pg_relation_size($1::regclass), pg_relation_size($2::regclass)`,
			c.schema()+".workflow_idempotency_record", c.schema()+".workflow_idempotency_record_horizon_idx").Scan(&heap, &index); err != nil {
			b.Fatal(err)
		}
		r.heapMB, r.indexMB = float64(heap)/(1<<20), float64(index)/(1<<20)
		out[c] = r
	}
	return out
}

// compare: with at most label_value_limit (100) scopes the collector
// reports every scope with the baseline's age (read a moment apart: within
// a few seconds); beyond it, the first 100 in scope order and "other" with
// the shortest horizon of the rest.
func compare(b *testing.B, c benchCase, got, want map[string]float64) {
	if len(want) != c.scopes {
		b.Fatalf("%s: the baseline found %d scopes, want %d", c.schema(), len(want), c.scopes)
	}
	names := make([]string, 0, len(want))
	for s := range want {
		names = append(names, s)
	}
	slices.Sort(names)
	expect := map[string]float64{}
	for i, s := range names {
		k := s
		if i >= config.DefaultLabelValueLimit {
			k = "other"
		}
		if v, ok := expect[k]; !ok || want[s] < v {
			expect[k] = want[s]
		}
	}
	if len(got) != len(expect) {
		b.Fatalf("%s: the collector reported %d series, want %d", c.schema(), len(got), len(expect))
	}
	for k, v := range expect {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 5 {
			b.Fatalf("%s: horizon of %s: collector %v, baseline %v", c.schema(), k, got[k], v)
		}
	}
}

// values reads the horizon series of a collection by scope.
func values(b *testing.B, ms []prometheus.Metric) map[string]float64 {
	out := map[string]float64{}
	for _, m := range ms {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			b.Fatal(err)
		}
		for _, l := range d.GetLabel() {
			if l.GetName() == "scope" {
				out[l.GetValue()] = d.GetGauge().GetValue()
			}
		}
	}
	return out
}

func runBaseline(b *testing.B, ctx context.Context, conn *pgx.Conn, sql string) map[string]float64 {
	out := map[string]float64{}
	err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sql)
		if err != nil {
			return err
		}
		var scope string
		var age float64
		_, err = pgx.ForEachRow(rows, []any{&scope, &age}, func() error { out[scope] = age; return nil })
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// explain runs a query under EXPLAIN (ANALYZE, BUFFERS) and returns the rows
// its scans of the table and its indexes returned or filtered out (the
// recursive query's work table and CTE scans are not table rows), all
// parallel workers included, and the shared buffers its plan hit or read.
func explain(b *testing.B, conn *pgx.Conn, sql string) (rows, pages float64) {
	plan, pages := benchkit.Explain(b, conn, sql)
	return benchkit.ScanRows(plan, onTable), pages
}

// onTable picks the nodes that read the table or an index of it, but a
// bitmap index scan, whose rows the heap scan above it counts.
func onTable(n map[string]any) bool {
	_, ok := n["Relation Name"]
	return ok && benchkit.NodeType(n) != "Bitmap Index Scan"
}

func report(cases []benchCase, results map[benchCase]result, pgVersion, settings, load string) {
	w := os.Stdout
	fmt.Fprintf(w, "\n## Retention horizon on a large table\n\n")
	fmt.Fprintln(w, benchkit.RunInfo(pgVersion))
	fmt.Fprintf(w, "server: %s\n%s\n", settings, load)
	fmt.Fprintf(w, "per table: the finished records below over the scopes, plus %d open records older than all of them; median of %d readings per side after %d warm-up rounds\n\n",
		openRecords, *samplesFlag, *warmupFlag)
	fmt.Fprintln(w, "| rows | scopes | heap MB | horizon index MB | series | exporter ms | baseline ms | baseline / exporter | exporter rows read | baseline rows read | exporter pages | baseline pages |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, c := range cases {
		r := results[c]
		fmt.Fprintf(w, "| %d | %d | %.1f | %.1f | %d | %.2f | %.2f | %.1fx | %.0f | %.0f | %.0f | %.0f |\n", c.rows, c.scopes, r.heapMB, r.indexMB, r.series,
			r.exporterMS, r.baselineMS, r.baselineMS/r.exporterMS, r.exporterRows, r.baselineRows, r.exporterPages, r.baselinePages)
	}
	fmt.Fprintln(w)
}

var (
	median, ms, loadAverage = benchkit.Median, benchkit.MS, proccpu.LoadAverage
	progress                = benchkit.Progress("bench-horizon")
)
