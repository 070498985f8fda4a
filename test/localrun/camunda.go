package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/test/harness/camundatest"
)

// demoTopic is the external task topic of the demo process.
const demoTopic = "fulfillment.submit-command"

// startCamunda builds (once, cached) and starts the Camunda 7.24 test engine
// of test/camunda-engine and deploys the demo process. It needs Java 17 and
// Maven; without them the demo runs with the database side only.
func startCamunda(ctx context.Context, logger *slog.Logger) (*camundatest.Engine, error) {
	fmt.Println("  Starting a Camunda 7.24 engine (the first run builds it with Maven, about a minute)...")
	e, err := camundatest.Start(ctx, camundatest.Options{Flavor: camundatest.FlavorCamunda})
	if err != nil {
		return nil, err
	}
	if _, err := e.Client().Deploy(ctx, "demo", map[string][]byte{"demo.bpmn": camundatest.ExternalTaskProcess("orderFulfillment", demoTopic)}); err != nil {
		e.Stop()
		return nil, err
	}
	logger.Info("Camunda engine up", "url", e.BaseURL, "version", e.Version)
	return e, nil
}

// simulateWorkers starts process instances and runs two workers that do
// what real ones do, at least once: most tasks complete; some fail and
// retry after a backoff; some fail until their retries run out (an
// incident); and now and then a worker records its side effect as
// COMPLETED and "crashes" before completing the task, or records STARTED
// and lets its lock lapse, so the join metrics have something to show.
func simulateWorkers(ctx context.Context, e *camundatest.Engine, conn *pgx.Conn, logger *slog.Logger) {
	c := e.Client()
	workers := []*camundatest.Worker{camundatest.NewWorker(c, "fulfillment-worker/pod-a"), camundatest.NewWorker(c, "fulfillment-worker/pod-b")}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	warn := func(what string, err error) {
		if err != nil && ctx.Err() == nil {
			logger.Warn("simulated worker", "step", what, "err", err)
		}
	}
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := c.StartProcess(ctx, "orderFulfillment", fmt.Sprintf("order-%d", 5000+n), nil); err != nil {
			warn("start", err)
			continue
		}
		w := workers[n%2]
		lock := 30 * time.Second
		if n%15 == 7 {
			lock = 3 * time.Second // this attempt will "crash": its lock lapses
		}
		tasks, err := w.FetchAndLock(ctx, demoTopic, lock, 2)
		warn("fetchAndLock", err)
		for _, t := range tasks {
			key := fmt.Sprintf("demo-%s", t.ID)
			switch r := rand.IntN(20); {
			case lock < 30*time.Second && r < 10:
				// Side effect done and recorded, completion lost.
				_, err := conn.Exec(ctx, `INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status, updated_at, completed_at)
					VALUES ('ORDER_FULFILLMENT_SUBMISSION', $1, $2, $3, 'COMPLETED', now(), now()) ON CONFLICT DO NOTHING`, key, t.ProcessInstanceID, t.ID)
				warn("record completed", err)
			case lock < 30*time.Second:
				// Crashed mid-way: the outcome is in doubt once the lock lapses.
				_, err := conn.Exec(ctx, `INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, job_reference, status)
					VALUES ('ORDER_FULFILLMENT_SUBMISSION', $1, $2, $3, 'STARTED') ON CONFLICT DO NOTHING`, key, t.ProcessInstanceID, t.ID)
				warn("record started", err)
			case r < 2:
				retries := 0
				if t.Retries == nil {
					retries = 2
				} else if *t.Retries > 0 {
					retries = *t.Retries - 1
				}
				warn("failure", w.Failure(ctx, t.ID, retries, 20*time.Second, "HTTP 503 from the fulfillment API"))
			default:
				_, err := conn.Exec(ctx, `INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status)
					VALUES ('main', $1, $2, $3, $4, 'COMPLETED') ON CONFLICT DO NOTHING`, t.ID, t.ProcessInstanceID, t.ActivityID, w.ID)
				warn("record processed", err)
				warn("complete", w.Complete(ctx, t.ID, nil))
			}
		}
	}
}
