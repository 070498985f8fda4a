package engine

import (
	"context"
	"errors"
	"net/http"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// Below history level full the engine writes no external task log, but from
// level activity on it writes an activity instance per external task
// (ACT_HI_ACTINST), started when the task is created and ended when it is
// completed or deleted. The collector reads the activity instances that
// ended since the previous reading as a stream, exactly like the external
// task log (history.go: the same cursor, late_commit_window and
// max_history_entries), filtered by the activity types of the external
// elements of the process models (models.go), and counts each once, by id:
//
//   - ended normally (neither canceled nor completing its scope): a
//     completion, observed as a duration from its start to its end;
//   - completed its scope: an uncaught BPMN error, unless a normal
//     completion completes the scope too (an inner instance of a
//     multi-instance activity, or an activity without an outgoing sequence
//     flow: measured on both engines), which then counts as a completion;
//   - canceled: a BPMN error when an error catch event started in the same
//     root process instance within reading.CatchWindow (bpmn.go), otherwise a
//     deletion by another cause, not counted.
//
// Each is exact for every task, also those created and ended between two
// collections; failures are not in this history (activities.go cannot see
// them, tasks.go counts what the collections observe). The topic of an
// activity instance is the topic of its task as a collection listed it,
// else the element's camunda:topic, else (an expression) "unattributed".

// unattributed is the topic label of an ended external task whose topic is
// an expression no collection saw resolved.
const unattributed = "unattributed"

// processXML reads a process definition's BPMN XML over REST, in both
// modes (models.go), or from the engine's database without camunda[].url;
// exists is false when the engine no longer has it.
func (e *Engine) processXML(ctx context.Context, id string) (doc []byte, exists bool, err error) {
	if e.client == nil {
		return e.db.ProcessXML(ctx, id)
	}
	doc, err = e.client.ProcessDefinitionXML(ctx, id)
	var apiErr *camunda.APIError
	if errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound {
		return nil, false, nil
	}
	return doc, err == nil, err
}

// activityOutcomes turns the fresh activity instances into history entries
// the counters take (countHistory): a success per completion (observing its
// duration), a deletion per canceled one or one that completed its scope
// (the latter with the evidence of an uncaught BPMN error), and looks up
// the error catch events around the canceled ones. Activity instances of
// elements that are no external task (a JavaDelegate's service task) are
// left out.
func (run *collectionRun) activityOutcomes(fresh []reading.ActivityEntry, listed []string) ([]reading.HistoryEntry, reading.BPMNEvidence, error) {
	c := run.c
	ev := reading.BPMNEvidence{ScopeCompleted: map[string]bool{}}
	ids := append([]string(nil), listed...)
	for _, e := range fresh {
		ids = append(ids, e.DefID)
	}
	models, err := c.models.ensure(run.ctx, dedupe(ids), c.e.processXML)
	if err != nil {
		return nil, ev, err
	}
	topicOf := map[string]string{}
	for _, t := range c.st.tasks {
		if t.actInst != "" {
			topicOf[t.actInst] = t.topic
		}
	}
	var out []reading.HistoryEntry
	var canceled []reading.HistoryEntry
	for _, e := range fresh {
		m := models[e.DefID]
		if m == nil {
			continue
		}
		el, ok := m.external[e.Activity]
		if !ok {
			continue
		}
		h := reading.HistoryEntry{ID: e.ID, Activity: e.Activity, ActInst: e.ID, RootPI: e.RootPI, TS: e.End, Kind: reading.LogSuccess}
		switch topic := topicOf[e.ID]; {
		case topic != "":
			h.Topic = run.topicLabel(topic)
		case el.topic != "" && c.e.cfg.TenantLabel:
			h.Topic = run.topicLabel(reading.TenantKey(e.Tenant, el.topic))
		case el.topic != "":
			h.Topic = run.topicLabel(el.topic)
		default:
			h.Topic = unattributed
			run.st.unattributed = true
		}
		switch {
		case e.Canceled:
			h.Kind = reading.LogDeletion
			canceled = append(canceled, h)
		case e.CompleteScope && !el.endsScope:
			h.Kind = reading.LogDeletion
			ev.ScopeCompleted[e.ID] = true
		default:
			run.observeDuration(h.Topic, e.End.Sub(e.Start).Seconds())
		}
		out = append(out, h)
	}
	if len(canceled) > 0 {
		first, last := reading.DeletionSpan(canceled)
		if ev.Catches, err = c.e.reader.CatchEvents(run.ctx, first.Add(-reading.CatchWindow), last.Add(reading.CatchWindow), c.e.cfg.MaxHistoryEntries); err != nil {
			return nil, ev, err
		}
	}
	return out, ev, nil
}

// dedupe returns the distinct non-empty strings of xs, sorted.
func dedupe(xs []string) []string {
	set := map[string]bool{}
	for _, x := range xs {
		if x != "" {
			set[x] = true
		}
	}
	return sortedKeys(set)
}
