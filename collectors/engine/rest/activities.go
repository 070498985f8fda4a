package rest

import (
	"context"
	"sort"
	"time"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// newestFirst sorts entries by end, newest first (ties by id), and cuts
// them to max: the REST reader merges one list per activity type.
func newestFirst(entries []reading.ActivityEntry, max int) reading.ActivitiesRead {
	sort.Slice(entries, func(i, j int) bool {
		if !entries[i].End.Equal(entries[j].End) {
			return entries[i].End.After(entries[j].End)
		}
		return entries[i].ID < entries[j].ID
	})
	if len(entries) > max {
		return reading.ActivitiesRead{Entries: entries[:max], Cut: true}
	}
	return reading.ActivitiesRead{Entries: entries}
}

// activities reads the activity instances of the request's types that
// ended since its start: one paged request per type, newest first.
func (x *restRead) activities(ctx context.Context) error {
	hr := x.rq.Activities
	var all []reading.ActivityEntry
	seen := map[string]bool{}
	anyCut := false
	for _, typ := range x.rq.ActTypes {
		first, next := x.r.logPages(logActivities + ":" + typ)
		items, cut, err := readLog(ctx, first, next, hr,
			func(ctx context.Context, p camunda.Page) ([]camunda.HistoricActivityInstance, error) {
				p.Sort = camunda.Sort{By: camunda.ActivityInstanceSortEndTime, Order: camunda.Descending}
				return x.r.client.ListHistoricActivityInstances(ctx, camunda.HistoricActivityInstanceQuery{ActivityType: typ, FinishedAfter: hr.From}, p)
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
		x.r.noteLog(logActivities+":"+typ, len(items))
		anyCut = anyCut || cut
		for _, a := range items {
			if a.EndTime == nil || a.ActivityType != typ || seen[a.ID] {
				continue
			}
			seen[a.ID] = true
			all = append(all, reading.ActivityEntry{ID: a.ID, Activity: a.ActivityID, DefID: a.ProcessDefinitionID, RootPI: a.RootProcessInstanceID, Tenant: a.TenantID,
				Start: a.StartTime.Time, End: a.EndTime.Time, Canceled: a.Canceled, CompleteScope: a.CompleteScope})
		}
	}
	x.out.Activities = newestFirst(all, hr.Max)
	x.out.Activities.Cut = x.out.Activities.Cut || anyCut
	return nil
}
