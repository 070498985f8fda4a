package collectors

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/workflow-exporter/workflow-exporter/internal/fold"
	"github.com/workflow-exporter/workflow-exporter/internal/pgsource"
	"github.com/workflow-exporter/workflow-exporter/internal/watermark"
)

// Column is one column a table collector reads, with the config key that
// names it, so errors can say what to fix.
type Column struct {
	// Key is the config key, e.g. "databases[0].tables.outbox.columns.created_at".
	Key string
	// Name is the column name in the table.
	Name string
	// Optional columns enable a feature when present; their absence is not
	// an error.
	Optional bool
}

// Index is an index a table collector needs so that its queries read only
// the rows they report on (open work, or the recent window), never the
// terminal history.
type Index struct {
	Name    string
	Columns []string
	// Where is the partial-index predicate, empty for a full index.
	Where string
	// Why says which query the index serves.
	Why string
	// Query names the entry of Requirements.Queries the index serves, so
	// `check` can ask the planner whether some index already does.
	Query string
	// Requires names an optional column without which the index (and its
	// query) does not apply.
	Requires string
	// SeedPrimaryKey marks an index the seed schema's primary key already
	// provides: the generated SQL leaves it out, `check` still verifies it.
	SeedPrimaryKey bool
}

// CreateStatement renders the index as SQL for the given table.
func (ix Index) CreateStatement(table string) string {
	cols := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		cols[i] = quoteIdent(c)
	}
	s := fmt.Sprintf("CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON %s (%s)", quoteIdent(ix.Name), quoteTable(table), strings.Join(cols, ", "))
	if ix.Where != "" {
		s += " WHERE " + ix.Where
	}
	return s + ";"
}

// Query is a statement a collector runs, with example arguments, so `check`
// can EXPLAIN it and prove an index serves it.
type Query struct {
	Name string
	SQL  string
	Args []any
	// Requires names an optional column without which the query is not run.
	Requires string
}

// Requirements is what a table collector needs from its table.
type Requirements struct {
	// Kind is the table section: idempotency, processed_jobs, inbox, outbox.
	Kind    string
	Table   string
	Columns []Column
	Indexes []Index
	Queries []Query
}

// TableCollector is a collector over one configured table.
type TableCollector interface {
	Name() string
	Collect(ctx context.Context) ([]prometheus.Metric, error)
	Requirements() Requirements
}

// quoteTable quotes a possibly schema-qualified table name.
func quoteTable(name string) string {
	return pgx.Identifier(strings.Split(name, ".")).Sanitize()
}

func quoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

// literalList renders string literals for an IN list. Values come from the
// config, not from data; they are inlined rather than bound so the planner
// can match the query against a partial index with the same predicate (a
// generic plan over a parameter cannot prove the implication).
func literalList(vals []string) string {
	if len(vals) == 0 {
		// IN () is a syntax error; a value no status equals keeps the
		// predicate valid and false.
		return "NULL"
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return strings.Join(out, ", ")
}

// SchemaError reports a missing table or column, naming the config key.
type SchemaError struct {
	Table  string
	Column string
	Key    string
}

func (e *SchemaError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("table %s does not exist or is not visible to this role (config key %s)", e.Table, e.Key)
	}
	return fmt.Sprintf("table %s has no column %s (config key %s)", e.Table, e.Column, e.Key)
}

// TableColumns returns the columns of a table, or ok=false when the table
// does not exist (or the role cannot see it).
func TableColumns(ctx context.Context, tx pgx.Tx, table string) (cols map[string]string, ok bool, err error) {
	var oid *uint32
	if err := tx.QueryRow(ctx, "SELECT to_regclass($1)::oid", quoteTable(table)).Scan(&oid); err != nil {
		return nil, false, err
	}
	if oid == nil {
		return nil, false, nil
	}
	rows, err := tx.Query(ctx, `SELECT attname, format_type(atttypid, atttypmod)
		FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped`, *oid)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	cols = map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, false, err
		}
		cols[name] = typ
	}
	err = rows.Err()
	return cols, true, err
}

// checkSchema verifies the table and its required columns exist, and
// reports which optional columns are present.
func checkSchema(ctx context.Context, tx pgx.Tx, req Requirements, tableKey string) (map[string]bool, error) {
	cols, ok, err := TableColumns(ctx, tx, req.Table)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &SchemaError{Table: req.Table, Key: tableKey}
	}
	present := map[string]bool{}
	for _, c := range req.Columns {
		if _, ok := cols[c.Name]; ok {
			present[c.Name] = true
			continue
		}
		if !c.Optional {
			return nil, &SchemaError{Table: req.Table, Column: c.Name, Key: c.Key}
		}
	}
	return present, nil
}

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

// TableOptions configures a table collector; T is the table's config section.
type TableOptions[T any] struct {
	DB       *pgsource.DB
	Database string
	Table    T
	// ConfigKey is the table's config key, e.g. databases[0].tables.outbox.
	ConfigKey        string
	LateCommitWindow time.Duration
	LabelValueLimit  int
	Folds            *fold.Stats
	Logger           *slog.Logger
}

// tableBase is what every table collector has: its database, its config
// key for errors, a logger and the limiter of its data-drawn labels.
type tableBase struct {
	db       *pgsource.DB
	database string
	key      string
	logger   *slog.Logger
	limiter  *fold.Limiter
}

func newTableBase[T any](o TableOptions[T], limiterMetric string) tableBase {
	folds := o.Folds
	if folds == nil {
		folds = fold.NewStats()
	}
	return tableBase{db: o.DB, database: o.Database, key: o.ConfigKey, logger: orDiscard(o.Logger),
		limiter: fold.NewLimiter(folds, limiterMetric, o.LabelValueLimit)}
}

// poll runs one collection in one short read-only transaction: it reads the
// database clock, checks the table and columns, then calls fn. A failed
// poll leaves no trace (the windows and the limiter forget it); a
// successful one commits the windows at the database time it started.
func (b *tableBase) poll(ctx context.Context, req Requirements, windows []*watermark.Window,
	fn func(ctx context.Context, tx pgx.Tx, dbNow time.Time, present map[string]bool) error) error {
	var dbNow time.Time
	err := b.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if dbNow, err = pgsource.Now(ctx, tx); err != nil {
			return err
		}
		present, err := checkSchema(ctx, tx, req, b.key+".table")
		if err != nil {
			return err
		}
		return fn(ctx, tx, dbNow, present)
	})
	if err != nil {
		for _, w := range windows {
			w.Abort()
		}
		b.limiter.Discard()
		return err
	}
	for _, w := range windows {
		w.Commit(dbNow)
	}
	b.limiter.Flush()
	return nil
}

// each runs one query and calls fn after scanning each row into dest;
// errors name the query.
func each(ctx context.Context, tx pgx.Tx, what, sql string, args []any, dest []any, fn func() error) error {
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("%s query: %w", what, err)
	}
	if _, err := pgx.ForEachRow(rows, dest, fn); err != nil {
		return fmt.Errorf("%s query: %w", what, err)
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

// baseName is the table name without its schema, for index names.
func baseName(table string) string {
	for i := len(table) - 1; i >= 0; i-- {
		if table[i] == '.' {
			return table[i+1:]
		}
	}
	return table
}

// openStatusPredicate selects the rows whose status is not terminal,
// including a NULL status: NULL NOT IN (...) is never true, and a row
// without a status must be counted (as "unmapped"), not dropped. The gauge
// queries and their partial indexes share it, so the planner can match the
// two.
func openStatusPredicate(column string, terminal []string) string {
	c := quoteIdent(column)
	return "(" + c + " IS NULL OR " + c + " NOT IN (" + literalList(terminal) + "))"
}
