package engine

import (
	"time"

	"github.com/workflow-exporter/workflow-exporter/blocks/correlate"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// The engine's lists of the status page (docs/status.md): lapsed locks and
// redeliveries come from the tasks this collection listed anyway (the
// in-flight view of the joins); the tasks whose retries ran out need one
// bounded reading of their own, and only while the engine has some.

// exhaustedTask is a task whose retries ran out, with its incident's time.
type exhaustedTask struct {
	incident  time.Time
	obs       taskObs
	suspended bool
}

// exhaustedRequest asks for the oldest failedExternalTask incidents with
// their tasks, at most max (the page's status.max_items).
type exhaustedRequest struct {
	probeRead
	max int
}

// reportStatus hands the engine's lists to the collection's status sink,
// if the page is on.
func (run *collectionRun) reportStatus(rd *tasksRead) error {
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
	for _, g := range rd.incidents.groups {
		if g.key.typ == camunda.IncidentFailedExternalTask {
			failed += int(g.n)
		}
	}
	var exhausted []collectors.Item
	if failed > 0 && !hide {
		tasks, err := c.e.reader.readExhausted(run.ctx, exhaustedRequest{probeRead: run.at, max: sink.MaxItems()})
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tenant, topic := splitKey(t.obs.topic)
			it := run.taskItem(correlate.Task{ID: t.obs.id, Topic: topic, Tenant: tenant, WorkerID: t.obs.worker,
				ProcessInstanceID: t.obs.pi, ActivityID: t.obs.activity, BusinessKey: t.obs.businessKey}, t.incident)
			it.TaskState = vocab.StateRetriesExhausted
			if t.suspended {
				it.TaskState = vocab.StateSuspended
			}
			exhausted = append(exhausted, it)
		}
	}
	add(vocab.KindRetriesExhausted, exhausted, failed, false)
	if c.st.failureGroups.by != nil {
		sink.Add(run.st.failureGroups.list(vocab.KindTaskFailureGroups, c.e.name, true, hide, run.engineNow))
		sink.Add(incidentGroups(vocab.KindIncidentGroups, c.e.name, rd.incidents.messages, c.e.cfg.FailureSignatureLimit,
			rd.incidents.messagesCut, hide, run.engineNow))
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
