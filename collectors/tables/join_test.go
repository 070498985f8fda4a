package tables_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/collectortest"
)

const joinConfig = `
camunda:
  - name: main
    url: http://127.0.0.1:1/engine-rest
databases:
  - name: orders
    dsn_env: WFX_TEST_DSN
    min_interval: 1ms
    late_commit_window: 60s
`

// TestJoinsAgainstAPublishedView checks the database half of the join with
// a hand-made engine view (the engine half is tested on a real engine in
// camunda_join_engine_test.go).
func TestJoinsAgainstAPublishedView(t *testing.T) {
	d := newTestDB(t, false)
	rec := func(key, status, ref string, updated float64) {
		d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
			VALUES ($1, $2, 'e', $3, $4, $5)`, scopeA, key, ref, status, collectortest.At(updated))
	}
	rec("k1", "COMPLETED", "t1", -100)            // side effect done, task still open: lost completion
	rec("k2", "STARTED", "t2", -100)              // lock lapsed: in doubt
	rec("k3", "SIDE_EFFECT_SUBMITTED", "t3", -50) // re-fetched after a lapse: in doubt
	rec("k4", "STARTED", "t4", -20)               // locked, working normally: fine
	rec("k5", "COMPLETED", "t5", -2)              // completed 2 s ago: the worker is completing right now
	rec("k6", "COMPLETED", "t6", -100)            // task not in flight (done): fine
	rec("k7", "FAILED_FINAL", "t7", -100)         // terminal failure: not this join's business
	rec("k8", "STARTED", "t8", -100)              // redelivered, failed, backoff over, not fetched yet: still in doubt
	rec("k9", "STARTED", "t9", -100)              // failed by its one worker, backoff over: fine (the worker retries)
	d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		VALUES ('main', 't1', 'pi', 'submitFulfillment', 'w', 'COMPLETED', $1), ('main', 't6', 'pi', 'submitFulfillment', 'w', 'COMPLETED', $1),
		       ('other', 't2', 'pi', 'submitFulfillment', 'w', 'COMPLETED', $1)`, collectortest.At(-100))

	e := d.newExporter(joinConfig)
	view := &correlate.View{Engine: "main", Taken: time.Now(), Tasks: []correlate.Task{
		{ID: "t1", Topic: "fulfillment.submit-command", State: correlate.LockExpired},
		{ID: "t2", Topic: "fulfillment.submit-command", State: correlate.LockExpired},
		{ID: "t3", Topic: "fulfillment.submit-command", State: correlate.Locked, Redelivered: true},
		{ID: "t4", Topic: "fulfillment.submit-command", State: correlate.Locked},
		{ID: "t5", Topic: "fulfillment.submit-command", State: correlate.Locked},
		{ID: "t7", Topic: "billing.precheck", State: correlate.RetryBackoff},
		{ID: "t8", Topic: "fulfillment.submit-command", State: correlate.Waiting, Redelivered: true},
		{ID: "t9", Topic: "fulfillment.submit-command", State: correlate.Waiting},
	}}
	e.Views.Publish(view)
	e.Collect()
	e.expectJoins(1, 3, 1)

	// The retry replays the stored result and completes the task: it leaves
	// the engine's view, and the gauges return to 0 (the series stay).
	e.Views.Publish(&correlate.View{Engine: "main", Taken: time.Now()})
	e.Collect()
	e.Expect(collectortest.HelpHeader(catalog.IdempotencyCompletedTaskOpen)+
		`workflow_idempotency_completed_task_open{database="orders",engine="main",scope="`+scopeA+`",topic="fulfillment.submit-command"} 0`+"\n"+
		collectortest.HelpHeader(catalog.ProcessedJobTaskOpen)+
		`workflow_processed_job_task_open{activity_id="submitFulfillment",database="orders",engine="main",topic="fulfillment.submit-command"} 0`+"\n",
		catalog.IdempotencyCompletedTaskOpen, catalog.ProcessedJobTaskOpen)

	// Engine down: the view is withdrawn and the joins report nothing, not 0.
	e.Views.Withdraw("main")
	e.Collect()
	if err := e.Compare("", catalog.IdempotencyCompletedTaskOpen, catalog.IdempotencyInDoubt, catalog.ProcessedJobTaskOpen); err != nil {
		t.Fatalf("join series must be absent while the engine's view is missing: %v", err)
	}
	// The engine's own up metric reports the outage; the join itself did
	// not fail, so it raises no second alert.
	if v := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": "idempotency_camunda"}); v != 1 {
		t.Fatalf("collector_up{idempotency_camunda} = %v, want 1", v)
	}
	if v := e.Value(catalog.ExporterCollectorUp, map[string]string{"collector": "idempotency"}); v != 1 {
		t.Fatalf("the plain idempotency collector must keep working: %v", v)
	}
}

// TestJoinByProcessInstanceAndActivity: tables that store the process
// instance and activity instead of the external task id join the same way.
func TestJoinByProcessInstanceAndActivity(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`ALTER TABLE workflow_idempotency_record ADD COLUMN activity_id text`)
	d.Exec(`CREATE INDEX ON workflow_idempotency_record (process_instance_id, activity_id)`)
	d.Exec(`INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, process_instance_id, activity_id, status, updated_at) VALUES
		($1, 'k1', 'e', 'pi-1', 'submitFulfillment', 'COMPLETED', $2),
		($1, 'k2', 'e', 'pi-2', 'submitFulfillment', 'STARTED', $2),
		($1, 'k3', 'e', 'pi-2', 'otherStep', 'STARTED', $2)`, scopeA, collectortest.At(-100))
	d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		VALUES ('main', 'not-the-task-id', 'pi-1', 'submitFulfillment', 'w', 'COMPLETED', $1)`, collectortest.At(-100))
	e := d.newExporter(joinConfig + `    tables:
      idempotency:
        columns: {activity_id: activity_id}
        camunda: {reference: process_instance_activity}
      processed_jobs:
        camunda: {reference: process_instance_activity}
`)
	e.Views.Publish(&correlate.View{Engine: "main", Taken: time.Now(), Tasks: []correlate.Task{
		{ID: "t1", Topic: "fulfillment.submit-command", ProcessInstanceID: "pi-1", ActivityID: "submitFulfillment", State: correlate.LockExpired},
		{ID: "t2", Topic: "fulfillment.submit-command", ProcessInstanceID: "pi-2", ActivityID: "submitFulfillment", State: correlate.LockExpired},
	}})
	e.Collect()
	e.expectJoins(1, 1, 1)
}

// TestProcessedJobJoinNamesTheTasksTopic: the processed-job table has no
// topic column; the join takes the topic from the engine's view of the
// task, so the alert names the topic (and the idempotency join's alert of
// the same topic can inhibit it). One activity on two topics is two series.
func TestProcessedJobJoinNamesTheTasksTopic(t *testing.T) {
	d := newTestDB(t, false)
	d.Exec(`INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		VALUES ('main', 't1', 'pi', 'submit', 'w', 'COMPLETED', $1), ('main', 't2', 'pi', 'submit', 'w', 'COMPLETED', $1),
		       ('main', 't3', 'pi', 'submit', 'w', 'COMPLETED', $1)`, collectortest.At(-100))
	e := d.newExporter(joinConfig)
	e.Views.Publish(&correlate.View{Engine: "main", Taken: time.Now(), Tasks: []correlate.Task{
		{ID: "t1", Topic: "orders.submit", State: correlate.LockExpired},
		{ID: "t2", Topic: "orders.submit", State: correlate.Locked},
		{ID: "t3", Topic: "billing.submit", State: correlate.RetryBackoff},
	}})
	e.Collect()
	e.Expect(collectortest.HelpHeader(catalog.ProcessedJobTaskOpen)+
		`workflow_processed_job_task_open{activity_id="submit",database="orders",engine="main",topic="billing.submit"} 1`+"\n"+
		`workflow_processed_job_task_open{activity_id="submit",database="orders",engine="main",topic="orders.submit"} 2`+"\n",
		catalog.ProcessedJobTaskOpen)
}

// expectJoins compares the three join series of scope A on topic
// fulfillment.submit-command and activity submitFulfillment of engine main.
func (e *exporter) expectJoins(completedTaskOpen, inDoubt, processedJobTaskOpen int) {
	e.T.Helper()
	lv := `database="orders",engine="main",scope="` + scopeA + `",topic="fulfillment.submit-command"`
	e.Expect(fmt.Sprintf("%s%s{%s} %d\n%s%s{%s} %d\n%s%s{%s} %d\n",
		collectortest.HelpHeader(catalog.IdempotencyCompletedTaskOpen), catalog.IdempotencyCompletedTaskOpen, lv, completedTaskOpen,
		collectortest.HelpHeader(catalog.IdempotencyInDoubt), catalog.IdempotencyInDoubt, lv, inDoubt,
		collectortest.HelpHeader(catalog.ProcessedJobTaskOpen), catalog.ProcessedJobTaskOpen, `activity_id="submitFulfillment",database="orders",engine="main",topic="fulfillment.submit-command"`, processedJobTaskOpen),
		catalog.IdempotencyCompletedTaskOpen, catalog.IdempotencyInDoubt, catalog.ProcessedJobTaskOpen)
}
