package camunda

import "context"

// JobQuery filters GET /job and /job/count. Jobs are async continuations and
// timers, not external tasks. The single boolean filters are only sent when
// true; false means "no filter" (the API has no negative form).
type JobQuery struct {
	ProcessDefinitionKey string
	ProcessDefinitionID  string
	ProcessInstanceID    string
	ActivityID           string
	JobDefinitionID      string
	Retries              RetryFilter
	Suspension           SuspensionFilter
	Executable           bool // retries > 0 and due date null or past
	Timers               bool // only timer jobs (not together with Messages)
	Messages             bool // only message jobs (not together with Timers)
	WithException        bool // only jobs that have an exception message
	TenantIDIn           []string
}

func (q JobQuery) encode(v params) {
	v.set("processDefinitionKey", q.ProcessDefinitionKey)
	v.set("processDefinitionId", q.ProcessDefinitionID)
	v.set("processInstanceId", q.ProcessInstanceID)
	v.set("activityId", q.ActivityID)
	v.set("jobDefinitionId", q.JobDefinitionID)
	q.Retries.encode(v)
	q.Suspension.encode(v)
	v.flag("executable", q.Executable)
	v.flag("timers", q.Timers)
	v.flag("messages", q.Messages)
	v.flag("withException", q.WithException)
	v.list("tenantIdIn", q.TenantIDIn)
}

// Sort keys accepted by the job list (a subset).
const (
	JobSortID       = "jobId"
	JobSortDueDate  = "jobDueDate"
	JobSortRetries  = "jobRetries"
	JobSortPriority = "jobPriority"
)

// Job is one element of GET /job.
type Job struct {
	ID                   string `json:"id"`
	JobDefinitionID      string `json:"jobDefinitionId"`
	ProcessInstanceID    string `json:"processInstanceId"`
	ProcessDefinitionID  string `json:"processDefinitionId"`
	ProcessDefinitionKey string `json:"processDefinitionKey"`
	ExecutionID          string `json:"executionId"`
	ExceptionMessage     string `json:"exceptionMessage"`
	FailedActivityID     string `json:"failedActivityId"`
	Retries              int    `json:"retries"`
	DueDate              *Time  `json:"dueDate"`
	Suspended            bool   `json:"suspended"`
	Priority             int64  `json:"priority"`
	TenantID             string `json:"tenantId"`
	CreateTime           *Time  `json:"createTime"`
	BatchID              string `json:"batchId"`
}

// CountJobs returns the number of jobs matching q.
func (c *Client) CountJobs(ctx context.Context, q JobQuery) (int64, error) {
	return getCount(ctx, c, "/job/count", q)
}

// ListJobs returns one page of jobs matching q.
func (c *Client) ListJobs(ctx context.Context, q JobQuery, p Page) ([]Job, error) {
	return getPage[Job](ctx, c, "/job", q, p)
}
