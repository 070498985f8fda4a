package sources

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/internal/check"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// The check command as wired in check.go: these tests cover internal/check
// through the sources start-up builds.

func runCheckDSN(t *testing.T, dsn string) (string, check.Report) {
	t.Helper()
	return runCheckConfig(t, dsn, "databases: [{name: orders, dsn_env: WFX_CHECK_DSN}]")
}

func runCheckConfig(t *testing.T, dsn, doc string) (string, check.Report) {
	t.Helper()
	t.Setenv("WFX_CHECK_DSN", dsn)
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep := RunCheck(context.Background(), cfg, &out, nil)
	return out.String(), rep
}

func TestCheckReportsMissingIndexesTablesAndWriteAccess(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, dsn)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/001_reference_schema.sql")
	pgtest.Exec(t, conn, "DROP TABLE message_inbox; ALTER TABLE event_outbox RENAME COLUMN status TO state")

	out, rep := runCheckDSN(t, dsn)
	for _, want := range []string{
		`database orders: connected (PostgreSQL`,
		"inbox: table message_inbox\n    ERROR table does not exist",
		"outbox: table event_outbox\n    ERROR missing columns: status (databases[0].tables.outbox.columns.status)",
		`WARNING index for open query missing`,
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_idempotency_record_open_idx" ON "workflow_idempotency_record" ("scope", "status", "updated_at") WHERE ("status" IS NULL OR "status" NOT IN ('COMPLETED', 'FAILED_FINAL', 'RECONCILED'));`,
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_processed_job_completed_at_idx"`,
		`WARNING role "postgres" is a superuser`,
		"note: optional column duplicate_count is absent",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// The missing inbox table once, though two collectors read it (the
	// inbox's and its retention horizon's).
	if n := strings.Count(out, "table message_inbox"); n != 1 {
		t.Errorf("the missing inbox table is named %d times, want once:\n%s", n, out)
	}
	if rep.Errors != 2 {
		t.Errorf("errors = %d, want 2 (missing table, missing column)\n%s", rep.Errors, out)
	}
}

func TestCheckPassesOnReferenceSetupWithReadOnlyRole(t *testing.T) {
	role := fmt.Sprintf("wfx_ro_%d", time.Now().UnixNano())
	// Registered first so it runs last, after the database is dropped:
	// roles are cluster-wide and must not outlive the test.
	t.Cleanup(func() {
		c, err := pgx.Connect(context.Background(), pgtest.SharedServer(t).AdminURL)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(context.Background(), "DROP ROLE IF EXISTS "+role); err != nil {
			t.Error(err)
		}
	})
	dsn := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, dsn)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/001_reference_schema.sql", "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql")
	pgtest.Exec(t, conn, `CREATE ROLE `+role+` LOGIN;
		GRANT SELECT ON workflow_idempotency_record, workflow_processed_job, message_inbox, event_outbox TO `+role)
	u, _ := url.Parse(dsn)
	u.User = url.User(role)

	out, rep := runCheckDSN(t, u.String())
	if rep.Errors != 0 || rep.Warnings != 0 {
		t.Fatalf("reference setup with a SELECT-only role should pass cleanly, got %d errors, %d warnings:\n%s", rep.Errors, rep.Warnings, out)
	}
	// Four tables, and the retention horizons of two of them.
	if got := strings.Count(out, "privileges: read-only (ok)"); got != 6 {
		t.Errorf("read-only lines = %d, want 6:\n%s", got, out)
	}
	if got := strings.Count(out, ": ok (served by "); got != 11 {
		t.Errorf("served indexes = %d, want 11:\n%s", got, out)
	}
	// And a role that can write is flagged.
	pgtest.Exec(t, conn, `GRANT INSERT, DELETE ON event_outbox TO `+role)
	out, rep = runCheckDSN(t, u.String())
	if !strings.Contains(out, `WARNING role "`+role+`" can DELETE, INSERT this table`) || rep.Warnings != 1 {
		t.Errorf("write access not flagged once:\n%s", out)
	}
}

// TestCheckCoversTheCamundaJoin: with an engine configured, the join's
// lookup index is checked too, and its CREATE INDEX is printed when missing.
func TestCheckCoversTheCamundaJoin(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, dsn)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/001_reference_schema.sql")
	doc := "camunda: [{name: main, url: 'http://127.0.0.1:1/engine-rest'}]\ndatabases: [{name: orders, dsn_env: WFX_CHECK_DSN}]"
	out, _ := runCheckConfig(t, dsn, doc)
	want := `WARNING index for camunda_join query missing: the Camunda join looks up the records of in-flight tasks by external task id (= ANY)
      CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_idempotency_record_job_reference_idx" ON "workflow_idempotency_record" ("job_reference") WHERE "job_reference" IS NOT NULL;`
	if !strings.Contains(out, want) {
		t.Errorf("report lacks the join index:\n%s", out)
	}
	// The processed-job join is served by the reference schema's primary key.
	if !strings.Contains(out, `index for camunda_join query: ok (served by workflow_processed_job_pkey)`) {
		t.Errorf("processed-job join not served by the primary key:\n%s", out)
	}
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/003_exporter_indexes.sql")
	out, _ = runCheckConfig(t, dsn, doc)
	if strings.Contains(out, "camunda_join query missing") {
		t.Errorf("join index still reported missing after 003_exporter_indexes.sql:\n%s", out)
	}
}

// TestCheckReportsEngines uses a stand-in engine (the client's behaviour
// against real engines is tested in camunda/ and collectors/).
func TestCheckReportsEngines(t *testing.T) {
	engine := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "exporter" || p != "right" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"type":"AuthenticationException","message":"Unauthorized"}`)
			return
		}
		switch r.URL.Path {
		case "/engine-rest/version":
			fmt.Fprint(w, `{"version":"7.24.0"}`)
		case "/engine-rest/telemetry/data":
			fmt.Fprint(w, `{"product":{"name":"Camunda BPM Runtime"}}`)
		case "/engine-rest/external-task/count":
			fmt.Fprint(w, `{"count":3}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer engine.Close()
	t.Setenv("WFX_RIGHT", "right")
	t.Setenv("WFX_WRONG", "s3cr3t-wrong-pw")
	doc := fmt.Sprintf(`camunda:
  - {name: good, url: %q, username: exporter, password_env: WFX_RIGHT}
  - {name: refused, url: %q, username: exporter, password_env: WFX_WRONG}
  - {name: gone, url: 'http://127.0.0.1:1/engine-rest', request_timeout: 2s}
`, engine.URL+"/engine-rest", engine.URL+"/engine-rest")
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rep := RunCheck(context.Background(), cfg, &out, nil)
	for _, want := range []string{
		`camunda good: ok, camunda 7.24.0 at ` + engine.URL + `/engine-rest (credentials of "exporter" accepted)`,
		"open external tasks visible to this user: 3",
		"camunda refused: ERROR",
		"401",
		"camunda gone: ERROR",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "s3cr3t-wrong-pw") {
		t.Errorf("the password leaked into the report:\n%s", out.String())
	}
	if rep.Errors != 2 {
		t.Errorf("errors = %d, want 2\n%s", rep.Errors, out.String())
	}
}

// TestCheckCoversPresetsAndStatusTypes: a library's tables by its preset
// (the variant its columns say, the library's own indexes serving the
// queries, a dead-letter table beside the inbox, the queries that need no
// index), and an inbox whose status column is an enum lacking canonical
// labels: check names the values the type cannot hold, and recommends the
// partial index rendered for the enum.
func TestCheckCoversPresetsAndStatusTypes(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, dsn)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/001_reference_schema.sql",
		"collectors/tables/testdata/presets/spring-modulith-1.sql", "collectors/tables/testdata/presets/wolverine.sql")
	pgtest.Exec(t, conn, `CREATE TYPE inbox_state AS ENUM ('RECEIVED', 'DONE', 'ERROR');
ALTER TABLE message_inbox ALTER COLUMN processing_status TYPE inbox_state USING 'RECEIVED'`)
	doc := `databases:
  - name: orders
    dsn_env: WFX_CHECK_DSN
    tables:
      outbox: {preset: spring-modulith}
      inbox: {statuses: {PROCESSED: [DONE], FAILED_FINAL: [ERROR, ERRORX]}}
  - name: wolverine
    dsn_env: WFX_CHECK_DSN
    tables:
      outbox: {preset: wolverine}
      inbox: {preset: wolverine}
`
	out, rep := runCheckConfig(t, dsn, doc)
	for _, want := range []string{
		"outbox: table event_publication (preset spring-modulith 1.x)\n    columns: ok (5 mapped)",
		"index for pending query: ok (served by event_publication_by_completion_date_idx)",
		"index for published query: ok (served by event_publication_by_completion_date_idx)",
		`WARNING index for created query missing: events_created_total reads the last late_commit_window of inserts
      CREATE INDEX CONCURRENTLY IF NOT EXISTS "event_publication_publication_date_idx" ON "event_publication" ("publication_date");`,
		`note: databases[0].tables.inbox.statuses.PROCESSING: "PROCESSING" cannot be held by column processing_status (enum inbox_state: RECEIVED, DONE, ERROR); it never matches`,
		`WARNING databases[0].tables.inbox.statuses.FAILED_FINAL: "ERRORX" cannot be held by column processing_status (enum inbox_state: RECEIVED, DONE, ERROR); it never matches`,
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_inbox_open_idx" ON "message_inbox" ("source_system", "message_type", "processing_status", "received_at") WHERE ("processing_status" IS NULL OR "processing_status" NOT IN ('DONE', 'ERROR'));`,
		"outbox: table wolverine.wolverine_outgoing_envelopes (preset wolverine)",
		"index for the pending query: none needed (every row of the table is pending: the sending agent deletes an envelope once it is sent (or expired))",
		"inbox: table wolverine.wolverine_dead_letters (preset wolverine)\n    columns: ok (7 mapped)",
		`CREATE INDEX CONCURRENTLY IF NOT EXISTS "wolverine_incoming_envelopes_open_idx" ON "wolverine"."wolverine_incoming_envelopes" ("message_type") WHERE "status" <> 'Handled';`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if rep.Errors != 0 {
		t.Errorf("errors = %d, want 0:\n%s", rep.Errors, out)
	}
	// The recommended enum index serves the inbox's query once created.
	pgtest.Exec(t, conn, `CREATE INDEX "message_inbox_open_idx" ON "message_inbox" ("source_system", "message_type", "processing_status", "received_at") WHERE ("processing_status" IS NULL OR "processing_status" NOT IN ('DONE', 'ERROR'))`)
	out, _ = runCheckConfig(t, dsn, doc)
	if !strings.Contains(out, "index for open query: ok (served by message_inbox_open_idx)") {
		t.Errorf("the enum's partial index does not serve the open query:\n%s", out)
	}
	// A table the preset cannot read names the missing columns.
	pgtest.Exec(t, conn, `ALTER TABLE event_publication RENAME COLUMN listener_id TO listener`)
	out, rep = runCheckConfig(t, dsn, doc)
	if !strings.Contains(out, "ERROR missing columns: listener_id (databases[0].tables.outbox.preset)") || rep.Errors != 1 {
		t.Errorf("missing preset column not reported once:\n%s", out)
	}
}

// TestCheckCoversDeliveries: a delivery's needs are reported under its two
// databases: the outbox's columns and the window's index under the
// producer, the inbox's columns and the lookup's index under the consumer.
func TestCheckCoversDeliveries(t *testing.T) {
	orders, billing := pgtest.NewDatabase(t), pgtest.NewDatabase(t)
	for _, dsn := range []string{orders, billing} {
		pgtest.ExecRepoFiles(t, pgtest.Connect(t, dsn), nil, "deploy/sql/001_reference_schema.sql")
	}
	t.Setenv("WFX_CHECK_BILLING", billing)
	doc := `databases:
  - {name: orders, dsn_env: WFX_CHECK_DSN, tables: {outbox: {}}}
  - {name: billing, dsn_env: WFX_CHECK_BILLING, tables: {inbox: {}}}
deliveries: [{name: orders-billing, from: {database: orders}, to: {database: billing}}]`
	out, _ := runCheckConfig(t, orders, doc)
	for _, want := range []string{
		"outbox, for delivery orders-billing: table event_outbox\n    columns: ok (4 mapped)",
		"inbox, for delivery orders-billing: table message_inbox\n    columns: ok (4 mapped)\n    WARNING index for delivery_lookup query missing: a delivery (deliveries[]) looks the window's events up in the consumer's inbox by message id (= ANY)\n" +
			`      CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_inbox_message_id_idx" ON "message_inbox" ("message_id");`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	pgtest.ExecRepoFiles(t, pgtest.Connect(t, billing), nil, "deploy/sql/003_exporter_indexes.sql")
	pgtest.Exec(t, pgtest.Connect(t, billing), "ALTER TABLE message_inbox RENAME COLUMN received_at TO received")
	out, _ = runCheckConfig(t, orders, doc)
	if want := "inbox, for delivery orders-billing: table message_inbox\n    ERROR missing columns: received_at (databases[1].tables.inbox.columns.received_at)"; !strings.Contains(out, want) {
		t.Errorf("report lacks %q:\n%s", want, out)
	}
	pgtest.Exec(t, pgtest.Connect(t, billing), "ALTER TABLE message_inbox RENAME COLUMN received TO received_at")
	out, _ = runCheckConfig(t, orders, doc)
	if strings.Contains(out, "delivery_lookup query missing") || !strings.Contains(out, "index for delivery_lookup query: ok (served by message_inbox_message_id_idx)") {
		t.Errorf("the lookup's index after 003_exporter_indexes.sql:\n%s", out)
	}
}

// TestCheckHorizonIndexMustServeTheOrder: the retention horizons read the
// first finished row of each scope in (scope, updated_at) order. The
// primary key (scope, idempotency_key) restricts that scan by scope but
// cannot give the order, so the plan sorts the scope's every row: check
// calls the index missing until the horizon index exists.
func TestCheckHorizonIndexMustServeTheOrder(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	conn := pgtest.Connect(t, dsn)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/001_reference_schema.sql")
	out, _ := runCheckDSN(t, dsn)
	for _, want := range []string{
		`WARNING index for horizon query missing: the retention horizon reads the least recently updated finished record of each scope, one index entry per scope
      CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_idempotency_record_horizon_idx" ON "workflow_idempotency_record" ("scope", "updated_at") WHERE "status" IN ('COMPLETED', 'FAILED_FINAL', 'RECONCILED');`,
		`WARNING index for horizon query missing: the retention horizon reads the oldest processed_at of each source system's finished messages, one index entry per source system
      CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_inbox_horizon_idx" ON "message_inbox" ("source_system", "processed_at") WHERE "processed_at" IS NOT NULL AND "processing_status" IN ('FAILED_FINAL', 'IGNORED_DUPLICATE', 'PROCESSED');`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// Without the order requirement the primary key would pass for it.
	cfg, err := config.Parse([]byte(fmt.Sprintf("databases: [{name: orders, dsn: %q}]", dsn)))
	if err != nil {
		t.Fatal(err)
	}
	db, err := NewDatabase(cfg.Databases[0], "databases[0]", DatabaseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.DB.Close()
	for _, c := range db.Collectors {
		if c.Name() != "idempotency_horizon" {
			continue
		}
		q := c.Requirements().Queries[0]
		tx, err := conn.Begin(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		used, err := pgschema.ServingIndex(context.Background(), tx, "workflow_idempotency_record", q.SQL)
		tx.Rollback(context.Background())
		if err != nil || used != "workflow_idempotency_record_pkey" {
			t.Errorf("ServingIndex = %q, %v; the primary key restricts the scan by scope (that is why the query is Ordered)", used, err)
		}
	}
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/003_exporter_indexes.sql")
	out, _ = runCheckDSN(t, dsn)
	for _, want := range []string{
		"index for horizon query: ok (served by workflow_idempotency_record_horizon_idx)",
		"index for horizon query: ok (served by message_inbox_horizon_idx)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q after 003_exporter_indexes.sql:\n%s", want, out)
		}
	}
}
