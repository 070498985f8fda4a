package camunda

import "context"

// Sort keys accepted by the historic external-task log list (a subset).
const (
	ExternalTaskLogSortTimestamp = "timestamp"
)

// ExternalTaskLogEntry is one element of GET /history/external-task-log
// (the fields the exporter uses).
type ExternalTaskLogEntry struct {
	ID             string `json:"id"`
	Timestamp      Time   `json:"timestamp"`
	ExternalTaskID string `json:"externalTaskId"`
	TopicName      string `json:"topicName"`
	WorkerID       string `json:"workerId"`
	// ActivityID, ActivityInstanceID and RootProcessInstanceID tie a
	// deletion entry to what the process did (a BPMN error's catch event,
	// or its scope completing).
	ActivityID            string `json:"activityId"`
	ActivityInstanceID    string `json:"activityInstanceId"`
	RootProcessInstanceID string `json:"rootProcessInstanceId"`
	// Retries is the value the failure set (null for creation entries).
	Retries      *int   `json:"retries"`
	ErrorMessage string `json:"errorMessage"`
	// ProcessInstanceID is the task's process instance.
	ProcessInstanceID string `json:"processInstanceId"`
	CreationLog       bool   `json:"creationLog"`
	FailureLog        bool   `json:"failureLog"`
	SuccessLog        bool   `json:"successLog"`
	DeletionLog       bool   `json:"deletionLog"`
	// TenantID is the task's tenant ("" for none).
	TenantID string `json:"tenantId"`
}

// ListExternalTaskLog returns one page of historic external-task log
// entries matching q. Sort by ExternalTaskLogSortTimestamp, descending, to
// read the most recent entries first.
func (c *Client) ListExternalTaskLog(ctx context.Context, q HistoryLogQuery, p Page) ([]ExternalTaskLogEntry, error) {
	return getPage[ExternalTaskLogEntry](ctx, c, "/history/external-task-log", q, p)
}
