package rest

import (
	"context"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// ReadCleanup reads the history aspect over REST: the cleanable process
// instance report (paged, only definitions with finished instances, at
// most max_listed_tasks entries: the report has an entry per definition
// version), the cleanup's configuration and its jobs. Three requests plus
// one per further page of the report.
func (r *Reader) ReadCleanup(ctx context.Context, rq reading.CleanupRequest) (*reading.CleanupRead, error) {
	if err := r.perms.Authorized(ctx, vocab.CollectorCamundaHistory); err != nil {
		return nil, err
	}
	report, _, err := camunda.Collect(ctx, camunda.Page{}, r.listPage(), rq.Budget,
		func(ctx context.Context, p camunda.Page) ([]camunda.CleanableReportEntry, error) {
			return r.client.CleanableProcessInstanceReport(ctx, p)
		})
	if err != nil {
		return nil, err
	}
	out := &reading.CleanupRead{PerKey: map[string]reading.FinishedCounts{}}
	for _, e := range report {
		k := r.keyOf(e.TenantID, e.ProcessDefinitionKey)
		n := out.PerKey[k]
		n.Finished += e.FinishedCount
		n.Cleanable += e.CleanableCount
		if e.HistoryTimeToLive == nil {
			n.WithoutTTL += e.FinishedCount
		}
		out.PerKey[k] = n
	}
	if err := reading.ReadCleanupState(ctx, r.client, out); err != nil {
		return nil, err
	}
	jobs, err := r.client.HistoryCleanupJobs(ctx)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		out.Jobs++
		if reading.CleanupJobFailing(j.Retries, j.ExceptionMessage != "") {
			out.Failing++
		}
	}
	return out, nil
}
