package engine

import (
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// camunda_external_tasks_ended_total is a progress signal that needs no
// history: open tasks seen and then gone, at every history level, in both
// modes. Per topic label and collection it adds the larger of
//
//   - the fall of the topic's open tasks since the previous collection,
//     and
//   - the tasks the previous collection listed in flight (locked or
//     lapsed) that no list holds now, less the rise of the topic's
//     suspended and retries-exhausted tasks (where a listed task goes
//     without ending); not while a list is cut by max_listed_tasks, when
//     a listed task may only have moved beyond the cut, and not for a
//     task the engine says is still open (TasksRead.StillOpen: behind a
//     load balancer whose nodes' clocks differ, a lock that just lapsed
//     may be in neither list).
//
// So it counts at least every listed task that ended, and moves whenever
// a topic's open tasks fall. It is a lower bound: tasks created and ended
// between two collections, and tasks that end while others of the topic
// arrive unlisted, are not seen. A listed task an operator unlocks (back to
// waiting, unlisted) counts as ended. The first collection, and the first
// of a topic, count nothing.

// ended adds what one topic label's counts say ended since the previous
// collection (cur nil: no task) and emits the counter. vanished are the
// tasks of the label the previous collection listed that no list holds
// now; cut says a list was cut this collection.
func (run *collectionRun) ended(label string, cur *reading.TopicCounts, vanished int64, cut bool) {
	var now reading.TopicCounts
	if cur != nil {
		now = *cur
	}
	if prev, ok := run.c.st.open[label]; ok {
		n := max(0, prev.Total-now.Total)
		if !cut {
			moved := max(0, now.Suspended-prev.Suspended) + max(0, now.Exhausted-prev.Exhausted)
			n = max(n, vanished-moved)
		}
		run.st.ended[label] += float64(n)
	}
	run.st.open[label] = now
	run.counter(catalog.CamundaExternalTasksEnded, run.st.ended[label], run.c.e.name, label)
}
