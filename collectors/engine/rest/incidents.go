package rest

import (
	"context"
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// incidentGroups groups the listed incidents. If the list was cut short
// (max_listed_tasks), one GET /incident/count?incidentType=T per type puts
// the unlisted rest under process_definition_key and activity_id "other":
// for the listed types, the engine's own (failedJob, failedExternalTask)
// and the types earlier collections reported, so that a known type whose
// incidents all lie beyond the list keeps its count (without an oldest
// age). What the total leaves beyond those (other types that only occur
// beyond the list) goes to all three labels "other". Because the list is
// sorted oldest first, the oldest incident of every listed type is in the
// list.
func (x *restRead) incidentGroups(ctx context.Context) error {
	ids := make([]string, 0, len(x.inc))
	for _, in := range x.inc {
		ids = append(ids, in.ProcessDefinitionID)
	}
	keys, err := x.r.client.ProcessDefinitionKeys(ctx, ids)
	if err != nil {
		return err
	}
	out := reading.IncidentRead{Oldest: map[string]time.Time{}}
	index := map[reading.IncidentKey]int{}
	perType := map[string]int64{}
	for _, in := range x.inc {
		key := keys[in.ProcessDefinitionID]
		if key == "" {
			key = in.ProcessDefinitionID // definition deleted meanwhile
		}
		key = x.keyOf(in.TenantID, key)
		ik := reading.IncidentKey{Type: in.IncidentType, Key: key, Activity: in.ActivityID}
		if i, ok := index[ik]; ok {
			out.Groups[i].N++
		} else {
			index[ik] = len(out.Groups)
			out.Groups = append(out.Groups, reading.IncidentGroup{Key: ik, N: 1})
		}
		perType[in.IncidentType]++
		if x.rq.IncidentMessages {
			out.Messages = append(out.Messages, reading.IncidentMessage{Type: in.IncidentType, Key: key, Message: in.IncidentMessage,
				PI: in.ProcessInstanceID, TS: in.IncidentTimestamp.Time})
		}
		if _, ok := out.Oldest[in.IncidentType]; !ok {
			out.Oldest[in.IncidentType] = in.IncidentTimestamp.Time
		}
	}
	out.MessagesCut = x.rq.IncidentMessages && x.incCut
	if x.incCut {
		rest := x.nInc - int64(len(x.inc))
		types := map[string]bool{camunda.IncidentFailedJob: true, camunda.IncidentFailedExternalTask: true}
		for _, typ := range x.rq.IncidentTypes {
			types[typ] = true
		}
		for typ := range perType {
			types[typ] = true
		}
		for _, typ := range sortedKeys(types) {
			if rest <= 0 {
				break
			}
			all, err := x.r.client.CountIncidents(ctx, camunda.IncidentQuery{IncidentType: typ})
			if err != nil {
				return err
			}
			if r := all - perType[typ]; r > 0 {
				out.Groups = append(out.Groups, reading.IncidentGroup{Key: reading.IncidentKey{Type: typ, Key: labellimit.Other, Activity: labellimit.Other}, N: r, Folded: true})
				rest -= r
			}
		}
		if rest > 0 {
			out.Groups = append(out.Groups, reading.IncidentGroup{Key: reading.IncidentKey{Type: labellimit.Other, Key: labellimit.Other, Activity: labellimit.Other}, N: rest, Folded: true})
		}
	}
	x.out.Incidents = out
	return nil
}

// incidentTopics finds the oldest failedExternalTask incident of each
// reported topic. Incidents carry no topic, only the task id (their
// configuration): when the listed incidents hold any, the tasks with no
// retries left (suspended or not: their incidents stay) are listed
// engine-wide, by id, at most max_listed_tasks, and joined by id. The
// incident list is sorted oldest first, so a topic's first resolved
// incident is its oldest, as long as no earlier incident's task went
// unlisted.
func (x *restRead) incidentTopics(ctx context.Context) error {
	ids := map[string]bool{}
	for _, in := range x.inc {
		if in.IncidentType == camunda.IncidentFailedExternalTask {
			ids[in.Configuration] = true
		}
	}
	x.out.IncidentsIncomplete = x.incCut
	if len(ids) == 0 {
		return nil
	}
	tasks, cut, err := camunda.Collect(ctx, camunda.Page{Sort: camunda.Sort{By: camunda.ExternalTaskSortID}},
		x.r.listPage(), x.rq.Budget,
		func(ctx context.Context, p camunda.Page) ([]camunda.ExternalTask, error) {
			return x.r.client.ListExternalTasks(ctx, camunda.ExternalTaskQuery{Retries: camunda.RetriesNone}, p)
		})
	if err != nil {
		return err
	}
	topicOf := make(map[string]string, len(tasks))
	for _, t := range tasks {
		topicOf[t.ID] = x.keyOf(t.TenantID, t.TopicName)
	}
	unresolved := false
	for _, in := range x.inc {
		if in.IncidentType != camunda.IncidentFailedExternalTask {
			continue
		}
		topic, ok := topicOf[in.Configuration]
		if !ok {
			// The task is beyond the list (or ended meanwhile): the
			// incidents after it are no oldest of their topic for sure.
			unresolved = unresolved || cut
			continue
		}
		if tr := x.out.Topics[topic]; tr != nil && tr.OldestIncident.IsZero() && !unresolved {
			tr.OldestIncident = in.IncidentTimestamp.Time
		}
	}
	x.out.IncidentsIncomplete = x.incCut || unresolved
	return nil
}

// ReadExhausted lists the oldest failedExternalTask incidents (one
// request), then their tasks by id (one request per 100 ids: the ids travel
// in the URL).
func (r *Reader) ReadExhausted(ctx context.Context, rq reading.ExhaustedRequest) ([]reading.ExhaustedTask, error) {
	incs, err := r.client.ListIncidents(ctx, camunda.IncidentQuery{IncidentType: camunda.IncidentFailedExternalTask},
		camunda.Page{MaxResults: min(rq.Max, r.listPage()), Sort: camunda.Sort{By: camunda.IncidentSortTimestamp, Order: camunda.Ascending}})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(incs))
	for _, in := range incs {
		if in.Configuration != "" {
			ids = append(ids, in.Configuration)
		}
	}
	tasks := map[string]camunda.ExternalTask{}
	for start := 0; start < len(ids); start += 100 {
		batch := ids[start:min(start+100, len(ids))]
		list, err := r.client.ListExternalTasks(ctx, camunda.ExternalTaskQuery{ExternalTaskIDIn: batch},
			camunda.Page{MaxResults: len(batch), Sort: camunda.Sort{By: camunda.ExternalTaskSortID}})
		if err != nil {
			return nil, err
		}
		for _, t := range list {
			tasks[t.ID] = t
		}
	}
	out := make([]reading.ExhaustedTask, 0, len(incs))
	for _, in := range incs {
		t, ok := tasks[in.Configuration]
		if !ok {
			continue // resolved or deleted between the two requests
		}
		o := obsOf(t)
		o.Topic = r.keyOf(t.TenantID, t.TopicName)
		out = append(out, reading.ExhaustedTask{Incident: in.IncidentTimestamp.Time, Obs: o, Suspended: t.Suspended})
	}
	return out, nil
}
