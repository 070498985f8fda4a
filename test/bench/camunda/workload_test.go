package benchcamunda

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/sim/engineclient"
)

// The per-topic mix, the same at every size. Of the tasks a process start
// creates, completedPerTopic are completed, so openPerTopic stay open:
//
//	waiting            200  never fetched
//	locked              31  4 workers x 10 fetched with a 24 h lock, minus the failed ones
//	retry_backoff        8  2 per worker failed with retries 2 and a 24 h retryTimeout
//	retries_exhausted    1  failed with retries 0 (an incident)
//	lock_expired        10  fetched with a 1 s lock that lapsed
//
// and every suspendEvery-th topic (index 19, 39, ...) has its definition
// suspended with its instance: all openPerTopic tasks suspended.
const (
	openPerTopic      = 250
	completedPerTopic = 5
	workersPerTopic   = 4
	lockedPerWorker   = 10
	backoffPerWorker  = 2
	lapsedPerTopic    = 10
	suspendEvery      = 20
	longLock          = 24 * time.Hour
	lapseLock         = time.Second
	// workloadConcurrency is the REST calls in flight while building.
	workloadConcurrency = 4
)

// mix is the state partition the workload leaves per active topic.
var mix = map[string]int{
	"waiting":           openPerTopic - workersPerTopic*lockedPerWorker - lapsedPerTopic,
	"locked":            workersPerTopic*(lockedPerWorker-backoffPerWorker) - 1,
	"retry_backoff":     workersPerTopic * backoffPerWorker,
	"retries_exhausted": 1,
	"lock_expired":      lapsedPerTopic,
}

func topicName(i int) string  { return fmt.Sprintf("bench.topic-%03d", i) }
func processKey(i int) string { return fmt.Sprintf("bench_%03d", i) }
func suspended(i int) bool    { return i%suspendEvery == suspendEvery-1 }

// multiInstanceProcess is a process whose one external service task is a
// parallel multi-instance of n: one start creates n tasks of the topic.
func multiInstanceProcess(key, topic string, n int) []byte {
	return engineclient.Chain(key, engineclient.Task{ID: "work", Topic: topic, Instances: n})
}

// addTopics deploys and drives topics from..to-1, waits until the short
// locks have lapsed, then ages the burst of history entries it wrote (see
// quietHistory).
func addTopics(ctx context.Context, c *engineclient.Client, from, to int) error {
	files := map[string][]byte{}
	for i := from; i < to; i++ {
		files[processKey(i)+".bpmn"] = multiInstanceProcess(processKey(i), topicName(i), openPerTopic+completedPerTopic)
	}
	if _, err := c.Deploy(ctx, fmt.Sprintf("bench-topics-%d-%d", from, to), files); err != nil {
		return err
	}
	return driveTopics(ctx, c, from, to, driveTopic)
}

// driveTopics drives topics from..to-1 with drive, workloadConcurrency at
// a time, then quiets the history (quietHistory) with the task in retry
// backoff that drive returned for topic from.
func driveTopics(ctx context.Context, c *engineclient.Client, from, to int, drive func(context.Context, *engineclient.Client, int) (string, error)) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workloadConcurrency)
	var backoffTask string // one of worker-1's tasks in retry backoff on topic from
	for i := from; i < to; i++ {
		g.Go(func() error {
			id, err := drive(gctx, c, i)
			if i == from {
				backoffTask = id
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return quietHistory(ctx, c, backoffTask)
}

// quietHistory writes one history entry more than late_commit_window after
// the workload's burst. A collection re-reads the history log back to
// late_commit_window before the newest entry it has seen, so right after
// the build every collection would re-read the whole burst (tens of
// thousands of entries, tens of pages) as if the engine had just done that
// much work; an engine in steady state has only its last minute's entries
// there. The entry is a repeated failure report by worker-1 of a task it
// holds in retry backoff (same retries, same timeout): the task stays in
// retry_backoff, the mix is unchanged. The wait also lets the 1 s locks
// lapse.
func quietHistory(ctx context.Context, c *engineclient.Client, backoffTask string) error {
	select {
	case <-time.After(config.DefaultEngineLateCommitWindow + 5*time.Second):
	case <-ctx.Done():
		return ctx.Err()
	}
	return engineclient.NewWorker(c, "worker-1").Failure(ctx, backoffTask, 2, longLock, "bench: backend unavailable")
}

// driveTopic starts a topic's process and leaves its tasks in the mix; it
// returns the id of one of worker-1's tasks in retry backoff. The lapsing
// fetch comes last, so no later fetch takes a lapsed task.
func driveTopic(ctx context.Context, c *engineclient.Client, i int) (string, error) {
	topic := topicName(i)
	if _, err := c.StartProcess(ctx, processKey(i), fmt.Sprintf("order-%03d", i), nil); err != nil {
		return "", err
	}
	fetch := func(w *engineclient.Worker, lock time.Duration, n int) ([]engineclient.ExternalTask, error) {
		tasks, err := w.FetchAndLock(ctx, topic, lock, n)
		if err == nil && len(tasks) != n {
			err = fmt.Errorf("%s: %s fetched %d tasks, want %d", topic, w.ID, len(tasks), n)
		}
		return tasks, err
	}
	var backoffTask string
	for k := 1; k <= workersPerTopic; k++ {
		w := engineclient.NewWorker(c, fmt.Sprintf("worker-%d", k))
		tasks, err := fetch(w, longLock, lockedPerWorker)
		if err != nil {
			return "", err
		}
		for j := 0; j < backoffPerWorker; j++ {
			if err := w.Failure(ctx, tasks[j].ID, 2, longLock, "bench: backend unavailable"); err != nil {
				return "", err
			}
		}
		if k == 1 {
			backoffTask = tasks[0].ID
			if err := w.Failure(ctx, tasks[backoffPerWorker].ID, 0, 0, "bench: request rejected"); err != nil {
				return "", err
			}
		}
	}
	done := engineclient.NewWorker(c, "worker-done")
	tasks, err := fetch(done, time.Minute, completedPerTopic)
	if err != nil {
		return "", err
	}
	for _, t := range tasks {
		if err := done.Complete(ctx, t.ID, nil); err != nil {
			return "", err
		}
	}
	if _, err := fetch(engineclient.NewWorker(c, "worker-lapse"), lapseLock, lapsedPerTopic); err != nil {
		return "", err
	}
	if suspended(i) {
		return backoffTask, c.SetProcessDefinitionSuspended(ctx, processKey(i), true, true)
	}
	return backoffTask, nil
}

// growHistorySQL inserts $1 history log rows older than every real one:
// creation (state 0) and success (state 2) pairs of finished tasks, five
// seconds apart per pair going back from $2, spread over the topics, with
// the activity and definition columns the engine wrote for each topic's
// real tasks, and a removal time one day later (historyTimeToLive P1D).
const growHistorySQL = `
WITH topics AS (
  SELECT row_number() OVER (ORDER BY topic_name_) - 1 AS n, topic_name_, act_id_, proc_def_id_, proc_def_key_
  FROM (SELECT DISTINCT ON (topic_name_) topic_name_, act_id_, proc_def_id_, proc_def_key_
        FROM act_hi_ext_task_log WHERE state_ = 0 ORDER BY topic_name_, timestamp_) d
), nt AS (SELECT count(*) AS c FROM topics),
pairs AS (
  SELECT g, $2::timestamp - make_interval(secs => g * 5) AS done_at
  FROM generate_series(0, ($1::bigint + 1) / 2 - 1) g
)
INSERT INTO act_hi_ext_task_log (id_, timestamp_, ext_task_id_, retries_, topic_name_, worker_id_, priority_,
  act_id_, act_inst_id_, execution_id_, proc_inst_id_, root_proc_inst_id_, proc_def_id_, proc_def_key_, state_, removal_time_)
SELECT gen_random_uuid()::text,
  CASE WHEN s.state = 0 THEN p.done_at - interval '3 seconds' ELSE p.done_at END,
  md5('task-' || p.g)::uuid::text, NULL, t.topic_name_,
  CASE WHEN s.state = 2 THEN 'worker-' || (p.g % 4 + 1) END, 0,
  t.act_id_, t.act_id_ || ':' || md5('ai-' || p.g)::uuid::text, md5('ex-' || p.g)::uuid::text,
  md5('pi-' || (p.g / 250))::uuid::text, md5('pi-' || (p.g / 250))::uuid::text,
  t.proc_def_id_, t.proc_def_key_, s.state, p.done_at + interval '1 day'
FROM pairs p
CROSS JOIN nt
JOIN topics t ON t.n = p.g % nt.c
CROSS JOIN (VALUES (0), (2)) s(state)
WHERE NOT (s.state = 2 AND p.g * 2 + 1 >= $1::bigint)`

// growHistory fills the history log up to total rows with old entries and
// vacuums it. The synthetic entries are those older than cutoff.
func growHistory(ctx context.Context, conn *pgx.Conn, total int) (inserted int64, cutoff time.Time, err error) {
	var have int64
	var oldest time.Time
	if err := conn.QueryRow(ctx, `SELECT count(*), min(timestamp_) FROM act_hi_ext_task_log`).Scan(&have, &oldest); err != nil {
		return 0, cutoff, err
	}
	cutoff = oldest.Add(-time.Second)
	n := int64(total) - have
	if n <= 0 {
		return 0, cutoff, nil
	}
	tag, err := conn.Exec(ctx, growHistorySQL, n, oldest.Add(-time.Minute).Format("2006-01-02 15:04:05.999"))
	if err != nil {
		return 0, cutoff, err
	}
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) act_hi_ext_task_log`); err != nil {
		return 0, cutoff, err
	}
	return tag.RowsAffected(), cutoff, nil
}

// shrinkHistory deletes the synthetic entries again and rewrites the table
// (VACUUM FULL), back to the history of size B.
func shrinkHistory(ctx context.Context, conn *pgx.Conn, cutoff time.Time) (int64, error) {
	tag, err := conn.Exec(ctx, `DELETE FROM act_hi_ext_task_log WHERE timestamp_ < $1::timestamp`, cutoff.Format("2006-01-02 15:04:05.999"))
	if err != nil {
		return 0, err
	}
	if _, err := conn.Exec(ctx, `VACUUM (FULL, ANALYZE) act_hi_ext_task_log`); err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// historyIndex is the index the engine-database mode asks for, and the one
// that makes REST's newest-first history page cheap.
const historyIndex = `CREATE INDEX bench_hi_ext_task_log_timestamp ON act_hi_ext_task_log (timestamp_)`
