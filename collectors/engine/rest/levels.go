package rest

import (
	"context"
	"net/http"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// HistoryLevel finds the level from evidence in the history (the REST API
// does not show the engine's setting): an external task log entry proves
// full, a variable instance at least audit, an activity instance at least
// activity. Evidence only grows, so each collection asks only what could
// raise the level found before: at most one request at audit, two at
// activity, three while nothing is seen, none once full. An empty history
// also means a user without READ_HISTORY; while the engine holds external
// tasks, an empty activity history reads as none (their activity instances
// would be there otherwise), and with no task at all as unknown.
func (r *Reader) HistoryLevel(ctx context.Context, prev reading.LevelFinding) (reading.LevelFinding, error) {
	has := func(path string) (bool, error) {
		ok, err := r.client.HistoryHasEntries(ctx, path)
		if camunda.IsStatus(err, http.StatusNotFound) {
			return false, nil // a fork without the list: no evidence
		}
		return ok, err
	}
	found := reading.LevelFinding{From: reading.LevelFromEvidence}
	full, err := has(camunda.HistoryExternalTaskLog)
	if err != nil {
		return prev, err
	}
	if full {
		found.Level, found.Final = capability.LevelFull, true
		return found, nil
	}
	seen := prev.Level
	if seen < capability.LevelActivity {
		ok, err := has(camunda.HistoryActivityInstances)
		if err != nil {
			return prev, err
		}
		if !ok {
			n, err := r.client.CountExternalTasks(ctx, camunda.ExternalTaskQuery{})
			if err != nil {
				return prev, err
			}
			if n == 0 {
				found.Why = "the history shows nothing and the engine holds no external task: nothing ran yet, history level none, or a user without READ_HISTORY"
				return found, nil
			}
			found.Level = capability.LevelNone
			found.Why = "the history shows no activity instance while the engine holds external tasks: history level none, or a user without READ_HISTORY on the process definitions"
			return found, nil
		}
		seen = capability.LevelActivity
	}
	if seen < capability.LevelAudit {
		ok, err := has(camunda.HistoryVariableInstances)
		if err != nil {
			return prev, err
		}
		if ok {
			seen = capability.LevelAudit
		}
	}
	found.Level = seen
	found.Why = "the external task log is empty: history level below full (or no external task created yet), or a user without READ_HISTORY"
	if seen == capability.LevelActivity {
		found.Why = "the history shows activity instances but no variable instance and no external task log entry: history level activity (or audit with processes without variables), or a user without READ_HISTORY"
	}
	return found, nil
}
