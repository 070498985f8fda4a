package pgsource

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open makes a new database with the tables of ddl and returns an admin
// connection to it and the DB under test, with short timeouts.
func open(t *testing.T, ddl string) (admin *pgx.Conn, db *DB) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	admin = pgtest.Connect(t, dsn)
	pgtest.Exec(t, admin, ddl)
	db, err := Open(Options{Name: "orders", DSN: dsn, StatementTimeout: 200 * time.Millisecond, LockTimeout: 100 * time.Millisecond, MaxConnections: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return admin, db
}

// lockTable holds an ACCESS EXCLUSIVE lock on table, as a migration does,
// until the test ends.
func lockTable(t *testing.T, admin *pgx.Conn, table string) {
	t.Helper()
	ctx := context.Background()
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
}

func TestBoundsAreEnforcedByTheServer(t *testing.T) {
	ctx := context.Background()
	admin, db := open(t, "CREATE TABLE t (id int)")

	cases := []struct {
		name string
		sql  string
		want string
	}{
		{"writes are refused", "INSERT INTO t VALUES (1)", "cannot execute INSERT in a read-only transaction"},
		{"statement_timeout stops a slow query on the server", "SELECT pg_sleep(5)", "statement_timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
				_, err := tx.Exec(ctx, c.sql)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "database orders") {
				t.Fatalf("err = %v, want one naming the database and containing %q", err, c.want)
			}
			if time.Since(start) > 3*time.Second {
				t.Fatalf("took %s", time.Since(start))
			}
		})
	}

	t.Run("lock_timeout never queues behind a migration", func(t *testing.T) {
		lockTable(t, admin, "t")
		err := db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "SELECT count(*) FROM t")
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "lock_timeout") {
			t.Fatalf("err = %v, want a lock_timeout error", err)
		}
	})

	t.Run("no statement pays for JIT compilation", func(t *testing.T) {
		var jit string
		if err := db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT current_setting('jit')").Scan(&jit)
		}); err != nil || jit != "off" {
			t.Fatalf("jit = %q, %v; want off inside the exporter's transactions", jit, err)
		}
	})

	t.Run("the session is tagged and transactions do not linger", func(t *testing.T) {
		var app string
		var inTx int
		err := db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&app)
		})
		if err != nil || app != "workflow-exporter" {
			t.Fatalf("application_name = %q, %v", app, err)
		}
		if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'workflow-exporter' AND state LIKE 'idle in transaction%'`).Scan(&inTx); err != nil {
			t.Fatal(err)
		}
		if inTx != 0 {
			t.Fatalf("%d exporter sessions idle in transaction: a snapshot is being held", inTx)
		}
	})
}

func TestErrorsNeverCarryThePassword(t *testing.T) {
	db, err := Open(Options{Name: "orders", DSN: "postgres://u:s3cr3t-pw@127.0.0.1:1/x?connect_timeout=1", StatementTimeout: time.Second, LockTimeout: time.Second, MaxConnections: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Probe(context.Background())
	if err == nil {
		t.Fatal("probe of a closed port succeeded")
	}
	if strings.Contains(err.Error(), "s3cr3t-pw") || !strings.Contains(err.Error(), "database orders") {
		t.Fatalf("error %q must name the database and hide the password", err)
	}
	if _, err := Open(Options{Name: "orders", DSN: "postgres://u:s3cr3t-pw@[bad", StatementTimeout: time.Second}); err == nil || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("parse error %v must exist and hide the DSN", err)
	}
	if got := redactDSN("failed to connect to `host=h user=u password=s3cr3t database=x`: dial"); strings.Contains(got, "s3cr3t") {
		t.Fatalf("redactDSN left the password: %s", got)
	}
}

// TestFailureClasses: every failure carries the class a poll logs it by
// (one line per outage, however the messages vary), and keeps in its chain
// what callers test for (the server's error, pgx.ErrNoRows, the context's
// errors) without keeping the driver's text.
func TestFailureClasses(t *testing.T) {
	ctx := context.Background()
	admin, db := open(t, "CREATE TABLE t (id int); CREATE TABLE locked (id int)")
	query := func(ctx context.Context, sql string) error {
		return db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
			var n any
			return tx.QueryRow(ctx, sql).Scan(&n)
		})
	}
	lockTable(t, admin, "locked")
	expired, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	dead, err := Open(Options{Name: "gone", DSN: "postgres://u@127.0.0.1:1/x", StatementTimeout: time.Second, LockTimeout: time.Second, MaxConnections: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	cases := []struct {
		name  string
		err   error
		class string
		is    error
	}{
		{"a write", query(ctx, "INSERT INTO t VALUES (1) RETURNING id"), "SQLSTATE 25006", nil},
		{"statement_timeout", query(ctx, "SELECT pg_sleep(5)"), "statement_timeout", nil},
		{"lock_timeout", query(ctx, "SELECT count(*) FROM locked"), "lock_timeout", nil},
		{"a missing table", query(ctx, "SELECT * FROM nowhere"), "SQLSTATE 42P01", nil},
		{"no rows", query(ctx, "SELECT id FROM t"), "", pgx.ErrNoRows},
		{"the collection's deadline", query(expired, "SELECT pg_sleep(0.15)"), "timeout", context.DeadlineExceeded},
		{"connection refused", dead.Probe(ctx), "unreachable", nil},
	}
	for _, c := range cases {
		var e *Error
		if !errors.As(c.err, &e) {
			t.Errorf("%s: %T %v is not a *pgsource.Error", c.name, c.err, c.err)
			continue
		}
		if e.FailureClass() != c.class {
			t.Errorf("%s: class %q, want %q (%v)", c.name, e.FailureClass(), c.class, c.err)
		}
		if c.is != nil && !errors.Is(c.err, c.is) {
			t.Errorf("%s: errors.Is(%v) false for %v", c.name, c.is, c.err)
		}
	}
	var pgErr *pgconn.PgError
	if !errors.As(cases[0].err, &pgErr) || pgErr.Code != "25006" {
		t.Errorf("the server's error is not in the chain: %v", cases[0].err)
	}
}
