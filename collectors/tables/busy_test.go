package tables_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// busyKind is one table kind of TestBusyTablesCountEachRowOnce: how a step
// of writing fills it, and the counter series that count it.
type busyKind struct {
	name, table string
	// write inserts n rows stamped evenly over (from, to] seconds after
	// t0, their ids from first on.
	write string
	// finish finishes (publishes, completes, processes) the rows stamped
	// in (from, to], stamping each 5 s after its first time; "" none.
	finish string
	// restamp re-stamps the open rows stamped in (from, to] 1 s later in
	// the same status (a heartbeat: the same key, not a new event); "" none.
	restamp string
	// written and finished are the series counting writes and finishes.
	written, finished series
	// inserted and finishedVersions are the row versions a write and a
	// finish put into the counters' windows (the outbox's finish puts a
	// version into the created and the published window).
	inserted, finishedVersions int
	// window counts the rows of the counters' windows after $1: what a
	// poll that reads the whole lookback reads.
	window string
}

type series struct {
	name   string
	labels map[string]string
}

var busyKinds = []busyKind{
	{
		name: "outbox", table: "event_outbox",
		write: `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at)
SELECT md5(($1::bigint + g)::text)::uuid, 'Order', 'a', 'OrderCreated', ($1::bigint + g)::text, '{}', 'PENDING',
	$2::timestamptz + make_interval(secs => $4::float8 * g / $3)
FROM generate_series(1, $3::int) g`,
		finish: `UPDATE event_outbox SET status = 'PUBLISHED', published_at = created_at + interval '5 seconds'
WHERE created_at > $1::timestamptz AND created_at <= $2::timestamptz`,
		written:  series{catalog.OutboxEventsCreated, map[string]string{"aggregate_type": "Order", "event_type": "OrderCreated"}},
		finished: series{catalog.OutboxEventsPublished, map[string]string{"aggregate_type": "Order", "event_type": "OrderCreated"}},
		inserted: 1, finishedVersions: 2,
		window: `SELECT (SELECT count(*) FROM event_outbox WHERE created_at > $1) + (SELECT count(*) FROM event_outbox WHERE published_at > $1)`,
	},
	{
		name: "inbox", table: "message_inbox",
		write: `INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
SELECT 'kafka', ($1::bigint + g)::text, 'OrderValidated', 'c', 'RECEIVED', $2::timestamptz + make_interval(secs => $4::float8 * g / $3)
FROM generate_series(1, $3::int) g`,
		finish: `UPDATE message_inbox SET processing_status = 'PROCESSED', processed_at = received_at + interval '5 seconds'
WHERE received_at > $1::timestamptz AND received_at <= $2::timestamptz`,
		finished:         series{catalog.InboxMessagesProcessed, map[string]string{"source_system": "kafka", "message_type": "OrderValidated", "status": "PROCESSED"}},
		finishedVersions: 1,
		window:           `SELECT count(*) FROM message_inbox WHERE processed_at > $1`,
	},
	{
		name: "processed_jobs", table: "workflow_processed_job",
		write: `INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
SELECT 'main', ($1::bigint + g)::text, 'pi', 'chargeCard', 'w', 'COMPLETED', $2::timestamptz + make_interval(secs => $4::float8 * g / $3)
FROM generate_series(1, $3::int) g`,
		written:  series{catalog.ProcessedJobs, map[string]string{"engine": "main", "activity_id": "chargeCard", "status": "COMPLETED"}},
		inserted: 1,
		window:   `SELECT count(*) FROM workflow_processed_job WHERE completed_at > $1`,
	},
	{
		name: "idempotency", table: "workflow_idempotency_record",
		write: `INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, status, updated_at, created_at)
SELECT 'payments', ($1::bigint + g)::text, 'e', 'STARTED', $2::timestamptz + make_interval(secs => $4::float8 * g / $3),
	$2::timestamptz + make_interval(secs => $4::float8 * g / $3)
FROM generate_series(1, $3::int) g`,
		finish: `UPDATE workflow_idempotency_record SET status = 'COMPLETED', updated_at = created_at + interval '5 seconds'
WHERE created_at > $1::timestamptz AND created_at <= $2::timestamptz`,
		restamp: `UPDATE workflow_idempotency_record SET updated_at = updated_at + interval '1 second'
WHERE status = 'STARTED' AND created_at > $1::timestamptz AND created_at <= $2::timestamptz`,
		written:  series{catalog.IdempotencyTransitions, map[string]string{"scope": "payments", "status": "STARTED"}},
		finished: series{catalog.IdempotencyTransitions, map[string]string{"scope": "payments", "status": "COMPLETED"}},
		inserted: 1, finishedVersions: 1,
		window: `SELECT count(*) FROM workflow_idempotency_record WHERE updated_at > $1`,
	},
}

// TestBusyTablesCountEachRowOnce writes each table kind at a simulated
// 1,000 rows a second (generate_series rows, stamped on the frozen clock)
// for two late_commit_windows (60 s) after a full one, finishing each row
// (publish, complete, process) 5 s after it was written, so that half the
// finishes are stamped before the poll that first sees them; idempotency
// records are also re-stamped in their status (a heartbeat). Two
// transactions write rows and stay open, one across one poll and one across
// three (late commits). It proves that every row still counts exactly once,
// and that a poll reads only the row versions written since the previous
// one (or since the oldest transaction open at the previous one), far fewer
// than the window holds: what pg_stat_statements says the counter queries
// returned.
func TestBusyTablesCountEachRowOnce(t *testing.T) {
	srv := pgtest.NewServer(t, "shared_preload_libraries=pg_stat_statements")
	for _, k := range busyKinds {
		t.Run(k.name, func(t *testing.T) {
			d := &testDB{collectortest.NewDBAt(t, srv.NewDatabase(t), false)}
			d.Exec(`CREATE EXTENSION pg_stat_statements`)
			testBusyTable(t, d, k)
		})
	}
}

func testBusyTable(t *testing.T, d *testDB, k busyKind) {
	const (
		rate  = 1000 // rows a second
		step  = 10   // seconds between polls
		steps = 12
		late  = 60 // the config's late_commit_window, seconds
	)
	ctx := t.Context()
	nextID := int64(0)
	// written counts every row version written into the counters' windows
	// and committed; fresh those still visible (a re-stamp replaces a
	// version of the same step).
	written, fresh := 0, 0
	insert := func(conn interface {
		Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	}, from, to float64) int {
		t.Helper()
		n := int((to - from) * rate)
		if _, err := conn.Exec(ctx, k.write, nextID, collectortest.At(from), n, to-from); err != nil {
			t.Fatal(err)
		}
		nextID += int64(n)
		return n
	}
	update := func(sql string, from, to float64) int {
		t.Helper()
		if sql == "" {
			return 0
		}
		tag, err := d.Admin.Exec(ctx, sql, collectortest.At(from), collectortest.At(to))
		if err != nil {
			t.Fatal(err)
		}
		return int(tag.RowsAffected())
	}
	value := func(e *exporter, s series) float64 {
		if s.name == "" {
			return 0
		}
		return e.Value(s.name, s.labels)
	}

	// The window before the exporter starts: 70 s of rows, those older
	// than 10 s finished. The first poll counts none of them.
	insert(d.Admin, -70, 0)
	update(k.finish, -70, -10)
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()
	if w, f := value(e, k.written), value(e, k.finished); w != 0 || f != 0 {
		t.Fatalf("the first poll counted %v written and %v finished rows, want 0", w, f)
	}

	// lateTx writes rows and commits after the poll of step commitAfter;
	// mark is written when it began.
	type lateTx struct {
		tx          pgx.Tx
		commitAfter int
		rows        int
		mark        int
	}
	var open []lateTx
	wantWritten, wantFinished := 0, 0
	prevMark, prevFresh, prevOldest := 0, 0, 0
	for s := 1; s <= steps; s++ {
		now := float64(s * step)
		// A late writer begins before the step's own writes, so they come
		// after it in the transaction order; its rows are stamped just
		// before the previous poll, among the rows this step finishes (it
		// does not see them: they stay open).
		if s == 3 || s == 6 {
			tx, err := collectortest.NewConn(t, d.DB).Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
			l := lateTx{tx: tx, commitAfter: s, mark: written}
			if s == 6 {
				l.commitAfter = s + 2
			}
			l.rows = insert(tx, now-step-0.1, now-step)
			open = append(open, l)
		}
		n := insert(d.Admin, now-step, now)
		written, fresh, wantWritten = written+n*k.inserted, fresh+n*k.inserted, wantWritten+n
		f := update(k.finish, now-2*step, now-step)
		written, fresh, wantFinished = written+f*k.finishedVersions, fresh+f*k.finishedVersions, wantFinished+f
		written += update(k.restamp, now-step, now)

		d.SetClock(time.Duration(now) * time.Second)
		d.Exec(`SELECT pg_stat_statements_reset()`)
		e.Collect()
		if got := value(e, k.written); k.written.name != "" && got != float64(wantWritten) {
			t.Errorf("step %d: %s = %v, want %d", s, k.written.name, got, wantWritten)
		}
		if got := value(e, k.finished); k.finished.name != "" && got != float64(wantFinished) {
			t.Errorf("step %d: %s = %v, want %d", s, k.finished.name, got, wantFinished)
		}

		// What the poll read: every version that became visible since the
		// previous poll, and nothing older than the versions written since
		// the previous poll or the oldest transaction open then.
		read := counterRowsRead(t, d, k.table)
		if lo, hi := fresh-prevFresh, written-prevOldest; read < lo || read > hi {
			t.Errorf("step %d: the counter queries read %d rows; %d versions appeared since the previous poll, %d were written since the oldest transaction open at it",
				s, read, lo, hi)
		}
		if prevOldest == prevMark {
			var window int
			if err := d.Admin.QueryRow(ctx, k.window, collectortest.At(now-step-late)).Scan(&window); err != nil {
				t.Fatal(err)
			}
			if read*3 > window {
				t.Errorf("step %d: the counter queries read %d rows of the %d in the window", s, read, window)
			}
		}
		prevMark, prevFresh, prevOldest = written, fresh, written
		kept := open[:0]
		for _, l := range open {
			prevOldest = min(prevOldest, l.mark)
			if l.commitAfter > s {
				kept = append(kept, l)
				continue
			}
			if err := l.tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			written += l.rows * k.inserted
			fresh += l.rows * k.inserted
			wantWritten += l.rows
		}
		open = kept
	}
	if len(open) != 0 {
		t.Fatalf("%d late transactions never committed", len(open))
	}
}

// counterRowsRead is the rows the counter queries of table returned since
// pg_stat_statements was last reset (the counter queries are those with
// the horizon's predicate).
func counterRowsRead(t *testing.T, d *testDB, table string) int {
	t.Helper()
	var n int
	err := d.Admin.QueryRow(t.Context(), `SELECT COALESCE(sum(rows), 0)::int FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
	AND query LIKE '%age(xmin)%' AND query LIKE '%' || $1 || '%'`, table).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestViewReadsTheWholeLookback maps the outbox to a view, whose rows carry
// no versions (no xmin): every poll reads the whole lookback, as before the
// horizon, and still counts each row once, a late commit included.
func TestViewReadsTheWholeLookback(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`CREATE VIEW outbox_view AS SELECT * FROM event_outbox`)
	e := d.newExporter(collectortest.BaseConfig + `    tables:
      outbox: {table: outbox_view}
`)
	d.insertOutbox(outboxRow{uuid(1), "Order", "OrderCreated", "PENDING", -10, nil})
	e.Collect()
	ctx := t.Context()
	tx, err := collectortest.NewConn(t, d.DB).Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at)
		VALUES ($1, 'Order', 'a', 'OrderCreated', 'k', '{}', 'PENDING', $2)`, uuid(2), collectortest.At(5)); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"aggregate_type": "Order", "event_type": "OrderCreated"}
	for i, step := range []struct {
		clock  time.Duration
		before func()
		want   float64
	}{
		{10 * time.Second, func() { d.insertOutbox(outboxRow{uuid(3), "Order", "OrderCreated", "PENDING", 8, nil}) }, 1},
		{40 * time.Second, func() {
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}, 2},
		{70 * time.Second, func() {
			d.Exec(`UPDATE event_outbox SET status = 'PUBLISHED', published_at = $1`, collectortest.At(60))
		}, 2},
	} {
		step.before()
		d.SetClock(step.clock)
		e.Collect()
		if got := e.Value(catalog.OutboxEventsCreated, labels); got != step.want {
			t.Fatalf("step %d: created_total = %v, want %v", i, got, step.want)
		}
	}
	if got := e.Value(catalog.OutboxEventsPublished, labels); got != 3 {
		t.Fatalf("published_total = %v, want 3", got)
	}
}
