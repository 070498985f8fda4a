package engine

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The engine's lists of the status page (docs/status.md): lapsed locks and
// redeliveries come from the tasks this collection listed anyway (the
// in-flight view of the joins); the tasks whose retries ran out need one
// bounded reading of their own, and only while the engine has some.

// reportStatus hands the engine's lists to the collection's status sink,
// if the page is on.
func (run *collectionRun) reportStatus(rd *reading.TasksRead) error {
	sink := run.sink
	if sink == nil {
		return nil
	}
	c := run.c
	hide := !c.e.cfg.Status.ShowIdentifiers()
	var lapsed, redelivered []collectors.Item
	for _, t := range run.inflight {
		if t.State == correlate.LockExpired {
			lapsed = append(lapsed, run.taskItem(t, t.LockExpiration))
		}
		if t.Redelivered {
			redelivered = append(redelivered, run.taskItem(t, t.RedeliveredAt))
		}
	}
	add := func(kind string, items []collectors.Item, total int, partial bool) {
		sink.Add(collectors.List{Kind: kind, Engine: c.e.name, Total: total, Partial: partial, IdentifiersHidden: hide, Items: items})
	}
	add(vocab.KindLockExpired, lapsed, len(lapsed), run.truncated)
	add(vocab.KindRedelivered, redelivered, len(redelivered), run.truncated)

	var failed int
	for _, g := range rd.Incidents.Groups {
		if g.Key.Type == camunda.IncidentFailedExternalTask {
			failed += int(g.N)
		}
	}
	var exhausted []collectors.Item
	if failed > 0 && !hide {
		tasks, err := c.e.reader.ReadExhausted(run.ctx, reading.ExhaustedRequest{Probe: run.at, Max: sink.MaxItems()})
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tenant, topic := reading.SplitKey(t.Obs.Topic)
			it := run.taskItem(correlate.Task{ID: t.Obs.ID, Topic: topic, Tenant: tenant, WorkerID: t.Obs.Worker,
				ProcessInstanceID: t.Obs.PI, ActivityID: t.Obs.Activity, BusinessKey: t.Obs.BusinessKey}, t.Incident)
			it.TaskState = vocab.StateRetriesExhausted
			if t.Suspended {
				it.TaskState = vocab.StateSuspended
			}
			exhausted = append(exhausted, it)
		}
	}
	add(vocab.KindRetriesExhausted, exhausted, failed, false)
	if c.st.failureGroups.by != nil {
		sink.Add(run.st.failureGroups.list(vocab.KindTaskFailureGroups, c.e.name, true, hide, run.engineNow))
		sink.Add(incidentGroups(vocab.KindIncidentGroups, c.e.name, rd.Incidents.Messages, c.e.cfg.FailureSignatureLimit,
			rd.Incidents.MessagesCut, hide, run.engineNow))
	}
	return nil
}

// taskItem is one task of the engine as the page shows it; since is when
// its trouble started, by the engine's clock.
func (run *collectionRun) taskItem(t correlate.Task, since time.Time) collectors.Item {
	it := collectors.Item{Engine: run.c.e.name, Tenant: t.Tenant, Topic: t.Topic, ExternalTaskID: t.ID, ProcessInstanceID: t.ProcessInstanceID,
		BusinessKey: t.BusinessKey, ActivityID: t.ActivityID, WorkerID: t.WorkerID, TaskState: string(t.State)}
	if !since.IsZero() {
		s := since.UTC()
		it.Since = &s
		it.AgeSeconds = max(0, run.engineNow.Sub(since).Seconds())
	}
	return it
}
