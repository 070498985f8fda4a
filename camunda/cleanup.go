package camunda

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// CleanableReportEntry is one element of GET
// /history/process-definition/cleanable-process-instance-report: one
// version of a process definition with its finished process instances and
// those history cleanup may remove now.
type CleanableReportEntry struct {
	ProcessDefinitionID  string `json:"processDefinitionId"`
	ProcessDefinitionKey string `json:"processDefinitionKey"`
	// HistoryTimeToLive in days; nil: the definition has none, so its
	// finished instances are never cleaned up.
	HistoryTimeToLive *int   `json:"historyTimeToLive"`
	FinishedCount     int64  `json:"finishedProcessInstanceCount"`
	CleanableCount    int64  `json:"cleanableProcessInstanceCount"`
	TenantID          string `json:"tenantId"`
}

// CleanableProcessInstanceReport returns one page of the cleanable process
// instance report, only definitions with finished instances (compact).
func (c *Client) CleanableProcessInstanceReport(ctx context.Context, p Page) ([]CleanableReportEntry, error) {
	return getPage[CleanableReportEntry](ctx, c, "/history/process-definition/cleanable-process-instance-report", compactReport{}, p)
}

// compactReport is the filter of the cleanable report: only definitions
// with finished instances.
type compactReport struct{}

func (compactReport) encode(v params) { v.Set("compact", "true") }

// HistoryCleanupConfiguration is GET /history/cleanup/configuration: the
// current or next batch window (both nil: no window, cleanup runs only when
// triggered) and, from 7.17, whether the node answering participates in
// history cleanup (Enabled nil: the engine does not say).
type HistoryCleanupConfiguration struct {
	BatchWindowStartTime *Time `json:"batchWindowStartTime"`
	BatchWindowEndTime   *Time `json:"batchWindowEndTime"`
	Enabled              *bool `json:"-"`
}

// UnmarshalJSON reads enabled as a boolean or, as the engine's
// documentation shows it, a string.
func (h *HistoryCleanupConfiguration) UnmarshalJSON(b []byte) error {
	type plain HistoryCleanupConfiguration
	var v struct {
		plain
		Enabled json.RawMessage `json:"enabled"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*h = HistoryCleanupConfiguration(v.plain)
	switch strings.Trim(string(v.Enabled), `"`) {
	case "true":
		t := true
		h.Enabled = &t
	case "false":
		f := false
		h.Enabled = &f
	}
	return nil
}

// HistoryCleanupConfig returns the history cleanup's configuration.
func (c *Client) HistoryCleanupConfig(ctx context.Context) (HistoryCleanupConfiguration, error) {
	var res HistoryCleanupConfiguration
	err := c.get(ctx, "/history/cleanup/configuration", nil, &res)
	return res, err
}

// HistoryCleanupJob is one element of GET /history/cleanup/jobs (the
// fields the exporter uses).
type HistoryCleanupJob struct {
	ID               string `json:"id"`
	Retries          int    `json:"retries"`
	ExceptionMessage string `json:"exceptionMessage"`
	DueDate          *Time  `json:"dueDate"`
	Suspended        bool   `json:"suspended"`
}

// HistoryCleanupJobs returns the history cleanup's jobs (one per degree of
// parallelism; none before cleanup was first scheduled, which the engine
// answers with HTTP 404).
func (c *Client) HistoryCleanupJobs(ctx context.Context) ([]HistoryCleanupJob, error) {
	var res []HistoryCleanupJob
	if err := c.get(ctx, "/history/cleanup/jobs", nil, &res); err != nil {
		if IsStatus(err, http.StatusNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return res, nil
}
