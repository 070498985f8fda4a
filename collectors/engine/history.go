package engine

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// The external-task history log turns into counters by reading only the
// entries written since the previous collection, for all topics at once:
// the REST API lists the log sorted by timestamp, newest first (no filter
// per topic, so no request per topic), and the engine database is read with
// a timestamp range. Each entry has an id, so a counter counts each entry
// exactly once; history cleanup deletes old entries and changes nothing.
//
// An entry's timestamp is taken when the engine writes it, inside a
// transaction that commits later (a completion runs the process on to its
// next wait state in the same transaction). So each reading goes back
// late_commit_window behind the previous reading's engine time, and the ids
// seen in that window are remembered: an entry that commits late is counted
// when it appears, once. An entry that commits more than late_commit_window
// after its timestamp is missed (an undercount, never an overcount). The job
// log (jobs.go) is read the same way with the same cursor.

// logKind is the kind of an external-task history log entry.
type logKind int

const (
	logCreation logKind = iota
	logFailure
	logSuccess
	logDeletion
)

// historyEntry is one external-task history log entry.
type historyEntry struct {
	id, taskID, topic, worker string
	// activity, actInst and rootPI are the task's activity, its activity
	// instance and root process instance (bpmn.go).
	activity, actInst, rootPI string
	// pi is the task's process instance; message a failure entry's
	// error message (failures.go).
	pi, message string
	ts          time.Time
	kind        logKind
}

// historyRequest says which entries a reader must return.
type historyRequest struct {
	// first: no earlier reading; what is read is a baseline (nothing of it
	// is counted).
	first bool
	// from: entries with a timestamp at or after it are wanted; it is base
	// less back. The engine-database reader reckons its range on the clock
	// face of the engine's zone instead (dbReader.faceRange): from base's
	// local time less back to before the later of base's and now's local
	// times plus ahead (see request).
	from, base, now time.Time
	back, ahead     time.Duration
	// max is max_history_entries.
	max int
	// seen are the ids of the entries the previous reading saw within the
	// window, with their times (read-only): a reader looks up the BPMN
	// error evidence of new deletion entries only.
	seen map[string]time.Time
}

// historyRead is what a reader returned.
type historyRead struct {
	// entries are the entries wanted, each once, newest first.
	entries []historyEntry
	// cut: max_history_entries were read before reaching the start; the
	// older entries of this interval are not counted.
	cut bool
}

// historyCursor is where the history reading stands between collections.
//
// An entry stamped t is visible once its transaction committed, at most
// late_commit_window after t. So a reading at engine time T needs only the
// entries stamped at or after T' - window, T' the previous reading's engine
// time: older ones had committed by T' and were read then. The start moves
// with the engine's clock, not with the newest entry, so an idle engine
// after a burst costs a window's worth of re-reading once, not at every
// collection.
type historyCursor struct {
	started bool
	// at is the engine's clock at the previous reading.
	at time.Time
	// seen are the ids of the entries stamped within the window before at
	// (or later), with their times.
	seen map[string]time.Time
	// resumed: the stream starts at at, a collection that read the engine
	// at another history level (see resume).
	resumed bool
}

// request says which entries the next reading wants: those stamped since
// a window before the previous reading. In engine-database mode the range
// also ends a window past the clock: entries stamped later wait for a
// later reading (none is lost: the range's start trails the clock by a
// window). That end, and reckoning the range on the clock face, matter
// around a DST fall-back, where the engine writes an hour of zone-less
// local times twice: without the end, each reading of the hour's second
// pass would return the rest of the first pass too, newest first, so that
// a busy engine's new entries came last, behind max_history_entries.
func (h historyCursor) request(now time.Time, window time.Duration, max int) historyRequest {
	rq := historyRequest{now: now, ahead: window, max: max, seen: h.seen}
	rq.base, rq.back = h.start(now, window)
	rq.first = !h.started
	if h.resumed || !h.started {
		rq.seen = nil
	}
	rq.from = rq.base.Add(-rq.back)
	return rq
}

// start is where the next reading starts: back before base. A window
// before the previous reading (late commits); at the previous reading for
// a resumed stream; a window before now for the baseline.
func (h historyCursor) start(now time.Time, window time.Duration) (base time.Time, back time.Duration) {
	switch {
	case !h.started:
		return now, window
	case h.resumed:
		return h.at, 0
	}
	return h.at, window
}

// resume returns the cursor of a stream that was not read at the previous
// collection (engine time prev; zero when there was none): when the
// history level rises (over REST, as the evidence grows) the new stream
// counts what happened since the previous collection, instead of starting
// with a baseline that would drop that interval. Entries stamped before
// prev belong to the level before (the other stream counted them, or
// none could), so the first reading takes no late_commit_window. The
// first collection of the exporter is a baseline, as always.
func (h historyCursor) resume(prev time.Time) historyCursor {
	if h.started || prev.IsZero() {
		return h
	}
	return historyCursor{started: true, at: prev, resumed: true}
}

// advance returns the cursor after a reading at engine time now, the
// entries it had not seen before (none on the first reading: it is the
// baseline) and whether entries went uncounted (advanceCursor). It does
// not change h, so a failed collection keeps the old cursor.
func (h historyCursor) advance(rd historyRead, now time.Time, window time.Duration) (historyCursor, []historyEntry, bool) {
	return advanceCursor(h, rd.entries, rd.cut, now, window)
}

// stamped is an entry of a history log read as a stream: the external-task
// log (historyEntry) or the job log (jobLogEntry).
type stamped interface {
	entryID() string
	stamp() time.Time
}

func (e historyEntry) entryID() string  { return e.id }
func (e historyEntry) stamp() time.Time { return e.ts }

// advanceCursor is advance for the entries of any history log, newest
// first; cut says the reading stopped at max_history_entries before its
// start. lost: it stopped before it reached the previous reading's time,
// so entries stamped since (new ones) may be uncounted. A reading cut
// further back, inside the late_commit_window it reads again, lost no new
// entry (it only narrows the window for late commits): a busy engine whose
// window holds more than max_history_entries is not reported at every
// collection. A baseline loses nothing: it counts nothing.
func advanceCursor[E stamped](h historyCursor, entries []E, cut bool, now time.Time, window time.Duration) (_ historyCursor, fresh []E, lost bool) {
	lost = cut && h.started && (len(entries) == 0 || !entries[len(entries)-1].stamp().Before(h.at))
	next := historyCursor{started: true, at: now, seen: make(map[string]time.Time, len(entries))}
	keepFrom := now.Add(-window)
	// Entries stamped before the reading's start were read before (late
	// commits aside: see historyCursor). A reading returns none normally;
	// in engine-database mode a range reckoned on the clock face reaches
	// back an hour after a DST fall-back (dbReader.faceRange).
	base, back := h.start(now, window)
	from := base.Add(-back)
	for _, e := range entries {
		if _, ok := h.seen[e.entryID()]; !ok && h.started && !e.stamp().Before(from) {
			fresh = append(fresh, e)
		}
		if !e.stamp().Before(keepFrom) {
			next.seen[e.entryID()] = e.stamp()
		}
	}
	// Entries seen before and stamped at or after keepFrom stay seen even
	// when this reading did not return them: a later reading may. Normally
	// this reading returned them all (its range starts a window before the
	// previous one); it did not when it was cut, and in engine-database
	// mode around a DST fall-back: the engine writes zone-less local times,
	// an hour of them twice, and an entry of the hour's first pass reads as
	// its second (the later instant). Such an entry's time lies ahead of
	// the clock through the first pass; the readings' range, which moves
	// with the clock, returns it again in the second pass, where only this
	// keeps it from counting twice.
	for id, ts := range h.seen {
		if _, ok := next.seen[id]; !ok && !ts.Before(keepFrom) {
			next.seen[id] = ts
		}
	}
	return next, fresh, lost
}

// historyCounts are the failures, completions and BPMN errors of one topic
// label.
type historyCounts struct {
	failures, completions, bpmnErrors float64
}

// taskEvidence is what the fresh history entries say one task went
// through since the previous collection, and by which workers: the lock
// tracking uses it to see what happened between two collections.
type taskEvidence struct {
	// failedBy are the workers that reported a failure.
	failedBy map[string]bool
	// endedBy is the worker of a success or deletion entry (complete or
	// BPMN error); ended says there was one.
	endedBy string
	ended   bool
}

// failed reports whether any worker reported a failure.
func (e *taskEvidence) failed() bool { return e != nil && len(e.failedBy) > 0 }

// actedOtherThan reports whether a worker other than w failed or ended the
// task, while w itself reported no failure: proof that w's lock ended
// without w (it lapsed) and another worker fetched the task.
func (e *taskEvidence) actedOtherThan(w string) bool {
	if e == nil || e.failedBy[w] {
		return false
	}
	if e.ended && e.endedBy != w {
		return true
	}
	for f := range e.failedBy {
		if f != w {
			return true
		}
	}
	return false
}

// countHistory adds the fresh entries to the per-topic counters (failures,
// completions, and the deletions ev shows to be BPMN errors, bpmn.go),
// notes each worker's latest outcome per topic (run.activity, for the idle
// workers) and returns what the entries say of each task (for the lock
// tracking): this collection's entries alone, and together with the
// previous collection's (recent).
// Entries of topics not yet known are admitted like topics the engine lists
// (a topic whose tasks all came and went between two collections is
// reported from then on).
func (run *collectionRun) countHistory(entries []historyEntry, ev bpmnEvidence) (fresh, recent map[string]*taskEvidence) {
	bpmn := bpmnErrors(entries, ev, run.st.usedCatches)
	fresh = map[string]*taskEvidence{}
	of := func(id string) *taskEvidence {
		e := fresh[id]
		if e == nil {
			e = &taskEvidence{failedBy: map[string]bool{}}
			fresh[id] = e
		}
		return e
	}
	run.activity = map[topicWorker]time.Time{}
	acted := func(label string, e historyEntry) {
		k := topicWorker{label, e.worker}
		if e.ts.After(run.activity[k]) {
			run.activity[k] = e.ts
		}
	}
	for _, e := range entries {
		label := e.topic
		if label != unattributed {
			label = run.topicLabel(e.topic)
		}
		c := run.st.history[label]
		// Entries of the activity stream (below full) name no task and
		// no worker: they count, and say nothing to the lock tracking.
		named := e.taskID != ""
		switch e.kind {
		case logFailure:
			c.failures++
			if run.st.failureGroups.by != nil {
				run.st.failureGroups.observe(failure{label: label, message: e.message, worker: e.worker, id: e.taskID, process: e.pi, ts: e.ts})
			}
			if named {
				of(e.taskID).failedBy[e.worker] = true
				acted(label, e)
			}
		case logSuccess:
			c.completions++
			if named {
				ev := of(e.taskID)
				ev.ended, ev.endedBy = true, e.worker
				acted(label, e)
			}
		case logDeletion:
			if named {
				ev := of(e.taskID)
				ev.ended, ev.endedBy = true, e.worker
			}
			if bpmn[e.id] {
				// The worker reported a BPMN error: an outcome, so
				// progress (a cancellation's entry names the holder,
				// who did nothing).
				c.bpmnErrors++
				if named {
					acted(label, e)
				}
			}
		}
		run.st.history[label] = c
	}
	return fresh, mergeEvidence(run.c.st.evidence, fresh)
}

// mergeEvidence returns what two collections' entries say of each task.
func mergeEvidence(older, newer map[string]*taskEvidence) map[string]*taskEvidence {
	out := make(map[string]*taskEvidence, len(older)+len(newer))
	for _, m := range []map[string]*taskEvidence{older, newer} {
		for id, e := range m {
			o := out[id]
			if o == nil {
				o = &taskEvidence{failedBy: map[string]bool{}}
				out[id] = o
			}
			for w := range e.failedBy {
				o.failedBy[w] = true
			}
			if e.ended {
				o.ended, o.endedBy = true, e.endedBy
			}
		}
	}
	return out
}

// emitHistory emits the failure, completion and BPMN error counters and the
// duration histogram of one topic label, as far as the history level
// supports them (levels.go): failures at every level (below full what the
// collections observed), the others from level activity on, never a 0 the
// engine's history cannot back.
func (run *collectionRun) emitHistory(label string) {
	c := run.st.history[label]
	run.counter(catalog.CamundaExternalTaskFailures, c.failures, run.c.e.name, label)
	if !run.at.level.HasOutcomes() {
		return
	}
	run.counter(catalog.CamundaExternalTaskCompletions, c.completions, run.c.e.name, label)
	run.counter(catalog.CamundaExternalTaskBpmnErrors, c.bpmnErrors, run.c.e.name, label)
	run.emitDuration(label)
}
