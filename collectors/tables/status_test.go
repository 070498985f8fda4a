package tables_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/internal/status"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

// TestStatusListsOfTheTables: every table's lists name exactly the open
// rows of their kind, oldest first, bounded by status.max_items with the
// total from the gauges; the joins name the records of the engine's
// in-flight tasks with the task's side from the view; nothing of a payload,
// a result, an error message or a request hash gets in.
func TestStatusListsOfTheTables(t *testing.T) {
	d := newTestDB(t, false)
	idem := func(key, st, ref string, updated float64) {
		d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at,
			request_hash, result_payload, error_code)
			VALUES ($1, $2, 'order-1', NULLIF($3, ''), $4, $5, 'SECRET-REQUEST-HASH', '{"secret": "SECRET-RESULT"}', 'E42')`, scopeA, key, ref, st, collectortest.At(updated))
	}
	idem("stale-1", "STARTED", "task-s1", -3600)
	idem("stale-2", "SIDE_EFFECT_SUBMITTED", "", -2400)
	idem("stale-3", "STARTED", "task-s3", -1200)
	idem("fresh", "STARTED", "", -60)               // within stale_after (15m): not stuck
	idem("retrying", "FAILED_RETRYABLE", "", -3600) // not in progress
	idem("unknown-1", "UNKNOWN_OUTCOME", "", -500)
	idem("unknown-2", "UNKNOWN_OUTCOME", "", -900)
	idem("done", "COMPLETED", "task-done", -100) // its task is open: lost completion
	idem("doubt", "STARTED", "task-doubt", -30)  // its task's lock lapsed: in doubt
	d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at, result_payload)
		VALUES ('main', 'task-done', 'pi-done', 'submitFulfillment', 'w', 'COMPLETED', $1, '{"secret": "SECRET-RESULT"}')`, collectortest.At(-90))
	d.upsertInbox(inboxRow{"kafka", "m-old", "OrderValidated", "PROCESSING", -700, nil},
		inboxRow{"kafka", "m-new", "OrderValidated", "RECEIVED", -20, nil},
		inboxRow{"rabbit", "m-unknown", "PaymentCaptured", "UNKNOWN_OUTCOME", -300, nil},
		inboxRow{"kafka", "m-done", "OrderValidated", "PROCESSED", -800, pub(-790)})
	// The inbox's error_message reaches the page only as its signature:
	// the quoted value and the number masked (the error groups).
	d.Exec(`UPDATE message_inbox SET error_message = 'timeout calling "SECRET-ERROR-VALUE" after 30012 ms', payload_hash = 'SECRET-PAYLOAD-HASH'`)
	d.insertOutbox(outboxRow{uuid(1), "Order", "OrderCreated", "PENDING", -400, nil},
		outboxRow{uuid(2), "Order", "OrderShipped", "PENDING", -100, nil},
		outboxRow{uuid(3), "Order", "OrderCreated", "FAILED", -900, nil},
		outboxRow{uuid(4), "Order", "OrderCreated", "PUBLISHED", -950, pub(-940)})
	d.Exec(`UPDATE event_outbox SET payload = '{"secret": "SECRET-PAYLOAD"}'`)

	e := d.newExporter(joinConfig + "status: {max_items: 2}\n")
	e.Views.Publish(&correlate.View{Engine: "main", Taken: time.Now(), Tasks: []correlate.Task{
		{ID: "task-done", Topic: "fulfillment.submit-command", WorkerID: "w1", ProcessInstanceID: "pi-done", BusinessKey: "order-4711",
			ActivityID: "submitFulfillment", State: correlate.LockExpired},
		{ID: "task-doubt", Topic: "fulfillment.submit-command", WorkerID: "w2", ProcessInstanceID: "pi-doubt", ActivityID: "submitFulfillment",
			State: correlate.Locked, Redelivered: true},
		{ID: "task-s1", Topic: "fulfillment.submit-command", WorkerID: "w1", State: correlate.Locked}, // still held: not in doubt
	}})
	e.Collect()
	lists := e.Lists()
	key := func(it collectors.Item) string {
		return strings.Join([]string{it.Scope, it.IdempotencyKey, it.Status, it.JobReference, collectortest.Age(it)}, " ")
	}
	collectortest.WantList(t, lists, "stale_in_progress/workflow_idempotency_record", 3, key,
		scopeA+" stale-1 STARTED task-s1 -1h0m0s 3600s", scopeA+" stale-2 SIDE_EFFECT_SUBMITTED  -40m0s 2400s")
	collectortest.WantList(t, lists, "unknown_outcome/workflow_idempotency_record", 2, key,
		scopeA+" unknown-2 UNKNOWN_OUTCOME  -15m0s 900s", scopeA+" unknown-1 UNKNOWN_OUTCOME  -8m20s 500s")
	joined := func(it collectors.Item) string {
		return strings.Join([]string{it.Engine, it.Topic, it.ExternalTaskID, it.ProcessInstanceID, it.BusinessKey, it.WorkerID, it.TaskState,
			it.Scope, it.IdempotencyKey, it.JobReference, it.Status, collectortest.Age(it)}, " ")
	}
	collectortest.WantList(t, lists, "completed_task_open/workflow_idempotency_record", 1, joined,
		"main fulfillment.submit-command task-done pi-done order-4711 w1 lock_expired "+scopeA+" done task-done COMPLETED -1m40s 100s")
	collectortest.WantList(t, lists, "in_doubt/workflow_idempotency_record", 1, joined,
		"main fulfillment.submit-command task-doubt pi-doubt  w2 locked "+scopeA+" doubt task-doubt STARTED -30s 30s")
	collectortest.WantList(t, lists, "processed_job_task_open/workflow_processed_job", 1, joined,
		"main fulfillment.submit-command task-done pi-done order-4711 w1 lock_expired   task-done COMPLETED -1m30s 90s")
	msg := func(it collectors.Item) string {
		return strings.Join([]string{it.SourceSystem, it.MessageID, it.MessageType, it.Status, collectortest.Age(it)}, " ")
	}
	collectortest.WantList(t, lists, "inbox_waiting/message_inbox", 2, msg,
		"kafka m-old OrderValidated PROCESSING -11m40s 700s", "kafka m-new OrderValidated RECEIVED -20s 20s")
	collectortest.WantList(t, lists, "unknown_outcome/message_inbox", 1, msg, "rabbit m-unknown PaymentCaptured UNKNOWN_OUTCOME -5m0s 300s")
	// The open messages' errors by signature, newest first in the
	// examples; the finished one's error is not read.
	group := func(it collectors.Item) string {
		return fmt.Sprintf("%s x%d %v last %s %s", it.ErrorSignature, it.Count, it.ExampleIDs, it.LastSeen.Sub(collectortest.T0), collectortest.Age(it))
	}
	collectortest.WantList(t, lists, "inbox_error_groups/message_inbox", 1, group,
		"timeout calling <q> after <n> ms x3 [m-new m-unknown m-old] last -20s -11m40s 700s")
	event := func(it collectors.Item) string {
		return strings.Join([]string{it.EventID, it.AggregateType, it.EventType, it.Status, collectortest.Age(it)}, " ")
	}
	collectortest.WantList(t, lists, "outbox_pending/event_outbox", 2, event,
		uuid(1)+" Order OrderCreated PENDING -6m40s 400s", uuid(2)+" Order OrderShipped PENDING -1m40s 100s")
	if l := lists["completed_task_open/workflow_idempotency_record"]; l.Engine != "main" || l.Database != "orders" || l.Source.Name != "orders" {
		t.Errorf("join list names engine %q, database %q, source %+v", l.Engine, l.Database, l.Source)
	}
	b, err := json.Marshal(lists)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"SECRET", "E42"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("the lists carry %q:\n%s", secret, b)
		}
	}

	// Identifiers switched off for two tables, and by the engine for the
	// joins: the counts stay, the items go.
	hidden := d.newExporter(joinConfig + `    tables:
      idempotency: {status: {identifiers: false}}
      processed_jobs: {}
      inbox: {status: {identifiers: false}}
      outbox: {}
`)
	hidden.Views.Publish(&correlate.View{Engine: "main", Taken: time.Now(), HideIdentifiers: true, Tasks: []correlate.Task{
		{ID: "task-done", Topic: "fulfillment.submit-command", State: correlate.LockExpired},
	}})
	hidden.Collect()
	for k, l := range hidden.Lists() {
		wantHidden := !strings.HasSuffix(k, "event_outbox")
		if l.IdentifiersHidden != wantHidden || (wantHidden && len(l.Items) != 0) || (!wantHidden && len(l.Items) == 0) {
			t.Errorf("%s: identifiers hidden %v with %d items, want hidden %v", k, l.IdentifiersHidden, len(l.Items), wantHidden)
		}
	}
	collectortest.WantList(t, hidden.Lists(), "stale_in_progress/workflow_idempotency_record", 3, key)
	collectortest.WantList(t, hidden.Lists(), "processed_job_task_open/workflow_processed_job", 1, key)

	// No failed statuses: every unpublished event is pending, the FAILED
	// one too, in the gauge and in the list.
	noFailed := d.newExporter(collectortest.BaseConfig + "    tables: {outbox: {failed_statuses: []}}\n")
	noFailed.Collect()
	if v := noFailed.Value(catalog.OutboxEventsPending, map[string]string{"event_type": "OrderCreated"}); v != 2 {
		t.Errorf("pending OrderCreated events with failed_statuses []: %v, want 2", v)
	}
	collectortest.WantList(t, noFailed.Lists(), "outbox_pending/event_outbox", 3, event,
		uuid(3)+" Order OrderCreated FAILED -15m0s 900s", uuid(1)+" Order OrderCreated PENDING -6m40s 400s",
		uuid(2)+" Order OrderShipped PENDING -1m40s 100s")
}

// TestStatusListsFollowTheCollector: a collector that fails keeps no list
// (the others keep theirs), and a database that cannot be reached keeps
// none at all.
func TestStatusListsFollowTheCollector(t *testing.T) {
	d, e := oneStartedRecord(t)
	d.insertOutbox(outboxRow{uuid(1), "Order", "OrderCreated", "PENDING", -400, nil})
	d.Exec(`ALTER TABLE message_inbox RENAME COLUMN received_at TO received`)
	e.Collect()
	lists := e.Lists()
	if _, ok := lists["inbox_waiting/message_inbox"]; ok {
		t.Error("the failed inbox collector kept its list")
	}
	collectortest.WantList(t, lists, "outbox_pending/event_outbox", 1, func(it collectors.Item) string { return it.EventID }, uuid(1))
	snaps := status.Snapshots(t.Context(), e.Set)
	if len(snaps) != 1 || len(snaps[0].Failures) != 1 || snaps[0].Failures[0].Collector != "inbox" ||
		snaps[0].Failures[0].Class != "column missing (databases[0].tables.inbox.columns.received_at)" {
		t.Errorf("failures %+v", snaps[0].Failures)
	}
}
