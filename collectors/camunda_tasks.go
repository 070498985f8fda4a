package collectors

import (
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

// partition is one topic's state gauge values.
type partition map[string]int64

// topic emits one reported topic's metrics from what the reader read:
// the state partition, the locks per worker, the oldest waiting age, and the
// lock and history counters. failed names the tasks with a failure log entry
// since the previous collection.
func (k *collection) topic(topic string, tr *topicRead, failed map[string]bool, noCreateTime bool) {
	c := k.c
	tc := tr.counts
	var ev lockEvents
	add := func(e lockEvents) {
		ev.expirations += e.expirations
		ev.redeliveries += e.redeliveries
	}
	var nBackoff, nExpired, nLapsedListed int64
	perWorker := map[string]int64{}
	inLocked := make(map[string]bool, len(tr.locked))
	for _, o := range tr.locked {
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
	for _, o := range tr.lapsed {
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
	if !noCreateTime {
		age := 0.0
		if tc.fetchable() > 0 && !tr.oldest.IsZero() {
			age = max(0, k.engineNow.Sub(tr.oldest).Seconds())
		}
		k.gauge(catalog.CamundaExternalTaskOldestWaitingAge, age, c.engine, topic)
	}

	k.st.expirations[topic] += float64(ev.expirations)
	k.st.redeliveries[topic] += float64(ev.redeliveries)
	k.counter(catalog.CamundaExternalTaskLockExpirations, k.st.expirations[topic], c.engine, topic)
	k.counter(catalog.CamundaExternalTaskRedeliveries, k.st.redeliveries[topic], c.engine, topic)
	k.emitHistory(topic)
}

func inflightTask(o taskObs, s correlate.State, t tracked) correlate.Task {
	return correlate.Task{ID: o.id, Topic: o.topic, WorkerID: o.worker, ProcessInstanceID: o.pi, ActivityID: o.activity,
		State: s, Redelivered: t.redelivered}
}

// otherTopics reports the topics folded into topic="other" (beyond
// label_value_limit). Their tasks are not listed: locks count as locked,
// lapsed locks as lock_expired, and no lock events or oldest age are
// reported for them. o is nil when no folded topic holds a task now.
func (k *collection) otherTopics(o *topicCounts) {
	if o == nil {
		o = &topicCounts{}
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
		k.gauge(catalog.CamundaExternalTasks, float64(p[s]), k.c.engine, fold.Other, s)
	}
}
