package engine

import (
	"context"

	"github.com/workflow-exporter/workflow-exporter/camunda"
)

// readCleanup reads the history aspect over REST: the cleanable process
// instance report (paged, only definitions with finished instances, at
// most max_listed_tasks entries: the report has an entry per definition
// version), the cleanup's configuration and its jobs. Three requests plus
// one per further page of the report.
func (r *restReader) readCleanup(ctx context.Context, rq cleanupRequest) (*cleanupRead, error) {
	if err := r.perms.Authorized(ctx, nameHistory); err != nil {
		return nil, err
	}
	report, _, err := camunda.Collect(ctx, camunda.Page{}, r.pageSize, rq.budget,
		func(ctx context.Context, p camunda.Page) ([]camunda.CleanableReportEntry, error) {
			return r.client.CleanableProcessInstanceReport(ctx, p)
		})
	if err != nil {
		return nil, err
	}
	out := &cleanupRead{perKey: map[string]finishedCounts{}}
	for _, e := range report {
		k := r.keyOf(e.TenantID, e.ProcessDefinitionKey)
		n := out.perKey[k]
		n.finished += e.FinishedCount
		n.cleanable += e.CleanableCount
		if e.HistoryTimeToLive == nil {
			n.withoutTTL += e.FinishedCount
		}
		out.perKey[k] = n
	}
	if err := readCleanupState(ctx, r.client, out); err != nil {
		return nil, err
	}
	jobs, err := r.client.HistoryCleanupJobs(ctx)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		out.jobs++
		if cleanupJobFailing(j.Retries, j.ExceptionMessage != "") {
			out.failing++
		}
	}
	return out, nil
}

// readCleanupState reads the cleanup's switch, which only the REST API
// knows (the engine's configuration), in both modes.
func readCleanupState(ctx context.Context, client *camunda.Client, out *cleanupRead) error {
	cfg, err := client.HistoryCleanupConfig(ctx)
	if err != nil {
		return err
	}
	out.enabled = cfg.Enabled
	return nil
}

// cleanupJobFailing: a cleanup job whose last run threw, or out of retries.
func cleanupJobFailing(retries int, exception bool) bool { return exception || retries <= 0 }
