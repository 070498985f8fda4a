package tables_test

import (
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

// TestExposition: everything one database serves, after two collections
// of the four reference tables and their Camunda joins with rows in every
// status (the counters have moved between the two), compared with
// testdata/exposition.prom: a change to any series shows up in review.
func TestExposition(t *testing.T) {
	d := newTestDB(t, true)
	d.upsertIdem(
		idemRow{scopeA, "k-started", "STARTED", -1200, "", 0},
		idemRow{scopeA, "k-submitted", "SIDE_EFFECT_SUBMITTED", -600, "", 0},
		idemRow{scopeA, "k-unknown", "UNKNOWN_OUTCOME", -900, "", 0},
		idemRow{scopeA, "k-retry", "FAILED_RETRYABLE", -300, "TIMEOUT", 1},
		idemRow{scopeA, "k-done", "COMPLETED", -3000, "", 2},
		idemRow{scopeA, "k-final", "FAILED_FINAL", -200, "CARD_DECLINED", 0},
		idemRow{"INVOICE_ISSUE", "k-rec", "RECONCILED", -100, "", 0},
		idemRow{"INVOICE_ISSUE", "k-odd", "PAUSED", -100, "", 0},
	)
	d.Exec(`UPDATE workflow_idempotency_record SET job_reference = 't-' || idempotency_key`)
	d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		VALUES ('main', 't-k-done', 'pi-1', 'submitFulfillment', 'w1', 'COMPLETED', $1)`, collectortest.At(-3000))
	d.upsertInbox(
		inboxRow{"kafka", "m1", "PaymentCaptured", "RECEIVED", -400, nil},
		inboxRow{"kafka", "m2", "PaymentCaptured", "PROCESSING", -200, nil},
		inboxRow{"kafka", "m3", "PaymentCaptured", "PROCESSED", -500, pub(-499)},
		inboxRow{"rabbit", "m4", "ShipmentBooked", "FAILED_FINAL", -100, pub(-90)},
	)
	d.insertOutbox(
		outboxRow{uuid(1), "Order", "OrderCreated", "PENDING", -600, nil},
		outboxRow{uuid(2), "Order", "OrderPaid", "FAILED", -1000, nil},
		outboxRow{uuid(3), "Quote", "QuoteApproved", "PUBLISHED", -50, pub(-40)},
	)
	e := d.newExporter(joinConfig)
	e.Views.Publish(&correlate.View{Engine: "main", Taken: time.Now(), Tasks: []correlate.Task{
		{ID: "t-k-done", Topic: "fulfillment.submit-command", State: correlate.LockExpired},
		{ID: "t-k-started", Topic: "fulfillment.submit-command", State: correlate.Locked, Redelivered: true},
	}})
	e.Collect()

	// A minute later: work moved on.
	d.SetClock(time.Minute)
	d.upsertIdem(
		idemRow{scopeA, "k-started", "COMPLETED", 30, "", 0},
		idemRow{scopeA, "k-new", "STARTED", 50, "", 0},
	)
	d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		VALUES ('main', 't-k-started', 'pi-2', 'submitFulfillment', 'w1', 'COMPLETED', $1)`, collectortest.At(31))
	d.upsertInbox(inboxRow{"kafka", "m1", "PaymentCaptured", "PROCESSED", -400, pub(40)})
	d.insertOutbox(outboxRow{uuid(4), "Order", "OrderCreated", "PUBLISHED", 20, pub(22)})
	d.Exec(`UPDATE event_outbox SET status = 'PUBLISHED', published_at = $1 WHERE event_id = $2::uuid`, collectortest.At(45), uuid(1))
	e.Collect()

	collectortest.Golden(t, e.Set, "exposition")
}
