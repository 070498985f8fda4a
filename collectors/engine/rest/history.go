package rest

import (
	"context"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// history pages through the history log, newest first, until it reaches
// entries older than the request's start, the end of the log, or
// max_history_entries.
func (x *restRead) history(ctx context.Context) error {
	first, next := x.r.logPages(logExternalTasks)
	entries, cut, err := readLog(ctx, first, next, x.rq.History,
		func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTaskLogEntry, error) {
			p.Sort = camunda.Sort{By: camunda.ExternalTaskLogSortTimestamp, Order: camunda.Descending}
			return x.r.client.ListExternalTaskLog(ctx, camunda.HistoryLogQuery{}, p)
		},
		func(e camunda.ExternalTaskLogEntry) (string, time.Time) { return e.ID, e.Timestamp.Time })
	x.out.History.Cut = cut
	if err == nil {
		x.r.noteLog(logExternalTasks, len(entries))
	}
	for _, e := range entries {
		x.out.History.Entries = append(x.out.History.Entries, x.entryOf(e))
	}
	return err
}

// The history logs whose readings size their first page (logPages).
const (
	logExternalTasks = "external-task-log"
	logJobs          = "job-log"
	logActivities    = "activity-instances"
)

// readLog pages through a history log sorted by timestamp, newest first
// (fetch sets the sort), until it reaches entries older than the request's
// start, the end of the log, or max_history_entries (cut): a first page of
// first entries, then pages of next. Offset paging over a log that grows
// at its head repeats entries; they are read once.
func readLog[T any](ctx context.Context, first, next int, hr reading.HistoryRequest, fetch func(context.Context, camunda.Page) ([]T, error),
	key func(T) (string, time.Time)) (entries []T, cut bool, err error) {
	seen := map[string]bool{}
	// One more than max_history_entries tells a cut reading from one that
	// ends exactly there.
	size := min(first, hr.Max+1)
	for offset := 0; ; offset, size = offset+size, min(next, hr.Max+1) {
		page, err := fetch(ctx, camunda.Page{FirstResult: offset, MaxResults: size})
		if err != nil {
			return entries, cut, err
		}
		for _, e := range page {
			id, ts := key(e)
			if ts.Before(hr.From) {
				return entries, false, nil
			}
			if seen[id] {
				continue
			}
			if len(entries) == hr.Max {
				return entries, true, nil
			}
			seen[id] = true
			entries = append(entries, e)
		}
		if len(page) < size {
			return entries, false, nil
		}
	}
}

func (x *restRead) entryOf(e camunda.ExternalTaskLogEntry) reading.HistoryEntry {
	h := reading.HistoryEntry{ID: e.ID, TaskID: e.ExternalTaskID, Topic: x.keyOf(e.TenantID, e.TopicName), Worker: e.WorkerID, TS: e.Timestamp.Time,
		Activity: e.ActivityID, ActInst: e.ActivityInstanceID, RootPI: e.RootProcessInstanceID,
		PI: e.ProcessInstanceID, Message: e.ErrorMessage,
		Kind: logKindOfFlags(e.FailureLog, e.SuccessLog, e.DeletionLog)}
	return h
}

// logKindOfFlags is the kind of a history log entry of the REST API, which
// flags each entry (failureLog, successLog, deletionLog; none: a creation),
// in both the external-task and the job log.
func logKindOfFlags(failure, success, deletion bool) reading.LogKind {
	switch {
	case failure:
		return reading.LogFailure
	case success:
		return reading.LogSuccess
	case deletion:
		return reading.LogDeletion
	}
	return reading.LogCreation
}

// bpmnEvidence looks up, for the deletion entries new in this reading, what
// tells a BPMN error apart (bpmn.go in collectors/engine), only when there are
// any: the error catch events started around them (GET
// /history/activity-instance, one paged request per catch event type), and per
// activity of the deleted tasks its activity instances that completed their
// scope since (one paged request per activity; the endpoint has no filter by
// instance ids that every engine version applies). Each list is bounded by
// max_history_entries.
func (x *restRead) bpmnEvidence(ctx context.Context) error {
	dels := reading.NewDeletions(x.out.History.Entries, x.rq.History)
	if len(dels) == 0 {
		return nil
	}
	first, last := reading.DeletionSpan(dels)
	from := first.Add(-reading.CatchWindow)
	deleted := map[string]bool{}
	activities := map[string]bool{}
	for _, e := range dels {
		deleted[e.ActInst] = true
		if e.Activity != "" {
			activities[e.Activity] = true
		}
	}
	ev := reading.BPMNEvidence{ScopeCompleted: map[string]bool{}}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.r.concurrency)
	g.Go(func() (err error) {
		catches, err := x.r.CatchEvents(gctx, from, last.Add(reading.CatchWindow), x.rq.History.Max)
		mu.Lock()
		defer mu.Unlock()
		ev.Catches = catches
		return err
	})
	for _, act := range sortedKeys(activities) {
		g.Go(func() error {
			items, err := x.r.listActivities(gctx, camunda.HistoricActivityInstanceQuery{ActivityID: act, CompleteScope: true, FinishedAfter: from},
				camunda.ActivityInstanceSortEndTime, camunda.Ascending, x.rq.History.Max)
			mu.Lock()
			defer mu.Unlock()
			for _, a := range items {
				if a.CompleteScope && deleted[a.ID] {
					ev.ScopeCompleted[a.ID] = true
				}
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	x.out.BPMN = ev
	return nil
}

// listActivities pages through the historic activity instances q selects,
// sorted by "by", at most max.
func (r *Reader) listActivities(ctx context.Context, q camunda.HistoricActivityInstanceQuery, by string, order camunda.SortOrder, max int) ([]camunda.HistoricActivityInstance, error) {
	items, _, err := camunda.Collect(ctx, camunda.Page{Sort: camunda.Sort{By: by, Order: order}}, r.scanPage(), max,
		func(ctx context.Context, p camunda.Page) ([]camunda.HistoricActivityInstance, error) {
			return r.client.ListHistoricActivityInstances(ctx, q, p)
		})
	return items, err
}

// CatchEvents implements reading.Reader: one paged request per error catch
// event type (the endpoint applies one activityType only), the events sorted
// by id.
func (r *Reader) CatchEvents(ctx context.Context, from, to time.Time, max int) ([]reading.CatchEvent, error) {
	var out []reading.CatchEvent
	for _, typ := range []string{reading.ActivityBoundaryError, reading.ActivityErrorStartEvent} {
		items, err := r.listActivities(ctx, camunda.HistoricActivityInstanceQuery{ActivityType: typ, StartedAfter: from},
			camunda.ActivityInstanceSortStartTime, camunda.Ascending, max)
		if err != nil {
			return nil, err
		}
		for _, a := range items {
			if a.ActivityType == typ && !a.StartTime.After(to) {
				out = append(out, reading.CatchEvent{ID: a.ID, RootPI: a.RootProcessInstanceID, Start: a.StartTime.Time})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
