package engine

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// partition is one topic's state gauge values.
type partition map[string]int64

// topic emits one reported topic's metrics from what the reader read:
// the state partition, the locks per worker, the oldest waiting age, and the
// lock and history counters. fresh is what the history log says each task
// went through since the previous collection, recent the same over two
// collections.
func (run *collectionRun) topic(topic string, tr *reading.TopicRead, rd *reading.TasksRead, fresh, recent map[string]*taskEvidence) {
	r := run.trackListed(tr, fresh, recent)
	p := partitionOf(tr.Counts, r)
	run.emitPartition(topic, p)
	named := run.emitLocksByWorker(topic, r.perWorker, p[vocab.StateLocked])
	run.emitLockAges(topic, r, named)
	run.emitOldestWaiting(topic, tr, rd.Age)
	run.emitOldestIncident(topic, tr, rd.IncidentsIncomplete)
	if !run.quiet {
		run.st.expirations[topic] += float64(r.events.expirations)
		run.st.redeliveries[topic] += float64(r.events.redeliveries)
	}
	run.counter(catalog.CamundaExternalTaskLockExpirations, run.st.expirations[topic], run.c.e.name, topic)
	run.counter(catalog.CamundaExternalTaskRedeliveries, run.st.redeliveries[topic], run.c.e.name, topic)
	if r.failures > 0 {
		h := run.st.history[topic]
		h.failures += float64(r.failures)
		run.st.history[topic] = h
	}
	run.ended(topic, &tr.Counts, run.vanished[topic], rd.Truncated)
	run.emitHistory(topic)
}

// readings is what the lock tracking made of one topic's listed tasks.
type readings struct {
	events lockEvents
	// backoff and expired count the listed tasks read as retry_backoff and
	// lock_expired; lapsedListed the lapsed tasks listed at all.
	backoff, expired, lapsedListed int64
	// perWorker counts the locks (not backoffs) per worker id.
	perWorker map[string]int64
	// oldestLock is the earliest lockedSince of the locks (zero: none).
	oldestLock time.Time
	// failures counts, below history level full (no failure log), the
	// tracked tasks seen failed since the previous collection.
	failures int64
}

// trackListed classifies every listed locked and lapsed task against what
// the previous collections saw of it (locks.go), records it in the next
// state and, when a worker holds it or its lock lapsed, in the view for the
// joins.
func (run *collectionRun) trackListed(tr *reading.TopicRead, fresh, recent map[string]*taskEvidence) readings {
	c := run.c
	r := readings{perWorker: map[string]int64{}}
	add := func(e lockEvents) {
		r.events.expirations += e.expirations
		r.events.redeliveries += e.redeliveries
	}
	// Below full, a failure is what a collection sees: a tracked task with
	// other retries or another error message (taskObs.failedSince without
	// a log) failed at least once since. A lower bound: tasks fetched and
	// failed between two collections, and failures that exhaust the
	// retries (the task leaves the lists), are not seen.
	observeFailure := func(o taskObs, prev tracked, seen bool) {
		if seen && !run.at.Level.ReadsTaskLog() && o.failedSince(prev) && !run.quiet {
			r.failures++
		}
	}
	inLocked := make(map[string]bool, len(tr.Locked))
	for _, ro := range tr.Locked {
		o := taskObs{TaskObs: ro, history: fresh[ro.ID], recent: recent[ro.ID]}
		inLocked[o.ID] = true
		prev, seen := c.st.tasks[o.ID]
		observeFailure(o, prev, seen)
		next, e := classifyLocked(o, prev, seen)
		next.redeliveredAt = redeliveredAt(next, prev, seen, run.engineNow)
		add(e)
		state := correlate.Locked
		if next.backoff {
			r.backoff++
			state = correlate.RetryBackoff
		} else {
			r.perWorker[o.Worker]++
			next.lockedSince = run.engineNow
			if sameLock(o, prev, seen) {
				next.lockedSince = prev.lockedSince
			}
			if r.oldestLock.IsZero() || next.lockedSince.Before(r.oldestLock) {
				r.oldestLock = next.lockedSince
			}
		}
		run.st.tasks[o.ID] = next
		run.inflight = append(run.inflight, inflightTask(o, state, next))
	}
	for _, ro := range tr.Lapsed {
		o := taskObs{TaskObs: ro, history: fresh[ro.ID], recent: recent[ro.ID]}
		if inLocked[o.ID] {
			// Lapsed between the two list requests: it is read as locked
			// this time and as lapsed at the next collection.
			continue
		}
		r.lapsedListed++
		prev, seen := c.st.tasks[o.ID]
		observeFailure(o, prev, seen)
		next, read, e := classifyLapsed(o, prev, seen, c.st.engineNow)
		next.redeliveredAt = redeliveredAt(next, prev, seen, run.engineNow)
		run.st.tasks[o.ID] = next
		add(e)
		if read == readExpired {
			r.expired++
			run.inflight = append(run.inflight, inflightTask(o, correlate.LockExpired, next))
		} else {
			// A finished backoff: the task waits for its next fetch. It
			// stays in the view, so a redelivered task's record stays in
			// doubt (and a lost completion open) between two attempts.
			run.inflight = append(run.inflight, inflightTask(o, correlate.Waiting, next))
		}
	}
	return r
}

// trackUnlisted deals with the tasks the previous collection tracked that no
// list holds now: completed, deleted, out of retries, or beyond the lists.
// The history log may say another worker ended or failed one whose lock the
// previous collection saw held by a worker (not a backoff) while that worker
// reported nothing: the lock lapsed unseen and the other worker fetched the
// task, so one redelivery, and one lock expiration unless the lapse was
// counted already. Without such evidence a task is tracked maxMissed more
// collections, so evidence that arrives a collection late (the REST reader
// reads the history before the lists) still finds it; and as long as its
// lock expiration lies within LapsedMargin of the reference time: engine
// nodes behind a load balancer whose clocks differ may leave such a task
// out of both lists (lapsed by the reference time, not yet by the answering
// node's clock, see qLapsed), and its next listing must count as the lapse
// of the lock the collector saw, not as a first sighting.
func (run *collectionRun) trackUnlisted(rd *reading.TasksRead, evidence map[string]*taskEvidence) {
	listed := make(map[string]bool, rd.Listed())
	for _, tr := range rd.Topics {
		for _, o := range tr.Locked {
			listed[o.ID] = true
		}
		for _, o := range tr.Lapsed {
			listed[o.ID] = true
		}
	}
	run.vanished = map[string]int64{}
	for id, prev := range run.c.st.tasks {
		if listed[id] {
			continue
		}
		if prev.missed == 0 && !rd.StillOpen[id] {
			run.vanished[prev.topic]++
		}
		ev := evidence[id]
		count := func(m map[string]float64) {
			if !run.quiet {
				m[prev.topic]++
			}
		}
		switch {
		case !prev.backoff && ev.actedOtherThan(prev.worker):
			if !prev.lapsed {
				count(run.st.expirations)
			}
			count(run.st.redeliveries)
		case prev.handoverFrom != "" && ev.actedOtherThan(prev.handoverFrom):
			if !prev.handoverLapsed {
				count(run.st.expirations)
			}
			count(run.st.redeliveries)
		case !prev.backoff && !prev.lapsed && ev.endedLateBy(prev.worker, prev.exp):
			// The worker whose lock the collector saw ended the task
			// after that lock expired, and no collection saw the lapse:
			// one lock expiration. Whether the worker completed late or
			// fetched the task again under its id cannot be told, so no
			// redelivery.
			count(run.st.expirations)
		case ev != nil && ev.ended, prev.missed >= maxMissed && !prev.exp.After(run.engineNow.Add(-reading.LapsedMargin)):
			// Done with it.
		default:
			prev.missed++
			run.st.tasks[id] = prev
		}
	}
}

// mayBeSkewed: a task's lock expires within LapsedMargin of the reference
// time now, so behind a load balancer whose nodes' clocks differ the task
// may be in neither list while it is open (qLocked, qLapsed): expired by
// now, a node whose clock runs behind still calls it locked; expiring just
// after now, the locked list's bound (E > now) leaves it out while a node
// whose clock has passed E by the time it answers (the collection takes
// time, the reference time is truncated to the second) leaves it out of
// the lapsed list. The REST reader asks the engine whether such a task
// that no list holds is still open (TasksRequest.RecentLapses, narrowed to
// what its own elapsed time allows: TasksRead.StillOpen), so that it is not
// counted as ended (ended.go): an end that did not happen would hide a
// stalled backlog.
func mayBeSkewed(t tracked, now time.Time) bool {
	return !t.exp.IsZero() && t.exp.After(now.Add(-reading.LapsedMargin)) && !t.exp.After(now.Add(reading.LapsedMargin))
}

// partitionOf splits a topic's exact counts into the six states by the
// readings of its listed tasks. Unlisted locked tasks (list cut by
// max_listed_tasks) count as locked, unlisted lapsed ones as lock_expired.
// Each split is clamped to its count, so the six states always add up to
// the counts.
func partitionOf(tc reading.TopicCounts, r readings) partition {
	p := partition{}
	p[vocab.StateSuspended] = tc.Suspended
	p[vocab.StateRetriesExhausted] = tc.Exhausted
	p[vocab.StateRetryBackoff] = min(r.backoff, tc.Locked)
	p[vocab.StateLocked] = tc.Locked - p[vocab.StateRetryBackoff]
	unlisted := max(0, tc.Lapsed-r.lapsedListed)
	p[vocab.StateLockExpired] = min(r.expired+unlisted, tc.Lapsed)
	lapsedWaiting := tc.Lapsed - p[vocab.StateLockExpired]
	p[vocab.StateWaiting] = max(0, tc.Total-tc.Suspended-tc.Exhausted-tc.Locked-tc.Lapsed) + lapsedWaiting
	return p
}

func (run *collectionRun) emitPartition(topic string, p partition) {
	for _, s := range vocab.ExternalTaskStates() {
		run.gauge(catalog.CamundaExternalTasks, float64(p[s]), run.c.e.name, topic, s)
	}
}

// emitLocksByWorker emits the locks held by workers, from the listed tasks
// read as locked. The worker_id_limit workers with the most locks in this
// collection are named (ties by id), the others add up under
// worker_id="other": a gauge of current locks, so workers that are gone
// (old pods after a rollout) free their places. What the list did not cover
// goes to "other" too, so the series add up to the locked state.
func (run *collectionRun) emitLocksByWorker(topic string, perWorker map[string]int64, locked int64) (byLabel map[string]int64) {
	byLabel = run.c.workerFold.Fold(perWorker)
	var sum int64
	for _, n := range perWorker {
		sum += n
	}
	if rest := locked - sum; rest > 0 {
		byLabel[labellimit.Other] += rest
	}
	for _, w := range sortedKeys(byLabel) {
		run.gauge(catalog.CamundaExternalTasksLockedByWorker, float64(byLabel[w]), run.c.e.name, topic, w)
	}
	return byLabel
}

// emitLockAges emits how long the topic's oldest current lock has been held
// by its worker, and per worker that holds locks how long it has completed
// or failed nothing on the topic. byLabel are the worker labels
// emitLocksByWorker named: the same workers are named here, the others
// are "other" with the longest idle of them.
//
// A worker holding locks is idle since the later of the first collection
// that saw it hold a lock on the topic (continuously since) and its last
// success or failure entry on the topic in the history stream; a worker
// that holds no lock in a collection is forgotten.
func (run *collectionRun) emitLockAges(topic string, r readings, byLabel map[string]int64) {
	engine := run.c.e.name
	age := 0.0
	if !r.oldestLock.IsZero() {
		age = max(0, run.engineNow.Sub(r.oldestLock).Seconds())
	}
	run.gauge(catalog.CamundaExternalTaskOldestLockAge, age, engine, topic)
	if !run.at.Level.ReadsTaskLog() {
		// Below full no history names the workers' outcomes: an idle
		// time would only grow (levels.go).
		return
	}
	idle := map[string]float64{}
	for w := range r.perWorker {
		k := topicWorker{topic, w}
		since, held := run.c.st.holders[k]
		if !held {
			since = run.engineNow
		}
		if act := run.activity[k]; act.After(since) {
			since = act
		}
		run.st.holders[k] = since
		label := w
		if _, named := byLabel[w]; !named || w == labellimit.Other {
			label = labellimit.Other
		}
		// Over REST the engine's clock is the Date header, truncated to
		// the second: an outcome logged within that second is "after" it.
		idle[label] = max(idle[label], run.engineNow.Sub(since).Seconds(), 0)
	}
	for _, w := range sortedKeys(idle) {
		run.gauge(catalog.CamundaExternalTaskWorkerIdle, idle[w], engine, topic, w)
	}
}

// topicWorker is a worker on a topic label.
type topicWorker struct{ topic, worker string }

// emitOldestWaiting emits the age of the oldest fetchable task (active,
// retries left or null, not locked), which includes lapsed locks: from the
// creation the reader found, or from the first collection that saw each
// task the reader could not date (capability/waitingage.go). When neither
// dates a fetchable task, no value is emitted (a made-up age would be worse
// than none; CamundaExternalTaskWaitingAgeMissing says so).
func (run *collectionRun) emitOldestWaiting(topic string, tr *reading.TopicRead, src capability.AgeSource) {
	age := 0.0
	if tr.Counts.Fetchable() > 0 {
		if src == capability.AgeNone {
			return // the reader could not tell how to date them (yet)
		}
		oldest := tr.Oldest
		if seen := run.firstSeen(tr.Undated); !seen.IsZero() && (oldest.IsZero() || seen.Before(oldest)) {
			oldest = seen
		}
		switch {
		case !oldest.IsZero():
			age = max(0, run.engineNow.Sub(oldest).Seconds())
		case tr.OldestUnknown, tr.UndatedCut:
			return
		}
		// Otherwise its tasks were fetched since they were counted.
	}
	run.gauge(catalog.CamundaExternalTaskOldestWaitingAge, age, run.c.e.name, topic)
}

// firstSeen dates tasks the reader could not date by the first collection
// that saw each (by the engine's clock), remembered in the next state, and
// returns the earliest; zero for none.
func (run *collectionRun) firstSeen(ids []string) time.Time {
	var oldest time.Time
	for _, id := range ids {
		at, ok := run.c.st.firstSeen[id]
		if !ok {
			at = run.engineNow
		}
		run.st.firstSeen[id] = at
		if oldest.IsZero() || at.Before(oldest) {
			oldest = at
		}
	}
	return oldest
}

// emitOldestIncident emits the age of the topic's oldest open
// failedExternalTask incident; 0 when it has none. When the REST lists
// were cut and none of the topic's incidents was resolved, its age is not
// known and no value is emitted (a made-up age would be worse than none).
func (run *collectionRun) emitOldestIncident(topic string, tr *reading.TopicRead, incomplete bool) {
	age := 0.0
	switch {
	case !tr.OldestIncident.IsZero():
		age = max(0, run.engineNow.Sub(tr.OldestIncident).Seconds())
	case incomplete:
		return
	}
	run.gauge(catalog.CamundaExternalTaskOldestIncidentAge, age, run.c.e.name, topic)
}

func inflightTask(o taskObs, s correlate.State, t tracked) correlate.Task {
	tenant, topic := reading.SplitKey(o.Topic)
	return correlate.Task{ID: o.ID, Topic: topic, Tenant: tenant, WorkerID: o.Worker, ProcessInstanceID: o.PI, ActivityID: o.Activity,
		BusinessKey: o.BusinessKey, State: s, LockExpiration: o.Exp, Redelivered: t.redelivered, RedeliveredAt: t.redeliveredAt}
}

// redeliveredAt is when next's redelivery was counted: at this collection
// (engine time now) if it is new, as remembered if prev had it already.
func redeliveredAt(next, prev tracked, seen bool, now time.Time) time.Time {
	switch {
	case !next.redelivered:
		return time.Time{}
	case seen && prev.redelivered:
		return prev.redeliveredAt
	}
	return now
}

// otherTopics reports the topics folded into topic="other" (beyond
// label_value_limit). Their tasks are not listed: locks count as locked,
// lapsed locks as lock_expired, and no lock events or oldest age are
// reported for them. o is nil when no folded topic holds a task now.
func (run *collectionRun) otherTopics(o *reading.TopicCounts) {
	if o == nil {
		o = &reading.TopicCounts{}
	}
	if o.Locked > 0 || o.Lapsed > 0 {
		run.truncated = true // in-flight tasks of folded topics are not listed
		run.unwatched += o.Locked + o.Lapsed
	}
	// Nothing is listed: the partition of the counts alone.
	run.emitPartition(labellimit.Other, partitionOf(*o, readings{}))
}

// maxMissed is how many collections a tracked task may go unlisted before
// it is forgotten.
const maxMissed = 3

// keepFirstSeen keeps the first sighting of the tasks the collection
// tracks in flight: a task locked now and lapsed later waits since it was
// first seen, not since it lapsed.
func (run *collectionRun) keepFirstSeen() {
	for id := range run.st.tasks {
		if _, kept := run.st.firstSeen[id]; kept {
			continue
		}
		if at, ok := run.c.st.firstSeen[id]; ok {
			run.st.firstSeen[id] = at
		}
	}
}

// emitCapabilities emits camunda_engine_capability: what this engine's
// version, mode and history level let the exporter report of each metric
// whose values depend on them (capability.Facts). The oldest waiting age
// is a lower bound as soon as one topic's was dated by first sightings.
func (run *collectionRun) emitCapabilities(rd *reading.TasksRead) {
	age := rd.Age
	if age.Support() == capability.Exact {
		for _, tr := range rd.Topics {
			if len(tr.Undated) > 0 || tr.UndatedCut {
				age = capability.AgeFromFirstSeen
				break
			}
		}
	}
	for _, f := range capability.Facts(run.at.Level, age) {
		run.gauge(catalog.CamundaEngineCapability, 1, run.c.e.name, f.Metric, f.Support.LabelValue())
	}
}
