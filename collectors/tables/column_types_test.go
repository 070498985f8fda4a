package tables_test

import (
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

// Teams map their own tables, and a JPA LocalDateTime column is a
// `timestamp without time zone`. Every comparison with the exporter's
// watermark must then happen in the database: here the database's TimeZone
// is five hours behind the exporter's (UTC), so a bound sent as a zone-less
// wall clock would lie five hours ahead of every row and no counter would
// ever move, while the gauges looked fine.
func TestTimestampWithoutTimeZoneColumns(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`ALTER TABLE event_outbox ALTER COLUMN created_at TYPE timestamp, ALTER COLUMN published_at TYPE timestamp;
ALTER TABLE message_inbox ALTER COLUMN received_at TYPE timestamp, ALTER COLUMN processed_at TYPE timestamp;
ALTER TABLE workflow_idempotency_record ALTER COLUMN created_at TYPE timestamp, ALTER COLUMN updated_at TYPE timestamp,
	ALTER COLUMN completed_at TYPE timestamp;
ALTER TABLE workflow_processed_job ALTER COLUMN completed_at TYPE timestamp`)
	// New sessions (the exporter's) and this one write and read wall clocks
	// five hours behind UTC, as an application in that zone would.
	d.Exec(`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET timezone = %L', current_database(), 'Etc/GMT+5'); END $$`)
	d.Exec(`SET timezone = 'Etc/GMT+5'`)

	// The rows are written as the application would: a timestamptz turned
	// into the session's wall clock by the database (the ::timestamptz casts;
	// a bare Go time.Time would be written as its UTC wall clock).
	outbox := func(n int, status string, created float64, published any) {
		d.Exec(`INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
			VALUES ($1::uuid, 'Order', 'a', 'OrderCreated', $1::text, '{}', $2, $3::timestamptz, $4::timestamptz)`, uuid(n), status, collectortest.At(created), published)
	}
	outbox(1, "PENDING", -100, nil)
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect() // the baseline: rows before it are never counted

	outbox(2, "PUBLISHED", 5, collectortest.At(6))
	d.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
		VALUES ('kafka', 'm1', 'OrderValidated', 'c', 'PROCESSED', $1::timestamptz, $2::timestamptz)`, collectortest.At(5), collectortest.At(6))
	d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, status, updated_at)
		VALUES ('S', 'k1', 'e', 'COMPLETED', $1::timestamptz)`, collectortest.At(5))
	d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		VALUES ('main', 'j1', 'pi-1', 'submitFulfillment', 'w1', 'COMPLETED', $1::timestamptz)`, collectortest.At(5))
	d.SetClock(10 * time.Second)
	e.Collect()

	e.wantValues([]seriesValue{
		{catalog.OutboxEventsCreated, map[string]string{"event_type": "OrderCreated"}, 1},
		{catalog.OutboxEventsPublished, map[string]string{"event_type": "OrderCreated"}, 1},
		{catalog.OutboxOldestPendingAge, map[string]string{"event_type": "OrderCreated"}, 110},
		{catalog.InboxMessagesProcessed, map[string]string{"message_type": "OrderValidated", "status": "PROCESSED"}, 1},
		{catalog.IdempotencyTransitions, map[string]string{"scope": "S", "status": "COMPLETED"}, 1},
		{catalog.ProcessedJobs, map[string]string{"activity_id": "submitFulfillment", "status": "COMPLETED"}, 1},
	})
}

// A row without a status is work the exporter cannot classify: it is
// counted as status="unmapped", never dropped, and never breaks the
// collector (NULL NOT IN (...) is not true, and NULL does not scan into a
// string).
func TestNullStatusIsCountedAsUnmapped(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`ALTER TABLE workflow_idempotency_record ALTER COLUMN status DROP NOT NULL;
ALTER TABLE message_inbox ALTER COLUMN processing_status DROP NOT NULL`)
	d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, status, updated_at) VALUES ('S', 'old', 'e', NULL, $1)`, collectortest.At(-3600))
	d.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at) VALUES ('kafka', 'm0', 'T', 'c', NULL, $1)`, collectortest.At(-600))
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()
	// Recent rows without a status go through the activity queries too.
	d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, status, updated_at) VALUES ('S', 'new', 'e', NULL, $1)`, collectortest.At(5))
	d.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at) VALUES ('kafka', 'm1', 'T', 'c', NULL, $1, $1)`, collectortest.At(5))
	d.SetClock(10 * time.Second)
	e.Collect()

	e.wantValues([]seriesValue{
		{catalog.ExporterCollectorUp, map[string]string{"collector": "idempotency"}, 1},
		{catalog.ExporterCollectorUp, map[string]string{"collector": "inbox"}, 1},
		{catalog.IdempotencyRecords, map[string]string{"scope": "S", "status": "unmapped"}, 2},
		{catalog.IdempotencyOldestRecordAge, map[string]string{"scope": "S", "status": "unmapped"}, 3610},
		{catalog.IdempotencyTransitions, map[string]string{"scope": "S", "status": "unmapped"}, 1},
		{catalog.InboxMessages, map[string]string{"source_system": "kafka", "message_type": "T", "status": "unmapped"}, 2},
	})
}

// seriesValue is the expected value of the one series of name whose labels
// include labels.
type seriesValue struct {
	name   string
	labels map[string]string
	want   float64
}

// wantValues reports every series whose value differs from its expectation.
func (e *exporter) wantValues(vs []seriesValue) {
	e.T.Helper()
	for _, v := range vs {
		if got := e.Value(v.name, v.labels); got != v.want {
			e.T.Errorf("%s%v = %v, want %v", v.name, v.labels, got, v.want)
		}
	}
}
