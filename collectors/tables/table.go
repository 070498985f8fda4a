package tables

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/blocks/watermark"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// tuples is a set of label value tuples, remembered so that a drained label
// set keeps reporting 0 instead of disappearing.
type tuples map[string][]string

func (t tuples) add(vals ...string) {
	k := strings.Join(vals, "\xff")
	if _, ok := t[k]; !ok {
		t[k] = append([]string(nil), vals...)
	}
}

// sorted returns the tuples in a stable order.
func (t tuples) sorted() [][]string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([][]string, len(keys))
	for i, k := range keys {
		out[i] = t[k]
	}
	return out
}

// merge adds the tuples of o.
func (t tuples) merge(o tuples) {
	for k, v := range o {
		t[k] = v
	}
}

// addCounts adds a poll's new counts to the running totals.
func addCounts(total, add map[string]float64) {
	for k, n := range add {
		total[k] += n
	}
}

func tupleKey(vals ...string) string { return strings.Join(vals, "\xff") }

// byTuple holds one accumulator per label tuple (keyed by tupleKey), made
// on first use: what a poll sums its rows into.
type byTuple[T any] map[string]*T

// at is the tuple's accumulator, made if this is its first row.
func (m byTuple[T]) at(vals ...string) *T {
	k := tupleKey(vals...)
	if m[k] == nil {
		m[k] = new(T)
	}
	return m[k]
}

// of is what the tuple accumulated: the zero value if no row had it (a
// remembered tuple that is drained reports 0).
func (m byTuple[T]) of(vals ...string) T {
	if a := m[tupleKey(vals...)]; a != nil {
		return *a
	}
	var zero T
	return zero
}

// agg accumulates a gauge group: a count and the oldest age in it.
type agg struct {
	count  float64
	oldest float64
	stale  float64
}

func (a *agg) merge(count, oldest, stale float64) {
	a.count += count
	a.stale += stale
	if oldest > a.oldest {
		a.oldest = oldest
	}
}

// Options configures a table collector; T is the table's config section.
type Options[T any] struct {
	DB       *pgsource.DB
	Database string
	Table    T
	// ConfigKey is the table's config key, e.g. databases[0].tables.outbox.
	ConfigKey        string
	LateCommitWindow time.Duration
	LabelValueLimit  int
	// LabelValueForgetAfter frees the label values unseen this long (0:
	// never); MaxCatchUp bounds the counters' read after a gap (0: no
	// bound). See state.go.
	LabelValueForgetAfter time.Duration
	MaxCatchUp            time.Duration
	Folds                 *labellimit.Stats
	Logger                *slog.Logger
}

// tableBase is what every table collector and join has: its database, its
// config key for errors, a logger, the limiter of its data-drawn labels and
// the descriptors of the metrics it emits.
type tableBase struct {
	db       *pgsource.DB
	database string
	key      string
	logger   *slog.Logger
	limiter  *labellimit.Limiter
	descs    catalog.Descs

	// name is the collector's name; parts what it keeps (state.go).
	name        string
	parts       tableParts
	maxCatchUp  time.Duration
	forgetAfter time.Duration
}

// newTableBase returns the base of a collector that emits metrics; the
// first one names the limiter of its data-drawn labels.
func newTableBase[T any](o Options[T], metrics ...string) tableBase {
	folds := o.Folds
	if folds == nil {
		folds = labellimit.NewStats()
	}
	return tableBase{db: o.DB, database: o.Database, key: o.ConfigKey, logger: orDiscard(o.Logger),
		limiter: labellimit.NewLimiter(folds, metrics[0], o.LabelValueLimit), descs: catalog.NewDescs(metrics...),
		maxCatchUp: o.MaxCatchUp, forgetAfter: o.LabelValueForgetAfter}
}

// read runs fn in one short read-only transaction. fn first resolves
// the table (its columns and their types, the collector's shape): a missing
// table or column, or a column of a type the mapping cannot read, is a
// *pgschema.Error, kept as it is (its text names table, column and config
// key, no DSN), so the status page can say which key to fix. The labels the
// limiter folded during fn count only when the read succeeds.
func (b *tableBase) read(ctx context.Context, fn func(ctx context.Context, tx pgx.Tx) error) error {
	var schemaErr error
	err := b.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		err := fn(ctx, tx)
		if schemaError(err) {
			schemaErr = err
		}
		return err
	})
	if schemaErr != nil {
		// The database answered: the table is not as configured.
		err = fmt.Errorf("database %s: %w", b.database, schemaErr)
	}
	if err != nil {
		b.limiter.Discard()
		return err
	}
	b.limiter.Flush()
	return nil
}

// poll is read for a collector that counts with watermark windows: fn also
// gets the database clock and the poll's snapshot (pollAt). A failed poll
// leaves no trace (the windows and the limiter forget it; one that timed
// out while catching up after a gap reads less at its next try:
// watermark.Window.Backoff); a successful one commits the windows at the
// database time it started, with its snapshot as the next poll's horizon,
// counts the span they skipped and forgets the label values unseen too
// long (state.go). table is the collector's table, whose kind says whether
// its rows carry versions the horizon can skip.
func (b *tableBase) poll(ctx context.Context, table string, windows []*watermark.Window,
	fn func(ctx context.Context, tx pgx.Tx, at pollAt) error) error {
	var at pollAt
	skippedBefore := b.skippedTotal()
	err := b.read(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if at, err = startPoll(ctx, tx, table); err != nil {
			return err
		}
		return fn(ctx, tx, at)
	})
	for _, w := range windows {
		if err != nil {
			if timedOut(err) {
				w.Backoff()
			}
			w.Abort()
		} else {
			w.CommitSnapshot(at.now, at.snap)
		}
	}
	if err == nil {
		b.afterPoll(at.now, skippedBefore)
	}
	return err
}

// pollAt is what a poll reads first: the database clock, the snapshot that
// places the poll in the database's transaction order (blocks/watermark),
// and whether the table's rows carry versions (xmin): a plain or
// partitioned table or a materialized view does, a view or a foreign table
// does not (its snapshot stays zero, so its counter queries read the whole
// lookback, as they must).
type pollAt struct {
	now       time.Time
	snap      watermark.Snapshot
	versioned bool
}

// sqlStartPoll reads pollAt in one round trip, before any row of the table:
// the snapshot of this statement is older than those of the queries that
// follow, so every transaction older than its xmin had ended before any of
// them began (in READ COMMITTED each statement takes a newer snapshot; in
// REPEATABLE READ this one is the transaction's). The server's start time
// tells two servers (or one restored elsewhere) apart.
const sqlStartPoll = `SELECT now(), pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint,
	extract(epoch FROM pg_postmaster_start_time())::text,
	COALESCE((SELECT c.relkind IN ('r', 'p', 'm') FROM pg_class c WHERE c.oid = to_regclass($1)), false)
FROM pg_current_snapshot() s`

func startPoll(ctx context.Context, tx pgx.Tx, table string) (pollAt, error) {
	var at pollAt
	var xmin, xmax int64
	if err := tx.QueryRow(ctx, sqlStartPoll, pgschema.QuoteTable(table)).Scan(&at.now, &xmin, &xmax, &at.snap.Server, &at.versioned); err != nil {
		return pollAt{}, fmt.Errorf("reading the database clock and snapshot: %w", err)
	}
	if at.versioned {
		at.snap.Xmin, at.snap.Xmax = uint64(xmin), uint64(xmax)
	} else {
		at.snap = watermark.Snapshot{}
	}
	return at, nil
}

// since is the argument of a counter query's newVersions predicate for
// window w: the window's horizon as a 32-bit transaction id (text), or nil
// to read every row of the lookback.
func (at pollAt) since(w *watermark.Window) any {
	x, ok := w.Since(at.snap)
	if !ok || !at.versioned {
		return nil
	}
	return strconv.FormatUint(x&math.MaxUint32, 10)
}

// newVersions is the predicate that lets a counter query skip the row
// versions an earlier poll read (blocks/watermark): it keeps those written
// by a transaction not older than the horizon param (pollAt.since; NULL
// keeps every row). age() counts back from one reference for the whole
// transaction, so age(xmin) <= age(horizon) is "xmin is not older than the
// horizon" (a version newer than the reference has a negative age and is
// kept); the horizon's age is computed once. Row versions the horizon
// skips cost no transfer, only the heap visit of the lookback's index
// scan. A relation without row versions (versioned false) gets the
// predicate without xmin, which its NULL horizon makes true.
func newVersions(param string, versioned bool) string {
	if !versioned {
		return fmt.Sprintf("%s::text IS NULL", param)
	}
	return fmt.Sprintf("(%[1]s::text IS NULL OR age(xmin) <= (SELECT age(%[1]s::text::xid)))", param)
}

// rowVersions reports whether table's rows carry versions (pollAt.versioned),
// for a caller outside a poll (the requirements of check).
func rowVersions(ctx context.Context, tx pgx.Tx, table string) (bool, error) {
	var v bool
	err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT c.relkind IN ('r', 'p', 'm') FROM pg_class c WHERE c.oid = to_regclass($1)), true)`,
		pgschema.QuoteTable(table)).Scan(&v)
	return v, err
}

// check verifies that the table and the required columns of req exist (for
// a collector whose queries do not depend on the table's column types).
func (b *tableBase) check(ctx context.Context, tx pgx.Tx, req pgschema.Requirements) (map[string]bool, error) {
	return pgschema.Check(ctx, tx, req, b.key+".table")
}

// logOnce logs the notes and warnings of a resolved shape (status values
// the column cannot hold) the first time the collector meets each.
func (b *tableBase) logOnce(seen map[string]bool, notes, warnings []string) {
	for _, n := range notes {
		if !seen[n] {
			seen[n] = true
			b.logger.Info("a canonical status the status column cannot hold never matches", "database", b.database, "note", n)
		}
	}
	for _, w := range warnings {
		if !seen[w] {
			seen[w] = true
			b.logger.Warn("a mapped status value the status column cannot hold never matches; fix the mapping", "database", b.database, "warning", w)
		}
	}
}

// columns lists required columns of the table, given as pairs of their key
// under the table's columns: section and their name, so an error names the
// config key to fix.
func (b *tableBase) columns(keyName ...string) []pgschema.Column {
	out := make([]pgschema.Column, 0, len(keyName)/2)
	for i := 0; i+1 < len(keyName); i += 2 {
		out = append(out, pgschema.Column{Key: b.key + ".columns." + keyName[i], Name: keyName[i+1]})
	}
	return out
}

// recentQuery is a counter query over the recent window, with an example
// window start for EXPLAIN and no horizon (the whole window, the first
// poll's read and the most any poll reads).
func recentQuery(name, sql string) pgschema.Query {
	return pgschema.Query{Name: name, SQL: sql, Args: []any{time.Now().Add(-time.Hour), nil}}
}

// gauge and counter build one series of a metric given to newTableBase.
func (b *tableBase) gauge(name string, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(b.descs.Get(name), prometheus.GaugeValue, v, labels...)
}

func (b *tableBase) counter(name string, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(b.descs.Get(name), prometheus.CounterValue, v, labels...)
}

// each runs one query and calls fn after scanning each row into dest;
// errors start with what, which names the query.
func each(ctx context.Context, tx pgx.Tx, what, sql string, args []any, dest []any, fn func() error) error {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if _, err := pgx.ForEachRow(rows, dest, fn); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// eachOffered is each for a query whose rows are few and carry data-drawn
// labels (a row per label tuple and status, or per listed task): it reads
// every row first, offers the label tuples (labels, read from the scanned
// row; nil for a row that names none) to the limiter, then runs fn on each
// row in the query's order. So the values that keep their own label when
// they compete for the limiter's last places do not depend on the order the
// database returns the rows in (labellimit.Offer). The rows of the recent
// window, which can be many, are not buffered this way: their values are
// admitted as they come.
func (b *tableBase) eachOffered(ctx context.Context, tx pgx.Tx, what, sql string, args []any, dest []any, labels func() []string, fn func() error) error {
	var rows [][]reflect.Value
	var tuples [][]string
	err := each(ctx, tx, what, sql, args, dest, func() error {
		row := make([]reflect.Value, len(dest))
		for i, d := range dest {
			v := reflect.ValueOf(d).Elem()
			row[i] = reflect.New(v.Type()).Elem()
			row[i].Set(v)
		}
		rows = append(rows, row)
		if t := labels(); t != nil {
			tuples = append(tuples, slices.Clone(t))
		}
		return nil
	})
	if err != nil {
		return err
	}
	b.limiter.Offer(tuples...)
	for _, row := range rows {
		for i, d := range dest {
			reflect.ValueOf(d).Elem().Set(row[i])
		}
		if err := fn(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}

// unmappedStatuses remembers status values no mapping names and logs each
// once (at most 100), when the poll that found it succeeds.
type unmappedStatuses struct {
	what, table, column string
	warned              map[string]bool
	pending             []string
}

func newUnmappedStatuses(what, table, column string) *unmappedStatuses {
	return &unmappedStatuses{what: what, table: table, column: column, warned: map[string]bool{}}
}

func (u *unmappedStatuses) note(value string) {
	if !u.warned[value] {
		u.pending = append(u.pending, value)
	}
}

func (u *unmappedStatuses) flush(b *tableBase, ok bool) {
	if ok {
		for _, v := range u.pending {
			if len(u.warned) < 100 && !u.warned[v] {
				u.warned[v] = true
				b.logger.Warn(u.what+" table holds a status value that no mapping names; counted as status=\"unmapped\" (add it to statuses: in the config)",
					"database", b.database, "table", u.table, "column", u.column, "value", v)
			}
		}
	}
	u.pending = u.pending[:0]
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
