package camunda

import "context"

// IncidentQuery filters GET /incident and /incident/count. The runtime
// incident endpoints only ever return open incidents (a resolved incident is
// deleted from the runtime table and lives on in history), so every result
// here is open; there is no "open" parameter to send.
type IncidentQuery struct {
	// IncidentType is failedJob, failedExternalTask, or a custom type.
	IncidentType           string
	ProcessDefinitionID    string
	ProcessDefinitionKeyIn []string
	ActivityID             string
	FailedActivityID       string
	TenantIDIn             []string
}

// Incident types built into the engine.
const (
	IncidentFailedJob          = "failedJob"
	IncidentFailedExternalTask = "failedExternalTask"
)

func (q IncidentQuery) encode(v params) {
	v.set("incidentType", q.IncidentType)
	v.set("processDefinitionId", q.ProcessDefinitionID)
	v.list("processDefinitionKeyIn", q.ProcessDefinitionKeyIn)
	v.set("activityId", q.ActivityID)
	v.set("failedActivityId", q.FailedActivityID)
	v.list("tenantIdIn", q.TenantIDIn)
}

// Sort keys accepted by the incident list (a subset).
const (
	IncidentSortID        = "incidentId"
	IncidentSortTimestamp = "incidentTimestamp"
	IncidentSortType      = "incidentType"
)

// Incident is one element of GET /incident. It carries the process
// definition id but not its key; see ProcessDefinitionKeys. For
// failedExternalTask incidents Configuration is the external task id.
type Incident struct {
	ID                  string `json:"id"`
	IncidentType        string `json:"incidentType"`
	IncidentTimestamp   Time   `json:"incidentTimestamp"`
	ActivityID          string `json:"activityId"`
	FailedActivityID    string `json:"failedActivityId"`
	ProcessDefinitionID string `json:"processDefinitionId"`
	ProcessInstanceID   string `json:"processInstanceId"`
	ExecutionID         string `json:"executionId"`
	Configuration       string `json:"configuration"`
	IncidentMessage     string `json:"incidentMessage"`
	CauseIncidentID     string `json:"causeIncidentId"`
	RootCauseIncidentID string `json:"rootCauseIncidentId"`
	TenantID            string `json:"tenantId"`
	JobDefinitionID     string `json:"jobDefinitionId"`
	Annotation          string `json:"annotation"`
}

// CountIncidents returns the number of open incidents matching q.
func (c *Client) CountIncidents(ctx context.Context, q IncidentQuery) (int64, error) {
	return getCount(ctx, c, "/incident/count", q)
}

// ListIncidents returns one page of open incidents matching q.
func (c *Client) ListIncidents(ctx context.Context, q IncidentQuery, p Page) ([]Incident, error) {
	return getPage[Incident](ctx, c, "/incident", q, p)
}
