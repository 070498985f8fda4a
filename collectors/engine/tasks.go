package engine

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// tasksRequest is what the tasks reading needs to know of the collector's
// state.
type tasksRequest struct {
	probeRead
	// topics chooses the topics the reading reports (topics.go).
	topics topicChoice
	// budget bounds the tasks listed (max_listed_tasks).
	budget int
	// history says where the previous collection's history reading ended
	// (at history level full: the external task log).
	history historyRequest
	// activities is the same for the activity instance stream below full
	// (activities.go), of the activity types actTypes.
	activities historyRequest
	actTypes   []string
	// incidentMessages asks for the open incidents' messages (the status
	// page's incident groups, failures.go).
	incidentMessages bool
	// incidentTypes are the incident types earlier collections reported:
	// the REST reader counts each of them when its incident list is cut,
	// so a type beyond the list keeps its count.
	incidentTypes []string
	// recentLapses are the tracked tasks whose lock expires within
	// lapsedMargin of the reference time (mayBeSkewed): the REST reader
	// asks whether those no list holds, and whose lock a node may call
	// lapsed by then, are still open.
	recentLapses []lapse
}

// lapse is a tracked task and the expiration of its lock.
type lapse struct {
	id  string
	exp time.Time
}

// tasksRead is what the tasks reading learned from an engine.
type tasksRead struct {
	// now is the engine's clock for this collection (ages, rule L5).
	now time.Time
	// topics holds every reported topic (known and newly admitted),
	// including drained ones (all counts 0), as topicChoice.choose chose
	// them.
	topics map[string]*topicRead
	// all are the engine-wide counts, over every topic, reported or
	// folded (the REST reader counts the total only when folded): the
	// counts of "other" are what they leave beyond the reported topics
	// (otherCounts). folded: topics are folded into "other" (their tasks
	// are not listed).
	all    topicCounts
	folded bool
	// truncated: the task lists did not cover every in-flight task of the
	// reported topics (max_listed_tasks); unwatched: how many they left out.
	truncated bool
	unwatched int64
	// noCreateTime: the engine's tasks carry no create time, so no oldest
	// waiting age can be reported.
	noCreateTime bool
	history      historyRead
	// activities are the ended activity instances below full.
	activities activitiesRead
	// bpmn is the evidence of BPMN errors for the new deletion entries.
	bpmn      bpmnEvidence
	incidents incidentRead
	// incidentsIncomplete: over REST, the incident list or the list of
	// tasks with no retries left was cut by max_listed_tasks, so a topic
	// without a resolved failedExternalTask incident may still have one.
	incidentsIncomplete bool
	// stillOpen are the recentLapses no list holds that the engine still
	// has (REST only: behind a load balancer a node whose clock runs
	// behind calls such a lock held, and the task is in neither list).
	stillOpen map[string]bool
}

// topicRead is one reported topic as read.
type topicRead struct {
	counts topicCounts
	// oldest is the create time of the oldest fetchable task (active,
	// retries left or null, not locked); zero when none is fetchable.
	// oldestUnknown: the REST reader could not find it (the topic's tasks
	// without a tenant, rest_tenants.go), and no age is reported.
	oldest        time.Time
	oldestUnknown bool
	// locked and lapsed are the listed tasks behind counts.locked and
	// counts.lapsed, sorted by id.
	locked, lapsed []taskObs
	// oldestIncident is the timestamp of the topic's oldest open
	// failedExternalTask incident; zero when it has none, or when
	// incidentsIncomplete and none was resolved.
	oldestIncident time.Time
}

// topicCounts are the exact per-topic counts, each evaluated by the engine's
// SQL (or the same SQL in the engine database) against the engine's clock.
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

// fetchable is how many tasks a worker could fetch now: active, retries
// left or null, not locked (waiting tasks and lapsed locks).
func (a topicCounts) fetchable() int64 {
	return a.total - a.suspended - a.exhausted - a.locked
}

// partition is one topic's state gauge values.
type partition map[string]int64

// topic emits one reported topic's metrics from what the reader read:
// the state partition, the locks per worker, the oldest waiting age, and the
// lock and history counters. fresh is what the history log says each task
// went through since the previous collection, recent the same over two
// collections.
func (run *collectionRun) topic(topic string, tr *topicRead, rd *tasksRead, fresh, recent map[string]*taskEvidence) {
	r := run.trackListed(tr, fresh, recent)
	p := partitionOf(tr.counts, r)
	run.emitPartition(topic, p)
	named := run.emitLocksByWorker(topic, r.perWorker, p[vocab.StateLocked])
	run.emitLockAges(topic, r, named)
	if !rd.noCreateTime {
		run.emitOldestWaiting(topic, tr)
	}
	run.emitOldestIncident(topic, tr, rd.incidentsIncomplete)
	run.st.expirations[topic] += float64(r.events.expirations)
	run.st.redeliveries[topic] += float64(r.events.redeliveries)
	run.counter(catalog.CamundaExternalTaskLockExpirations, run.st.expirations[topic], run.c.e.name, topic)
	run.counter(catalog.CamundaExternalTaskRedeliveries, run.st.redeliveries[topic], run.c.e.name, topic)
	if r.failures > 0 {
		h := run.st.history[topic]
		h.failures += float64(r.failures)
		run.st.history[topic] = h
	}
	run.ended(topic, &tr.counts, run.vanished[topic], rd.truncated)
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
func (run *collectionRun) trackListed(tr *topicRead, fresh, recent map[string]*taskEvidence) readings {
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
		if seen && !run.at.level.ReadsTaskLog() && o.failedSince(prev) {
			r.failures++
		}
	}
	inLocked := make(map[string]bool, len(tr.locked))
	for _, o := range tr.locked {
		o.history, o.recent = fresh[o.id], recent[o.id]
		inLocked[o.id] = true
		prev, seen := c.st.tasks[o.id]
		observeFailure(o, prev, seen)
		next, e := classifyLocked(o, prev, seen)
		next.redeliveredAt = redeliveredAt(next, prev, seen, run.engineNow)
		add(e)
		state := correlate.Locked
		if next.backoff {
			r.backoff++
			state = correlate.RetryBackoff
		} else {
			r.perWorker[o.worker]++
			next.lockedSince = run.engineNow
			if sameLock(o, prev, seen) {
				next.lockedSince = prev.lockedSince
			}
			if r.oldestLock.IsZero() || next.lockedSince.Before(r.oldestLock) {
				r.oldestLock = next.lockedSince
			}
		}
		run.st.tasks[o.id] = next
		run.inflight = append(run.inflight, inflightTask(o, state, next))
	}
	for _, o := range tr.lapsed {
		o.history, o.recent = fresh[o.id], recent[o.id]
		if inLocked[o.id] {
			// Lapsed between the two list requests: it is read as locked
			// this time and as lapsed at the next collection.
			continue
		}
		r.lapsedListed++
		prev, seen := c.st.tasks[o.id]
		observeFailure(o, prev, seen)
		next, read, e := classifyLapsed(o, prev, seen, c.st.engineNow)
		next.redeliveredAt = redeliveredAt(next, prev, seen, run.engineNow)
		run.st.tasks[o.id] = next
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
// lock expiration lies within lapsedMargin of the reference time: engine
// nodes behind a load balancer whose clocks differ may leave such a task
// out of both lists (lapsed by the reference time, not yet by the answering
// node's clock, see qLapsed), and its next listing must count as the lapse
// of the lock the collector saw, not as a first sighting.
func (run *collectionRun) trackUnlisted(rd *tasksRead, evidence map[string]*taskEvidence) {
	listed := map[string]bool{}
	for _, tr := range rd.topics {
		for _, o := range tr.locked {
			listed[o.id] = true
		}
		for _, o := range tr.lapsed {
			listed[o.id] = true
		}
	}
	run.vanished = map[string]int64{}
	for id, prev := range run.c.st.tasks {
		if listed[id] {
			continue
		}
		if prev.missed == 0 && !rd.stillOpen[id] {
			run.vanished[prev.topic]++
		}
		ev := evidence[id]
		switch {
		case !prev.backoff && ev.actedOtherThan(prev.worker):
			if !prev.lapsed {
				run.st.expirations[prev.topic]++
			}
			run.st.redeliveries[prev.topic]++
		case prev.handoverFrom != "" && ev.actedOtherThan(prev.handoverFrom):
			if !prev.handoverLapsed {
				run.st.expirations[prev.topic]++
			}
			run.st.redeliveries[prev.topic]++
		case ev != nil && ev.ended, prev.missed >= maxMissed && !prev.exp.After(run.engineNow.Add(-lapsedMargin)):
			// Done with it.
		default:
			prev.missed++
			run.st.tasks[id] = prev
		}
	}
}

// mayBeSkewed: a task's lock expires within lapsedMargin of the reference
// time now, so behind a load balancer whose nodes' clocks differ the task
// may be in neither list while it is open (qLocked, qLapsed): expired by
// now, a node whose clock runs behind still calls it locked; expiring just
// after now, the locked list's bound (E > now) leaves it out while a node
// whose clock has passed E by the time it answers (the collection takes
// time, the reference time is truncated to the second) leaves it out of
// the lapsed list. The REST reader asks the engine whether such a task
// that no list holds is still open (tasksRequest.recentLapses, narrowed to
// what its own elapsed time allows: restRead.stillOpen), so that it is not
// counted as ended (ended.go): an end that did not happen would hide a
// stalled backlog.
func mayBeSkewed(t tracked, now time.Time) bool {
	return !t.exp.IsZero() && t.exp.After(now.Add(-lapsedMargin)) && !t.exp.After(now.Add(lapsedMargin))
}

// partitionOf splits a topic's exact counts into the six states by the
// readings of its listed tasks. Unlisted locked tasks (list cut by
// max_listed_tasks) count as locked, unlisted lapsed ones as lock_expired.
// Each split is clamped to its count, so the six states always add up to
// the counts.
func partitionOf(tc topicCounts, r readings) partition {
	p := partition{}
	p[vocab.StateSuspended] = tc.suspended
	p[vocab.StateRetriesExhausted] = tc.exhausted
	p[vocab.StateRetryBackoff] = min(r.backoff, tc.locked)
	p[vocab.StateLocked] = tc.locked - p[vocab.StateRetryBackoff]
	unlisted := max(0, tc.lapsed-r.lapsedListed)
	p[vocab.StateLockExpired] = min(r.expired+unlisted, tc.lapsed)
	lapsedWaiting := tc.lapsed - p[vocab.StateLockExpired]
	p[vocab.StateWaiting] = max(0, tc.total-tc.suspended-tc.exhausted-tc.locked-tc.lapsed) + lapsedWaiting
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
	if !run.at.level.ReadsTaskLog() {
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
// retries left or null, not locked), which includes lapsed locks.
func (run *collectionRun) emitOldestWaiting(topic string, tr *topicRead) {
	if tr.oldestUnknown && tr.counts.fetchable() > 0 {
		return
	}
	age := 0.0
	if tr.counts.fetchable() > 0 && !tr.oldest.IsZero() {
		age = max(0, run.engineNow.Sub(tr.oldest).Seconds())
	}
	run.gauge(catalog.CamundaExternalTaskOldestWaitingAge, age, run.c.e.name, topic)
}

// emitOldestIncident emits the age of the topic's oldest open
// failedExternalTask incident; 0 when it has none. When the REST lists
// were cut and none of the topic's incidents was resolved, its age is not
// known and no value is emitted (a made-up age would be worse than none).
func (run *collectionRun) emitOldestIncident(topic string, tr *topicRead, incomplete bool) {
	age := 0.0
	switch {
	case !tr.oldestIncident.IsZero():
		age = max(0, run.engineNow.Sub(tr.oldestIncident).Seconds())
	case incomplete:
		return
	}
	run.gauge(catalog.CamundaExternalTaskOldestIncidentAge, age, run.c.e.name, topic)
}

func inflightTask(o taskObs, s correlate.State, t tracked) correlate.Task {
	tenant, topic := splitKey(o.topic)
	return correlate.Task{ID: o.id, Topic: topic, Tenant: tenant, WorkerID: o.worker, ProcessInstanceID: o.pi, ActivityID: o.activity,
		BusinessKey: o.businessKey, State: s, LockExpiration: o.exp, Redelivered: t.redelivered, RedeliveredAt: t.redeliveredAt}
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
func (run *collectionRun) otherTopics(o *topicCounts) {
	if o == nil {
		o = &topicCounts{}
	}
	if o.locked > 0 || o.lapsed > 0 {
		run.truncated = true // in-flight tasks of folded topics are not listed
		run.unwatched += o.locked + o.lapsed
	}
	// Nothing is listed: the partition of the counts alone.
	run.emitPartition(labellimit.Other, partitionOf(*o, readings{}))
}

// maxMissed is how many collections a tracked task may go unlisted before
// it is forgotten.
const maxMissed = 3
