package engine

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"time"

	"github.com/workflow-exporter/workflow-exporter/camunda"
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
//     root process instance within catchWindow (bpmn.go), otherwise a
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

// activityEntry is one ended activity instance of an external task type.
type activityEntry struct {
	id, activity, defID, rootPI string
	// tenant is the activity instance's tenant ("" for none).
	tenant                  string
	start, end              time.Time
	canceled, completeScope bool
}

func (e activityEntry) entryID() string  { return e.id }
func (e activityEntry) stamp() time.Time { return e.end }

// activitiesRead is what a reader returned of the activity stream.
type activitiesRead struct {
	// entries are the activity instances wanted, each once, newest first.
	entries []activityEntry
	// cut: max_history_entries were read before reaching the start.
	cut bool
}

// newestFirst sorts entries by end, newest first (ties by id), and cuts
// them to max: the REST reader merges one list per activity type.
func newestFirst(entries []activityEntry, max int) activitiesRead {
	sort.Slice(entries, func(i, j int) bool {
		if !entries[i].end.Equal(entries[j].end) {
			return entries[i].end.After(entries[j].end)
		}
		return entries[i].id < entries[j].id
	})
	if len(entries) > max {
		return activitiesRead{entries: entries[:max], cut: true}
	}
	return activitiesRead{entries: entries}
}

// activities reads the activity instances of the request's types that
// ended since its start: one paged request per type, newest first.
func (x *restRead) activities(ctx context.Context) error {
	hr := x.rq.activities
	var all []activityEntry
	seen := map[string]bool{}
	anyCut := false
	for _, typ := range x.rq.actTypes {
		items, cut, err := readLog(ctx, x.r.pageSize, hr,
			func(ctx context.Context, p camunda.Page) ([]camunda.HistoricActivityInstance, error) {
				p.Sort = camunda.Sort{By: camunda.ActivityInstanceSortEndTime, Order: camunda.Descending}
				return x.r.client.ListHistoricActivityInstances(ctx, camunda.HistoricActivityInstanceQuery{ActivityType: typ, FinishedAfter: hr.from}, p)
			},
			func(a camunda.HistoricActivityInstance) (string, time.Time) {
				if a.EndTime == nil {
					return a.ID, time.Time{}
				}
				return a.ID, a.EndTime.Time
			})
		if err != nil {
			return err
		}
		anyCut = anyCut || cut
		for _, a := range items {
			if a.EndTime == nil || a.ActivityType != typ || seen[a.ID] {
				continue
			}
			seen[a.ID] = true
			all = append(all, activityEntry{id: a.ID, activity: a.ActivityID, defID: a.ProcessDefinitionID, rootPI: a.RootProcessInstanceID, tenant: a.TenantID,
				start: a.StartTime.Time, end: a.EndTime.Time, canceled: a.Canceled, completeScope: a.CompleteScope})
		}
	}
	x.out.activities = newestFirst(all, hr.max)
	x.out.activities.cut = x.out.activities.cut || anyCut
	return nil
}

// processXML reads a process definition's BPMN XML over REST, in both
// modes (models.go); exists is false when the engine no longer has it.
func (e *Engine) processXML(ctx context.Context, id string) (doc []byte, exists bool, err error) {
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
func (run *collectionRun) activityOutcomes(fresh []activityEntry, listed []string) ([]historyEntry, bpmnEvidence, error) {
	c := run.c
	ev := bpmnEvidence{scopeCompleted: map[string]bool{}}
	ids := append([]string(nil), listed...)
	for _, e := range fresh {
		ids = append(ids, e.defID)
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
	var out []historyEntry
	var canceled []historyEntry
	for _, e := range fresh {
		m := models[e.defID]
		if m == nil {
			continue
		}
		el, ok := m.external[e.activity]
		if !ok {
			continue
		}
		h := historyEntry{id: e.id, activity: e.activity, actInst: e.id, rootPI: e.rootPI, ts: e.end, kind: logSuccess}
		switch topic := topicOf[e.id]; {
		case topic != "":
			h.topic = run.topicLabel(topic)
		case el.topic != "" && c.e.cfg.TenantLabel:
			h.topic = run.topicLabel(tenantKey(e.tenant, el.topic))
		case el.topic != "":
			h.topic = run.topicLabel(el.topic)
		default:
			h.topic = unattributed
			run.st.unattributed = true
		}
		switch {
		case e.canceled:
			h.kind = logDeletion
			canceled = append(canceled, h)
		case e.completeScope && !el.endsScope:
			h.kind = logDeletion
			ev.scopeCompleted[e.id] = true
		default:
			run.observeDuration(h.topic, e.end.Sub(e.start).Seconds())
		}
		out = append(out, h)
	}
	if len(canceled) > 0 {
		first, last := deletionSpan(canceled)
		if ev.catches, err = c.e.reader.catchEvents(run.ctx, first.Add(-catchWindow), last.Add(catchWindow), c.e.cfg.MaxHistoryEntries); err != nil {
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
