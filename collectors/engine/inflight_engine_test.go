//go:build !pgonly

package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/enginedb"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// engineInflightPlans runs every variant of engine-database mode's
// in-flight query on the engine's own schema and reads its plan: each is
// valid with the arguments the reader gives it; only the one for a budget
// that cuts the list sorts, and only the one for the status page reads
// ACT_RU_EXECUTION (a sort and a join per in-flight task cost more than
// the reading itself at 10,000 in-flight tasks: docs/benchmarks.md).
func engineInflightPlans(t *testing.T, u engineUnderTest) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := pgtest.Connect(t, u.dbURL)
	now := time.Now().UTC().Format("2006-01-02 15:04:05.999999")
	for _, keys := range []bool{false, true} {
		for _, everyTopic := range []bool{false, true} {
			for _, cut := range []bool{false, true} {
				name := fmt.Sprintf("keys=%v everyTopic=%v cut=%v", keys, everyTopic, cut)
				sql := enginedb.InflightSQL("", keys, everyTopic, cut)
				args := []any{now, 100}
				if !everyTopic {
					args = append(args, []string{"a", "b"})
				}
				rows, err := conn.Query(ctx, sql, args...)
				if err == nil {
					rows.Close()
					err = rows.Err()
				}
				if err != nil {
					t.Fatalf("%s: %v\n%s", name, err, sql)
				}
				rows, err = conn.Query(ctx, "EXPLAIN "+sql, args...)
				if err != nil {
					t.Fatalf("%s: EXPLAIN: %v", name, err)
				}
				lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatal(err)
				}
				plan := strings.Join(lines, "\n")
				if sorts := strings.Contains(plan, "Sort"); sorts != cut {
					t.Errorf("%s: the plan sorts: %v, want %v:\n%s", name, sorts, cut, plan)
				}
				if joins := strings.Contains(plan, "act_ru_execution"); joins != keys {
					t.Errorf("%s: the plan reads act_ru_execution: %v, want %v:\n%s", name, joins, keys, plan)
				}
			}
		}
	}
}
