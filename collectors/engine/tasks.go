package engine

import (
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/internal/correlate"
	"github.com/workflow-exporter/workflow-exporter/internal/fold"
)

// partition is one topic's state gauge values.
type partition map[string]int64

// topic emits one reported topic's metrics from what the reader read:
// the state partition, the locks per worker, the oldest waiting age, and the
// lock and history counters. failed names the tasks with a failure log entry
// since the previous collection.
func (run *collectionRun) topic(topic string, tr *topicRead, failed map[string]bool, noCreateTime bool) {
	c := run.c
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
		run.st.tasks[o.id] = next
		add(e)
		state := correlate.Locked
		if next.backoff {
			nBackoff++
			state = correlate.RetryBackoff
		} else {
			perWorker[o.worker]++
		}
		run.inflight = append(run.inflight, inflightTask(o, state, next))
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
		run.st.tasks[o.id] = next
		add(e)
		if read == readExpired {
			nExpired++
			run.inflight = append(run.inflight, inflightTask(o, correlate.LockExpired, next))
		}
	}

	// The partition: exact counts, split by the listed tasks' readings.
	// Unlisted locked tasks (list cut by max_listed_tasks) count as locked,
	// unlisted lapsed ones as lock_expired. Each split is clamped to its
	// count, so the six states always add up to the counts.
	p := partition{}
	p[catalog.StateSuspended] = tc.suspended
	p[catalog.StateRetriesExhausted] = tc.exhausted
	p[catalog.StateRetryBackoff] = min(nBackoff, tc.locked)
	p[catalog.StateLocked] = tc.locked - p[catalog.StateRetryBackoff]
	unlisted := max(0, tc.lapsed-nLapsedListed)
	p[catalog.StateLockExpired] = min(nExpired+unlisted, tc.lapsed)
	lapsedWaiting := tc.lapsed - p[catalog.StateLockExpired]
	p[catalog.StateWaiting] = max(0, tc.total-tc.suspended-tc.exhausted-tc.locked-tc.lapsed) + lapsedWaiting
	for _, s := range catalog.ExternalTaskStates() {
		run.gauge(catalog.CamundaExternalTasks, float64(p[s]), c.engine, topic, s)
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
	if rest := p[catalog.StateLocked] - sum; rest > 0 {
		byLabel[fold.Other] += rest
	}
	for _, w := range sortedKeys(byLabel) {
		run.gauge(catalog.CamundaExternalTasksLockedByWorker, float64(byLabel[w]), c.engine, topic, w)
	}

	// Oldest waiting task: fetchable ones (active, retries left or null,
	// not locked), which includes lapsed locks.
	if !noCreateTime {
		age := 0.0
		if tc.fetchable() > 0 && !tr.oldest.IsZero() {
			age = max(0, run.engineNow.Sub(tr.oldest).Seconds())
		}
		run.gauge(catalog.CamundaExternalTaskOldestWaitingAge, age, c.engine, topic)
	}

	run.st.expirations[topic] += float64(ev.expirations)
	run.st.redeliveries[topic] += float64(ev.redeliveries)
	run.counter(catalog.CamundaExternalTaskLockExpirations, run.st.expirations[topic], c.engine, topic)
	run.counter(catalog.CamundaExternalTaskRedeliveries, run.st.redeliveries[topic], c.engine, topic)
	run.emitHistory(topic)
}

func inflightTask(o taskObs, s correlate.State, t tracked) correlate.Task {
	return correlate.Task{ID: o.id, Topic: o.topic, WorkerID: o.worker, ProcessInstanceID: o.pi, ActivityID: o.activity,
		State: s, Redelivered: t.redelivered}
}

// otherTopics reports the topics folded into topic="other" (beyond
// label_value_limit). Their tasks are not listed: locks count as locked,
// lapsed locks as lock_expired, and no lock events or oldest age are
// reported for them. o is nil when no folded topic holds a task now.
func (run *collectionRun) otherTopics(o *topicCounts) {
	if o == nil {
		o = &topicCounts{}
	}
	if o.locked > 0 || o.lapsed > 0 {
		run.truncated = true // in-flight tasks of folded topics are not listed
		run.unwatched += o.locked + o.lapsed
	}
	p := partition{
		catalog.StateSuspended: o.suspended, catalog.StateRetriesExhausted: o.exhausted, catalog.StateLocked: o.locked,
		catalog.StateLockExpired: o.lapsed, catalog.StateWaiting: max(0, o.total-o.suspended-o.exhausted-o.locked-o.lapsed),
	}
	for _, s := range catalog.ExternalTaskStates() {
		run.gauge(catalog.CamundaExternalTasks, float64(p[s]), run.c.engine, fold.Other, s)
	}
}
