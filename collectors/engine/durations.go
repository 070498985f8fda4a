package engine

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/histogram"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// External task durations: from a task's creation to its successful
// completion, taken from the history stream (history.go) at no extra
// request. The stream carries a creation entry (with the task id and its
// timestamp) when a task is created and a success entry when a worker
// completes it; the collector remembers the creation time of every task
// whose creation entry it read, until the task's success or deletion entry,
// and observes success minus creation once per success entry (the stream
// yields each entry once, by id, whatever restarts of the reading and
// history cleanup do).
//
// What is not observed: tasks created before the exporter's first reading
// (their creation was never read; after an exporter restart the histogram
// starts empty like every counter), successes in a reading cut by
// max_history_entries or committed later than late_commit_window, and tasks
// created while maxCreations creation times are remembered.
// camunda_external_task_completions_total minus the histogram's _count is
// what went unobserved.

// maxCreations bounds the creation times remembered (about 100 bytes
// each): tasks open at the same time beyond it are not observed.
const maxCreations = 200000

func cloneHists(m map[string]histogram.Dual) map[string]histogram.Dual {
	out := make(map[string]histogram.Dual, len(m))
	for k, h := range m {
		out[k] = h.Clone()
	}
	return out
}

// creationLedger is what one collection does to the remembered creation
// times; it is applied when the collection succeeds.
type creationLedger struct {
	added map[string]int64
	ended map[string]bool
	// dropped counts creations not remembered because the ledger was full.
	dropped int
}

// trackDurations reads the history entries for durations: creation entries
// are remembered, success entries observed against them, success and
// deletion entries end them. entries are newest first; on the first reading
// (the baseline) nothing is observed, only remembered.
func (run *collectionRun) trackDurations(entries []reading.HistoryEntry, baseline bool) {
	c := run.c
	run.ledger = creationLedger{added: map[string]int64{}, ended: map[string]bool{}}
	l := &run.ledger
	created := func(id string) (int64, bool) {
		if l.ended[id] {
			return 0, false
		}
		if ts, ok := l.added[id]; ok {
			return ts, true
		}
		ts, ok := c.creations[id]
		return ts, ok
	}
	for i := len(entries) - 1; i >= 0; i-- { // oldest first
		e := entries[i]
		if e.TaskID == "" {
			continue
		}
		switch e.Kind {
		case reading.LogCreation:
			if _, ok := created(e.TaskID); ok {
				continue
			}
			if len(c.creations)+len(l.added)-len(l.ended) >= maxCreations {
				l.dropped++
				continue
			}
			delete(l.ended, e.TaskID)
			l.added[e.TaskID] = e.TS.UnixNano()
		case reading.LogSuccess, reading.LogDeletion:
			ts, ok := created(e.TaskID)
			if !ok {
				continue
			}
			if e.Kind == reading.LogSuccess && !baseline {
				run.observeDuration(run.topicLabel(e.Topic), e.TS.Sub(time.Unix(0, ts)).Seconds())
			}
			delete(l.added, e.TaskID)
			if _, committed := c.creations[e.TaskID]; committed {
				l.ended[e.TaskID] = true
			}
		}
	}
}

// observeDuration adds one duration to a topic label's histogram.
func (run *collectionRun) observeDuration(label string, seconds float64) {
	h := run.st.durations[label]
	h.Observe(run.c.e.cfg.DurationBuckets, max(0, seconds))
	run.st.durations[label] = h
}

// commitCreations applies a successful collection's ledger.
func (c *externalTasksCollector) commitCreations(l creationLedger) {
	for id := range l.ended {
		delete(c.creations, id)
	}
	for id, ts := range l.added {
		c.creations[id] = ts
	}
	full := l.dropped > 0
	if full && !c.creationsFull {
		c.e.logger.Warn("camunda: more open external tasks than the duration tracking remembers; the durations of tasks created meanwhile are not observed",
			"engine", c.e.name, "remembered", maxCreations)
	}
	c.creationsFull = full
}

// emitDuration emits one topic label's histogram (empty when nothing was
// observed), with classic and native buckets.
func (run *collectionRun) emitDuration(label string) {
	run.out = append(run.out, run.st.durations[label].MustMetric(run.c.descs.Get(catalog.CamundaExternalTaskDuration),
		run.c.e.cfg.DurationBuckets, run.c.topicLabels(catalog.CamundaExternalTaskDuration, []string{run.c.e.name, label})...))
}
