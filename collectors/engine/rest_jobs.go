package engine

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/camunda"
)

// readJobs reads the jobs aspect. Concurrently: the count of jobs with no
// retries left, the count of executable jobs (the engine's executable
// filter: retries left, due date null or past, process instance not
// suspended; plus active: the job itself not suspended), and the job log
// entries new since the previous reading. Then the jobs of each non-zero
// count (at most max_listed_tasks each, by id), grouped by process
// definition key, the rest under "other". The oldest executable job is the
// earliest due date (or creation, for a job without one) among the listed
// ones: exact while every executable job is listed, a lower bound of the
// age beyond (the list endpoint cannot sort by creation).
func (r *restReader) readJobs(ctx context.Context, rq jobsRequest) (*jobsRead, error) {
	if err := r.perms.Authorized(ctx, nameJobs); err != nil {
		return nil, err
	}
	out := &jobsRead{now: rq.now}
	qExhausted := camunda.JobQuery{Retries: camunda.RetriesNone}
	qExecutable := camunda.JobQuery{Executable: true, Suspension: camunda.SuspensionActive}
	var nExhausted, nExecutable int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.concurrency)
	g.Go(func() (err error) { nExhausted, err = r.client.CountJobs(gctx, qExhausted); return err })
	g.Go(func() (err error) { nExecutable, err = r.client.CountJobs(gctx, qExecutable); return err })
	g.Go(func() error {
		if !rq.level.ReadsTaskLog() {
			return nil // no job log below history level full
		}
		entries, cut, err := readLog(gctx, r.pageSize, rq.log,
			func(ctx context.Context, p camunda.Page) ([]camunda.JobLogEntry, error) {
				p.Sort = camunda.Sort{By: camunda.JobLogSortTimestamp, Order: camunda.Descending}
				return r.client.ListJobLog(ctx, p)
			},
			func(e camunda.JobLogEntry) (string, time.Time) { return e.ID, e.Timestamp.Time })
		out.logCut = cut
		for _, e := range entries {
			out.log = append(out.log, r.jobLogEntryOf(e))
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
				r.pageSize, rq.budget,
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
	if out.exhausted, err = r.groupJobs(ctx, exhausted, nExhausted); err != nil {
		return nil, err
	}
	if out.executable, err = r.groupJobs(ctx, executable, nExecutable); err != nil {
		return nil, err
	}
	for _, j := range executable {
		due := j.DueDate
		if due == nil {
			due = j.CreateTime
		}
		if due == nil {
			r.noJobCreateTime.set(rq.version, nil)
			continue
		}
		if out.oldestDue.IsZero() || due.Before(out.oldestDue) {
			out.oldestDue = due.Time
		}
	}
	out.noCreateTime = r.noJobCreateTime.in(rq.version)
	return out, nil
}

func (r *restReader) jobLogEntryOf(e camunda.JobLogEntry) jobLogEntry {
	return jobLogEntry{id: e.ID, key: r.keyOf(e.TenantID, e.ProcessDefinitionKey), ts: e.Timestamp.Time,
		jobID: e.JobID, pi: e.ProcessInstanceID, host: e.Hostname, message: e.JobExceptionMessage,
		kind: logKindOfFlags(e.FailureLog, e.SuccessLog, e.DeletionLog)}
}

// groupJobs groups listed jobs by process definition key in the order of
// their first job; of n jobs, those beyond the list go to "other".
func (r *restReader) groupJobs(ctx context.Context, jobs []camunda.Job, n int64) ([]jobGroup, error) {
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
	var out []jobGroup
	index := map[string]int{}
	for _, j := range jobs {
		key := j.ProcessDefinitionKey
		if key == "" {
			key = keys[j.ProcessDefinitionID]
		}
		key = r.keyOf(j.TenantID, key)
		if i, ok := index[key]; ok {
			out[i].n++
		} else {
			index[key] = len(out)
			out = append(out, jobGroup{key: key, n: 1})
		}
	}
	if rest := n - int64(len(jobs)); rest > 0 {
		out = append(out, jobGroup{key: labellimit.Other, n: rest, folded: true})
	}
	return out, nil
}
