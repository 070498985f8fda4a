package collectors

import (
	"context"
	"net/http"
	"time"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/correlate"
	"github.com/workflow-exporter/workflow-exporter/internal/fold"
)

// External task states, the values of the state label. The partition and
// its rules are documented in docs/camunda-states.md.
const (
	stateWaiting          = "waiting"
	stateLocked           = "locked"
	stateRetryBackoff     = "retry_backoff"
	stateLockExpired      = "lock_expired"
	stateRetriesExhausted = "retries_exhausted"
	stateSuspended        = "suspended"
)

var taskStates = []string{stateWaiting, stateLocked, stateRetryBackoff, stateLockExpired, stateRetriesExhausted, stateSuspended}

// farFuture is the lockExpirationBefore bound that turns the filter into
// "has a lock expiration": combined with notLocked (expiration null or
// before the engine database's now) it selects exactly the tasks whose lock
// lapsed, by the engine's own clock, without the exporter sending a time.
var farFuture = time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)

// topicCounts are the exact per-topic counts, one request each. Every filter
// is evaluated by the engine's SQL against the engine database's clock.
type topicCounts struct {
	total     int64 // all open tasks of the topic
	suspended int64 // suspended=true
	exhausted int64 // active, noRetriesLeft (retries = 0)
	locked    int64 // active, withRetriesLeft, locked (E > now): worker locks and backoffs
	lapsed    int64 // active, withRetriesLeft, notLocked, lockExpirationBefore=far future (E < now)
}

func (a *topicCounts) add(b topicCounts) {
	a.total += b.total
	a.suspended += b.suspended
	a.exhausted += b.exhausted
	a.locked += b.locked
	a.lapsed += b.lapsed
}

// Queries, shared by counts and lists. topic "" means every topic.
func qTotal(t string) camunda.ExternalTaskQuery { return camunda.ExternalTaskQuery{TopicName: t} }
func qSuspended(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionSuspended}
}
func qExhausted(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesNone}
}
func qLocked(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft, Lock: camunda.LockLocked}
}
func qLapsed(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft,
		Lock: camunda.LockNotLocked, LockExpirationBefore: farFuture}
}
func qFetchable(t string) camunda.ExternalTaskQuery {
	return camunda.ExternalTaskQuery{TopicName: t, Suspension: camunda.SuspensionActive, Retries: camunda.RetriesLeft, Lock: camunda.LockNotLocked}
}

// countTopic makes the five counts, or one when the topic has no open task
// (a drained topic that keeps reporting zeros costs one count request).
func (k *collection) countTopic(topic string) (topicCounts, error) {
	var tc topicCounts
	for i, x := range []struct {
		q   camunda.ExternalTaskQuery
		dst *int64
	}{
		{qTotal(topic), &tc.total},
		{qSuspended(topic), &tc.suspended},
		{qExhausted(topic), &tc.exhausted},
		{qLocked(topic), &tc.locked},
		{qLapsed(topic), &tc.lapsed},
	} {
		if i > 0 && tc.total == 0 {
			break
		}
		n, err := k.c.client.CountExternalTasks(k.ctx, x.q)
		if err != nil {
			return tc, err
		}
		*x.dst = n
	}
	return tc, nil
}

// partition is one topic's state gauge values.
type partition map[string]int64

// externalTasks emits the per-topic external task metrics.
func (k *collection) externalTasks() error {
	c := k.c
	names, err := c.client.TopicNames(k.ctx, false, false, false)
	if err != nil {
		return err
	}
	for _, n := range names {
		if k.st.topics[n] {
			continue
		}
		if c.topicLimit.Admit(n)[0] == n && n != fold.Other {
			k.st.topics[n] = true
		} else {
			k.st.topics[fold.Other] = true // remembered as the folded bucket
		}
	}
	// The engine-wide history counts for "other" come before the reported
	// topics' counts (see otherHistory).
	var allHist [2]int64
	if k.st.topics[fold.Other] {
		if allHist, err = k.otherHistoryCounts(); err != nil {
			return err
		}
	}
	var admitted topicCounts
	var hist [2]int64
	var fell [2]bool
	for _, topic := range sortedKeys(k.st.topics) {
		if topic == fold.Other {
			continue
		}
		tc, h, err := k.topic(topic)
		if err != nil {
			return err
		}
		admitted.add(tc)
		hist[0] += h[0]
		hist[1] += h[1]
		if prev := c.st.history[topic]; prev != nil && prev.based {
			fell[0] = fell[0] || h[0] < prev.failRaw
			fell[1] = fell[1] || h[1] < prev.succRaw
		}
	}
	if k.st.topics[fold.Other] {
		if err := k.otherTopics(admitted); err != nil {
			return err
		}
		k.otherHistoryEmit(allHist, hist, fell)
	}
	return nil
}

// topic collects one admitted topic and returns its counts and raw history
// counts (failures, completions), for the "other" bucket's arithmetic.
func (k *collection) topic(topic string) (topicCounts, [2]int64, error) {
	c := k.c
	tc, err := k.countTopic(topic)
	if err != nil {
		return tc, [2]int64{}, err
	}
	// History first: the failures logged since the previous collection name
	// the tasks that failed, which the lock tracking needs.
	hist, newFailures, err := k.history(topic)
	if err != nil {
		return tc, [2]int64{}, err
	}
	failed, err := k.recentFailures(topic, newFailures)
	if err != nil {
		return tc, [2]int64{}, err
	}
	locked, err := k.list(qLocked(topic), tc.locked)
	if err != nil {
		return tc, [2]int64{}, err
	}
	lapsed, err := k.list(qLapsed(topic), tc.lapsed)
	if err != nil {
		return tc, [2]int64{}, err
	}

	var ev lockEvents
	add := func(e lockEvents) {
		ev.expirations += e.expirations
		ev.redeliveries += e.redeliveries
	}
	var nBackoff, nExpired, nLapsedListed int64
	perWorker := map[string]int64{}
	inLocked := make(map[string]bool, len(locked))
	for _, t := range locked {
		o := obsOf(t)
		o.failedLog = failed[o.id]
		inLocked[o.id] = true
		prev, seen := c.st.tasks[o.id]
		next, e := classifyLocked(o, prev, seen)
		k.st.tasks[o.id] = next
		add(e)
		state := correlate.Locked
		if next.backoff {
			nBackoff++
			state = correlate.RetryBackoff
		} else {
			perWorker[o.worker]++
		}
		k.inflight = append(k.inflight, inflightTask(o, state, next))
	}
	for _, t := range lapsed {
		o := obsOf(t)
		o.failedLog = failed[o.id]
		if inLocked[o.id] {
			// Lapsed between the two list requests: it is read as locked
			// this time and as lapsed at the next collection.
			continue
		}
		nLapsedListed++
		prev, seen := c.st.tasks[o.id]
		next, read, e := classifyLapsed(o, prev, seen, c.st.engineNow)
		k.st.tasks[o.id] = next
		add(e)
		if read == readExpired {
			nExpired++
			k.inflight = append(k.inflight, inflightTask(o, correlate.LockExpired, next))
		}
	}

	// The partition: exact counts, split by the listed tasks' readings.
	// Unlisted locked tasks (list cut by max_listed_tasks) count as locked,
	// unlisted lapsed ones as lock_expired. Each split is clamped to its
	// count, so the six states always add up to the counts.
	p := partition{}
	p[stateSuspended] = tc.suspended
	p[stateRetriesExhausted] = tc.exhausted
	p[stateRetryBackoff] = min(nBackoff, tc.locked)
	p[stateLocked] = tc.locked - p[stateRetryBackoff]
	unlisted := max(0, tc.lapsed-nLapsedListed)
	p[stateLockExpired] = min(nExpired+unlisted, tc.lapsed)
	lapsedWaiting := tc.lapsed - p[stateLockExpired]
	p[stateWaiting] = max(0, tc.total-tc.suspended-tc.exhausted-tc.locked-tc.lapsed) + lapsedWaiting
	for _, s := range taskStates {
		k.gauge(catalog.CamundaExternalTasks, float64(p[s]), c.engine, topic, s)
	}

	// Locks held by workers, from the listed tasks read as locked. The
	// worker_id_limit workers with the most locks in this collection are
	// named (ties by id), the others add up under worker_id="other": a gauge
	// of current locks, so workers that are gone (old pods after a rollout)
	// free their places. What the list did not cover goes to "other" too, so
	// the series add up to the locked state.
	byLabel := c.workerFold.Fold(perWorker)
	var sum int64
	for _, n := range perWorker {
		sum += n
	}
	if rest := p[stateLocked] - sum; rest > 0 {
		byLabel[fold.Other] += rest
	}
	for _, w := range sortedKeys(byLabel) {
		k.gauge(catalog.CamundaExternalTasksLockedByWorker, float64(byLabel[w]), c.engine, topic, w)
	}

	// Oldest waiting task: fetchable ones (active, retries left or null,
	// not locked), which includes lapsed locks.
	if fetchable := tc.total - tc.suspended - tc.exhausted - tc.locked; fetchable > 0 {
		if err := k.oldestWaiting(topic); err != nil {
			return tc, [2]int64{}, err
		}
	} else {
		k.gauge(catalog.CamundaExternalTaskOldestWaitingAge, 0, c.engine, topic)
	}

	k.st.expirations[topic] += float64(ev.expirations)
	k.st.redeliveries[topic] += float64(ev.redeliveries)
	k.counter(catalog.CamundaExternalTaskLockExpirations, k.st.expirations[topic], c.engine, topic)
	k.counter(catalog.CamundaExternalTaskRedeliveries, k.st.redeliveries[topic], c.engine, topic)

	return tc, hist, nil
}

func inflightTask(o taskObs, s correlate.State, t tracked) correlate.Task {
	return correlate.Task{ID: o.id, Topic: o.topic, WorkerID: o.worker, ProcessInstanceID: o.pi, ActivityID: o.activity,
		State: s, Redelivered: t.redelivered}
}

// list returns up to the remaining list budget of tasks matching q, sorted
// by id (so the same tasks stay in view from one collection to the next).
// n is the task count the list should have; no request is made for 0. A
// list cut short marks the collection's in-flight view truncated and counts
// the tasks it left out as unwatched (n minus those listed: a count taken a
// moment before the list, so a task finishing in between may be counted).
func (k *collection) list(q camunda.ExternalTaskQuery, n int64) ([]camunda.ExternalTask, error) {
	if n <= 0 {
		return nil, nil
	}
	if k.budget <= 0 {
		k.truncated = true
		k.unwatched += n
		return nil, nil
	}
	client := k.c.client
	items, truncated, err := camunda.Collect(k.ctx, camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}},
		client.DefaultPageSize(), k.budget,
		func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTask, error) {
			return client.ListExternalTasks(ctx, q, p)
		})
	if err != nil {
		return nil, err
	}
	k.budget -= len(items)
	if truncated {
		k.truncated = true
		k.unwatched += max(0, n-int64(len(items)))
	}
	return items, nil
}

// oldestWaiting emits the age of the oldest fetchable task by createTime
// (sorting by createTime needs 7.21+, the field in the answer 7.24+),
// measured against the engine's clock (the Date header of GET /version at
// the start of the collection). Engines without createTime get no series:
// a made-up age would be worse than none (see docs/camunda-states.md).
func (k *collection) oldestWaiting(topic string) error {
	c := k.c
	if c.noCreateTime != "" && c.noCreateTime == c.version {
		return nil
	}
	tasks, err := c.client.ListExternalTasks(k.ctx, qFetchable(topic),
		camunda.Page{MaxResults: 1, Sort: camunda.Sort{By: camunda.ExternalTaskSortCreateTime, Order: camunda.Ascending}})
	if camunda.IsStatus(err, http.StatusBadRequest) {
		c.markNoCreateTime(err)
		return nil
	}
	if err != nil {
		return err
	}
	if len(tasks) == 0 {
		k.gauge(catalog.CamundaExternalTaskOldestWaitingAge, 0, c.engine, topic)
		return nil
	}
	if tasks[0].CreateTime == nil {
		c.markNoCreateTime(nil)
		return nil
	}
	age := k.engineNow.Sub(tasks[0].CreateTime.Time).Seconds()
	k.gauge(catalog.CamundaExternalTaskOldestWaitingAge, max(0, age), c.engine, topic)
	return nil
}

func (c *Camunda) markNoCreateTime(err error) {
	if c.noCreateTime == c.version {
		return
	}
	c.noCreateTime = c.version
	msg := "external tasks carry no createTime (Camunda 7.24+ has it); camunda_external_task_oldest_waiting_age_seconds is not reported for this engine version"
	if err != nil {
		c.logger.Warn(msg, "engine", c.engine, "err", err)
	} else {
		c.logger.Warn(msg, "engine", c.engine)
	}
}

// otherTopics reports the topics folded into topic="other" (beyond
// label_value_limit) from engine-wide counts minus the admitted topics'
// sums. Their tasks are not listed: locks count as locked, lapsed locks as
// lock_expired, and no lock events or oldest age are reported for them.
// Their failure and completion counters are otherHistory's.
func (k *collection) otherTopics(admitted topicCounts) error {
	c := k.c
	all, err := k.countTopic("")
	if err != nil {
		return err
	}
	sub := func(a, b int64) int64 { return max(0, a-b) }
	o := topicCounts{
		total:     sub(all.total, admitted.total),
		suspended: sub(all.suspended, admitted.suspended),
		exhausted: sub(all.exhausted, admitted.exhausted),
		locked:    sub(all.locked, admitted.locked),
		lapsed:    sub(all.lapsed, admitted.lapsed),
	}
	if o.locked > 0 || o.lapsed > 0 {
		k.truncated = true // in-flight tasks of folded topics are not listed
		k.unwatched += o.locked + o.lapsed
	}
	p := partition{
		stateSuspended: o.suspended, stateRetriesExhausted: o.exhausted, stateLocked: o.locked,
		stateLockExpired: o.lapsed, stateWaiting: max(0, o.total-o.suspended-o.exhausted-o.locked-o.lapsed),
	}
	for _, s := range taskStates {
		k.gauge(catalog.CamundaExternalTasks, float64(p[s]), c.engine, fold.Other, s)
	}
	return nil
}
