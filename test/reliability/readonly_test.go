//go:build !pgonly

package reliability

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/workflow-exporter/workflow-exporter/blocks/pgsource"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
)

// TestExporterRoleReadsEverythingAndWritesNothing: through the role of
// deploy/sql/004_exporter_role.sql the exporter reads all four tables and
// runs both Camunda joins (every collector up, the join series there), and
// no write gets through that role: not in the exporter's own read-only
// transactions, not in a session that turns default_transaction_read_only
// off (the grants refuse it), not even a CREATE TABLE.
func TestExporterRoleReadsEverythingAndWritesNothing(t *testing.T) {
	e := camundatest.Shared(t, camundatest.FlavorCamunda)
	topic, lockedID := engineWithTasks(t, e)
	d := newFaultDB(t, pgtest.SharedServer(t))
	d.exec(t, fmt.Sprintf(`
INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
  VALUES ('payment', 'k9', 'e9', '%[1]s', 'COMPLETED', now() - interval '1 minute');
INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
  VALUES ('main', '%[1]s', 'pi-9', 'task_1', 'w1', 'COMPLETED', now() - interval '1 minute')`, lockedID))
	t.Setenv("WFX_REL_DSN", d.dsn)
	r := newRig(t, fmt.Sprintf(`
camunda:
  - {name: main, url: %q, min_interval: 1ms, topics: [%s]}
databases:
  - {name: orders, dsn_env: WFX_REL_DSN, min_interval: 1ms}
`, e.BaseURL, topic), nil)
	p := r.collect()
	want := map[string]bool{"idempotency": true, "processed_jobs": true, "inbox": true, "outbox": true, "idempotency_camunda": true, "processed_jobs_camunda": true}
	for k, v := range p.family(catalog.ExporterCollectorUp) {
		for c := range want {
			if strings.Contains(k, `collector="`+c+`"`) && strings.Contains(k, `source="database"`) {
				if v != 1 {
					t.Errorf("%s = %v through the exporter role; logs:\n%s", k, v, r.logs)
				}
				delete(want, c)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("collectors that did not run: %v", want)
	}
	if v, _ := p.get(catalog.IdempotencyCompletedTaskOpen, "database", "orders", "engine", "main", "scope", "payment", "topic", topic); v != 1 {
		t.Errorf("idempotency join through the exporter role: %v, want 1", v)
	}
	if v, _ := p.get(catalog.ProcessedJobTaskOpen, "database", "orders", "engine", "main", "activity_id", "task_1", "topic", topic); v != 1 {
		t.Errorf("processed-job join through the exporter role: %v, want 1\n%v", v, p.family(catalog.ProcessedJobTaskOpen))
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	writes := []string{
		"INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, status) VALUES ('s', 'k', 'e', 'STARTED')",
		"UPDATE workflow_processed_job SET status = 'X'",
		"DELETE FROM message_inbox",
		"UPDATE event_outbox SET status = 'PUBLISHED'",
		"TRUNCATE event_outbox",
		"CREATE TABLE exporter_was_here (id int)",
	}
	// In the exporter's own transactions.
	db, err := pgsource.Open(pgsource.Options{Name: "orders", DSN: d.dsn, StatementTimeout: 5 * time.Second, LockTimeout: time.Second, MaxConnections: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, w := range writes {
		err := db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error { _, err := tx.Exec(ctx, w); return err })
		expectRefused(t, "in the exporter's read-only transaction", w, err, "25006")
	}
	// In a session of the role that asks for read-write transactions: the
	// role's default only says read-only; the grants refuse.
	conn := pgtest.Connect(t, d.dsn)
	for _, w := range writes {
		_, err := conn.Exec(ctx, "BEGIN READ WRITE; "+w+"; COMMIT")
		expectRefused(t, "as the role in a read-write transaction", w, err, "42501")
		_, _ = conn.Exec(ctx, "ROLLBACK")
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM message_inbox").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the role cannot read, or a write got through: %d rows, %v", n, err)
	}
}

func expectRefused(t *testing.T, where, sql string, err error, code string) {
	t.Helper()
	var pgErr *pgconn.PgError
	if err == nil || !errors.As(err, &pgErr) || pgErr.Code != code {
		t.Errorf("%s: %s: %v, want SQLSTATE %s", where, sql, err, code)
	}
}
