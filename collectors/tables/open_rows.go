package tables

import (
	"fmt"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
)

// openSelection is the part of an outbox's or inbox's shape that selects
// its open rows (unpublished events, unfinished messages), from which the
// gauges are read, and the partial index they are read by. Both tables
// follow one rule: the index holds the open rows only, so the gauges never
// touch finished history; a table whose every row is open (a library that
// deletes a row once it is done) needs none.
type openSelection struct {
	// open selects the open rows ("" every row: openRows says why no
	// index is needed).
	open, openRows   string
	openIndex        string
	openIndexColumns []string
}

// index is the gauge query's index requirement.
func (o openSelection) index(query, libraryIndex, why string) pgschema.Index {
	if o.open == "" {
		return pgschema.Index{Query: query, NoneNeeded: o.openRows}
	}
	return pgschema.Index{Query: query, Name: o.openIndex, Columns: o.openIndexColumns, Where: o.open,
		LibraryIndex: libraryIndex, Why: why}
}

// presetOpenSelection is a preset's open predicate and index on the table
// named base: the preset's index keys, or when it names none the first
// column the preset reads (a partial index needs a key).
func presetOpenSelection(base, open, openRows string, indexColumns, presetColumns []string) openSelection {
	o := openSelection{open: open, openRows: openRows, openIndex: base + "_open_idx", openIndexColumns: indexColumns}
	if len(o.openIndexColumns) == 0 && open != "" {
		o.openIndexColumns = presetColumns[:1]
	}
	return o
}

// retryingGauge is the gauge query's count of open rows attempted at least
// retrying_after_attempts times, and its argument ($1); a shape without an
// attempts column counts none.
func retryingGauge(attempts string, after int) (string, []any) {
	if attempts == "" {
		return "0::float8", nil
	}
	return fmt.Sprintf("(count(*) FILTER (WHERE %s >= $1))::float8", attempts), []any{after}
}

// errorsQuery is the requirement of a query of error rows (errorRowsSQL).
func errorsQuery(name, sql string) pgschema.Query {
	return pgschema.Query{Name: name, SQL: sql, Args: []any{errorRowsLimit}}
}
