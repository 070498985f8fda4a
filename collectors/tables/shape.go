package tables

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/blocks/presets"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// A table's shape is what a collector reads from it, as SQL expressions
// over its columns: built from the columns the config maps (the reference
// schema's shape, any type of status column), or from a library preset
// (blocks/presets). The collectors consume shapes only, so a preset is
// data, not a collector of its own: the same queries, the same indexes,
// the same series, less those the shape cannot support.
//
// A shape is resolved against the table at each collection, from the
// column types the collection reads first anyway (pgschema.ColumnTypes): a
// status column is compared in its own type (statuscol.go), a preset picks
// the variant of the library's schema the table has.

// timeExpr is a time column of a shape, or none (column "").
type timeExpr struct {
	column string
	kind   presets.TimeKind
}

func (t timeExpr) present() bool { return t.column != "" }

// value is the time as a timestamptz expression.
func (t timeExpr) value() string {
	c := pgschema.QuoteIdent(t.column)
	if t.kind == presets.EpochMillis {
		return "to_timestamp(" + c + " / 1000.0)"
	}
	return c + "::timestamptz"
}

// after is "the time is after the bound $n", written on the bare column so
// its index serves it: an epoch-millisecond column is compared with the
// bound in milliseconds (rounded down: a row at the bound is read again,
// which the watermark's keys absorb). A timestamp without time zone is
// compared with the timestamptz bound in the database, in the session's
// zone (docs/database.md).
func (t timeExpr) after(param string) string {
	c := pgschema.QuoteIdent(t.column)
	if t.kind == presets.EpochMillis {
		return fmt.Sprintf("%s > floor(extract(epoch FROM %s::timestamptz) * 1000)::bigint", c, param)
	}
	return fmt.Sprintf("%s > %s::timestamptz", c, param)
}

// age is the seconds since the oldest time of a group, by the database
// clock, 0 for none.
func (t timeExpr) age() string {
	if !t.present() {
		return "0::float8"
	}
	return "COALESCE(extract(epoch FROM now() - min(" + t.value() + "))::float8, 0)"
}

// listColumns are a list query's trailing time and age columns (NULL and
// 0 without a time).
func (t timeExpr) listColumns() string {
	if !t.present() {
		return "NULL::timestamptz, 0::float8"
	}
	return fmt.Sprintf("%s, GREATEST(extract(epoch FROM now() - %s)::float8, 0)", t.value(), t.value())
}

func timeOf(t presets.Time) timeExpr { return timeExpr{t.Column, t.Kind} }

// textOr is expr as text, "" for NULL; the empty string for no expr.
func textOr(expr string) string {
	if expr == "" {
		return "''"
	}
	return "COALESCE((" + expr + ")::text, '')"
}

// where joins predicates with AND into a WHERE clause ("" for none).
func where(preds ...string) string {
	var ps []string
	for _, p := range preds {
		if p != "" && p != "true" {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(ps, " AND ")
}

// errorRowsLimit bounds the rows with an error one collection reads for
// the status page's error groups (the newest first).
const errorRowsLimit = 1000

// columnTypes reads the table's column types; a missing table is a
// *pgschema.Error naming tableKey.
func columnTypes(ctx context.Context, tx pgx.Tx, table, tableKey string) (map[string]pgschema.ColumnType, error) {
	cols, ok, err := pgschema.ColumnTypes(ctx, tx, table)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &pgschema.Error{Table: table, Key: tableKey}
	}
	return cols, nil
}

// optionalColumn resolves an optional column of the config (attempts,
// error): set, it is required; unset, the default name is used when the
// table has it. cols nil (the default shape) counts an unset column as
// absent.
func optionalColumn(set *string, def string, cols map[string]pgschema.ColumnType) (name string, required bool) {
	if set != nil {
		return *set, true
	}
	if _, ok := cols[def]; ok {
		return def, false
	}
	return "", false
}

// attemptsAndError resolves the optional attempts and error columns of a
// configured table (columns.attempts and columns.error under key, or the
// default names where the table has them): columns gains them as
// requirements; attempts is an integer expression ("" without the
// column), errorText a text one ("" without).
func attemptsAndError(table, key string, attemptsSet, errorSet *string, cols map[string]pgschema.ColumnType, columns []pgschema.Column) (_ []pgschema.Column, attempts, errorText string, err error) {
	if name, required := optionalColumn(attemptsSet, config.DefaultAttemptsColumn, cols); name != "" {
		columns = append(columns, pgschema.Column{Key: key + ".columns.attempts", Name: name, Optional: !required})
		if attempts, err = attemptsExpr(table, key+".columns.attempts", name, cols); err != nil {
			return columns, "", "", err
		}
	}
	if name, required := optionalColumn(errorSet, config.DefaultErrorColumn, cols); name != "" {
		columns = append(columns, pgschema.Column{Key: key + ".columns.error", Name: name, Optional: !required})
		errorText = pgschema.QuoteIdent(name) + "::text"
	}
	return columns, attempts, errorText, nil
}

// errorRowsSQL lists the rows of table (conds, "" for none) that carry an
// error text: id, the text and the time columns of at (listColumns), the
// newest first (by at, or by id without it), at most $1.
func errorRowsSQL(table, id, errorText string, at timeExpr, conds string) string {
	order := id + " DESC"
	if at.present() {
		order = at.value() + " DESC"
	}
	return fmt.Sprintf(`SELECT %[1]s, %[2]s, %[3]s
FROM %[4]s%[5]s
ORDER BY %[6]s LIMIT $1`, id, textOr(errorText), at.listColumns(), table, where(conds, "("+errorText+") IS NOT NULL"), order)
}

// attemptsExpr is an attempts column as an integer expression, or an
// error naming key when the column's type is not an integer.
func attemptsExpr(table, key, name string, cols map[string]pgschema.ColumnType) (string, error) {
	if t, ok := cols[name]; ok && integerBits[t.Base] == 0 && t.Base != "numeric" {
		return "", &pgschema.Error{Table: table, Column: name, Key: key, Detail: fmt.Sprintf("is of type %s; an attempt count must be an integer", t.Type)}
	}
	return "COALESCE(" + pgschema.QuoteIdent(name) + ", 0)", nil
}

// presetColumns are a preset's columns as requirements: all required,
// named by the preset's config key.
func presetColumns(key string, names []string) []pgschema.Column {
	out := make([]pgschema.Column, len(names))
	for i, n := range names {
		out[i] = pgschema.Column{Key: key + ".preset", Name: n}
	}
	return out
}

// schemaError tells a table's missing column or type from other errors.
func schemaError(err error) bool {
	var se *pgschema.Error
	return errors.As(err, &se)
}
