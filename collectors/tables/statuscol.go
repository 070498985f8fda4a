package tables

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// A status column is compared with the mapped values in its own type: a
// text column with string literals, an enum with its labels, an integer
// column with integers, a boolean with true and false. So the predicates
// stay the ones the partial indexes are built with (PostgreSQL refuses an
// enum's cast to text in an index predicate: enum_out is not immutable),
// and no value is ever handed to the column's input function that the type
// cannot hold: a mapped or canonical value that no value of the type can
// equal is dropped (it can never match), never compared, so no mapping can
// fail a query with SQLSTATE 22P02 (invalid input) or 42883 (no operator).
// The type is read from the database at each collection (with the table's
// columns, which the collection reads anyway), so an ALTER TYPE ... ADD VALUE
// takes effect at the next one.

// statusColumn is a status column and its type.
type statusColumn struct {
	// key is the config key naming the column, name the column.
	key, name string
	typ       pgschema.ColumnType
	// expr is the column as it is compared: the quoted name, or cast to its
	// base type for a domain (a relabelling, allowed in an index
	// predicate), so a domain's CHECK never sees a literal.
	expr string
	kind statusKind
}

type statusKind int

const (
	kindString statusKind = iota
	kindEnum
	kindInteger
	kindBoolean
)

// integerBits are the integer types a status column may have, by base
// type name, with their width.
var integerBits = map[string]int{"int2": 16, "int4": 32, "int8": 64}

// statusColumnIn is newStatusColumn for the status column name of a table
// whose columns' types are cols (nil, or name absent: text, as the
// requirements before a table is read assume); key is the table's config
// key, whose columns.status names the column.
func statusColumnIn(table, key, name string, cols map[string]pgschema.ColumnType) (statusColumn, error) {
	t := pgschema.Text
	if ct, ok := cols[name]; ok {
		t = ct
	}
	return newStatusColumn(table, key+".columns.status", name, t)
}

// newStatusColumn returns the column for its type, or an error naming the
// key when its type cannot hold statuses.
func newStatusColumn(table, key, name string, t pgschema.ColumnType) (statusColumn, error) {
	s := statusColumn{key: key, name: name, typ: t, expr: pgschema.QuoteIdent(name)}
	switch {
	case t.Category == "E":
		s.kind = kindEnum
	case t.Category == "B" && t.Base == "bool":
		s.kind = kindBoolean
	case integerBits[t.Base] > 0:
		s.kind = kindInteger
	case t.Category == "S":
		s.kind = kindString
	default:
		return s, &pgschema.Error{Table: table, Column: name, Key: key, Detail: fmt.Sprintf("is of type %s, which cannot hold statuses; use text, varchar, an enum, smallint, integer, bigint or boolean", t.Type)}
	}
	if t.Domain {
		s.expr = "(" + s.expr + ")::" + t.BaseType
	}
	return s, nil
}

// literal returns a value as a literal of the column's type and as the
// column's text output (what `status::text` reads back), or ok=false when
// no value of the type can equal it.
func (s statusColumn) literal(v string) (lit, text string, ok bool) {
	switch s.kind {
	case kindEnum:
		if !slices.Contains(s.typ.Labels, v) {
			return "", "", false
		}
		return pgschema.QuoteLiterals([]string{v}), v, true
	case kindInteger:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, integerBits[s.typ.Base])
		if err != nil {
			return "", "", false
		}
		t := strconv.FormatInt(n, 10)
		return t, t, true
	case kindBoolean:
		b, ok := parseBool(v)
		if !ok {
			return "", "", false
		}
		t := strconv.FormatBool(b)
		return t, t, true
	}
	return pgschema.QuoteLiterals([]string{v}), v, true
}

// parseBool accepts what PostgreSQL's boolean input accepts (boolin: true,
// false, yes, no, on, off, 1, 0 and unique prefixes, any case, trimmed).
func parseBool(v string) (bool, bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	switch v {
	case "1":
		return true, true
	case "0":
		return false, true
	case "o", "":
		return false, false
	}
	for _, w := range []struct {
		word string
		val  bool
	}{{"true", true}, {"yes", true}, {"on", true}, {"false", false}, {"no", false}, {"off", false}} {
		min := 1
		if w.word == "on" || w.word == "off" {
			min = 2 // "o" alone is ambiguous
		}
		if len(v) >= min && strings.HasPrefix(w.word, v) {
			return w.val, true
		}
	}
	return false, false
}

// describe names the column's type for a note.
func (s statusColumn) describe() string {
	if s.kind == kindEnum {
		return fmt.Sprintf("enum %s: %s", s.typ.Type, strings.Join(s.typ.Labels, ", "))
	}
	return s.typ.Type
}

// in renders "the column is one of values" (values already held by the
// type: resolved), false for none.
func (s statusColumn) in(values []string) string {
	lits := s.literals(values)
	if len(lits) == 0 {
		return "false"
	}
	return s.expr + " IN (" + strings.Join(lits, ", ") + ")"
}

// notIn renders its complement, a NULL status included: true for none.
func (s statusColumn) notIn(values []string) string {
	lits := s.literals(values)
	if len(lits) == 0 {
		return "true"
	}
	return "(" + s.expr + " IS NULL OR " + s.expr + " NOT IN (" + strings.Join(lits, ", ") + "))"
}

func (s statusColumn) literals(values []string) []string {
	var out []string
	for _, v := range values {
		if lit, _, ok := s.literal(v); ok {
			out = append(out, lit)
		}
	}
	return out
}

// text is the column read back as text (its label, digits, true/false).
func (s statusColumn) text() string { return pgschema.QuoteIdent(s.name) + "::text" }

// resolvedStatuses is a status mapping as the column's type holds it: each
// canonical status with the values the column can hold, in the column's
// text output form (so a row's status::text finds its canonical status),
// and the values dropped.
type resolvedStatuses struct {
	m        config.StatusMap
	notes    []string
	warnings []string
}

// resolveStatuses resolves a mapping (key is its config key) for the
// column.
func resolveStatuses(key string, m config.StatusMap, col statusColumn) resolvedStatuses {
	r := resolvedStatuses{m: config.StatusMap{}}
	for _, canon := range m.CanonicalNames() {
		r.m[canon] = []string{}
		for _, v := range m[canon] {
			if _, text, ok := col.literal(v); ok {
				r.m[canon] = append(r.m[canon], text)
				continue
			}
			r.drop(fmt.Sprintf("%s.%s", key, canon), canon, v, col)
		}
	}
	return r
}

// drop records a value the column cannot hold: a note when it is a
// canonical status mapped to its own name (the default of every status the
// mapping leaves out), a warning when the configuration names it.
func (r *resolvedStatuses) drop(key, canon, v string, col statusColumn) {
	msg := fmt.Sprintf("%s: %q cannot be held by column %s (%s); it never matches", key, v, col.name, col.describe())
	if v == canon {
		r.notes = append(r.notes, msg+" (the status maps to its own name: list the column's value for it to count it)")
		return
	}
	r.warnings = append(r.warnings, msg)
}

// values returns the held values of the given canonical statuses, sorted.
func (r resolvedStatuses) values(canonical ...string) []string { return r.m.Values(canonical...) }

// canonical returns the canonical status of a value as status::text reads
// it, or vocab.Unmapped.
func (r resolvedStatuses) canonical(text string) string { return r.m.Canonical(text) }

// resolveList resolves a plain list of values (failed_statuses): the held
// ones, and a warning per dropped one.
func resolveList(key string, values []string, col statusColumn) (held []string, warnings []string) {
	for i, v := range values {
		if _, text, ok := col.literal(v); ok {
			held = append(held, text)
			continue
		}
		warnings = append(warnings, fmt.Sprintf("%s[%d]: %q cannot be held by column %s (%s); it never matches", key, i, v, col.name, col.describe()))
	}
	return held, warnings
}
