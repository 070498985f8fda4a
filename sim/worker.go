package sim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
)

// Idempotency record statuses, as the exporter's defaults expect them.
const (
	stStarted       = "STARTED"
	stSubmitted     = "SIDE_EFFECT_SUBMITTED"
	stCompleted     = "COMPLETED"
	stRetryable     = "FAILED_RETRYABLE"
	stFinal         = "FAILED_FINAL"
	stUnknown       = "UNKNOWN_OUTCOME"
	stReconciled    = "RECONCILED"
	conflictCode    = "IDEMPOTENCY_CONFLICT"
	businessErrCode = "REJECTED"
)

// worker is one external-task worker of a lane. It follows the pattern of
// an idempotent worker: a deterministic key per business command (the
// process's business key), the record lifecycle STARTED ->
// SIDE_EFFECT_SUBMITTED -> COMPLETED in short transactions, the outbox
// event and the processed-job row written in the same transaction as the
// COMPLETED record, the downstream call carrying the key, and the task
// completed only after that transaction committed. A second attempt of a
// command that already completed replays the stored result instead of
// redoing the side effect.
type worker struct {
	s    *Simulator
	lane Lane
	// id is the worker's id now; base the one it started with (restart).
	id, base string
	db       *pgxpool.Pool
	// slowable: slow-worker slows this worker down (the lane's first).
	slowable bool
	// ew calls the engine; nil without one, when feed brings the commands.
	ew   *engineclient.Worker
	feed <-chan engineclient.ExternalTask
}

// longPoll is how long a fetch waits for a task to arrive.
const longPoll = 2 * time.Second

// stormRetries is the retry budget of a task's first failure in a retry
// storm: at about one failure a second per task, hours.
const stormRetries = 10000

// inDoubtBackoff is how many lock durations an attempt that finds a fresh
// in-progress record (another attempt may still run) backs off. Each new
// attempt touches the record (duplicate_count, updated_at), and the
// exporter's join leaves a record just touched out of
// workflow_idempotency_in_doubt for its grace (a worker may be finishing it
// right now): attempts one lock duration apart would cut an in-doubt
// stretch into pieces shorter than an alert's for: plus Alertmanager's
// group_wait, more so on a loaded machine (the alert matrix's flake).
const inDoubtBackoff = 10

func (s *Simulator) newWorker(l Lane, id string, db *pgxpool.Pool, slowable bool) *worker {
	w := &worker{s: s, lane: l, id: id, base: id, db: db, slowable: slowable, feed: s.feeds[l.Name]}
	if s.engine != nil {
		// Long polling: the engine holds the request until a task arrives,
		// so idle workers cost the engine little.
		w.ew = &engineclient.Worker{Client: s.engine, ID: id, LongPoll: longPoll}
	}
	return w
}

// fetch returns the worker's next task: from the engine, or from the
// lane's feed without one (nothing when none comes within longPoll).
func (w *worker) fetch(ctx context.Context) ([]engineclient.ExternalTask, error) {
	if w.ew != nil {
		return w.ew.FetchAndLock(ctx, w.lane.Topic(), w.s.cfg.LockDuration, 1)
	}
	select {
	case t := <-w.feed:
		return []engineclient.ExternalTask{t}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(longPoll):
		return nil, nil
	}
}

// failure and bpmnError report how a task ended to the engine. A task from
// the feed has no engine to report to: the rows the worker wrote are what
// shows.
func (w *worker) failure(ctx context.Context, t engineclient.ExternalTask, retries int, timeout time.Duration, msg string) error {
	if w.ew == nil {
		return nil
	}
	return w.ew.Failure(ctx, t.ID, retries, timeout, msg)
}

func (w *worker) bpmnError(ctx context.Context, t engineclient.ExternalTask, code, msg string) error {
	if w.ew == nil {
		return nil
	}
	return w.ew.BpmnError(ctx, t.ID, code, msg)
}

func (w *worker) run(ctx context.Context) {
	for ctx.Err() == nil {
		if w.s.laneFaults(w.lane.Name).on(FaultWorkersStopped) {
			sleep(ctx, 500*time.Millisecond)
			continue
		}
		tasks, err := w.fetch(ctx)
		if err != nil {
			if ctx.Err() == nil {
				w.s.logf(w.lane, "fetchAndLock: %v", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		if len(tasks) == 0 {
			continue // the long poll already waited
		}
		for _, t := range tasks {
			if err := w.handle(ctx, t); err != nil && ctx.Err() == nil {
				w.s.logf(w.lane, "task %s: %v", t.ID, err)
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// command is the business command behind a task.
type command struct {
	key, entity, hash string
}

func (w *worker) commandOf(t engineclient.ExternalTask) command {
	entity := t.ID
	if t.BusinessKey != nil && *t.BusinessKey != "" {
		entity = *t.BusinessKey
	}
	// Deterministic: the same business command gets the same key and the
	// same request on every attempt.
	key := entity + ":attempt-1"
	sum := sha256.Sum256([]byte(w.lane.Name + "|" + entity))
	return command{key: key, entity: entity, hash: hex.EncodeToString(sum[:8])}
}

func (w *worker) handle(ctx context.Context, t engineclient.ExternalTask) error {
	f := w.s.laneFaults(w.lane.Name)
	c := w.commandOf(t)
	switch {
	case f.on(FaultRetryStorm):
		// The downstream service is down: fail fast, retry soon.
		if err := w.upsert(ctx, t, c, stRetryable, ""); err != nil {
			return err
		}
		// Retries count down from a budget the storm does not use up in
		// hours, as a worker's failure handler does (retries - 1): the
		// changing count is how the engine's task list shows a failure to
		// anyone polling it. A constant count hid some failures from the
		// exporter between two polls, which then read the end of a retry
		// backoff as a lapsed lock (the alert matrix's storm lane once
		// notified CamundaExternalTaskLockExpirations).
		retries := stormRetries
		if t.Retries != nil {
			retries = max(*t.Retries-1, 1)
		}
		err := w.failure(ctx, t, retries, time.Second, "downstream unavailable (503)")
		// A storm, not a flood: about five failures a second per worker.
		sleep(ctx, 200*time.Millisecond)
		return err
	case f.on(FaultRetriesExhausted):
		if err := w.upsert(ctx, t, c, stFinal, "FATAL"); err != nil {
			return err
		}
		return w.failure(ctx, t, 0, 0, "fatal: cannot map the command (no retries left)")
	case f.on(FaultBPMNError):
		if err := w.upsert(ctx, t, c, stFinal, businessErrCode); err != nil {
			return err
		}
		return w.bpmnError(ctx, t, businessErrCode, "command rejected by business rule")
	}

	prev, err := w.begin(ctx, t, c)
	if err != nil {
		return err
	}
	switch prev.status {
	case stCompleted, stReconciled:
		// A repeated attempt of a command that completed: replay.
		w.s.count(w.lane, "replays")
		w.s.replayed(t.ID)
		return w.complete(ctx, t, prev.result)
	case stStarted, stSubmitted:
		if prev.fresh {
			// Another attempt may still be running (its lock lapsed and
			// this worker got the task): the outcome is in doubt, so do
			// not run the side effect twice; come back later.
			w.s.count(w.lane, "in_doubt_backoffs")
			return w.failure(ctx, t, retriesOf(t), inDoubtBackoff*w.s.cfg.LockDuration, "command in progress in another attempt")
		}
	case stUnknown:
		// Never retry blindly: reconcile first.
		res, err := w.s.down.find(ctx, w.lane.Name, c.key)
		if err != nil {
			return w.failure(ctx, t, retriesOf(t), 10*time.Minute, "outcome unknown, reconciliation pending")
		}
		if err := w.finish(ctx, t, c, res, stReconciled); err != nil {
			return err
		}
		return w.complete(ctx, t, res)
	}

	if f.on(FaultStuckInProgress) {
		// The task completes, the record update is lost: it stays STARTED.
		return w.complete(ctx, t, "")
	}
	if err := w.setStatus(ctx, c, stSubmitted, ""); err != nil {
		return err
	}
	if f.on(FaultSlowWorker) && w.slowable {
		// One slow worker of the lane (a pod stuck in GC, a call without a
		// timeout): it hangs for as long as the fault lasts, so the task's
		// outcome stays in doubt that long, however slowly the rest of the
		// stack observes it. The others keep the lane moving and get its
		// redeliveries.
		for f.on(FaultSlowWorker) && ctx.Err() == nil {
			sleep(ctx, 500*time.Millisecond)
		}
	}
	res, err := w.s.down.call(ctx, w.lane.Name, c.key, c.hash)
	switch {
	case errors.Is(err, errConflict):
		if err := w.setStatus(ctx, c, stFinal, conflictCode); err != nil {
			return err
		}
		return w.bpmnError(ctx, t, conflictCode, "downstream: same idempotency key, different request")
	case errors.Is(err, context.DeadlineExceeded):
		if err := w.setStatus(ctx, c, stUnknown, ""); err != nil {
			return err
		}
		return w.failure(ctx, t, retriesOf(t), 10*time.Minute, "downstream timed out: outcome unknown")
	case err != nil:
		if err := w.setStatus(ctx, c, stRetryable, ""); err != nil {
			return err
		}
		return w.failure(ctx, t, retriesOf(t), 5*time.Second, err.Error())
	}
	if err := w.finish(ctx, t, c, res, stCompleted); err != nil {
		return err
	}
	if f.on(FaultCrashAfterSideEffect) {
		if id, crashed := w.s.crashOnce(w, t.ID); crashed {
			// The side effect is durable; the completion never happens.
			w.s.count(w.lane, "crashes")
			w.restart(id)
			return nil
		}
	}
	return w.complete(ctx, t, res)
}

// restart is the crashed worker's process starting again, under id.
// Camunda's external task clients make their default worker id of the host
// name and a random UUID, new with each start; here the new id is the
// worker's first one, or it with a numbered suffix, that no crash still
// waiting for its replay was under (crashOnce): so worker_id stays
// bounded, and the replay of a task whose lock lapsed is by another id
// than the lock's, whichever worker fetches it. (A re-fetch and completion
// by the same id between two collections is what the first attempt
// completing late looks like: the exporter counts the lapse and no
// redelivery, docs/camunda-states.md.) Alternating between two ids is not
// enough: a worker that crashed an even number of times before a replay
// replayed under the lapsed lock's id, on a steady rhythm every time (seen
// in CI: the crash lane raised no lock alert in four minutes).
func (w *worker) restart(id string) {
	w.id = id
	if w.ew != nil {
		w.ew.ID = w.id
	}
}

func retriesOf(t engineclient.ExternalTask) int {
	if t.Retries != nil {
		return *t.Retries
	}
	return 3
}

func (w *worker) complete(ctx context.Context, t engineclient.ExternalTask, result string) error {
	var err error
	if w.ew != nil {
		err = w.ew.Complete(ctx, t.ID, map[string]any{"result": result})
	}
	var ae *engineclient.APIError
	if errors.As(err, &ae) && (ae.Status == 400 || ae.Status == 404 || ae.Status == 500) {
		// The lock moved to another worker or the task is gone: the other
		// attempt completes it (from the record).
		w.s.count(w.lane, "completions_refused")
		return nil
	}
	if err == nil {
		w.s.count(w.lane, "completed")
	}
	return err
}

// previous is what a new attempt finds of earlier ones.
type previous struct {
	status, result string
	// fresh: an in-progress record updated within StaleAfter (an attempt
	// that may still be running), as opposed to one a crashed attempt
	// left behind.
	fresh bool
}

// begin is the first short transaction: the record is created STARTED, or
// an earlier attempt's record is found (and the duplicate attempt counted).
func (w *worker) begin(ctx context.Context, t engineclient.ExternalTask, c command) (previous, error) {
	var p previous
	err := pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO workflow_idempotency_record
  (scope, idempotency_key, business_entity_id, process_instance_id, job_reference, status, request_hash)
VALUES ($1, $2, $3, $4, $5, 'STARTED', $6) ON CONFLICT DO NOTHING`,
			w.lane.Scope(), c.key, c.entity, t.ProcessInstanceID, t.ID, c.hash)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			p.status = ""
			return nil
		}
		var result *string
		if err := tx.QueryRow(ctx, `SELECT status, result_payload->>'result', updated_at > now() - $3::interval
FROM workflow_idempotency_record WHERE scope = $1 AND idempotency_key = $2 FOR UPDATE`,
			w.lane.Scope(), c.key, w.s.cfg.StaleAfter.String()).Scan(&p.status, &result, &p.fresh); err != nil {
			return err
		}
		if result != nil {
			p.result = *result
		}
		// A duplicate attempt absorbed by the record (the duplicate_count
		// extension of the reference schema).
		if _, err := tx.Exec(ctx, `UPDATE workflow_idempotency_record SET duplicate_count = duplicate_count + 1, updated_at = now()
WHERE scope = $1 AND idempotency_key = $2`, w.lane.Scope(), c.key); err != nil {
			return err
		}
		switch p.status {
		case stStarted, stSubmitted:
			if p.fresh {
				return nil
			}
			fallthrough
		case stRetryable:
			// Take over: this attempt runs the command (the downstream
			// service deduplicates by key).
			_, err := tx.Exec(ctx, `UPDATE workflow_idempotency_record SET status = 'STARTED', job_reference = $3, updated_at = now()
WHERE scope = $1 AND idempotency_key = $2`, w.lane.Scope(), c.key, t.ID)
			p.status = ""
			return err
		}
		return nil
	})
	return p, err
}

func (w *worker) setStatus(ctx context.Context, c command, status, code string) error {
	_, err := w.db.Exec(ctx, `UPDATE workflow_idempotency_record SET status = $3, error_code = nullif($4, ''), updated_at = now()
WHERE scope = $1 AND idempotency_key = $2`, w.lane.Scope(), c.key, status, code)
	return err
}

// upsert writes the record in one status (the fast-failing paths).
func (w *worker) upsert(ctx context.Context, t engineclient.ExternalTask, c command, status, code string) error {
	_, err := w.db.Exec(ctx, `INSERT INTO workflow_idempotency_record
  (scope, idempotency_key, business_entity_id, process_instance_id, job_reference, status, request_hash, error_code)
VALUES ($1, $2, $3, $4, $5, $6, $7, nullif($8, ''))
ON CONFLICT (scope, idempotency_key) DO UPDATE SET status = excluded.status, error_code = excluded.error_code,
  job_reference = excluded.job_reference, updated_at = now()`,
		w.lane.Scope(), c.key, c.entity, t.ProcessInstanceID, t.ID, status, c.hash, code)
	return err
}

// finish is the second short transaction: the record COMPLETED (or
// RECONCILED) with its result, the outbox event and the processed-job row,
// all or nothing.
func (w *worker) finish(ctx context.Context, t engineclient.ExternalTask, c command, result, status string) error {
	return pgx.BeginFunc(ctx, w.db, func(tx pgx.Tx) error {
		// A state transition guard: if another attempt finished the
		// command meanwhile, its outbox event and processed-job row exist;
		// write nothing twice.
		tag, err := tx.Exec(ctx, `UPDATE workflow_idempotency_record
SET status = $3, result_payload = jsonb_build_object('result', $4::text), completed_at = now(), updated_at = now()
WHERE scope = $1 AND idempotency_key = $2 AND status NOT IN ('COMPLETED', 'RECONCILED')`, w.lane.Scope(), c.key, status, result)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			w.s.count(w.lane, "finished_elsewhere")
			return nil
		}
		if err := w.s.writeEvent(ctx, tx, w.lane, c.entity, c.key, result); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status)
VALUES ($1, $2, $3, $4, $5, 'COMPLETED') ON CONFLICT DO NOTHING`,
			w.s.cfg.EngineName, t.ID, t.ProcessInstanceID, t.ActivityID, w.id)
		return err
	})
}
