package tables_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// Status columns of any type a team uses: an enum (also one that lacks the
// canonical statuses), integer, smallint, boolean, text, and a domain over
// an enum. Each is compared in its own type: a value the type cannot hold
// is dropped (it can never match) and named by the resolved requirements
// (what `check` prints); no collection fails with SQLSTATE 22P02 (invalid
// input) or 42883 (no operator), which every case below produced before;
// and the partial indexes the exporter recommends for the column's type are
// the ones the planner uses for its queries.

// statusTypeCase is one status column type: the SQL that gives the table's
// column its type (after dropping the exporter's text-typed index), the
// config, rows in the application's SQL, the series expected, and what the
// resolved requirements must say.
type statusTypeCase struct {
	name, setup, tables string
	rows                []string
	// later is what the application does at T0+5s; then the clock moves
	// to T0+10s and the exporter collects again.
	later    []string
	want     []seriesValue
	notes    []string
	warnings []string
}

func TestStatusColumnTypes(t *testing.T) {
	inbox := func(id, status string, received float64, processed string) string {
		return `INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
			VALUES ('kafka', '` + id + `', 'T', 'c', ` + status + `, '` + collectortest.At(received).Format(time.RFC3339) + `', ` + processed + `)`
	}
	at := func(s float64) string { return "'" + collectortest.At(s).Format(time.RFC3339) + "'" }
	msg := func(status string) map[string]string {
		return map[string]string{"source_system": "kafka", "message_type": "T", "status": status}
	}
	cases := []statusTypeCase{
		{
			name: "enum lacking the canonical labels",
			setup: `DROP INDEX message_inbox_open_idx; DROP INDEX message_inbox_horizon_idx; CREATE TYPE inbox_state AS ENUM ('RECEIVED', 'DONE', 'ERROR');
ALTER TABLE message_inbox ALTER COLUMN processing_status TYPE inbox_state USING processing_status::inbox_state`,
			tables: "inbox: {statuses: {PROCESSED: [DONE], FAILED_FINAL: [ERROR, ERRORX]}}",
			rows:   []string{inbox("m1", "'RECEIVED'", -100, "NULL"), inbox("m2", "'RECEIVED'", -50, "NULL"), inbox("m3", "'DONE'", -200, at(-190))},
			later:  []string{`UPDATE message_inbox SET processing_status = 'ERROR', processed_at = ` + at(5) + ` WHERE message_id = 'm2'`, inbox("m4", "'DONE'", 1, at(2))},
			want: []seriesValue{{catalog.InboxMessages, msg("RECEIVED"), 1}, {catalog.InboxOldestMessageAge, msg("RECEIVED"), 110},
				{catalog.InboxMessages, msg("PROCESSING"), 0},
				{catalog.InboxMessagesProcessed, msg("PROCESSED"), 1}, {catalog.InboxMessagesProcessed, msg("FAILED_FINAL"), 1},
				{catalog.InboxRetentionHorizon, map[string]string{"source_system": "kafka"}, 200}},
			notes: []string{`statuses.PROCESSING: "PROCESSING" cannot be held by column processing_status (enum inbox_state: RECEIVED, DONE, ERROR); it never matches`,
				`statuses.UNKNOWN_OUTCOME: "UNKNOWN_OUTCOME" cannot be held`, `statuses.IGNORED_DUPLICATE: "IGNORED_DUPLICATE" cannot be held`},
			warnings: []string{`databases[0].tables.inbox.statuses.FAILED_FINAL: "ERRORX" cannot be held by column processing_status (enum inbox_state: RECEIVED, DONE, ERROR); it never matches`},
		},
		{
			name:   "integer",
			setup:  `DROP INDEX message_inbox_open_idx; DROP INDEX message_inbox_horizon_idx; DROP INDEX message_inbox_processed_at_idx; ALTER TABLE message_inbox ALTER COLUMN processing_status TYPE integer USING 0`,
			tables: `inbox: {statuses: {RECEIVED: ["0"], PROCESSING: [" 1"], PROCESSED: ["2"], FAILED_FINAL: ["03", "99999999999", "FAILED"]}}`,
			rows:   []string{inbox("m1", "0", -100, "NULL"), inbox("m2", "0", -50, "NULL"), inbox("m3", "1", -30, "NULL"), inbox("m4", "2", -200, at(-190))},
			later:  []string{`UPDATE message_inbox SET processing_status = 3, processed_at = ` + at(5) + ` WHERE message_id = 'm3'`},
			want: []seriesValue{{catalog.InboxMessages, msg("RECEIVED"), 2}, {catalog.InboxOldestMessageAge, msg("RECEIVED"), 110},
				{catalog.InboxMessages, msg("PROCESSING"), 0}, {catalog.InboxMessagesProcessed, msg("FAILED_FINAL"), 1},
				{catalog.InboxRetentionHorizon, map[string]string{"source_system": "kafka"}, 200}},
			notes: []string{`statuses.FAILED_RETRYABLE: "FAILED_RETRYABLE" cannot be held by column processing_status (integer)`},
			warnings: []string{`statuses.FAILED_FINAL: "99999999999" cannot be held by column processing_status (integer)`,
				`statuses.FAILED_FINAL: "FAILED" cannot be held by column processing_status (integer)`},
		},
		{
			name:   "smallint outbox with failed statuses",
			setup:  `DROP INDEX event_outbox_unpublished_idx; ALTER TABLE event_outbox ALTER COLUMN status TYPE smallint USING 0`,
			tables: `outbox: {failed_statuses: ["9", "DEAD"]}`,
			rows: []string{
				`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at) VALUES (gen_random_uuid(), 'Order', 'a', 'E', 'k1', '{}', 0, ` + at(-60) + `)`,
				`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at) VALUES (gen_random_uuid(), 'Order', 'a', 'E', 'k2', '{}', 0, ` + at(-30) + `)`,
				`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at) VALUES (gen_random_uuid(), 'Order', 'a', 'E', 'k3', '{}', 9, ` + at(-900) + `)`,
			},
			want: []seriesValue{{catalog.OutboxEventsPending, map[string]string{"event_type": "E"}, 2}, {catalog.OutboxOldestPendingAge, map[string]string{"event_type": "E"}, 70},
				{catalog.OutboxEventsFailed, map[string]string{"event_type": "E"}, 1}, {catalog.OutboxOldestFailedAge, map[string]string{"event_type": "E"}, 910}},
			warnings: []string{`databases[0].tables.outbox.failed_statuses[1]: "DEAD" cannot be held by column status (smallint); it never matches`},
		},
		{
			name:   "boolean",
			setup:  `DROP INDEX message_inbox_open_idx; DROP INDEX message_inbox_horizon_idx; ALTER TABLE message_inbox ALTER COLUMN processing_status TYPE boolean USING false`,
			tables: `inbox: {statuses: {RECEIVED: ["no"], PROCESSED: ["TRUE"], FAILED_FINAL: ["maybe"]}}`,
			rows:   []string{inbox("m1", "false", -100, "NULL"), inbox("m2", "false", -40, "NULL")},
			later:  []string{`UPDATE message_inbox SET processing_status = true, processed_at = ` + at(5) + ` WHERE message_id = 'm2'`},
			want: []seriesValue{{catalog.InboxMessages, msg("RECEIVED"), 1}, {catalog.InboxOldestMessageAge, msg("RECEIVED"), 110},
				{catalog.InboxMessagesProcessed, msg("PROCESSED"), 1}, {catalog.InboxRetentionHorizon, map[string]string{"source_system": "kafka"}, 5}},
			notes:    []string{`statuses.PROCESSING: "PROCESSING" cannot be held by column processing_status (boolean)`},
			warnings: []string{`statuses.FAILED_FINAL: "maybe" cannot be held by column processing_status (boolean)`},
		},
		{
			name: "domain over an enum (no operator of its own)",
			setup: `DROP INDEX message_inbox_open_idx; DROP INDEX message_inbox_horizon_idx; CREATE TYPE msg_state AS ENUM ('RECEIVED', 'PROCESSED'); CREATE DOMAIN msg_status AS msg_state;
ALTER TABLE message_inbox ALTER COLUMN processing_status TYPE msg_status USING processing_status::msg_state`,
			tables: "inbox: {}",
			rows:   []string{inbox("m1", "'RECEIVED'", -100, "NULL"), inbox("m2", "'PROCESSED'", -100, at(-99))},
			want:   []seriesValue{{catalog.InboxMessages, msg("RECEIVED"), 1}, {catalog.InboxOldestMessageAge, msg("RECEIVED"), 110}},
			notes:  []string{`statuses.FAILED_FINAL: "FAILED_FINAL" cannot be held by column processing_status (enum msg_status: RECEIVED, PROCESSED)`},
		},
		{
			name:   "varchar",
			setup:  `ALTER TABLE message_inbox ALTER COLUMN processing_status TYPE varchar(20)`,
			tables: "inbox: {}",
			rows:   []string{inbox("m1", "'RECEIVED'", -100, "NULL"), inbox("m2", "'PROCESSED'", -100, at(-99))},
			want:   []seriesValue{{catalog.InboxMessages, msg("RECEIVED"), 1}, {catalog.InboxOldestMessageAge, msg("RECEIVED"), 110}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newTestDB(t, false)
			d.Exec(tc.setup)
			for _, r := range tc.rows {
				d.Exec(r)
			}
			e := d.newExporter(presetConfig(tc.tables))
			res := resolvedRequirements(t, d, e)
			var notes, warnings []string
			for _, r := range res {
				notes, warnings = append(notes, r.Notes...), append(warnings, r.Warnings...)
				createAndExplain(t, d, r.Requirements)
			}
			wantAll(t, "note", notes, tc.notes)
			wantAll(t, "warning", warnings, tc.warnings)
			e.Collect()
			for _, s := range tc.later {
				d.Exec(s)
			}
			d.SetClock(10 * time.Second)
			e.Collect()
			for _, c := range e.Database.Collectors {
				if v := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": c.Name()}); v != 1 {
					t.Errorf("collector %s down:\n%s", c.Name(), e.Logs.String())
				}
			}
			e.wantValues(tc.want)
		})
	}
}

// An enum status column of the idempotency table that lacks canonical
// labels, read by the collector, its status page lists and the Camunda
// join (which compares COMPLETED and the in-progress statuses).
func TestIdempotencyEnumStatusWithTheJoin(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`DROP INDEX workflow_idempotency_record_open_idx; DROP INDEX workflow_idempotency_record_horizon_idx; CREATE TYPE idem_state AS ENUM ('STARTED', 'DONE', 'FAILED');
ALTER TABLE workflow_idempotency_record ALTER COLUMN status TYPE idem_state USING 'STARTED'`)
	d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
		VALUES ('S', 'k1', 'e', 'task-1', 'STARTED', $1), ('S', 'k2', 'e', 'task-2', 'DONE', $1), ('S', 'k3', 'e', NULL, 'FAILED', $1)`, collectortest.At(-1200))
	e := d.newExporter(joinConfig + "    tables:\n      idempotency: {statuses: {COMPLETED: [DONE], FAILED_FINAL: [FAILED]}}\n")
	for _, r := range resolvedRequirements(t, d, e) {
		createAndExplain(t, d, r.Requirements)
	}
	e.Views.Publish(&correlate.View{Engine: "main", Taken: time.Now().Add(-time.Minute), Tasks: []correlate.Task{
		{ID: "task-1", Topic: "t", State: correlate.LockExpired}, {ID: "task-2", Topic: "t", State: correlate.Locked}}})
	e.Collect()
	e.wantValues([]seriesValue{
		{catalog.ExporterCollectorUp, map[string]string{"collector": "idempotency"}, 1},
		{catalog.ExporterCollectorUp, map[string]string{"collector": "idempotency_camunda"}, 1},
		{catalog.IdempotencyRecords, map[string]string{"scope": "S", "status": "STARTED"}, 1},
		{catalog.IdempotencyStaleRecords, map[string]string{"scope": "S", "status": "STARTED"}, 1},
		{catalog.IdempotencyRecords, map[string]string{"scope": "S", "status": "UNKNOWN_OUTCOME"}, 0},
		{catalog.IdempotencyInDoubt, map[string]string{"scope": "S", "topic": "t"}, 1},
		{catalog.IdempotencyCompletedTaskOpen, map[string]string{"scope": "S", "topic": "t"}, 1},
		// DONE and FAILED are the finished records: the retention
		// horizon compares the enum in its own labels.
		{catalog.IdempotencyRetentionHorizon, map[string]string{"scope": "S"}, 1200},
	})
	if l := e.Lists()["stale_in_progress/workflow_idempotency_record"]; l.Total != 1 || len(l.Items) != 1 || l.Items[0].IdempotencyKey != "k1" {
		t.Errorf("stale list %+v", l)
	}
}

// A status column of a type that cannot hold statuses is a clear error
// naming the key and the type, not a query failing on the server.
func TestStatusColumnOfAnotherTypeIsNamed(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`DROP INDEX message_inbox_open_idx; DROP INDEX message_inbox_horizon_idx; ALTER TABLE message_inbox ALTER COLUMN processing_status TYPE uuid USING gen_random_uuid()`)
	e := d.newExporter(presetConfig("inbox: {}"))
	e.Collect()
	if v := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": "inbox"}); v != 0 {
		t.Fatalf("inbox collector up with a uuid status column")
	}
	want := "table message_inbox: column processing_status is of type uuid, which cannot hold statuses; use text, varchar, an enum, smallint, integer, bigint or boolean (config key databases[0].tables.inbox.columns.status)"
	if !strings.Contains(e.Logs.String(), want) {
		t.Errorf("log lacks %q:\n%s", want, e.Logs.String())
	}
}

// resolvedRequirements resolves every collector's requirements against the
// test database, as `check` does.
func resolvedRequirements(t *testing.T, d *testDB, e *exporter) []pgschema.Resolved {
	t.Helper()
	ctx := context.Background()
	conn := pgtest.Connect(t, d.DSN)
	var out []pgschema.Resolved
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, c := range e.Database.Collectors {
			req := c.Requirements()
			if req.Resolve == nil {
				continue
			}
			r, err := req.Resolve(ctx, tx)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// createAndExplain creates the indexes the resolved requirements recommend
// (as `check` prints them) and requires that the planner serves each
// query by its own index: the predicates rendered for the column's type
// match the index's.
func createAndExplain(t *testing.T, d *testDB, req pgschema.Requirements) {
	t.Helper()
	ctx := context.Background()
	queries := map[string]pgschema.Query{}
	for _, q := range req.Queries {
		queries[q.Name] = q
	}
	for _, ix := range req.Indexes {
		if len(ix.Columns) == 0 || ix.ReferencePrimaryKey || ix.Requires != "" {
			continue
		}
		d.Exec(ix.CreateStatement(req.Table))
		q, ok := queries[ix.Query]
		if !ok {
			continue
		}
		conn := pgtest.Connect(t, d.DSN)
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			used, err := pgschema.ServingIndex(ctx, tx, req.Table, q.SQL, q.Args...)
			if err != nil {
				return err
			}
			if used != ix.Name {
				t.Errorf("%s query served by %q, want the recommended %s (%s)", q.Name, used, ix.Name, ix.CreateStatement(req.Table))
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s query: %v", q.Name, err)
		}
	}
}

// wantAll requires every wanted text in some got one, and no got one
// beyond the wanted when want is empty.
func wantAll(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(want) == 0 && len(got) > 0 {
		t.Errorf("unexpected %ss: %q", what, got)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, w)
		}
		if !found {
			t.Errorf("no %s contains %q; got %q", what, w, got)
		}
	}
}

// TestEnumStatusQueriesReadOnlyOpenRows is TestQueriesReadOnlyOpenOrRecentRows
// for an enum status column lacking the canonical labels: with 50 000
// finished messages (DONE) and the partial index check recommends for the
// enum, no query of the inbox touches them.
func TestEnumStatusQueriesReadOnlyOpenRows(t *testing.T) {
	const history = 50000
	d := newTestDB(t, false)
	d.Exec(`DROP INDEX message_inbox_open_idx; DROP INDEX message_inbox_horizon_idx; CREATE TYPE inbox_state AS ENUM ('RECEIVED', 'DONE', 'ERROR');
ALTER TABLE message_inbox ALTER COLUMN processing_status TYPE inbox_state USING processing_status::inbox_state`)
	d.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
		SELECT 'kafka', 'h' || g, 'T' || (g % 5), 'c', 'DONE', $1::timestamptz - make_interval(secs => g), $1::timestamptz - make_interval(secs => g)
		FROM generate_series(1, $2) g`, collectortest.At(-3600), history)
	d.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at)
		VALUES ('kafka', 'open-1', 'T1', 'c', 'RECEIVED', $1), ('kafka', 'open-2', 'T2', 'c', 'RECEIVED', $1)`, collectortest.At(-10))
	e := d.newExporter(presetConfig("inbox: {statuses: {PROCESSED: [DONE], FAILED_FINAL: [ERROR]}}"))
	res := resolvedRequirements(t, d, e)
	for _, r := range res {
		for _, ix := range r.Indexes {
			if len(ix.Columns) > 0 {
				d.Exec(ix.CreateStatement(r.Table))
			}
		}
	}
	d.Exec(`ANALYZE`)
	conn := pgtest.Connect(t, d.DSN)
	n := 0
	for _, r := range res {
		for _, q := range r.Queries {
			touched, seq, raw := explainRows(t, conn, q.Name, q)
			if seq || touched > 20 {
				t.Errorf("%s: sequential scan %v, %v rows touched:\n%s", q.Name, seq, touched, raw)
			}
			n++
		}
	}
	if n < 4 {
		t.Errorf("%d queries explained; the inbox has its gauges, counter and two lists", n)
	}
}
