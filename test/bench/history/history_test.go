// Package benchhistory measures the engine-database mode's history count
// (enginedb.CleanableSQL, the camunda_history collector's one costly query)
// against a full count of the table. It runs only with `make
// bench-history` (go test -bench); `make test` compiles it and runs nothing.
package benchhistory

import (
	"archive/zip"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/enginedb"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// BenchmarkHistoryCount measures the engine-database mode's history count
// (enginedb.CleanableSQL, the camunda_history collector's one costly query) on a
// process history of 1M instances made by SQL in the engine's own schema
// (the Camunda 7.24 DDL from the engine jar the test engines are built
// with, indexes included), against a named baseline: `SELECT count(*)` of
// the same table, the cheapest query that reads all of it. Both run
// alternately, 7 times each, and the medians are reported with their
// ratio (docs/benchmarks.md, `make bench-history`).
func BenchmarkHistoryCount(b *testing.B) {
	const instances = 1_000_000
	jar := filepath.Join(os.Getenv("HOME"), ".m2/repository/org/camunda/bpm/camunda-engine/7.24.0/camunda-engine-7.24.0.jar")
	ddl := func(name string) string {
		zr, err := zip.OpenReader(jar)
		if err != nil {
			b.Skipf("the Camunda engine jar (built by the test engines, make deps): %v", err)
		}
		defer zr.Close()
		s, err := fs.ReadFile(zr, "org/camunda/bpm/engine/db/create/activiti.postgres.create."+name+".sql")
		if err != nil {
			b.Fatal(err)
		}
		return string(s)
	}
	srv := pgtest.NewServer(b)
	ctx := context.Background()
	conn := pgtest.Connect(b, srv.AdminURL)
	for _, part := range []string{"engine", "history"} {
		for _, stmt := range pgtest.SplitSQL(ddl(part)) {
			pgtest.Exec(b, conn, stmt)
		}
	}
	// 50 definitions, 5 of them without a time to live; six in seven of the
	// instances finished, over the last 60 days, removal time end + 30 days
	// where the definition has a time to live (about half cleanable now).
	pgtest.Exec(b, conn, `INSERT INTO act_re_procdef (id_, rev_, key_, version_, deployment_id_, resource_name_, suspension_state_, history_ttl_)
SELECT 'p' || g || ':1:x', 1, 'p' || g, 1, 'd', 'p.bpmn', 1, CASE WHEN g <= 5 THEN NULL ELSE 30 END FROM generate_series(1, 50) g`)
	start := time.Now()
	pgtest.Exec(b, conn, fmt.Sprintf(`INSERT INTO act_hi_procinst (id_, proc_inst_id_, proc_def_key_, proc_def_id_, start_time_, end_time_, removal_time_, state_)
SELECT 'pi' || g, 'pi' || g, 'p' || (g %% 50 + 1), 'p' || (g %% 50 + 1) || ':1:x',
  now() - interval '61 days' + (g * 5.184) * interval '1 second',
  e, CASE WHEN g %% 50 + 1 > 5 AND e IS NOT NULL THEN e + interval '30 days' END,
  CASE WHEN e IS NULL THEN 'ACTIVE' ELSE 'COMPLETED' END
FROM (SELECT g, CASE WHEN g %% 7 = 0 THEN NULL ELSE now() - interval '60 days' + (g * 5.184) * interval '1 second' END AS e
      FROM generate_series(1, %d) g) s`, instances))
	pgtest.Exec(b, conn, "VACUUM ANALYZE act_hi_procinst")
	b.Logf("%d instances made in %s", instances, time.Since(start).Round(time.Second))

	// The engine's zone is UTC here: the reader's timestamp parameter is
	// the database clock's local time, without the zone.
	wall := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.999999") }
	query := fmt.Sprintf(enginedb.CleanableSQL, "")
	run := func(sql string, args ...any) time.Duration {
		t0 := time.Now()
		err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, sql, args...)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
			}
			return rows.Err()
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	// What the query reads, for the report.
	var finished, cleanable, noTTL int64
	rows, err := conn.Query(ctx, query, wall(time.Now()))
	if err != nil {
		b.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowToStructByPos[struct {
		Key                             string
		Finished, Cleanable, WithoutTTL int64
	}])
	if err != nil || len(keys) != 50 {
		b.Fatalf("%d keys counted (%v), want 50", len(keys), err)
	}
	for _, k := range keys {
		finished, cleanable, noTTL = finished+k.Finished, cleanable+k.Cleanable, noTTL+k.WithoutTTL
	}
	var baseline, exporter []time.Duration
	for range 7 {
		baseline = append(baseline, run("SELECT count(*) FROM act_hi_procinst"))
		exporter = append(exporter, run(query, wall(time.Now())))
	}
	slices.Sort(baseline)
	slices.Sort(exporter)
	mb, me := baseline[3], exporter[3]
	b.ReportMetric(float64(me.Microseconds())/1000, "ms/count")
	b.ReportMetric(float64(mb.Microseconds())/1000, "ms/baseline")
	fmt.Printf("history count on %d process instances (%d finished, %d cleanable, %d without time to live):\n", instances, finished, cleanable, noTTL)
	fmt.Printf("| query | median of 7 | min | max | ratio to the baseline |\n|---|---|---|---|---|\n")
	fmt.Printf("| baseline: SELECT count(*) FROM act_hi_procinst | %.1f ms | %.1f ms | %.1f ms | 1 |\n", ms(mb), ms(baseline[0]), ms(baseline[6]))
	fmt.Printf("| the exporter's history count (CleanableSQL) | %.1f ms | %.1f ms | %.1f ms | %.2f |\n", ms(me), ms(exporter[0]), ms(exporter[6]), float64(me)/float64(mb))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
