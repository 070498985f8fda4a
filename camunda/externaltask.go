package camunda

import (
	"context"
	"time"
)

// ExternalTaskQuery filters GET /external-task and /external-task/count.
// Zero values mean "no filter"; see LockFilter for why the boolean filters
// are enums. The *In lists travel in the URL: keep them to about 100 ids per
// call (longer queries are refused before sending). Counts over disjoint id
// batches can simply be summed.
type ExternalTaskQuery struct {
	TopicName  string
	WorkerID   string
	Lock       LockFilter
	Retries    RetryFilter
	Suspension SuspensionFilter
	// LockExpirationBefore/After compare with the lock expiration time in
	// the engine's database. Tasks that were never locked have none and
	// match neither.
	LockExpirationBefore time.Time
	LockExpirationAfter  time.Time
	ExternalTaskIDIn     []string
	ProcessInstanceIDIn  []string
	ProcessDefinitionID  string
	ActivityIDIn         []string
	TenantIDIn           []string
}

func (q ExternalTaskQuery) encode(v params) {
	v.set("topicName", q.TopicName)
	v.set("workerId", q.WorkerID)
	q.Lock.encode(v)
	q.Retries.encode(v)
	q.Suspension.encode(v)
	v.time("lockExpirationBefore", q.LockExpirationBefore)
	v.time("lockExpirationAfter", q.LockExpirationAfter)
	v.list("externalTaskIdIn", q.ExternalTaskIDIn)
	v.list("processInstanceIdIn", q.ProcessInstanceIDIn)
	v.set("processDefinitionId", q.ProcessDefinitionID)
	v.list("activityIdIn", q.ActivityIDIn)
	v.list("tenantIdIn", q.TenantIDIn)
}

// Sort keys accepted by the external-task list (createTime needs 7.21+).
const (
	ExternalTaskSortID                   = "id"
	ExternalTaskSortLockExpirationTime   = "lockExpirationTime"
	ExternalTaskSortProcessInstanceID    = "processInstanceId"
	ExternalTaskSortProcessDefinitionID  = "processDefinitionId"
	ExternalTaskSortProcessDefinitionKey = "processDefinitionKey"
	ExternalTaskSortTenantID             = "tenantId"
	ExternalTaskSortPriority             = "taskPriority"
	ExternalTaskSortCreateTime           = "createTime"
)

// ExternalTask is one element of GET /external-task.
type ExternalTask struct {
	ID        string `json:"id"`
	TopicName string `json:"topicName"`
	// WorkerID is kept after a failure (the task then sits in retry
	// backoff with a lock expiration of now+retryTimeout); empty when the
	// task was never fetched.
	WorkerID string `json:"workerId"`
	// LockExpirationTime is nil when the task was never locked.
	LockExpirationTime *Time `json:"lockExpirationTime"`
	// Retries is nil until a worker reports the first failure.
	Retries                     *int   `json:"retries"`
	ErrorMessage                string `json:"errorMessage"`
	Suspended                   bool   `json:"suspended"`
	Priority                    int64  `json:"priority"`
	ActivityID                  string `json:"activityId"`
	ActivityInstanceID          string `json:"activityInstanceId"`
	ExecutionID                 string `json:"executionId"`
	ProcessInstanceID           string `json:"processInstanceId"`
	ProcessDefinitionID         string `json:"processDefinitionId"`
	ProcessDefinitionKey        string `json:"processDefinitionKey"`
	ProcessDefinitionVersionTag string `json:"processDefinitionVersionTag"`
	TenantID                    string `json:"tenantId"`
	BusinessKey                 string `json:"businessKey"`
	// CreateTime is only returned by Camunda 7.24+ (and forks that carry
	// it); nil otherwise.
	CreateTime *Time `json:"createTime,omitempty"`
}

// CountExternalTasks returns the number of external tasks matching q.
func (c *Client) CountExternalTasks(ctx context.Context, q ExternalTaskQuery) (int64, error) {
	return getCount(ctx, c, "/external-task/count", q)
}

// ListExternalTasks returns one page of external tasks matching q.
func (c *Client) ListExternalTasks(ctx context.Context, q ExternalTaskQuery, p Page) ([]ExternalTask, error) {
	return getPage[ExternalTask](ctx, c, "/external-task", q, p)
}

// TopicNames returns the distinct topics of current external tasks, narrowed
// by the filters that are true (false means no filter). A drained topic
// disappears from this list; callers that report per-topic zeros must
// remember topics themselves.
func (c *Client) TopicNames(ctx context.Context, withLockedTasks, withUnlockedTasks, withRetriesLeft bool) ([]string, error) {
	v := newParams()
	v.flag("withLockedTasks", withLockedTasks)
	v.flag("withUnlockedTasks", withUnlockedTasks)
	v.flag("withRetriesLeft", withRetriesLeft)
	var res []string
	if err := c.get(ctx, "/external-task/topic-names", v.Values, &res); err != nil {
		return nil, err
	}
	return res, nil
}
