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
//
// JIT compilation is off in these transactions (SET LOCAL jit = off): the
// exporter's statements read a few rows or aggregate an index range in
// milliseconds, but a statement whose plan the planner prices high (a
// correlated subquery it cannot tell is rarely run, as engine-database
// mode's creation date fallback) crosses jit_above_cost and pays for
// compiling: measured on a Camunda runtime table of 50,000 tasks, the
// counts query took 474 ms with PostgreSQL's default jit = on (427 ms of it
// compiling) and 30 ms without, every collection.
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

	"github.com/workflow-exporter/workflow-exporter/blocks/failure"
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
	identity string
	name     string
	pool     *pgxpool.Pool
	setup    string
	iso      pgx.TxIsoLevel
	logger   *slog.Logger
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
	setup := fmt.Sprintf("SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; SET LOCAL idle_in_transaction_session_timeout = %d; SET LOCAL standard_conforming_strings = on; SET LOCAL jit = off",
		ms(o.StatementTimeout), ms(o.LockTimeout), ms(2*o.StatementTimeout))
	iso := pgx.ReadCommitted
	if o.Snapshot {
		iso = pgx.RepeatableRead
	}
	cc := cfg.ConnConfig
	identity := fmt.Sprintf("postgresql %s:%d/%s", cc.Host, cc.Port, cc.Database)
	return &DB{name: o.Name, pool: pool, setup: setup, iso: iso, logger: logger, identity: identity}, nil
}

// Identity is what the database is, without credentials: its host, port
// and database name (a state file written for another is not restored).
func (db *DB) Identity() string { return db.identity }

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
		return db.wrap(ctx, err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	// No arguments: pgx sends this with the simple protocol, one round trip.
	if _, err := tx.Exec(ctx, db.setup); err != nil {
		return db.wrap(ctx, err)
	}
	if err := fn(ctx, tx); err != nil {
		return db.wrap(ctx, err)
	}
	// Commit, not rollback, so a read-only transaction ends the ordinary way.
	return db.wrap(ctx, tx.Commit(ctx))
}

// Now returns the database clock at the start of tx. Every age and window
// uses it, never the exporter's clock.
func Now(ctx context.Context, tx pgx.Tx) (time.Time, error) {
	var now time.Time
	err := tx.QueryRow(ctx, "SELECT now()").Scan(&now)
	return now, err
}

// Error is a failure to read a database. Its text names the database and
// never carries the DSN; FailureClass says what kind of failure it is, so a
// poll logs an outage once however its messages vary. errors.As finds the
// server's *pgconn.PgError in it, and errors.Is the context's errors and
// pgx.ErrNoRows; nothing else of the driver's error is kept.
type Error struct {
	msg   string
	class string
	chain []error
}

func (e *Error) Error() string        { return e.msg }
func (e *Error) FailureClass() string { return e.class }
func (e *Error) Unwrap() []error      { return e.chain }

// wrap names the database, classifies the failure and strips anything that
// could carry the DSN. ctx is the context the failed work ran under.
func (db *DB) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var already *Error
	if errors.As(err, &already) && already.msg == err.Error() {
		return err
	}
	e := &Error{class: classify(ctx, err)}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		e.chain = append(e.chain, pgErr)
	}
	for _, sentinel := range []error{context.DeadlineExceeded, context.Canceled, pgx.ErrNoRows} {
		if errors.Is(err, sentinel) {
			e.chain = append(e.chain, sentinel)
		}
	}
	switch {
	case pgErr != nil && pgErr.Code == "57014" && e.class == "statement_timeout":
		e.msg = fmt.Sprintf("database %s: query cancelled by statement_timeout (%s): %s", db.name, pgErr.Message, redactDSN(err.Error()))
	case pgErr != nil && pgErr.Code == "55P03":
		e.msg = fmt.Sprintf("database %s: lock_timeout reached waiting for a lock (a migration holding the table?): %s", db.name, redactDSN(err.Error()))
	default:
		e.msg = fmt.Sprintf("database %s: %s", db.name, redactDSN(err.Error()))
	}
	return e
}

// classify names the kind of a failure (see failure.Classer): the
// collection's own deadline, a server-side timeout, the server unreachable
// or going away, or a server error by SQLSTATE.
func classify(ctx context.Context, err error) string {
	if ctx != nil && ctx.Err() != nil {
		// Whatever the driver made of it (a cancelled query, a closed
		// connection), the collection ran out of time or was stopped.
		if errors.Is(ctx.Err(), context.Canceled) {
			return failure.Cancelled
		}
		return failure.Timeout
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "57014" && strings.Contains(pgErr.Message, "user request"):
			return failure.Timeout
		case pgErr.Code == "57014":
			return "statement_timeout"
		case pgErr.Code == "55P03":
			return "lock_timeout"
		case strings.HasPrefix(pgErr.Code, "08"), // connection exception
			pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, cannot connect now
			return failure.Unreachable
		case pgErr.Code == "42501":
			return "permission denied (SQLSTATE 42501)"
		case strings.HasPrefix(pgErr.Code, "28"):
			return "authentication failed (SQLSTATE " + pgErr.Code + ")"
		}
		return "SQLSTATE " + pgErr.Code
	}
	if errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) {
		return failure.Timeout
	}
	var connectErr *pgconn.ConnectError
	if failure.IsConnectionError(err) || errors.As(err, &connectErr) {
		return failure.Unreachable
	}
	if strings.Contains(err.Error(), "closed pool") {
		return "closed" // Close ran: the source was removed or the exporter stops
	}
	return ""
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
