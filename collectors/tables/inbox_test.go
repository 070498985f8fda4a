package tables_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

type inboxRow struct {
	source, id, typ, status string
	received                float64
	processed               *float64
}

func (d *testDB) upsertInbox(rows ...inboxRow) {
	d.T.Helper()
	for _, r := range rows {
		d.Exec(`INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
			VALUES ($1, $2, $3, 'c', $4, $5, $6)
			ON CONFLICT (source_system, message_id) DO UPDATE SET processing_status = EXCLUDED.processing_status, processed_at = EXCLUDED.processed_at`,
			r.source, r.id, r.typ, r.status, collectortest.At(r.received), collectortest.AtOrNull(r.processed))
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
		b.WriteString(collectortest.HelpHeader(metric))
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
	b.WriteString(collectortest.HelpHeader(catalog.InboxMessagesProcessed))
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
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()
	e.Expect(inboxExpect([]inboxKind{
		{"kafka", "OrderValidated", map[string]gauge{"RECEIVED": {2, 400, 0}, "PROCESSING": {1, 50, 0}}, nil},
		{"rabbit", "FulfillmentReply", map[string]gauge{"UNKNOWN_OUTCOME": {1, 700, 0}}, nil},
	}), inboxNames...)

	d.SetClock(30 * time.Second)
	d.upsertInbox(
		inboxRow{"kafka", "m1", "OrderValidated", "PROCESSED", -400, pub(10)},
		inboxRow{"kafka", "m2", "OrderValidated", "IGNORED_DUPLICATE", -100, pub(12)},
		inboxRow{"kafka", "m3", "OrderValidated", "FAILED_RETRYABLE", -50, nil},
		inboxRow{"rabbit", "m5", "FulfillmentReply", "FAILED_FINAL", -700, pub(20)},
		inboxRow{"rabbit", "m7", "FulfillmentReply", "RECEIVED", 25, nil},
	)
	e.Collect()
	after := inboxExpect([]inboxKind{
		{"kafka", "OrderValidated", map[string]gauge{"FAILED_RETRYABLE": {1, 80, 0}}, map[string]float64{"PROCESSED": 1, "IGNORED_DUPLICATE": 1}},
		{"rabbit", "FulfillmentReply", map[string]gauge{"RECEIVED": {1, 5, 0}}, map[string]float64{"FAILED_FINAL": 1}},
	})
	e.Expect(after, inboxNames...)

	d.Exec(`DELETE FROM message_inbox WHERE processed_at IS NOT NULL`)
	e.Collect()
	e.Expect(after, inboxNames...)
}

func TestProcessedJobsExactValues(t *testing.T) {
	d := newTestDB(t, false)
	ins := func(ref, activity, status string, completed float64) {
		d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
			VALUES ('main', $1, 'pi-1', $2, 'w1', $3, $4)`, ref, activity, status, collectortest.At(completed))
	}
	ins("j0", "submitFulfillment", "COMPLETED", -3000)
	ins("j1", "submitFulfillment", "COMPLETED", -10)
	e := d.newExporter(collectortest.BaseConfig)
	e.Collect()
	names := []string{catalog.ProcessedJobs}
	head := collectortest.HelpHeader(catalog.ProcessedJobs)
	line := func(activity, status string, v int) string {
		return fmt.Sprintf("%s{activity_id=%q,database=\"orders\",engine=\"main\",status=%q} %d\n", catalog.ProcessedJobs, activity, status, v)
	}
	e.Expect(head+line("submitFulfillment", "COMPLETED", 0), names...)

	d.SetClock(30 * time.Second)
	ins("j2", "submitFulfillment", "COMPLETED", 5)
	ins("j3", "submitFulfillment", "COMPLETED", 6)
	ins("j4", "validateQuote", "BPMN_ERROR", 7)
	e.Collect()
	want := head + line("submitFulfillment", "COMPLETED", 2) + line("validateQuote", "BPMN_ERROR", 1)
	e.Expect(want, names...)
	d.Exec(`DELETE FROM workflow_processed_job`)
	e.Collect()
	e.Expect(want, names...)
}
