package rest

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// ReadJobs reads the jobs aspect. Concurrently: the count of jobs with no
// retries left, the count of executable jobs (the engine's executable
// filter: retries left, due date null or past, process instance not
// suspended; plus active: the job itself not suspended), and the job log
// entries new since the previous reading. Then the jobs of each non-zero
// count (at most max_listed_tasks each, by id), grouped by process
// definition key, the rest under "other". The oldest executable job is the
// earliest due date (or creation, for a job without one) among the listed
// ones: exact while every executable job is listed, a lower bound of the
// age beyond (the list endpoint cannot sort by creation).
func (r *Reader) ReadJobs(ctx context.Context, rq reading.JobsRequest) (*reading.JobsRead, error) {
	if err := r.perms.Authorized(ctx, vocab.CollectorCamundaJobs); err != nil {
		return nil, err
	}
	out := &reading.JobsRead{Now: rq.Now}
	qExhausted := camunda.JobQuery{Retries: camunda.RetriesNone}
	qExecutable := camunda.JobQuery{Executable: true, Suspension: camunda.SuspensionActive}
	var nExhausted, nExecutable int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.concurrency)
	g.Go(func() (err error) { nExhausted, err = r.client.CountJobs(gctx, qExhausted); return err })
	g.Go(func() (err error) { nExecutable, err = r.client.CountJobs(gctx, qExecutable); return err })
	g.Go(func() error {
		if !rq.Level.ReadsTaskLog() {
			return nil // no job log below history level full
		}
		first, next := r.logPages(logJobs)
		entries, cut, err := readLog(gctx, first, next, rq.Log,
			func(ctx context.Context, p camunda.Page) ([]camunda.JobLogEntry, error) {
				p.Sort = camunda.Sort{By: camunda.JobLogSortTimestamp, Order: camunda.Descending}
				return r.client.ListJobLog(ctx, p)
			},
			func(e camunda.JobLogEntry) (string, time.Time) { return e.ID, e.Timestamp.Time })
		out.LogCut = cut
		if err == nil {
			r.noteLog(logJobs, len(entries))
		}
		for _, e := range entries {
			out.Log = append(out.Log, r.jobLogEntryOf(e))
		}
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var exhausted, executable []camunda.Job
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(r.concurrency)
	for _, l := range []struct {
		n   int64
		q   camunda.JobQuery
		dst *[]camunda.Job
	}{{nExhausted, qExhausted, &exhausted}, {nExecutable, qExecutable, &executable}} {
		if l.n == 0 {
			continue
		}
		g.Go(func() (err error) {
			*l.dst, _, err = camunda.Collect(gctx, camunda.Page{Sort: camunda.Sort{By: camunda.JobSortID, Order: camunda.Ascending}},
				r.listPage(), rq.Budget,
				func(ctx context.Context, p camunda.Page) ([]camunda.Job, error) {
					return r.client.ListJobs(ctx, l.q, p)
				})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var err error
	if out.Exhausted, err = r.groupJobs(ctx, exhausted, nExhausted); err != nil {
		return nil, err
	}
	if out.Executable, err = r.groupJobs(ctx, executable, nExecutable); err != nil {
		return nil, err
	}
	for _, j := range executable {
		due := j.DueDate
		if due == nil {
			due = j.CreateTime
		}
		if due == nil {
			r.noJobCreateTime.set(rq.Version, nil)
			continue
		}
		if out.OldestDue.IsZero() || due.Before(out.OldestDue) {
			out.OldestDue = due.Time
		}
	}
	out.NoCreateTime = r.noJobCreateTime.in(rq.Version)
	return out, nil
}

func (r *Reader) jobLogEntryOf(e camunda.JobLogEntry) reading.JobLogEntry {
	return reading.JobLogEntry{ID: e.ID, Key: r.keyOf(e.TenantID, e.ProcessDefinitionKey), TS: e.Timestamp.Time,
		JobID: e.JobID, PI: e.ProcessInstanceID, Host: e.Hostname, Message: e.JobExceptionMessage,
		Kind: logKindOfFlags(e.FailureLog, e.SuccessLog, e.DeletionLog)}
}

// groupJobs groups listed jobs by process definition key in the order of
// their first job; of n jobs, those beyond the list go to "other".
func (r *Reader) groupJobs(ctx context.Context, jobs []camunda.Job, n int64) ([]reading.JobGroup, error) {
	var missing []string
	for _, j := range jobs {
		if j.ProcessDefinitionKey == "" && j.ProcessDefinitionID != "" {
			missing = append(missing, j.ProcessDefinitionID)
		}
	}
	keys, err := r.client.ProcessDefinitionKeys(ctx, missing)
	if err != nil {
		return nil, err
	}
	var out []reading.JobGroup
	index := map[string]int{}
	for _, j := range jobs {
		key := j.ProcessDefinitionKey
		if key == "" {
			key = keys[j.ProcessDefinitionID]
		}
		key = r.keyOf(j.TenantID, key)
		if i, ok := index[key]; ok {
			out[i].N++
		} else {
			index[key] = len(out)
			out = append(out, reading.JobGroup{Key: key, N: 1})
		}
	}
	if rest := n - int64(len(jobs)); rest > 0 {
		out = append(out, reading.JobGroup{Key: labellimit.Other, N: rest, Folded: true})
	}
	return out, nil
}
