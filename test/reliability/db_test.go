package reliability

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// faultDB is a database with the reference schema, the exporter's indexes,
// a row in each worker table and the exporter role of
// deploy/sql/004_exporter_role.sql (under a name of its own, with a
// password: the DSN the exporter gets carries it, and it must never show).
type faultDB struct {
	adminURL string
	admin    *pgx.Conn
	name     string
	role     string
	secret   string
	// dsn connects as the exporter role.
	dsn string
}

var roleSeq atomic.Int32

// newFaultDB creates the database on srv (a server the test may own, to
// stop it) and drops it when the test ends.
func newFaultDB(t testing.TB, srv *pgtest.Server) *faultDB {
	t.Helper()
	maint := pgtest.Connect(t, srv.AdminURL)
	n := roleSeq.Add(1)
	d := &faultDB{
		name:   fmt.Sprintf("rel_%d_%d", os.Getpid(), n),
		role:   fmt.Sprintf("wfx_rel_%d_%d", os.Getpid(), n),
		secret: fmt.Sprintf("Rel-Pg-Secret-%d-%d", n, time.Now().UnixNano()),
	}
	pgtest.Exec(t, maint, "CREATE DATABASE "+d.name)
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), srv.AdminURL)
		if err != nil {
			return // the server is gone
		}
		defer c.Close(context.Background())
		_, _ = c.Exec(context.Background(), "DROP DATABASE IF EXISTS "+d.name+" WITH (FORCE)")
		_, _ = c.Exec(context.Background(), "DROP ROLE IF EXISTS "+d.role)
	})
	d.adminURL = pgtest.WithDatabase(srv.AdminURL, d.name)
	d.admin = pgtest.Connect(t, d.adminURL)
	pgtest.ExecRepoFiles(t, d.admin, nil, "deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql")
	roleSQL, err := os.ReadFile(testkit.Path(t, "deploy/sql/004_exporter_role.sql"))
	if err != nil {
		t.Fatal(err)
	}
	pgtest.Exec(t, d.admin, strings.NewReplacer("workflow_exporter", d.role, "change-me", d.secret).Replace(string(roleSQL)))
	pgtest.Exec(t, d.admin, `
INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
  VALUES ('payment', 'k1', 'e1', 'task-1', 'STARTED', now() - interval '5 minutes'),
         ('payment', 'k2', 'e2', 'task-2', 'COMPLETED', now() - interval '1 minute');
INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status)
  VALUES ('main', 'task-3', 'pi-1', 'charge', 'w1', 'COMPLETED');
INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
  VALUES ('kafka', 'm1', 'OrderValidated', 'c1', 'RECEIVED', now() - interval '2 minutes');
INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at)
  VALUES (gen_random_uuid(), 'Order', 'o1', 'OrderCreated', 'k1', '{}', 'PENDING', now() - interval '30 seconds')`)
	u, err := url.Parse(d.adminURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(d.role, d.secret)
	d.dsn = u.String()
	return d
}

// exec runs SQL as the database's owner.
func (d *faultDB) exec(t testing.TB, sql string) {
	t.Helper()
	pgtest.Exec(t, d.admin, sql)
}

// lock holds an ACCESS EXCLUSIVE lock on a table from another connection,
// as a migration does, until the returned function is called.
func (d *faultDB) lock(t testing.TB, table string) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn := pgtest.Connect(t, d.adminURL)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	return func() { _ = tx.Rollback(ctx); _ = conn.Close(ctx) }
}

// databaseConfig is the exporter's config for the database, with the
// settings given (YAML lines under the database's entry).
func databaseConfig(extra ...string) string {
	lines := []string{
		"databases:",
		"  - name: orders",
		"    dsn_env: WFX_REL_DSN",
		"    min_interval: 1ms",
		"    timeout: 30s",
	}
	for _, e := range extra {
		lines = append(lines, "    "+e)
	}
	return strings.Join(lines, "\n") + "\n"
}

// dbFault is a row of the database fault matrix.
type dbFault struct {
	fault
	// settings are the database's config lines for the matrix;
	// leakSettings, if set, replace them in the leak test, where each
	// faulted collection must be quick.
	settings, leakSettings []string
	// make builds the fault for a database (inject, clear, during).
	make func(t *testing.T, d *faultDB, f *fault)
}

// databaseFaults are the faults of the database matrix; srv is the server
// of the test's own that the stop faults stop.
func databaseFaults(srv *pgtest.Server) []dbFault {
	all := func(string) bool { return true }
	lockFor := func(table string) func(t *testing.T, d *faultDB, f *fault) {
		return func(t *testing.T, d *faultDB, f *fault) {
			var release func()
			f.inject = func(t *testing.T) { release = d.lock(t, table) }
			f.clear = func(t *testing.T) { release() }
		}
	}
	return []dbFault{
		{fault: fault{name: "stopped between collections", step: "connect", cause: "unreachable", down: true, gone: all},
			make: func(t *testing.T, _ *faultDB, f *fault) {
				f.inject = func(t *testing.T) { must(t, srv.Halt()) }
				f.clear = func(t *testing.T) { must(t, srv.Resume()) }
			}},
		{fault: fault{name: "stopped during a collection", step: "outbox", cause: "unreachable", down: true, gone: all},
			// Long timeouts: the collection waits on a lock until the
			// server stops; later collections find it stopped. The stop
			// is a crash: a fast stop may end the lock holder's session
			// first, and the waiting query then completes (seen once in
			// CI: the collection succeeded and the next probe found the
			// server gone), which is right but proves nothing here.
			settings: []string{"statement_timeout: 20s", "lock_timeout: 20s"},
			make: func(t *testing.T, d *faultDB, f *fault) {
				lockFor("event_outbox")(t, d, f)
				release := f.clear
				f.during = func(t *testing.T, r *rig, i int) page {
					if i > 0 {
						return r.collect()
					}
					return collectWhileWaiting(t, r, d, func() { must(t, srv.Crash()) })
				}
				f.clear = func(t *testing.T) {
					release(t)
					must(t, srv.Resume())
				}
			}},
		{fault: fault{name: "session terminated during a collection", step: "outbox", cause: "unreachable", down: true, gone: all},
			settings: []string{"statement_timeout: 20s", "lock_timeout: 20s"},
			make: func(t *testing.T, d *faultDB, f *fault) {
				lockFor("event_outbox")(t, d, f)
				f.during = func(t *testing.T, r *rig, _ int) page {
					return collectWhileWaiting(t, r, d, func() {
						d.exec(t, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '"+d.role+"' AND wait_event_type = 'Lock'")
					})
				}
			}},
		{fault: fault{name: "statement timeout behind an ACCESS EXCLUSIVE lock", step: "outbox", cause: "statement_timeout", gone: ownedBy("outbox")},
			settings:     []string{"statement_timeout: 300ms", "lock_timeout: 10s"},
			leakSettings: []string{"statement_timeout: 20ms", "lock_timeout: 10s"},
			make:         lockFor("event_outbox")},
		{fault: fault{name: "lock timeout behind an ACCESS EXCLUSIVE lock", step: "inbox", also: []string{"inbox_horizon"}, cause: "lock_timeout", gone: ownedBy("inbox", "inbox_horizon")},
			settings:     []string{"statement_timeout: 5s", "lock_timeout: 100ms"},
			leakSettings: []string{"statement_timeout: 5s", "lock_timeout: 10ms"},
			make:         lockFor("message_inbox")},
		{fault: fault{name: "table renamed while running", step: "inbox", also: []string{"inbox_horizon"}, gone: ownedBy("inbox", "inbox_horizon"),
			cause: "table missing (databases[0].tables.inbox.table)"},
			make: func(t *testing.T, d *faultDB, f *fault) {
				f.inject = func(t *testing.T) { d.exec(t, "ALTER TABLE message_inbox RENAME TO message_inbox_moved") }
				f.clear = func(t *testing.T) { d.exec(t, "ALTER TABLE message_inbox_moved RENAME TO message_inbox") }
			}},
		{fault: fault{name: "column dropped while running", step: "outbox", gone: ownedBy("outbox"),
			cause: "column missing (databases[0].tables.outbox.columns.published_at)"},
			make: func(t *testing.T, d *faultDB, f *fault) {
				// Every row is unpublished, so adding the column back (and
				// its indexes) restores the table exactly.
				f.inject = func(t *testing.T) { d.exec(t, "ALTER TABLE event_outbox DROP COLUMN published_at") }
				f.clear = func(t *testing.T) {
					d.exec(t, "ALTER TABLE event_outbox ADD COLUMN published_at timestamptz NULL")
					pgtest.ExecRepoFiles(t, d.admin, nil, "deploy/sql/003_exporter_indexes.sql")
				}
			}},
		{fault: fault{name: "role loses SELECT", step: "idempotency", also: []string{"idempotency_horizon"}, cause: "permission denied (SQLSTATE 42501)", gone: ownedBy("idempotency", "idempotency_horizon")},
			make: func(t *testing.T, d *faultDB, f *fault) {
				f.inject = func(t *testing.T) { d.exec(t, "REVOKE SELECT ON workflow_idempotency_record FROM "+d.role) }
				f.clear = func(t *testing.T) { d.exec(t, "GRANT SELECT ON workflow_idempotency_record TO "+d.role) }
			}},
	}
}

// TestDatabaseFaults is the fault matrix of the database source, on a
// PostgreSQL server of the test's own (it is stopped and started).
func TestDatabaseFaults(t *testing.T) {
	srv := pgtest.NewServer(t)
	out := &outputs{}
	var secrets []string
	for _, df := range databaseFaults(srv) {
		t.Run(df.name, func(t *testing.T) {
			d := newFaultDB(t, srv)
			secrets = append(secrets, d.secret)
			t.Setenv("WFX_REL_DSN", d.dsn)
			f := df.fault
			f.kind, f.source = "database", "orders"
			df.make(t, d, &f)
			r := newRig(t, databaseConfig(df.settings...), out)
			f.run(t, r)
		})
	}
	out.scan(t, secrets...)
}

// collectWhileWaiting starts a collection, waits until it waits for a lock
// (the test holds one), runs strike, and returns the collection's page.
func collectWhileWaiting(t *testing.T, r *rig, d *faultDB, strike func()) page {
	t.Helper()
	type result struct {
		p   page
		err error
	}
	done := make(chan result, 1)
	time.Sleep(3 * time.Millisecond) // past min_interval
	go func() { p, err := r.scrape(60 * time.Second); done <- result{p, err} }()
	waitForLockWait(t, d)
	strike()
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	return res.p
}

// waitForLockWait waits until a session of the exporter's role waits for
// a lock.
func waitForLockWait(t *testing.T, d *faultDB) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := d.admin.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE usename = $1 AND wait_event_type = 'Lock'`, d.role).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the exporter's collection never waited for the lock")
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// pgtestConnect connects to the database as its owner, without failing
// the test (the server may be down).
func pgtestConnect(srv *pgtest.Server, d *faultDB) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return pgx.Connect(ctx, d.adminURL)
}
