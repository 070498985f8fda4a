package sources

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
)

type inboxRow struct {
	source, id, typ, status string
	received                float64
	processed               *float64
}

func (d *testDB) upsertInbox(rows ...inboxRow) {
	d.t.Helper()
	for _, r := range rows {
		d.exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
			VALUES ($1, $2, $3, 'c', $4, $5, $6)
			ON CONFLICT (source_system, message_id) DO UPDATE SET processing_status = EXCLUDED.processing_status, processed_at = EXCLUDED.processed_at`,
			r.source, r.id, r.typ, r.status, at(r.received), atOrNull(r.processed))
	}
}

type inboxKind struct {
	source, typ string
	open        map[string]gauge   // status -> count, oldest
	processed   map[string]float64 // terminal status -> count
}

func inboxExpect(kinds []inboxKind) string {
	var b strings.Builder
	open := []string{"RECEIVED", "PROCESSING", "FAILED_RETRYABLE", "UNKNOWN_OUTCOME"}
	for _, metric := range []string{catalog.InboxMessages, catalog.InboxOldestMessageAge} {
		b.WriteString(helpHeader(metric))
		for _, k := range kinds {
			for _, st := range open {
				v := k.open[st].count
				if metric == catalog.InboxOldestMessageAge {
					v = k.open[st].oldest
				}
				fmt.Fprintf(&b, "%s{database=\"orders\",message_type=%q,source_system=%q,status=%q} %v\n", metric, k.typ, k.source, st, v)
			}
		}
	}
	b.WriteString(helpHeader(catalog.InboxMessagesProcessed))
	for _, k := range kinds {
		for _, st := range []string{"PROCESSED", "FAILED_FINAL", "IGNORED_DUPLICATE"} {
			fmt.Fprintf(&b, "%s{database=\"orders\",message_type=%q,source_system=%q,status=%q} %v\n", catalog.InboxMessagesProcessed, k.typ, k.source, st, k.processed[st])
		}
	}
	return b.String()
}

var inboxNames = []string{catalog.InboxMessages, catalog.InboxOldestMessageAge, catalog.InboxMessagesProcessed}

func TestInboxExactValues(t *testing.T) {
	d := newTestDB(t, false)
	d.upsertInbox(
		inboxRow{"kafka", "m1", "OrderValidated", "RECEIVED", -400, nil},
		inboxRow{"kafka", "m2", "OrderValidated", "RECEIVED", -100, nil},
		inboxRow{"kafka", "m3", "OrderValidated", "PROCESSING", -50, nil},
		inboxRow{"kafka", "m4", "OrderValidated", "PROCESSED", -9000, pub(-8999)},
		inboxRow{"rabbit", "m5", "FulfillmentReply", "UNKNOWN_OUTCOME", -700, nil},
		inboxRow{"rabbit", "m6", "FulfillmentReply", "PROCESSED", -20, pub(-10)},
	)
	e := d.newExporter(baseConfig)
	e.collect()
	e.expect(inboxExpect([]inboxKind{
		{"kafka", "OrderValidated", map[string]gauge{"RECEIVED": {2, 400, 0}, "PROCESSING": {1, 50, 0}}, nil},
		{"rabbit", "FulfillmentReply", map[string]gauge{"UNKNOWN_OUTCOME": {1, 700, 0}}, nil},
	}), inboxNames...)

	d.setClock(30 * time.Second)
	d.upsertInbox(
		inboxRow{"kafka", "m1", "OrderValidated", "PROCESSED", -400, pub(10)},
		inboxRow{"kafka", "m2", "OrderValidated", "IGNORED_DUPLICATE", -100, pub(12)},
		inboxRow{"kafka", "m3", "OrderValidated", "FAILED_RETRYABLE", -50, nil},
		inboxRow{"rabbit", "m5", "FulfillmentReply", "FAILED_FINAL", -700, pub(20)},
		inboxRow{"rabbit", "m7", "FulfillmentReply", "RECEIVED", 25, nil},
	)
	e.collect()
	after := inboxExpect([]inboxKind{
		{"kafka", "OrderValidated", map[string]gauge{"FAILED_RETRYABLE": {1, 80, 0}}, map[string]float64{"PROCESSED": 1, "IGNORED_DUPLICATE": 1}},
		{"rabbit", "FulfillmentReply", map[string]gauge{"RECEIVED": {1, 5, 0}}, map[string]float64{"FAILED_FINAL": 1}},
	})
	e.expect(after, inboxNames...)

	d.exec(`DELETE FROM message_inbox WHERE processed_at IS NOT NULL`)
	e.collect()
	e.expect(after, inboxNames...)
}

func TestProcessedJobsExactValues(t *testing.T) {
	d := newTestDB(t, false)
	ins := func(ref, activity, status string, completed float64) {
		d.exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
			VALUES ('main', $1, 'pi-1', $2, 'w1', $3, $4)`, ref, activity, status, at(completed))
	}
	ins("j0", "submitFulfillment", "COMPLETED", -3000)
	ins("j1", "submitFulfillment", "COMPLETED", -10)
	e := d.newExporter(baseConfig)
	e.collect()
	names := []string{catalog.ProcessedJobs}
	head := helpHeader(catalog.ProcessedJobs)
	line := func(activity, status string, v int) string {
		return fmt.Sprintf("%s{activity_id=%q,database=\"orders\",engine=\"main\",status=%q} %d\n", catalog.ProcessedJobs, activity, status, v)
	}
	e.expect(head+line("submitFulfillment", "COMPLETED", 0), names...)

	d.setClock(30 * time.Second)
	ins("j2", "submitFulfillment", "COMPLETED", 5)
	ins("j3", "submitFulfillment", "COMPLETED", 6)
	ins("j4", "validateQuote", "BPMN_ERROR", 7)
	e.collect()
	want := head + line("submitFulfillment", "COMPLETED", 2) + line("validateQuote", "BPMN_ERROR", 1)
	e.expect(want, names...)
	d.exec(`DELETE FROM workflow_processed_job`)
	e.collect()
	e.expect(want, names...)
}
