// Package pgsource is the exporter's only door into PostgreSQL: a small pool
// whose every query runs in a short read-only transaction with a server-side
// statement_timeout and lock_timeout.
//
// Why each bound: cancelling a Go context does not stop the server's work by
// itself, so statement_timeout bounds it on the server; lock_timeout keeps a
// collector from queueing behind a migration's ACCESS EXCLUSIVE lock; a
// transaction per collector (never one long one) keeps the exporter from
// pinning the xmin horizon and bloating the very queue tables it watches.
// The timeouts are set with SET LOCAL inside the transaction, not as startup
// parameters, so they also work through PgBouncer in transaction mode.
package pgsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Options configures a DB.
type Options struct {
	// Name is the configured database name, used in errors and logs.
	Name             string
	DSN              string
	StatementTimeout time.Duration
	LockTimeout      time.Duration
	MaxConnections   int
	Logger           *slog.Logger
	// Snapshot runs each ReadOnly transaction at REPEATABLE READ, so all its
	// queries see one snapshot (still short: one collection).
	Snapshot bool
}

// DB is a read-only handle on one database.
type DB struct {
	name   string
	pool   *pgxpool.Pool
	setup  string
	iso    pgx.TxIsoLevel
	logger *slog.Logger
}

// Open prepares a pool; it does not connect until first use, so a database
// that is down at start-up is reported by the collections, not fatal.
func Open(o Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		// pgx errors may echo the DSN, password included: never pass them on.
		return nil, fmt.Errorf("database %s: the DSN cannot be parsed (check its syntax; it is not shown because it may hold a password)", o.Name)
	}
	cfg.MaxConns = int32(o.MaxConnections)
	cfg.MinConns = 0
	cfg.MaxConnIdleTime = 5 * time.Minute
	cfg.HealthCheckPeriod = time.Minute
	if cfg.ConnConfig.ConnectTimeout == 0 || cfg.ConnConfig.ConnectTimeout > o.StatementTimeout {
		cfg.ConnConfig.ConnectTimeout = o.StatementTimeout
	}
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "workflow-exporter"
	}
	// On a context deadline, also ask the server to cancel the statement
	// instead of only closing our side of the socket.
	cfg.ConnConfig.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, CancelRequestDelay: 100 * time.Millisecond, DeadlineDelay: time.Second}
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", o.Name, err)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	setup := fmt.Sprintf("SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; SET LOCAL idle_in_transaction_session_timeout = %d; SET LOCAL standard_conforming_strings = on",
		ms(o.StatementTimeout), ms(o.LockTimeout), ms(2*o.StatementTimeout))
	iso := pgx.ReadCommitted
	if o.Snapshot {
		iso = pgx.RepeatableRead
	}
	return &DB{name: o.Name, pool: pool, setup: setup, iso: iso, logger: logger}, nil
}

func ms(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	if d < time.Millisecond {
		return 1
	}
	return d.Milliseconds()
}

// Name returns the configured database name.
func (db *DB) Name() string { return db.name }

// Close closes the pool.
func (db *DB) Close() { db.pool.Close() }

// Probe checks that the database answers.
func (db *DB) Probe(ctx context.Context) error {
	return db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var one int
		return tx.QueryRow(ctx, "SELECT 1").Scan(&one)
	})
}

// ReadOnly runs fn in a read-only transaction with the configured timeouts
// and returns the database clock at the transaction's start.
func (db *DB) ReadOnly(ctx context.Context, fn func(context.Context, pgx.Tx) error) error {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: db.iso})
	if err != nil {
		return db.wrap(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// No arguments: pgx sends this with the simple protocol, one round trip.
	if _, err := tx.Exec(ctx, db.setup); err != nil {
		return db.wrap(err)
	}
	if err := fn(ctx, tx); err != nil {
		return db.wrap(err)
	}
	// Commit, not rollback, so a read-only transaction ends the ordinary way.
	return db.wrap(tx.Commit(ctx))
}

// Now returns the database clock at the start of tx. Every age and window
// uses it, never the exporter's clock.
func Now(ctx context.Context, tx pgx.Tx) (time.Time, error) {
	var now time.Time
	err := tx.QueryRow(ctx, "SELECT now()").Scan(&now)
	return now, err
}

// wrap names the database and strips anything that could carry the DSN.
func (db *DB) wrap(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57014":
			return fmt.Errorf("database %s: query cancelled by statement_timeout (%s): %w", db.name, pgErr.Message, err)
		case "55P03":
			return fmt.Errorf("database %s: lock_timeout reached waiting for a lock (a migration holding the table?): %w", db.name, err)
		}
		return fmt.Errorf("database %s: %w", db.name, err)
	}
	return fmt.Errorf("database %s: %s", db.name, redactDSN(err.Error()))
}

// redactDSN removes passwords from URLs and key=value DSN fragments that a
// connection error may echo.
func redactDSN(s string) string {
	fields := strings.Fields(s)
	for i, f := range fields {
		if strings.HasPrefix(f, "password=") {
			fields[i] = "password=xxxxx"
			continue
		}
		if strings.Contains(f, "://") {
			if u, err := url.Parse(strings.Trim(f, `"'(),:`)); err == nil && u.User != nil {
				fields[i] = strings.Replace(f, strings.Trim(f, `"'(),:`), u.Redacted(), 1)
			}
		}
	}
	return strings.Join(fields, " ")
}
