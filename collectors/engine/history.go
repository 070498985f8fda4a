package engine

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
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
func (h historyCursor) request(now time.Time, window time.Duration, max int) reading.HistoryRequest {
	rq := reading.HistoryRequest{Now: now, Ahead: window, Max: max, Seen: h.seen}
	rq.Base, rq.Back = h.start(now, window)
	rq.First = !h.started
	if h.resumed || !h.started {
		rq.Seen = nil
	}
	rq.From = rq.Base.Add(-rq.Back)
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
func (h historyCursor) advance(rd reading.HistoryRead, now time.Time, window time.Duration) (historyCursor, []reading.HistoryEntry, bool) {
	return advanceCursor(h, rd.Entries, rd.Cut, now, window)
}

// stamped is an entry of a history log read as a stream: the external-task
// log (reading.HistoryEntry), the activity stream (reading.ActivityEntry)
// or the job log (reading.JobLogEntry).
type stamped interface {
	EntryID() string
	Stamp() time.Time
}

// advanceCursor is advance for the entries of any history log, newest
// first; cut says the reading stopped at max_history_entries before its
// start. lost: it stopped before it reached the previous reading's time,
// so entries stamped since (new ones) may be uncounted. A reading cut
// further back, inside the late_commit_window it reads again, lost no new
// entry (it only narrows the window for late commits): a busy engine whose
// window holds more than max_history_entries is not reported at every
// collection. A baseline loses nothing: it counts nothing.
func advanceCursor[E stamped](h historyCursor, entries []E, cut bool, now time.Time, window time.Duration) (_ historyCursor, fresh []E, lost bool) {
	lost = cut && h.started && (len(entries) == 0 || !entries[len(entries)-1].Stamp().Before(h.at))
	next := historyCursor{started: true, at: now, seen: make(map[string]time.Time, len(entries))}
	keepFrom := now.Add(-window)
	// Entries stamped before the reading's start were read before (late
	// commits aside: see historyCursor). A reading returns none normally;
	// in engine-database mode a range reckoned on the clock face reaches
	// back an hour after a DST fall-back (enginedb.FaceRange).
	base, back := h.start(now, window)
	from := base.Add(-back)
	for _, e := range entries {
		if _, ok := h.seen[e.EntryID()]; !ok && h.started && !e.Stamp().Before(from) {
			fresh = append(fresh, e)
		}
		if !e.Stamp().Before(keepFrom) {
			next.seen[e.EntryID()] = e.Stamp()
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
	// BPMN error), endedAt its time by the engine's clock; ended says
	// there was one.
	endedBy string
	endedAt time.Time
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

// endedLateBy reports whether worker w itself ended the task (its entry
// names w: a completion, a BPMN error, or a cancellation of the task it
// held) more than lateEndMargin after exp, the expiration of the lock the
// collector saw w hold: that lock lapsed before the end, whether or not a
// collection saw it lapsed.
func (e *taskEvidence) endedLateBy(w string, exp time.Time) bool {
	return e != nil && e.ended && e.endedBy == w && !exp.IsZero() && e.endedAt.After(exp.Add(lateEndMargin))
}

// lateEndMargin is how far past a lock's expiration the holder's own end
// entry must be stamped for the lock to count as lapsed (endedLateBy). The
// two times are the engine's, but from the node that locked the task and
// the node that ended it: the margin covers the clocks of an engine
// cluster's nodes differing, and no more (collections every few seconds
// see longer lapses anyway).
const lateEndMargin = 5 * time.Second

// countHistory adds the fresh entries to the per-topic counters (failures,
// completions, and the deletions ev shows to be BPMN errors, bpmn.go),
// notes each worker's latest outcome per topic (run.activity, for the idle
// workers) and returns what the entries say of each task (for the lock
// tracking): this collection's entries alone, and together with the
// previous collection's (recent).
// Entries of topics not yet known are admitted like topics the engine lists
// (a topic whose tasks all came and went between two collections is
// reported from then on).
func (run *collectionRun) countHistory(entries []reading.HistoryEntry, ev reading.BPMNEvidence) (fresh, recent map[string]*taskEvidence) {
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
	acted := func(label string, e reading.HistoryEntry) {
		k := topicWorker{label, e.Worker}
		if e.TS.After(run.activity[k]) {
			run.activity[k] = e.TS
		}
	}
	for _, e := range entries {
		label := e.Topic
		if label != unattributed {
			label = run.topicLabel(e.Topic)
		}
		c := run.st.history[label]
		// Entries of the activity stream (below full) name no task and
		// no worker: they count, and say nothing to the lock tracking.
		named := e.TaskID != ""
		switch e.Kind {
		case reading.LogFailure:
			c.failures++
			if run.st.failureGroups.by != nil {
				run.st.failureGroups.observe(failure{label: label, message: e.Message, worker: e.Worker, id: e.TaskID, process: e.PI, ts: e.TS})
			}
			if named {
				of(e.TaskID).failedBy[e.Worker] = true
				acted(label, e)
			}
		case reading.LogSuccess:
			c.completions++
			if named {
				ev := of(e.TaskID)
				ev.ended, ev.endedBy, ev.endedAt = true, e.Worker, e.TS
				acted(label, e)
			}
		case reading.LogDeletion:
			if named {
				ev := of(e.TaskID)
				ev.ended, ev.endedBy, ev.endedAt = true, e.Worker, e.TS
			}
			if bpmn[e.ID] {
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
				o.ended, o.endedBy, o.endedAt = true, e.endedBy, e.endedAt
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
	if !run.at.Level.HasOutcomes() {
		return
	}
	run.counter(catalog.CamundaExternalTaskCompletions, c.completions, run.c.e.name, label)
	run.counter(catalog.CamundaExternalTaskBpmnErrors, c.bpmnErrors, run.c.e.name, label)
	run.emitDuration(label)
}
