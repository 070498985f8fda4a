package pgschema

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ServingIndex returns the index the planner uses to restrict the scan of
// table by the query (run with sequential scans disabled, so an index that
// could serve it is preferred), or "" when none restricts it: neither an
// index condition on the index's leading column nor a partial index. So an
// index with another name or column order that serves the query counts,
// and one that exists but cannot serve it does not, nor one whose
// condition is on a later column only (a composite primary key scanned
// whole for its second column: its cost grows with the table). Call it in
// a transaction: it sets enable_seqscan locally.
func ServingIndex(ctx context.Context, tx pgx.Tx, table, query string, args ...any) (string, error) {
	return servingIndex(ctx, tx, table, query, false, args)
}

// ServingOrderedIndex is ServingIndex for a query that reads rows in an
// index's order (Query.Ordered): an index serves it only when the plan
// has no sort. An index that restricts the scan but not its order (the
// leading column of a primary key, under a sort of everything it finds)
// reads every row it restricts to, and does not count.
func ServingOrderedIndex(ctx context.Context, tx pgx.Tx, table, query string, args ...any) (string, error) {
	return servingIndex(ctx, tx, table, query, true, args)
}

func servingIndex(ctx context.Context, tx pgx.Tx, table, query string, ordered bool, args []any) (string, error) {
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		return "", err
	}
	var raw []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+query, args...).Scan(&raw); err != nil {
		return "", err
	}
	var plans []struct{ Plan node }
	if err := json.Unmarshal(raw, &plans); err != nil || len(plans) == 0 {
		return "", fmt.Errorf("unexpected EXPLAIN output: %w", err)
	}
	serves := func(index, cond string) bool {
		var partial bool
		var leading *string
		err := tx.QueryRow(ctx, `SELECT i.indpred IS NOT NULL, a.attname::text FROM pg_index i
LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] AND i.indkey[0] <> 0
WHERE i.indexrelid = to_regclass($1)`, quoteSchemaOf(table, index)).Scan(&partial, &leading)
		if err != nil {
			return false
		}
		// An expression index (no leading column) is taken at its
		// condition's word.
		return partial || cond != "" && (leading == nil || mentions(cond, *leading))
	}
	if ordered && sorts(plans[0].Plan) {
		return "", nil
	}
	return findIndex(plans[0].Plan, BaseName(table), serves), nil
}

// sorts reports whether the plan sorts rows anywhere.
func sorts(n node) bool {
	if n.NodeType == "Sort" || n.NodeType == "Incremental Sort" {
		return true
	}
	for _, k := range n.Plans {
		if sorts(k) {
			return true
		}
	}
	return false
}

// mentions reports whether an EXPLAIN condition names the column (as a
// whole identifier, quoted or not).
func mentions(cond, column string) bool {
	for i := 0; ; {
		j := strings.Index(cond[i:], column)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(column)
		if (start == 0 || !identByte(cond[start-1])) && (end == len(cond) || !identByte(cond[end])) {
			return true
		}
		i = start + 1
	}
}

func identByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

type node struct {
	NodeType  string `json:"Node Type"`
	Relation  string `json:"Relation Name"`
	IndexName string `json:"Index Name"`
	IndexCond string `json:"Index Cond"`
	Plans     []node `json:"Plans"`
}

func findIndex(n node, table string, serves func(index, cond string) bool) string {
	switch n.NodeType {
	case "Index Scan", "Index Only Scan":
		if n.Relation == table && serves(n.IndexName, n.IndexCond) {
			return n.IndexName
		}
	case "Bitmap Heap Scan":
		if n.Relation == table {
			for _, k := range n.Plans {
				if k.NodeType == "Bitmap Index Scan" && serves(k.IndexName, k.IndexCond) {
					return k.IndexName
				}
			}
		}
	}
	for _, k := range n.Plans {
		if got := findIndex(k, table, serves); got != "" {
			return got
		}
	}
	return ""
}

// quoteSchemaOf qualifies an index name with the table's schema, if any.
func quoteSchemaOf(table, index string) string {
	if i := strings.LastIndex(table, "."); i >= 0 {
		return pgx.Identifier{table[:i], index}.Sanitize()
	}
	return pgx.Identifier{index}.Sanitize()
}
