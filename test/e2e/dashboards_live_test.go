package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/dashboards"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/pgtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/relaytest"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// TestEveryPanelShowsDataOnALiveStack is the dashboards' live check
// (docs/dashboards.md): real PostgreSQL with every table in use, a real
// Camunda engine with external tasks in every state, an incident, a job
// without retries and both crash cases of the Camunda join
// (docs/design.md), the exporter binary, and a real Prometheus of each
// flavor (Debian's 2.42 and the current 3.x) scraping it with the shipped
// rules (for: shortened so alerts fire). Then every panel query of every
// dashboard must return at least one series from each: a panel that shows
// nothing at 3 a.m. is a defect.
func TestEveryPanelShowsDataOnALiveStack(t *testing.T) {
	besideTheMatrix(t)
	promtest.SkipIfMissing(t, promtest.PrometheusBinary())
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	// The database: reference schema, the duplicate_count extension, the
	// exporter's indexes and the sample rows of `make run`.
	conn, dsn := newDatabase(t)
	pgtest.ExecRepoFiles(t, conn, nil, "deploy/sql/002_duplicate_count_extension.sql", "deploy/sql/003_exporter_indexes.sql", "tools/demo/sample.sql")
	// A pending event old enough for the critical page.
	pgtest.Exec(t, conn, `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at)
		VALUES (gen_random_uuid(), 'Order', 'order-old', 'OrderFulfillmentSubmitted', 'order-old', '{}', 'PENDING', now() - interval '20 minutes')`)
	// Attempt counts on the outbox and the inbox (the optional attempts
	// columns), one event and the waiting messages retried past the
	// threshold; and a library's inbox with dead letters (Wolverine's
	// tables, read by the preset as a second database), for the retry
	// and dead-letter panels.
	pgtest.Exec(t, conn, `ALTER TABLE event_outbox ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE message_inbox ADD COLUMN attempts integer NOT NULL DEFAULT 0;
UPDATE event_outbox SET attempts = 4 WHERE aggregate_id = 'order-old';
UPDATE message_inbox SET attempts = 4 WHERE processed_at IS NULL`)
	pgtest.ExecRepoFiles(t, conn, nil, "collectors/tables/testdata/presets/wolverine.sql", "collectors/tables/testdata/presets/wolverine.states.sql")

	// An outbox drained by change data capture, for the relay's panels: a
	// Debezium-shaped table on a wal_level=logical server of its own
	// (with a WAL limit for the slot, so the limit's series exists), and
	// its slot, which nothing consumes.
	cdcDSN, _ := relaytest.NewLogicalDatabase(t, "max_slot_wal_keep_size=1GB")
	if err := relaytest.CreateOutbox(ctx, cdcDSN, ""); err != nil {
		t.Fatal(err)
	}
	if err := relaytest.CreatePublication(ctx, cdcDSN, "cdc_publication"); err != nil {
		t.Fatal(err)
	}
	if _, err := relaytest.CreateSlot(ctx, cdcDSN, "cdc_relay", relaytest.PluginPgoutput); err != nil {
		t.Fatal(err)
	}

	// The engine: one process with one external task per instance.
	engine := sharedEngine(t)
	c := engine.Client()
	key := camundatest.UniqueName("live")
	topic := "fulfillment.submit-command"
	if _, err := c.Deploy(ctx, key, map[string][]byte{key + ".bpmn": engineclient.ExternalTaskProcess(key, topic)}); err != nil {
		t.Fatal(err)
	}
	instances := make([]engineclient.ProcessInstance, 8)
	for i := range instances {
		pi, err := c.StartProcess(ctx, key, fmt.Sprintf("order-%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		instances[i] = pi
	}

	// An async job that stays executable (the job executor is off), for the
	// job panels; deleted at the end so no later test of the package sees
	// a stalled job executor.
	asyncKey := key + "_async"
	if _, err := c.Deploy(ctx, asyncKey, map[string][]byte{asyncKey + ".bpmn": engineclient.AsyncProcess(asyncKey)}); err != nil {
		t.Fatal(err)
	}
	asyncPI, err := c.StartProcess(ctx, asyncKey, "", map[string]any{"fail": false})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Do(context.Background(), http.MethodDelete, "/process-instance/"+asyncPI.ID, nil, nil); err != nil {
			t.Errorf("deleting the async process instance: %v", err)
		}
	})

	// The history is read every second, not once per the default
	// history_cleanup.interval: the history panels show the instances this
	// test finishes, and a first reading taken before any of them finished
	// (it has no process definition key to report) is not kept for minutes.
	exporterAddr := exportertest.Start(t, exportertest.Options{Config: fmt.Sprintf(`
camunda:
  - name: main
    url: %s
    min_interval: 1s
    topics: [%s]
    history_cleanup: {interval: 1s}
databases:
  - name: orders
    dsn_env: E2E_ORDERS_DSN
    min_interval: 1s
    late_commit_window: 2m
  - name: library
    dsn_env: E2E_ORDERS_DSN
    min_interval: 1s
    tables: {inbox: {preset: wolverine}}
  - name: cdc
    dsn_env: E2E_CDC_DSN
    min_interval: 1s
    tables:
      outbox: {table: public.event_outbox, relay: {slot: cdc_relay, publication: cdc_publication}}
deliveries:
  - {name: orders-orders, from: {database: orders}, to: {database: orders}, min_interval: 1s}
`, engine.BaseURL, topic), Env: []string{"E2E_ORDERS_DSN=" + dsn, "E2E_CDC_DSN=" + cdcDSN}}).Addr

	rules := promtest.GenerateRules(t, `
outbox: {stalled_for: 0s, oldest_age_for: 0s}
idempotency: {unknown_outcome_for: 0s, completed_task_open_for: 0s, in_doubt_for: 0s, stale_for: 0s}
camunda: {retries_exhausted_for: 0s, incidents_for: 0s}
`)
	proms := promtest.StartPrometheusEach(t, promtest.PrometheusConfig(exporterAddr, ""), promtest.Files{"rules.yml": rules, promtest.SLORulesFile: promtest.SLORules(t, promtest.LiveSLOs)})

	// Let the first collections (the counters' baselines) happen: what
	// happens before them is their baseline, not counted. Under load a
	// collection takes seconds, so wait for them rather than a fixed time.
	waitForBaselines(t, exporterAddr, vocab.CollectorCamunda, vocab.CollectorCamundaJobs, vocab.CollectorDelivery, vocab.CollectorOutboxRelay)

	// Drive the tasks into every state, and replay both crash cases.
	w1, w2 := engineclient.NewWorker(c, "worker-1"), engineclient.NewWorker(c, "worker-2")
	fetch, ok := taskFetcher(t, ctx, topic)
	// Suspended: suspend one instance before anything fetches it.
	ok(c.SetProcessInstanceSuspended(ctx, instances[7].ID, true))
	// Locked: a worker holds it.
	fetch(w1, 10*time.Minute)
	// Completed once, so the completion counter moves.
	done := fetch(w1, 10*time.Minute)
	ok(w1.Complete(ctx, done.ID, nil))
	// Retry backoff: failed with retries left.
	backoff := fetch(w1, 10*time.Minute)
	ok(w1.Failure(ctx, backoff.ID, 2, 10*time.Minute, "HTTP 503 from fulfillment"))
	// Retries exhausted: an incident.
	exhausted := fetch(w1, 10*time.Minute)
	ok(w1.Failure(ctx, exhausted.ID, 0, 0, "fulfillment rejected the command"))
	// A job that fails once (its expression names a bean that does not
	// exist), for the job failures by cause; its instance goes at the end
	// with the other async one.
	failingPI, err := c.StartProcess(ctx, asyncKey, "", map[string]any{"fail": true})
	ok(err)
	t.Cleanup(func() {
		if err := c.Do(context.Background(), http.MethodDelete, "/process-instance/"+failingPI.ID, nil, nil); err != nil {
			t.Errorf("deleting the failing async process instance: %v", err)
		}
	})
	var failingJobs []struct{ ID string }
	ok(c.Get(ctx, "/job", url.Values{"processInstanceId": {failingPI.ID}}, &failingJobs))
	if len(failingJobs) != 1 {
		t.Fatalf("engine: %d jobs of the failing instance, want 1", len(failingJobs))
	}
	if resp, err := c.Raw(ctx, http.MethodPost, "/job/"+failingJobs[0].ID+"/execute", nil, ""); err != nil || resp.Status < 400 {
		t.Fatalf("engine: the failing job did not fail: %v %v", resp, err)
	}
	// Crash case 1: the side effect happened and was recorded COMPLETED, the
	// worker died before completing the task; its lock lapses.
	lost := fetch(w1, 2*time.Second)
	pgtest.Exec(t, conn, `INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
		VALUES ('ORDER_FULFILLMENT_SUBMISSION', 'lost-completion', 'order-x', $1, 'COMPLETED', now() - interval '1 minute')`, lost.ID)
	pgtest.Exec(t, conn, `INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at)
		VALUES ('main', $1, $2, $3, 'worker-1', 'COMPLETED', now() - interval '1 minute')`, lost.ID, lost.ProcessInstanceID, lost.ActivityID)
	// Crash case 2: STARTED, then the lock lapses and another worker fetches
	// the task again.
	doubt := fetch(w1, 2*time.Second)
	pgtest.Exec(t, conn, `INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at)
		VALUES ('ORDER_FULFILLMENT_SUBMISSION', 'in-doubt', 'order-y', $1, 'STARTED', now())`, doubt.ID)
	time.Sleep(4 * time.Second) // both locks lapse; the exporter sees the lapse
	fetchSpecific := func(w *engineclient.Worker, id string) {
		t.Helper()
		// Fetch until the lapsed task comes back (the remaining waiting task
		// may come first).
		for i := 0; i < 3; i++ {
			tk := fetch(w, 10*time.Minute)
			if tk.ID == id {
				return
			}
		}
		t.Fatalf("task %s was not fetched again", id)
	}
	fetchSpecific(w2, doubt.ID)
	// An async job without retries left (a timer whose retries an operator
	// set to 0 looks like a failed job to the engine).
	jobKey := camundatest.UniqueName("timer")
	if _, err := c.Deploy(ctx, jobKey, map[string][]byte{jobKey + ".bpmn": engineclient.TimerProcess(jobKey)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartProcess(ctx, jobKey, "", nil); err != nil {
		t.Fatal(err)
	}
	var jobs []struct{ ID string }
	ok(c.Get(ctx, "/job", url.Values{"processDefinitionKey": {jobKey}, "maxResults": {"10"}}, &jobs))
	if len(jobs) != 1 {
		t.Fatalf("%d timer jobs, want 1", len(jobs))
	}
	ok(c.Do(ctx, http.MethodPut, "/job/"+jobs[0].ID+"/retries", map[string]any{"retries": 0}, nil))

	// Table activity after the baselines, so every counter has moved.
	pgtest.Exec(t, conn, `UPDATE event_outbox SET status = 'PUBLISHED', published_at = now() WHERE aggregate_id = 'order-1003'`)
	pgtest.Exec(t, conn, `UPDATE message_inbox SET processing_status = 'PROCESSED', processed_at = now() WHERE message_id = 'm-2'`)
	pgtest.Exec(t, conn, `UPDATE workflow_idempotency_record SET duplicate_count = duplicate_count + 1, updated_at = now() WHERE idempotency_key = 'quote-78:task-10:v1'`)
	// The delivery from orders' outbox to its own inbox: three events
	// published and received (one of them twice), observed in the latency
	// histogram, and one published ten minutes ago and never received.
	pgtest.Exec(t, conn, `WITH e AS (
  INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
  SELECT gen_random_uuid(), 'Order', 'delivered-' || g, 'OrderDelivered', 'delivered-' || g, '{}', 'PUBLISHED', now() - interval '2 seconds', now() - interval '1 second'
  FROM generate_series(1, 3) g RETURNING event_id::text AS id)
INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at)
SELECT s, id, 'OrderDelivered', id, 'PROCESSED', now(), now() FROM e, (VALUES ('orders'), ('orders-replay')) v(s) WHERE s = 'orders' OR id = (SELECT min(id) FROM e)`)
	pgtest.Exec(t, conn, `INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at)
		VALUES (gen_random_uuid(), 'Order', 'never-received', 'OrderDelivered', 'never-received', '{}', 'PUBLISHED', now() - interval '11 minutes', now() - interval '10 minutes')`)
	if _, err := relaytest.WriteEvents(ctx, cdcDSN, "", relaytest.OutboxEvent{}, relaytest.OutboxEvent{}); err != nil {
		t.Fatal(err)
	}

	// Give Prometheus time to scrape the new state and evaluate the rules,
	// then ask every panel.
	time.Sleep(25 * time.Second)
	queries, err := dashboards.Queries()
	if err != nil {
		t.Fatal(err)
	}
	promtest.Each(t, proms, func(t *testing.T, prom *promtest.Server) {
		results, err := dashboards.LiveCheck(ctx, nil, prom.URL, "1m", queries)
		if err != nil {
			t.Fatal(err)
		}
		// The engine runs on H2 and is read over REST: the one series only the
		// engine-database mode serves (the engine's table sizes) has no data
		// here; TestCamundaEngine's HistoryCleanup scenario reads it from a real
		// engine database, and the dashboards' synthetic live check shows the
		// panel answers.
		var failed []dashboards.LiveResult
		for _, r := range dashboards.Failed(results) {
			if !strings.Contains(r.Expr, catalog.CamundaEngineTableBytes) {
				failed = append(failed, r)
			}
		}
		for _, r := range failed {
			t.Errorf("no data: %s", r)
		}
		t.Logf("%d panel queries checked, %d without data", len(results), len(failed))
	})
}

// waitForBaselines waits until each named collector of the exporter at
// addr has succeeded once (workflow_exporter_collector_up 1).
func waitForBaselines(t *testing.T, addr string, collectors ...string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			missing := 0
			for _, c := range collectors {
				if !regexp.MustCompile(`workflow_exporter_collector_up\{collector="` + regexp.QuoteMeta(c) + `",[^}]*\} 1\n`).Match(b) {
					missing++
				}
			}
			if missing == 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter's collectors %v did not all succeed within 2 minutes (last error %v)", collectors, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
