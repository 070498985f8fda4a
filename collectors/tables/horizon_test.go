package tables_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

// horizonExpect renders a horizon family: label name, then value by label.
func horizonExpect(metric, label string, values map[string]float64, order ...string) string {
	var b strings.Builder
	b.WriteString(collectortest.HelpHeader(metric))
	for _, k := range order {
		fmt.Fprintf(&b, "%s{database=\"orders\",%s=%q} %v\n", metric, label, k, values[k])
	}
	return b.String()
}

// TestRetentionHorizonExactValues: the horizon is the age of the oldest
// finished row per scope (by updated_at) and per source system (by
// processed_at), by the database clock; open rows, however old, and
// finished messages without a processed_at do not count. Retention
// deleting the oldest rows shortens it, and a scope left without a
// finished record reports 0.
func TestRetentionHorizonExactValues(t *testing.T) {
	d := newTestDB(t, false)
	for _, r := range []struct {
		scope, key, status string
		updated            float64
	}{
		{scopeA, "a1", "COMPLETED", -86400},
		{scopeA, "a2", "FAILED_FINAL", -3600},
		{scopeA, "a3", "RECONCILED", -600},
		{scopeA, "a4", "STARTED", -200000},         // open: retention keeps it
		{scopeA, "a5", "UNKNOWN_OUTCOME", -500000}, // open
		{scopeB, "b1", "COMPLETED", -7200},
		{scopeB, "b2", "PENDING_REVIEW", -99999}, // unmapped: not finished
		{scopeC, "c1", "STARTED", -50},           // no finished record: no series
	} {
		d.upsertIdemNoDup(r.scope, r.key, r.status, r.updated)
	}
	d.upsertInbox(
		inboxRow{"kafka", "k1", "OrderValidated", "PROCESSED", -43300, pub(-43200)},
		inboxRow{"kafka", "k2", "OrderValidated", "FAILED_FINAL", -200, pub(-100)},
		inboxRow{"kafka", "k3", "OrderValidated", "IGNORED_DUPLICATE", -90000, nil},        // finished, no processed_at
		inboxRow{"kafka", "k4", "OrderValidated", "FAILED_RETRYABLE", -80100, pub(-80000)}, // processed_at of an attempt, still open
		inboxRow{"kafka", "k5", "OrderValidated", "RECEIVED", -70000, nil},
		inboxRow{"rabbit", "r1", "FulfillmentReply", "PROCESSED", -40, pub(-30)},
	)
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()
	e.Expect(horizonExpect(catalog.IdempotencyRetentionHorizon, "scope", map[string]float64{scopeA: 86400, scopeB: 7200}, scopeA, scopeB),
		catalog.IdempotencyRetentionHorizon)
	e.Expect(horizonExpect(catalog.InboxRetentionHorizon, "source_system", map[string]float64{"kafka": 43200, "rabbit": 30}, "kafka", "rabbit"),
		catalog.InboxRetentionHorizon)

	// A minute later the retention jobs ran: the idempotency job deleted
	// finished records not updated for 2 hours (scope B's only one), the
	// inbox job messages processed more than 1000 s ago.
	d.SetClock(time.Minute)
	d.Exec(`DELETE FROM workflow_idempotency_record WHERE status IN ('COMPLETED', 'FAILED_FINAL', 'RECONCILED') AND updated_at < $1`, collectortest.At(-7000))
	d.Exec(`DELETE FROM message_inbox WHERE processed_at < $1 AND processing_status IN ('PROCESSED', 'FAILED_FINAL', 'IGNORED_DUPLICATE')`, collectortest.At(-1000))
	e.Collect()
	e.Expect(horizonExpect(catalog.IdempotencyRetentionHorizon, "scope", map[string]float64{scopeA: 3660, scopeB: 0}, scopeA, scopeB),
		catalog.IdempotencyRetentionHorizon)
	e.Expect(horizonExpect(catalog.InboxRetentionHorizon, "source_system", map[string]float64{"kafka": 160, "rabbit": 90}, "kafka", "rabbit"),
		catalog.InboxRetentionHorizon)
	for _, c := range []string{"idempotency_horizon", "inbox_horizon"} {
		if v := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": c}); v != 1 {
			t.Errorf("collector_up{collector=%q} = %v, want 1", c, v)
		}
	}
}

// TestRetentionHorizonFoldsToTheShortest: scopes past label_value_limit
// fold into "other" with the shortest horizon among them, so an alert on
// the folded label errs towards firing; the scope admitted first (the
// query's order) keeps its own.
func TestRetentionHorizonFoldsToTheShortest(t *testing.T) {
	d := newTestDB(t, false)
	d.upsertIdemNoDup(scopeA, "a", "COMPLETED", -100)
	d.upsertIdemNoDup(scopeB, "b", "COMPLETED", -500)
	d.upsertIdemNoDup(scopeC, "c", "COMPLETED", -300)
	e := d.newExporter(collectortest.BaseConfig + "    label_value_limit: 1\n    tables: {idempotency: {}}\n")
	e.Collect()
	// BILLING_PRECHECK (scope C) sorts first.
	e.Expect(horizonExpect(catalog.IdempotencyRetentionHorizon, "scope", map[string]float64{scopeC: 300, "other": 100}, scopeC, "other"),
		catalog.IdempotencyRetentionHorizon)
}

// TestRetentionHorizonNullScope: on a table whose scope column admits
// NULL (no primary key on it), records without a scope belong to no
// scope's horizon (docs/metrics.md); the empty scope is a scope.
func TestRetentionHorizonNullScope(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`CREATE TABLE idem_nullable (LIKE workflow_idempotency_record INCLUDING DEFAULTS); ALTER TABLE idem_nullable ALTER COLUMN scope DROP NOT NULL`)
	for _, r := range []struct {
		scope   any
		status  string
		updated float64
	}{
		{nil, "COMPLETED", -900}, {"", "COMPLETED", -700}, {"", "COMPLETED", -300}, {scopeA, "COMPLETED", -50}, {"", "STARTED", -5000},
	} {
		d.Exec(`INSERT INTO idem_nullable (scope, idempotency_key, business_entity_id, status, updated_at) VALUES ($1, gen_random_uuid()::text, 'e', $2, $3)`,
			r.scope, r.status, collectortest.At(r.updated))
	}
	e := d.newExporter(collectortest.BaseConfig + "    tables: {idempotency: {table: idem_nullable}}\n")
	e.Collect()
	e.Expect(horizonExpect(catalog.IdempotencyRetentionHorizon, "scope", map[string]float64{"": 700, scopeA: 50}, "", scopeA),
		catalog.IdempotencyRetentionHorizon)
}

// TestOutboxConsumerInfo: each inbox a delivery takes the outbox's events
// to is one series, with the source system the delivery names ("" for
// none: any source of that inbox).
func TestOutboxConsumerInfo(t *testing.T) {
	d := newTestDB(t, false)
	e := d.newExporter(collectortest.BaseConfig + `    tables: {outbox: {}, inbox: {}}
deliveries:
  - {name: a, from: {database: orders}, to: {database: orders, source_systems: [kafka]}}
  - {name: b, from: {database: orders}, to: {database: orders}}
`)
	e.Collect()
	e.Expect(collectortest.HelpHeader(catalog.OutboxConsumerInfo)+
		catalog.OutboxConsumerInfo+`{consumer_database="orders",database="orders",source_system=""} 1
`+catalog.OutboxConsumerInfo+`{consumer_database="orders",database="orders",source_system="kafka"} 1
`, catalog.OutboxConsumerInfo)

	// Without a delivery the family is absent.
	plain := d.newExporter(collectortest.BaseConfig)
	plain.Collect()
	if err := plain.Compare("", catalog.OutboxConsumerInfo); err != nil {
		t.Error(err)
	}
}
