package camunda

import (
	"context"
	"time"
)

// HistoricActivityInstanceQuery filters GET /history/activity-instance (a
// subset). The engine ignores parameters it does not know (such as
// activityInstanceIdIn, which only some versions have) rather than refusing
// them, so every filter here is one the engines verified in
// test/harness/camundatest and collectors/engine/engine_test.go apply.
//
// The query selects one activity instance by id (activityInstanceId, the
// primary key), not a list of them: no version from 7.19 to 7.24 (nor
// Operaton 1.0) has activityInstanceIdIn, on GET or POST
// (HistoricActivityInstanceQueryDto).
type HistoricActivityInstanceQuery struct {
	ActivityInstanceID  string
	ProcessDefinitionID string
	ActivityID          string
	ActivityType        string
	CompleteScope       bool // only instances that completed their scope
	Unfinished          bool // only instances that have not ended
	StartedAfter        time.Time
	FinishedAfter       time.Time
}

func (q HistoricActivityInstanceQuery) encode(v params) {
	v.set("activityInstanceId", q.ActivityInstanceID)
	v.set("processDefinitionId", q.ProcessDefinitionID)
	v.flag("unfinished", q.Unfinished)
	v.set("activityId", q.ActivityID)
	v.set("activityType", q.ActivityType)
	v.flag("completeScope", q.CompleteScope)
	v.time("startedAfter", q.StartedAfter)
	v.time("finishedAfter", q.FinishedAfter)
}

// Sort keys accepted by the historic activity instance list (a subset).
const (
	ActivityInstanceSortStartTime = "startTime"
	ActivityInstanceSortEndTime   = "endTime"
)

// HistoricActivityInstance is one element of GET /history/activity-instance
// (the fields the exporter uses). Needs history level activity or above.
type HistoricActivityInstance struct {
	ID                    string `json:"id"`
	ActivityID            string `json:"activityId"`
	ActivityType          string `json:"activityType"`
	ProcessDefinitionID   string `json:"processDefinitionId"`
	ProcessInstanceID     string `json:"processInstanceId"`
	RootProcessInstanceID string `json:"rootProcessInstanceId"`
	StartTime             Time   `json:"startTime"`
	EndTime               *Time  `json:"endTime"`
	Canceled              bool   `json:"canceled"`
	CompleteScope         bool   `json:"completeScope"`
	TenantID              string `json:"tenantId"`
}

// ListHistoricActivityInstances returns one page of historic activity
// instances matching q.
func (c *Client) ListHistoricActivityInstances(ctx context.Context, q HistoricActivityInstanceQuery, p Page) ([]HistoricActivityInstance, error) {
	return getPage[HistoricActivityInstance](ctx, c, "/history/activity-instance", q, p)
}
