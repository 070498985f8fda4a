// Package pgschema describes what a collector needs from a PostgreSQL table
// (its columns, the indexes that keep its queries off the table's history,
// and those queries) and checks a table against it. The table collectors
// and the engine-database reader declare their Requirements; a collection
// verifies the table and columns before reading (Check), `workflow-exporter
// check` reports missing columns and indexes (TableColumns, ServingIndex),
// and the index SQL under deploy/sql is rendered from the same declarations
// (Index.CreateStatement).
package pgschema

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Column is one column a collector reads, with the config key that names it,
// so errors can say what to fix.
type Column struct {
	// Key is the config key, e.g. "databases[0].tables.outbox.columns.created_at".
	Key string
	// Name is the column name in the table.
	Name string
	// Optional columns enable a feature when present; their absence is not
	// an error.
	Optional bool
}

// Index is an index a collector needs so that its queries read only the rows
// they report on (open work, or the recent window), never the terminal
// history.
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
	// ReferencePrimaryKey marks an index the primary key of the reference
	// schema (deploy/sql/001_reference_schema.sql) already provides: the
	// generated SQL leaves it out, `check` still verifies it.
	ReferencePrimaryKey bool
	// LibraryIndex names an index the library that owns the table creates
	// itself (a preset's table) and that serves the query: the generated
	// SQL leaves the statement commented out, `check` still asks the
	// planner.
	LibraryIndex string
	// NoneNeeded says why the query needs no index (it has no Columns):
	// e.g. every row of the table is open work, because the library deletes
	// a row once it is done. `check` prints it, the generated SQL too.
	NoneNeeded string
}

// CreateStatement renders the index as SQL for the given table.
func (ix Index) CreateStatement(table string) string {
	cols := make([]string, len(ix.Columns))
	for i, c := range ix.Columns {
		cols[i] = QuoteIdent(c)
	}
	s := fmt.Sprintf("CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON %s (%s)", QuoteIdent(ix.Name), QuoteTable(table), strings.Join(cols, ", "))
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
	// Ordered marks a query that reads the first rows of an index in its
	// order (ORDER BY ... LIMIT, as a loose index scan does): an index
	// that only restricts the scan does not serve it, the plan must need
	// no sort (see ServingOrderedIndex).
	Ordered bool
}

// Requirements is what a collector needs from one table.
type Requirements struct {
	// Kind is the table's kind: the config section of a worker table
	// (idempotency, processed_jobs, inbox, outbox), or "engine" for a
	// table of the engine database.
	Kind    string
	Table   string
	Columns []Column
	Indexes []Index
	Queries []Query
	// Preset names the library preset the table is read by (a config's
	// tables.<kind>.preset), empty for a table mapped by its columns.
	Preset string
	// Related are the other tables the same collector reads (a library's
	// dead-letter table beside its inbox), each with its own requirements.
	Related []Requirements
	// Resolve, when set, returns the requirements for the table as it is:
	// queries and indexes that depend on the table's columns (a status
	// column compared in its own type, a library's schema version told
	// apart by its columns) rendered for the types the database reports,
	// and notes on what the mapping cannot match (a mapped status value the
	// column's type cannot hold). The requirements above are those of the
	// default shape (text status columns), from which deploy/sql is
	// generated; `check` and the collections use the resolved ones.
	Resolve func(ctx context.Context, tx pgx.Tx) (Resolved, error)
	// Probes are what the collector needs beyond the table's columns and
	// indexes (the replication slot of an outbox relay), for `check`.
	Probes []Probe
}

// Resolved is a table's requirements as resolved against the database, with
// the notes on what a mapping cannot match: each a Note, or a Warning when
// the configuration names a value that can never match.
type Resolved struct {
	Requirements
	Notes    []string
	Warnings []string
}

// Probe is a check a collector needs beyond its table's columns and
// indexes: `workflow-exporter check` runs it in a read-only transaction of
// its own, after the table's checks, and prints what it reports. The
// collector runs the same reading at every collection, so check and
// collection fail alike.
type Probe struct {
	// Name says what is checked, e.g. "relay slot outbox_relay".
	Name string
	// Run returns what it found; an error is a problem the collector
	// fails on (its text names the config key to fix).
	Run func(ctx context.Context, tx pgx.Tx) (ProbeReport, error)
}

// ProbeReport is what a probe found besides errors: notes on what is
// there, and warnings of what will go wrong without a change.
type ProbeReport struct {
	Notes, Warnings []string
}

// QuoteTable quotes a possibly schema-qualified table name.
func QuoteTable(name string) string {
	return pgx.Identifier(strings.Split(name, ".")).Sanitize()
}

// QuoteIdent quotes one identifier (a column or index name).
func QuoteIdent(name string) string { return pgx.Identifier{name}.Sanitize() }

// QuoteLiterals renders string literals for an IN list. The values come from
// the config, not from data; they are inlined rather than bound so the
// planner can match the query against a partial index with the same
// predicate (a generic plan over a parameter cannot prove the implication).
func QuoteLiterals(vals []string) string {
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

// BaseName is the table name without its schema, for index names.
func BaseName(table string) string {
	if i := strings.LastIndex(table, "."); i >= 0 {
		return table[i+1:]
	}
	return table
}

// Error reports a missing table or column, or a column whose type the
// collector cannot read as configured (Detail), naming the config key.
type Error struct {
	Table  string
	Column string
	Key    string
	// Detail says what is wrong with a column that exists.
	Detail string
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("table %s: column %s %s (config key %s)", e.Table, e.Column, e.Detail, e.Key)
	}
	if e.Column == "" {
		return fmt.Sprintf("table %s does not exist or is not visible to this role (config key %s)", e.Table, e.Key)
	}
	return fmt.Sprintf("table %s has no column %s (config key %s)", e.Table, e.Column, e.Key)
}

// FailureClass names the failure for the log and the status page
// (blocks/failure): what is missing, and the config key that names it.
func (e *Error) FailureClass() string {
	if e.Detail != "" {
		return "column type (" + e.Key + ")"
	}
	if e.Column == "" {
		return "table missing (" + e.Key + ")"
	}
	return "column missing (" + e.Key + ")"
}

// TableColumns returns the columns of a table and their types, or ok=false
// when the table does not exist (or the role cannot see it).
func TableColumns(ctx context.Context, tx pgx.Tx, table string) (cols map[string]string, ok bool, err error) {
	types, ok, err := ColumnTypes(ctx, tx, table)
	if !ok || err != nil {
		return nil, ok, err
	}
	cols = make(map[string]string, len(types))
	for n, t := range types {
		cols[n] = t.Type
	}
	return cols, true, nil
}

// ColumnType is a column's type as far as comparing values in it goes.
type ColumnType struct {
	// Type is the column's type as format_type prints it, e.g.
	// "character varying(20)" or "inbox_state".
	Type string
	// Base is the name (pg_type.typname) of the type values are compared
	// in: the column's own type, or for a domain its base type (int2,
	// int4, int8, bool, text, varchar, bpchar, or an enum's name).
	Base string
	// Category is the base type's pg_type.typcategory: "S" string, "N"
	// numeric, "B" boolean, "E" enum, and others.
	Category string
	// Domain says the column's type is a domain over Base: a value is
	// compared after casting the column to BaseType (a domain over an enum
	// has no comparison operator of its own, and its constraints never see
	// a literal then).
	Domain bool
	// BaseType is Base as a type name to cast to, schema-qualified where
	// the role's search_path does not find it (format_type).
	BaseType string
	// Labels are an enum's labels in their order (pg_enum): the only
	// values the column can hold.
	Labels []string
}

// Text is the type ColumnTypes reports for text columns, the type the
// default requirements (and deploy/sql) assume for status columns.
var Text = ColumnType{Type: "text", Base: "text", BaseType: "text", Category: "S"}

// ColumnTypes returns the columns of a table with their types (a domain's
// base type, an enum's labels), or ok=false when the table does not exist
// (or the role cannot see it). One query besides the table lookup.
func ColumnTypes(ctx context.Context, tx pgx.Tx, table string) (cols map[string]ColumnType, ok bool, err error) {
	var oid *uint32
	if err := tx.QueryRow(ctx, "SELECT to_regclass($1)::oid", QuoteTable(table)).Scan(&oid); err != nil {
		return nil, false, err
	}
	if oid == nil {
		return nil, false, nil
	}
	rows, err := tx.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod), b.typname::text, format_type(b.oid, NULL), b.typcategory::text, t.typtype = 'd',
		ARRAY(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = b.oid ORDER BY e.enumsortorder)
	FROM pg_attribute a
	JOIN pg_type t ON t.oid = a.atttypid
	JOIN pg_type b ON b.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
	WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped`, *oid)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	cols = map[string]ColumnType{}
	for rows.Next() {
		var name string
		var t ColumnType
		if err := rows.Scan(&name, &t.Type, &t.Base, &t.BaseType, &t.Category, &t.Domain, &t.Labels); err != nil {
			return nil, false, err
		}
		if len(t.Labels) == 0 {
			t.Labels = nil
		}
		cols[name] = t
	}
	err = rows.Err()
	return cols, true, err
}

// Check verifies that the table and its required columns exist, and reports
// which optional columns are present. tableKey is the config key of the
// table name, for the error.
func Check(ctx context.Context, tx pgx.Tx, req Requirements, tableKey string) (present map[string]bool, err error) {
	cols, ok, err := TableColumns(ctx, tx, req.Table)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &Error{Table: req.Table, Key: tableKey}
	}
	return CheckColumns(req, cols)
}

// CheckColumns is Check on columns already read (TableColumns, or the
// names of ColumnTypes): the first required column missing is the error.
func CheckColumns[T any](req Requirements, cols map[string]T) (present map[string]bool, err error) {
	present = map[string]bool{}
	for _, c := range req.Columns {
		if _, ok := cols[c.Name]; ok {
			present[c.Name] = true
			continue
		}
		if !c.Optional {
			return nil, &Error{Table: req.Table, Column: c.Name, Key: c.Key}
		}
	}
	return present, nil
}
