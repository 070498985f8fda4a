package camunda

import "context"

// Sort keys accepted by the historic job log list (a subset).
const (
	JobLogSortTimestamp = "timestamp"
)

// JobLogEntry is one element of GET /history/job-log (the fields the
// exporter uses): one per job creation, failed execution, successful
// execution and deletion. Needs history level full.
type JobLogEntry struct {
	ID                   string `json:"id"`
	Timestamp            Time   `json:"timestamp"`
	JobID                string `json:"jobId"`
	ProcessDefinitionKey string `json:"processDefinitionKey"`
	ActivityID           string `json:"activityId"`
	ProcessInstanceID    string `json:"processInstanceId"`
	// JobExceptionMessage is a failure entry's exception message.
	JobExceptionMessage string `json:"jobExceptionMessage"`
	// Hostname is the engine node that ran the job.
	Hostname    string `json:"hostname"`
	CreationLog bool   `json:"creationLog"`
	FailureLog  bool   `json:"failureLog"`
	SuccessLog  bool   `json:"successLog"`
	DeletionLog bool   `json:"deletionLog"`
	TenantID    string `json:"tenantId"`
}

// ListJobLog returns one page of historic job log entries, all kinds. Sort
// by JobLogSortTimestamp, descending, to read the most recent entries
// first; like the external-task log it has no timestamp filter.
func (c *Client) ListJobLog(ctx context.Context, p Page) ([]JobLogEntry, error) {
	return getPage[JobLogEntry](ctx, c, "/history/job-log", noFilter{}, p)
}
