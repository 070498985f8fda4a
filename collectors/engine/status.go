package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors"
	"github.com/workflow-exporter/workflow-exporter/collectors/correlate"
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

// exhaustedReader lists the oldest failedExternalTask incidents with their
// tasks, at most n; both readers implement it.
type exhaustedReader interface {
	exhausted(ctx context.Context, n int) ([]exhaustedTask, error)
}

// reportStatus hands the engine's lists to the collection's status sink,
// if the page is on.
func (run *collectionRun) reportStatus(rd *engineRead) error {
	sink := collectors.SinkFrom(run.ctx)
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
		r, ok := c.reader.(exhaustedReader)
		if !ok {
			return fmt.Errorf("camunda: the engine reader cannot list exhausted tasks")
		}
		tasks, err := r.exhausted(run.ctx, sink.MaxItems())
		if err != nil {
			return err
		}
		for _, t := range tasks {
			it := run.taskItem(correlate.Task{ID: t.obs.id, Topic: t.obs.topic, WorkerID: t.obs.worker,
				ProcessInstanceID: t.obs.pi, ActivityID: t.obs.activity, BusinessKey: t.obs.businessKey}, t.incident)
			it.TaskState = vocab.StateRetriesExhausted
			if t.suspended {
				it.TaskState = vocab.StateSuspended
			}
			exhausted = append(exhausted, it)
		}
	}
	add(vocab.KindRetriesExhausted, exhausted, failed, false)
	return nil
}

// taskItem is one task of the engine as the page shows it; since is when
// its trouble started, by the engine's clock.
func (run *collectionRun) taskItem(t correlate.Task, since time.Time) collectors.Item {
	it := collectors.Item{Engine: run.c.e.name, Topic: t.Topic, ExternalTaskID: t.ID, ProcessInstanceID: t.ProcessInstanceID,
		BusinessKey: t.BusinessKey, ActivityID: t.ActivityID, WorkerID: t.WorkerID, TaskState: string(t.State)}
	if !since.IsZero() {
		s := since.UTC()
		it.Since = &s
		it.AgeSeconds = max(0, run.engineNow.Sub(since).Seconds())
	}
	return it
}

// exhausted lists the oldest failedExternalTask incidents (one request),
// then their tasks by id (one request per 100 ids: the ids travel in the
// URL).
func (r *restReader) exhausted(ctx context.Context, n int) ([]exhaustedTask, error) {
	incs, err := r.client.ListIncidents(ctx, camunda.IncidentQuery{IncidentType: camunda.IncidentFailedExternalTask},
		camunda.Page{MaxResults: min(n, r.pageSize), Sort: camunda.Sort{By: camunda.IncidentSortTimestamp, Order: camunda.Ascending}})
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
	out := make([]exhaustedTask, 0, len(incs))
	for _, in := range incs {
		t, ok := tasks[in.Configuration]
		if !ok {
			continue // resolved or deleted between the two requests
		}
		out = append(out, exhaustedTask{incident: in.IncidentTimestamp.Time, obs: obsOf(t), suspended: t.Suspended})
	}
	return out, nil
}

// exhaustedSQL is the engine-database twin of the two requests above: the
// oldest failedExternalTask incidents (act_ru_incident holds open incidents
// only) with their task and business key.
const exhaustedSQL = `SELECT i.incident_timestamp_, t.id_, coalesce(t.topic_name_, ''), coalesce(t.worker_id_, ''),
  coalesce(t.proc_inst_id_, ''), coalesce(t.act_id_, ''), coalesce(pi.business_key_, ''), t.suspension_state_ = 2
FROM %[1]sact_ru_incident i JOIN %[1]sact_ru_ext_task t ON t.id_ = i.configuration_
  LEFT JOIN %[1]sact_ru_execution pi ON pi.id_ = t.proc_inst_id_
WHERE i.incident_type_ = 'failedExternalTask'
ORDER BY i.incident_timestamp_, i.id_
LIMIT $1`

func (r *engineDBReader) exhausted(ctx context.Context, n int) ([]exhaustedTask, error) {
	var out []exhaustedTask
	err := r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, fmt.Sprintf(exhaustedSQL, r.prefix), n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e exhaustedTask
			var ts time.Time
			if err := rows.Scan(&ts, &e.obs.id, &e.obs.topic, &e.obs.worker, &e.obs.pi, &e.obs.activity, &e.obs.businessKey, &e.suspended); err != nil {
				return err
			}
			e.incident = r.instant(ts)
			out = append(out, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("%s: listing exhausted tasks: %w", r.key, err)
	}
	return out, nil
}
