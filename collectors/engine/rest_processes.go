package engine

import (
	"context"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// ReadProcesses reads the running process instances per process definition
// key: one GET /process-definition/statistics, which lists every version of
// every definition with its instance count.
func (r *restReader) ReadProcesses(ctx context.Context, _ reading.ProcessesRequest) (map[string]int64, error) {
	if err := r.perms.Authorized(ctx, nameProcesses); err != nil {
		return nil, err
	}
	stats, err := r.client.ProcessDefinitionStatistics(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, s := range stats {
		out[r.keyOf(s.Definition.TenantID, s.Definition.Key)] += s.Instances
	}
	return out, nil
}
