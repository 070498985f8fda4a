package benchtables

// BenchmarkCollectionVersusWriteRate measures what a collection of each table
// collector costs on a busy table: one written at -rates rows a second
// (100, 2,000 and 10,000 by default) for longer than late_commit_window,
// polled every 30 s (the default min_interval), against one indexed count
// of the windows its counters read, in the same rounds on the same data.
//
// Setup: a throwaway PostgreSQL server of its own with pg_stat_statements,
// one schema per rate with the four reference tables (deploy/sql/001) and
// the exporter's indexes (the collectors' requirements), and a frozen
// database clock (the testclock schema first on the exporter's
// search_path, as in test/harness/collectortest), so that 30 s of writing
// take as long as the machine needs and no longer. The exporter's
// collectors are built with sources.NewDatabase from a config as the
// binary builds them, with the default late_commit_window (5m).
//
// The tables are written as a busy service writes them: each row is
// inserted in its first state and finished (published, processed,
// completed) by an UPDATE a moment later (outbox 0.5 s, inbox 0.2 s,
// idempotency 0.5 s; a processed job is inserted finished), so that the
// windows hold the dead versions a busy table has between two vacuums.
// Load: the rows of the 5.5 minutes before the clock's start, already in
// their final state, then VACUUM (ANALYZE), then the first collection (which
// reads the whole window, as after a start). Then each round moves the
// clock 30 s on, writes those 30 s of rows at every rate, and measures every
// table at every rate with three contenders, in an order that rotates from
// round to round:
//
//   - exporter: one Collect of the table's collector (its read-only
//     transaction, gauges, counters, everything a poll does);
//   - baseline, "indexed count of the window": in one read-only
//     transaction, SELECT count(*) over each window the collector's
//     counters read (created and published for the outbox), through the
//     same indexes, with the exporter's lower bound;
//   - "whole window read": the collector's counter queries without the
//     horizon, every row scanned into the client, as every poll read
//     them before the horizon (a lower bound of that design's cost: its
//     collections also hashed every key into memory).
//
// pg_stat_statements gives the rows the exporter's counter queries
// returned. After the last round every counter is checked against the rows
// written since the first collection: each row counted exactly once.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/sources"
	"github.com/workflow-exporter/workflow-exporter/test/bench/benchkit"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

var (
	ratesFlag      = flag.String("rates", "100,2000,10000", "write rates in rows a second, comma-separated, ascending (the write-rate benchmark)")
	rateSamples    = flag.Int("rate-samples", 7, "timed rounds of the write-rate benchmark (the median is reported)")
	rateWarmup     = flag.Int("rate-warmup", 1, "untimed rounds of the write-rate benchmark before the timed ones")
	rateIntervalFl = flag.Duration("rate-interval", 30*time.Second, "simulated time between two collections (the default min_interval)")
)

// rateKind is one table kind of the write-rate benchmark: its rows at a
// rate and the windows its counters read.
type rateKind struct {
	benchTable
	// load inserts the rows stamped in ($2, $3], $1 rows a second, in their
	// final state (the finish delay after their first time: published,
	// processed or completed when that is before $3).
	load string
	// write inserts the rows stamped in ($2, $3] in their first state;
	// finish finishes the rows first stamped in ($1, $2]. {s} is the schema.
	write, finish string
	// windows are the time columns of the counters' windows.
	windows []string
	// counted are the counter series that count a row or its finish once.
	counted []string
}

// genRows is generate_series over the rows of ($2, $3] at $1 a second,
// ts their times.
const genRows = `FROM (SELECT g, $2::timestamptz + make_interval(secs => g / $1::float8) AS ts
	FROM generate_series(1, (extract(epoch FROM $3::timestamptz - $2::timestamptz) * $1)::int) g) r`

var rateKinds = []rateKind{
	{
		benchTable: benchTable{"outbox", "event_outbox"},
		load: `INSERT INTO {s}.event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
SELECT gen_random_uuid(), 'Agg' || (g % 3), 'a-' || g, 'Event' || (g % 5), 'k-' || g, '{"amount": 42}',
	CASE WHEN ts + interval '0.5 s' <= $3 THEN 'PUBLISHED' ELSE 'PENDING' END,
	ts, CASE WHEN ts + interval '0.5 s' <= $3 THEN ts + interval '0.5 s' END ` + genRows,
		write: `INSERT INTO {s}.event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at)
SELECT gen_random_uuid(), 'Agg' || (g % 3), 'a-' || g, 'Event' || (g % 5), 'k-' || g, '{"amount": 42}', 'PENDING', ts ` + genRows,
		finish: `UPDATE {s}.event_outbox SET status = 'PUBLISHED', published_at = created_at + interval '0.5 s'
WHERE created_at > $1::timestamptz - interval '0.5 s' AND created_at <= $2::timestamptz - interval '0.5 s' AND published_at IS NULL`,
		windows: []string{"created_at", "published_at"},
		counted: []string{catalog.OutboxEventsCreated, catalog.OutboxEventsPublished},
	},
	{
		benchTable: benchTable{"inbox", "message_inbox"},
		load: `INSERT INTO {s}.message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
SELECT 'kafka-' || (g % 2), 'm-' || g || '-' || extract(epoch FROM ts), 'Type' || (g % 5), 'c-' || g,
	CASE WHEN ts + interval '0.2 s' <= $3 THEN 'PROCESSED' ELSE 'RECEIVED' END,
	ts, CASE WHEN ts + interval '0.2 s' <= $3 THEN ts + interval '0.2 s' END ` + genRows,
		write: `INSERT INTO {s}.message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
SELECT 'kafka-' || (g % 2), 'm-' || g || '-' || extract(epoch FROM ts), 'Type' || (g % 5), 'c-' || g, 'RECEIVED', ts ` + genRows,
		finish: `UPDATE {s}.message_inbox SET processing_status = 'PROCESSED', processed_at = received_at + interval '0.2 s'
WHERE received_at > $1::timestamptz - interval '0.2 s' AND received_at <= $2::timestamptz - interval '0.2 s' AND processed_at IS NULL`,
		windows: []string{"processed_at"},
		counted: []string{catalog.InboxMessagesProcessed},
	},
	{
		benchTable: benchTable{"processed_jobs", "workflow_processed_job"},
		load: `INSERT INTO {s}.workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
SELECT 'main', 'j-' || g || '-' || extract(epoch FROM ts), 'pi-' || g, 'activity-' || (g % 5), 'worker-' || (g % 4), 'COMPLETED', ts ` + genRows,
		windows: []string{"completed_at"},
		counted: []string{catalog.ProcessedJobs},
	},
	{
		benchTable: benchTable{"idempotency", "workflow_idempotency_record"},
		load: `INSERT INTO {s}.workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, created_at, updated_at, completed_at)
SELECT 'scope-' || (g % 5), 'i-' || g || '-' || extract(epoch FROM ts), 'order-' || g, 'task-' || g,
	CASE WHEN ts + interval '0.5 s' <= $3 THEN 'COMPLETED' ELSE 'STARTED' END, ts,
	CASE WHEN ts + interval '0.5 s' <= $3 THEN ts + interval '0.5 s' ELSE ts END,
	CASE WHEN ts + interval '0.5 s' <= $3 THEN ts + interval '0.5 s' END ` + genRows,
		write: `INSERT INTO {s}.workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, created_at, updated_at)
SELECT 'scope-' || (g % 5), 'i-' || g || '-' || extract(epoch FROM ts), 'order-' || g, 'task-' || g, 'STARTED', ts, ts ` + genRows,
		finish: `UPDATE {s}.workflow_idempotency_record SET status = 'COMPLETED', updated_at = created_at + interval '0.5 s', completed_at = created_at + interval '0.5 s'
WHERE created_at > $1::timestamptz - interval '0.5 s' AND created_at <= $2::timestamptz - interval '0.5 s' AND status = 'STARTED'`,
		windows: []string{"updated_at"},
		counted: []string{catalog.IdempotencyTransitions},
	},
}

func rateSchema(rate int) string { return "rate_" + strconv.Itoa(rate) }

// rateCell is one table at one rate: its collector and what was measured.
type rateCell struct {
	kind     rateKind
	rate     int
	schema   string
	db       *sources.DatabaseSource
	exporter sources.TableCollector
	// withDefaults is the same collector with the default timeouts, for
	// its first collection only.
	withDefaults sources.TableCollector
	// firstMS is the first collection (the whole window, no horizon);
	// firstDefaultMS and firstDefaultErr the same with the default
	// timeouts.
	firstMS, firstDefaultMS float64
	firstDefaultErr         error
	exp, count, full        []float64
	rowsRead, windowRows    []float64
	// want is what each counted series must sum to after the last round
	// (the rows written or finished since the first collection); got what
	// the last collection served.
	want, got map[string]float64
}

// BenchmarkCollectionVersusWriteRate is the write-rate run; it prints its
// table to stdout. Alone: go test -run '^$' -bench WriteRate -benchtime 1x ./test/bench/tables
func BenchmarkCollectionVersusWriteRate(b *testing.B) {
	rates, err := parseSizes("-rates", *ratesFlag, false)
	if err != nil {
		b.Fatal(err)
	}
	interval := *rateIntervalFl
	ctx := context.Background()
	srv := benchkit.NewServer(b, "shared_preload_libraries=pg_stat_statements")
	url, admin, pgVersion := srv.URL, srv.Admin, srv.Version
	t0 := time.Now().UTC().Truncate(time.Second)
	pgtest.Exec(b, admin, `CREATE EXTENSION pg_stat_statements;
CREATE SCHEMA testclock;
CREATE TABLE testclock.clock (t timestamptz NOT NULL);
CREATE FUNCTION testclock.now() RETURNS timestamptz LANGUAGE sql STABLE AS 'SELECT t FROM testclock.clock';`)
	pgtest.Exec(b, admin, `INSERT INTO testclock.clock VALUES ($1)`, t0)
	setClock := func(t time.Time) { pgtest.Exec(b, admin, `UPDATE testclock.clock SET t = $1`, t) }
	exporterURL := url + "?search_path=testclock,pg_catalog,public"
	if strings.Contains(url, "?") {
		exporterURL = url + "&search_path=testclock,pg_catalog,public"
	}

	// Schemas, collectors, indexes, and the window before t0.
	start := time.Now()
	var cells []*rateCell
	for _, rate := range rates {
		schema := rateSchema(rate)
		srv.ReferenceSchema(b, schema)
		var kinds []benchTable
		for _, k := range rateKinds {
			kinds = append(kinds, k.benchTable)
		}
		// The measured exporter's timeouts are raised: at the highest
		// rates its first collection, which reads the whole window, does
		// not fit the defaults (withDefaults measures that with the
		// defaults); the collections measured are compared with the
		// default timeouts in the report.
		db := newExporter(b, exporterURL, schema, kinds, "timeout: 10m", "statement_timeout: 5m")
		defer db.DB.Close()
		withDefaults := newExporter(b, exporterURL, schema, kinds)
		defer withDefaults.DB.Close()
		for _, c := range db.Collectors {
			srv.CreateIndexes(b, c.Requirements())
		}
		for _, k := range rateKinds {
			cell := &rateCell{kind: k, rate: rate, schema: schema, db: db, want: map[string]float64{}}
			for _, c := range db.Collectors {
				if c.Name() == k.collector {
					cell.exporter = c
				}
			}
			for _, c := range withDefaults.Collectors {
				if c.Name() == k.collector {
					cell.withDefaults = c
				}
			}
			lookback := lateCommitWindow + interval
			pgtest.Exec(b, admin, inSchema(k.load, schema), rate, t0.Add(-lookback), t0)
			pgtest.Exec(b, admin, "VACUUM (ANALYZE) "+schema+"."+k.table)
			cells = append(cells, cell)
		}
	}
	loadWall := time.Since(start)
	progress("write rate: loaded %v rows a second for %s in %s", rates, lateCommitWindow+interval, roundDuration(loadWall))

	// The first collection of each: the whole window, no horizon yet;
	// once with the default timeouts (which may not suffice), then the
	// measured exporter's.
	for _, c := range cells {
		st := time.Now()
		_, err := c.withDefaults.Collect(ctx, nil)
		c.firstDefaultMS, c.firstDefaultErr = ms2(time.Since(st)), err
		st = time.Now()
		if _, err := c.exporter.Collect(ctx, nil); err != nil {
			b.Fatalf("%s at %d rows/s, first collection: %v", c.kind.collector, c.rate, err)
		}
		c.firstMS = ms2(time.Since(st))
	}

	loadBefore := loadAverage()
	start = time.Now()
	rounds := *rateWarmup + *rateSamples
	for round := 1; round <= rounds; round++ {
		from, to := t0.Add(time.Duration(round-1)*interval), t0.Add(time.Duration(round)*interval)
		// The interval's writes at every rate, then the clock moves to
		// its end (the writes' now() is the real one: they stamp rows
		// explicitly).
		wst := time.Now()
		for _, c := range cells {
			c.write(b, admin, from, to)
		}
		setClock(to)
		progress("write rate: round %d/%d, writes in %s", round, rounds, roundDuration(time.Since(wst)))
		for i := range cells {
			c := cells[(i+round)%len(cells)]
			c.measure(b, ctx, admin, url, round, round > *rateWarmup, to.Add(-interval-lateCommitWindow))
		}
	}
	loadAfter := loadAverage()
	measureWall := time.Since(start)
	progress("write rate: measured in %s", roundDuration(measureWall))
	reportRates(os.Stdout, cells, rates, interval, pgVersion, loadBefore, loadAfter, loadWall, measureWall, rounds)
	for _, c := range cells {
		for name, want := range c.want {
			if got := c.got[name]; got != want {
				b.Errorf("%s at %d rows/s: %s = %v, want %v (each row once)", c.kind.collector, c.rate, name, got, want)
			}
		}
	}
}

// write adds the rows of (from, to] to the cell's table and what the
// counters must count for them.
func (c *rateCell) write(b *testing.B, conn *pgx.Conn, from, to time.Time) {
	ctx := context.Background()
	k := c.kind
	if k.write == "" {
		// Inserted finished: the processed-job table.
		tag, err := conn.Exec(ctx, inSchema(k.load, c.schema), c.rate, from, to)
		if err != nil {
			b.Fatal(err)
		}
		c.want[catalog.ProcessedJobs] += float64(tag.RowsAffected())
		return
	}
	tag, err := conn.Exec(ctx, inSchema(k.write, c.schema), c.rate, from, to)
	if err != nil {
		b.Fatal(err)
	}
	written := float64(tag.RowsAffected())
	tag, err = conn.Exec(ctx, inSchema(k.finish, c.schema), from, to)
	if err != nil {
		b.Fatal(err)
	}
	finished := float64(tag.RowsAffected())
	switch k.collector {
	case "outbox":
		c.want[catalog.OutboxEventsCreated] += written
		c.want[catalog.OutboxEventsPublished] += finished
	case "inbox":
		c.want[catalog.InboxMessagesProcessed] += finished
	case "idempotency":
		// Every record completes once; it is seen STARTED only when the
		// poll finds it so (the last 0.5 s of the interval).
		var started int
		if err := conn.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.%s WHERE status = 'STARTED'", c.schema, k.table)).Scan(&started); err != nil {
			b.Fatal(err)
		}
		c.want[catalog.IdempotencyTransitions] += finished + float64(started)
	}
}

// counterQueries are the collector's counter queries (those with the
// horizon's predicate), as the requirements declare them.
func (c *rateCell) counterQueries() []string {
	var out []string
	for _, q := range c.exporter.Requirements().Queries {
		if strings.Contains(q.SQL, "age(xmin)") {
			out = append(out, q.SQL)
		}
	}
	return out
}

// measure runs the round's three contenders in a rotating order.
func (c *rateCell) measure(b *testing.B, ctx context.Context, admin *pgx.Conn, url string, round int, timed bool, lower time.Time) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	var expMS, countMS, fullMS, rows float64
	var window int64
	contenders := []func(){
		func() {
			r0 := c.statements(b, admin)
			st := time.Now()
			ms, err := c.exporter.Collect(ctx, nil)
			expMS = ms2(time.Since(st))
			if err != nil {
				b.Fatalf("%s at %d rows/s: %v", c.kind.collector, c.rate, err)
			}
			rows = c.statements(b, admin) - r0
			c.got = sumCounters(b, ms, c.kind.counted)
		},
		func() {
			st := time.Now()
			err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
				window = 0
				for _, col := range c.kind.windows {
					var n int64
					if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT count(*) FROM %s.%s WHERE %s > $1", c.schema, c.kind.table, col), lower).Scan(&n); err != nil {
						return err
					}
					window += n
				}
				return nil
			})
			countMS = ms2(time.Since(st))
			if err != nil {
				b.Fatal(err)
			}
		},
		func() {
			st := time.Now()
			err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
				for _, q := range c.counterQueries() {
					if err := benchkit.Drain(ctx, tx, q, lower, nil); err != nil {
						return err
					}
				}
				return nil
			})
			fullMS = ms2(time.Since(st))
			if err != nil {
				b.Fatal(err)
			}
		},
	}
	for i := range contenders {
		contenders[(i+round)%len(contenders)]()
	}
	if timed {
		c.exp, c.count, c.full = append(c.exp, expMS), append(c.count, countMS), append(c.full, fullMS)
		c.rowsRead, c.windowRows = append(c.rowsRead, rows), append(c.windowRows, float64(window))
	}
}

// statements is the rows pg_stat_statements says the cell's counter
// queries returned so far.
func (c *rateCell) statements(b *testing.B, conn *pgx.Conn) float64 {
	var rows float64
	err := conn.QueryRow(context.Background(), `SELECT COALESCE(sum(rows), 0)::float8 FROM pg_stat_statements
WHERE query LIKE '%age(xmin)%' AND query LIKE '%' || $1 || '%' AND query LIKE '%' || $2 || '%'`, c.schema, c.kind.table).Scan(&rows)
	if err != nil {
		b.Fatal(err)
	}
	return rows
}

var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

// sumCounters sums the values of the named counters over their series.
func sumCounters(b *testing.B, ms []prometheus.Metric, names []string) map[string]float64 {
	out := map[string]float64{}
	for _, m := range ms {
		match := fqName.FindStringSubmatch(m.Desc().String())
		if match == nil {
			continue
		}
		for _, n := range names {
			if match[1] != n {
				continue
			}
			var d dto.Metric
			if err := m.Write(&d); err != nil {
				b.Fatal(err)
			}
			out[n] += d.GetCounter().GetValue()
		}
	}
	return out
}

func reportRates(w io.Writer, cells []*rateCell, rates []int, interval time.Duration, pgVersion, loadBefore, loadAfter string, loadWall, measureWall time.Duration, rounds int) {
	fmt.Fprintf(w, "\n## Collection cost versus write rate\n\n")
	fmt.Fprintln(w, benchkit.RunInfo(pgVersion))
	fmt.Fprintf(w, "load average (1, 5, 15 min) before measuring: %s; after: %s\n", loadBefore, loadAfter)
	fmt.Fprintf(w, "rates %v rows a second, a collection every %s (frozen clock), late_commit_window %s; the window loaded in %s; %d rounds (%d warm-up) in %s; median of %d\n",
		rates, interval, lateCommitWindow, roundDuration(loadWall), rounds, *rateWarmup, roundDuration(measureWall), *rateSamples)
	fmt.Fprintf(w, "timeouts: statement_timeout %s, the collection's %s\n\n", config.DefaultStatementTimeout, config.DefaultCollectTimeout)
	fmt.Fprintln(w, "| table | rows/s | window rows | rows read | exporter ms | max ms | indexed count ms | exporter / count | whole window read ms | whole window / exporter | first collection ms | first, default timeouts | counted once |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
	for _, k := range rateKinds {
		for _, rate := range rates {
			for _, c := range cells {
				if c.kind.collector != k.collector || c.rate != rate {
					continue
				}
				once := "yes"
				for name, want := range c.want {
					if c.got[name] != want {
						once = fmt.Sprintf("**no**: %s %v, want %v", name, c.got[name], want)
					}
				}
				mx := 0.0
				for _, v := range c.exp {
					mx = max(mx, v)
				}
				e, n, f := median(c.exp), median(c.count), median(c.full)
				first := fmt.Sprintf("%.0f ms", c.firstDefaultMS)
				if c.firstDefaultErr != nil {
					first = fmt.Sprintf("**failed** after %.0f ms: %s", c.firstDefaultMS, shortErr(c.firstDefaultErr))
				}
				fmt.Fprintf(w, "| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2fx | %.2f | %.2fx | %.2f | %s | %s |\n", k.collector, human(rate),
					humanF(median(c.windowRows)), humanF(median(c.rowsRead)), e, mx, n, e/n, f, f/e, c.firstMS, first, once)
			}
		}
	}
	fmt.Fprintln(w)
}

func humanF(v float64) string { return human(int(v + 0.5)) }

// shortErr is the cause of a collection error, for a table cell.
func shortErr(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "(SQLSTATE"); i > 0 {
		msg = msg[:i]
	}
	if i := strings.LastIndex(msg, "ERROR: "); i >= 0 {
		msg = msg[i+len("ERROR: "):]
	}
	return strings.TrimSpace(msg)
}
