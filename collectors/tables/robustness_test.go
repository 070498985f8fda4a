package tables_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

func TestMissingTableAndColumnAreReportedAndIsolated(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`DROP TABLE message_inbox`)
	d.Exec(`ALTER TABLE event_outbox RENAME COLUMN created_at TO created`)
	d.upsertIdemNoDup(scopeA, "k1", "STARTED", -5)
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()

	got := map[string]float64{}
	for _, c := range []string{"idempotency", "processed_jobs", "inbox", "outbox"} {
		got[c] = e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": c})
	}
	want := map[string]float64{"idempotency": 1, "processed_jobs": 1, "inbox": 0, "outbox": 0}
	for c, w := range want {
		if got[c] != w {
			t.Errorf("collector_up{collector=%q} = %v, want %v", c, got[c], w)
		}
	}
	if v := e.Value(catalog.ExporterSourceUp, nil); v != 1 {
		t.Errorf("source_up = %v; the database answers, only two tables are broken", v)
	}
	if v := e.Value(catalog.ExporterCollectErrors, map[string]string{"collector": "inbox"}); v != 1 {
		t.Errorf("collect_errors_total{inbox} = %v, want 1", v)
	}
	if v := e.Value(catalog.IdempotencyRecords, map[string]string{"scope": scopeA, "status": "STARTED"}); v != 1 {
		t.Errorf("healthy collector stopped reporting: records = %v", v)
	}
	logs := e.Logs.String()
	for _, want := range []string{
		"table message_inbox does not exist or is not visible to this role (config key databases[0].tables.inbox.table)",
		"table event_outbox has no column created_at (config key databases[0].tables.outbox.columns.created_at)",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if err := e.Compare("", catalog.OutboxEventsPending, catalog.InboxMessages); err != nil {
		t.Errorf("broken collectors' series must be absent: %v", err)
	}
}

func TestUnreachableDatabaseDropsAllDataSeries(t *testing.T) {
	d, e := oneStartedRecord(t)
	// Take the database away: refuse new sessions (from the maintenance
	// database) and terminate the exporter's.
	maint := pgtest.Connect(t, pgtest.SharedServer(t).AdminURL)
	dbName := pgx.Identifier{d.Admin.Config().Database}.Sanitize()
	pgtest.Exec(t, maint, `ALTER DATABASE `+dbName+` WITH ALLOW_CONNECTIONS false`)
	d.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	t.Cleanup(func() { pgtest.Exec(t, maint, `ALTER DATABASE `+dbName+` WITH ALLOW_CONNECTIONS true`) })
	e.Collect()
	if v := e.Value(catalog.ExporterSourceUp, nil); v != 0 {
		t.Fatalf("source_up = %v, want 0", v)
	}
	for _, name := range []string{catalog.IdempotencyRecords, catalog.OutboxEventsPending, catalog.InboxMessages, catalog.ProcessedJobs, catalog.ExporterCollectorUp} {
		if err := e.Compare("", name); err != nil {
			t.Errorf("%s must be absent while the database is down: %v", name, err)
		}
	}
}

func TestPromlintOnFullOutput(t *testing.T) {
	d := newTestDB(t, true)
	d.upsertIdem(idemRow{scopeA, "k1", "STARTED", -5, "", 1})
	d.insertOutbox(outboxRow{uuid(1), "Order", "OrderCreated", "PENDING", -5, nil})
	d.upsertInbox(inboxRow{"kafka", "m1", "OrderValidated", "RECEIVED", -5, nil})
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()
	collectortest.ExpectCatalogFamilies(t, collectortest.LintAndGather(t, e.Set))
}

// TestQueriesReadOnlyOpenOrRecentRows proves a rule of docs/design.md (Data
// flow, 7): with a large
// terminal history and the indexes of deploy/sql, no collector query scans
// the history. It runs each query under EXPLAIN ANALYZE and counts the rows
// its scans touch.
func TestQueriesReadOnlyOpenOrRecentRows(t *testing.T) {
	d := newTestDB(t, true)
	const history = 50000
	d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at, created_at)
		SELECT 'S' || (g % 5), 'h' || g, 'e', 'task-' || g, 'COMPLETED', $1::timestamptz - make_interval(secs => g), $1::timestamptz - make_interval(secs => g)
		FROM generate_series(1, $2) g`, collectortest.At(-3600), history)
	d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		SELECT 'main', 'h' || g, 'p', 'a' || (g % 5), 'w', 'COMPLETED', $1::timestamptz - make_interval(secs => g) FROM generate_series(1, $2) g`, collectortest.At(-3600), history)
	d.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
		SELECT 'kafka', 'h' || g, 'T' || (g % 5), 'c', 'PROCESSED', $1::timestamptz - make_interval(secs => g), $1::timestamptz - make_interval(secs => g)
		FROM generate_series(1, $2) g`, collectortest.At(-3600), history)
	d.Exec(`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
		SELECT gen_random_uuid(), 'Order', 'a', 'T' || (g % 5), 'k', '{}', 'PUBLISHED', $1::timestamptz - make_interval(secs => g), $1::timestamptz - make_interval(secs => g)
		FROM generate_series(1, $2) g`, collectortest.At(-3600), history)
	// A little open and recent work.
	for i, st := range []string{"STARTED", "UNKNOWN_OUTCOME", "FAILED_RETRYABLE"} {
		d.upsertIdem(idemRow{scopeA, "open" + st, st, float64(-10 - i), "", 0})
	}
	d.insertOutbox(outboxRow{uuid(1), "Order", "T1", "PENDING", -10, nil}, outboxRow{uuid(2), "Order", "T1", "FAILED", -10, nil})
	d.upsertInbox(inboxRow{"kafka", "open1", "T1", "RECEIVED", -10, nil})
	d.Exec(`ANALYZE`)

	// With an engine configured, the Camunda joins' queries are checked too.
	e := d.newExporter(joinConfig)
	conn := pgtest.Connect(t, d.DSN)
	var reqs []pgschema.Requirements
	for _, c := range e.Database.Collectors {
		reqs = append(reqs, c.Requirements())
	}
	// And a delivery's window and lookup (deliveries[]).
	reqs = append(reqs, deliveryRequirements(t)...)
	for _, req := range reqs {
		for _, q := range req.Queries {
			name := req.Kind + "/" + q.Name
			touched, seq, raw := explainRows(t, conn, name, q)
			if seq {
				t.Errorf("%s: sequential scan over %d history rows:\n%s", name, history, raw)
			}
			// A query that reads an index in its order (the loose index
			// scans of the retention horizons) must not sort: a sort
			// reads every row it orders.
			if q.Ordered && strings.Contains(string(raw), `"Sort`) {
				t.Errorf("%s reads rows in index order but its plan sorts:\n%s", name, raw)
			}
			if touched > 20 {
				t.Errorf("%s touched %v rows; only the few open or recent rows should be read:\n%s", name, touched, raw)
			}
		}
	}
}

// explainRows runs q under EXPLAIN ANALYZE, its time arguments (the
// recent window's lower bound) a minute back, and returns the rows its
// scans touched, whether one of them is a sequential scan, and the plan.
// name (the query's) heads its error and its log line.
func explainRows(t *testing.T, conn *pgx.Conn, name string, q pgschema.Query) (touched float64, seq bool, raw []byte) {
	t.Helper()
	args := slices.Clone(q.Args)
	for i, a := range args {
		if _, ok := a.(interface{ Unix() int64 }); ok {
			args[i] = collectortest.At(-60) // the window: the last minute
		}
	}
	if err := conn.QueryRow(t.Context(), "EXPLAIN (ANALYZE, FORMAT JSON) "+q.SQL, args...).Scan(&raw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var plans []struct{ Plan map[string]any }
	if err := json.Unmarshal(raw, &plans); err != nil {
		t.Fatal(err)
	}
	touched, seq = rowsTouched(plans[0].Plan)
	t.Logf("%s: %v rows touched", name, touched)
	return touched, seq, raw
}

// rowsTouched sums the rows every scan node returned or filtered out.
func rowsTouched(n map[string]any) (float64, bool) {
	var total float64
	seq := false
	typ, _ := n["Node Type"].(string)
	if strings.Contains(typ, "Scan") {
		num := func(k string) float64 { v, _ := n[k].(float64); return v }
		loops := num("Actual Loops")
		if loops == 0 {
			loops = 1
		}
		total += num("Actual Rows")*loops + num("Rows Removed by Filter") + num("Rows Removed by Index Recheck")
		if typ == "Seq Scan" {
			seq = true
		}
	}
	if kids, ok := n["Plans"].([]any); ok {
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				t, s := rowsTouched(m)
				total += t
				seq = seq || s
			}
		}
	}
	return total, seq
}
