package engine

import (
	"sort"
	"time"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// BPMN errors. A worker's bpmnError removes the external task and writes a
// deletion entry to the history log, the same kind of entry a process
// cancellation, a process instance modification or an interrupting
// boundary event (message, timer, signal) writes; the entry itself carries
// no reason (verified on both engines). What tells them apart is what the
// process did in the same engine transaction, in the activity instance
// history (ACT_HI_ACTINST), which both readers look up for the deletion
// entries new since the previous reading:
//
//   - an uncaught BPMN error ends the task's scope: the task's activity
//     instance completed its scope (completeScope; ACT_INST_STATE_ 1),
//     whereas every other deletion cancels it;
//   - a caught BPMN error starts an error catch event (activity type
//     boundaryError, or errorStartEvent of an event subprocess) in the same
//     root process instance, milliseconds after the deletion entry's
//     timestamp. Each catch event is paired with at most one deletion, the
//     closest within reading.CatchWindow.
//
// What cannot be told apart: a deletion by another cause (a message,
// timer or signal interrupting the task, a cancellation, a modification)
// of a task in the same root process instance within CatchWindow of an
// error caught there that belongs to no deleted external task (a
// JavaDelegate's BPMN error) counts as a BPMN error; two deletions of one
// root process instance within CatchWindow of one caught error are told
// apart by time only (the count is right, the topic of the closer one
// wins). Without activity instance history (history level none) nothing is
// counted.

// bpmnErrors returns the deletion entries among entries (new ones, newest
// first) that the evidence says were BPMN errors. used holds the catch
// events paired before (with their start), so none pairs twice; it gains
// the ones paired now.
func bpmnErrors(entries []reading.HistoryEntry, ev reading.BPMNEvidence, used map[string]time.Time) map[string]bool {
	out := map[string]bool{}
	var open []reading.HistoryEntry
	for i := len(entries) - 1; i >= 0; i-- { // oldest first
		e := entries[i]
		if e.Kind != reading.LogDeletion {
			continue
		}
		if ev.ScopeCompleted[e.ActInst] {
			out[e.ID] = true
			continue
		}
		open = append(open, e)
	}
	// Pair catch events with deletions, closest first, each at most once.
	type pair struct {
		del   int
		catch int
		dist  time.Duration
	}
	var pairs []pair
	for i, e := range open {
		if e.RootPI == "" {
			continue
		}
		for j, c := range ev.Catches {
			if c.RootPI != e.RootPI {
				continue
			}
			if _, ok := used[c.ID]; ok {
				continue
			}
			d := c.Start.Sub(e.TS)
			if d < 0 {
				d = -d
			}
			if d <= reading.CatchWindow {
				pairs = append(pairs, pair{i, j, d})
			}
		}
	}
	sort.SliceStable(pairs, func(a, b int) bool { return pairs[a].dist < pairs[b].dist })
	paired := map[int]bool{}
	for _, p := range pairs {
		c := ev.Catches[p.catch]
		if _, ok := used[c.ID]; ok || paired[p.del] {
			continue
		}
		used[c.ID] = c.Start
		paired[p.del] = true
		out[open[p.del].ID] = true
	}
	return out
}

// pruneCatches forgets the paired catch events too old to pair with any
// entry a later reading can return (it starts at from).
func pruneCatches(used map[string]time.Time, from time.Time) {
	for id, start := range used {
		if start.Before(from.Add(-2 * reading.CatchWindow)) {
			delete(used, id)
		}
	}
}
