package rest

import (
	"context"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// ReadProcesses reads the running process instances per process definition
// key: one GET /process-definition/statistics, which lists every version of
// every definition with its instance count.
func (r *Reader) ReadProcesses(ctx context.Context, _ reading.ProcessesRequest) (map[string]int64, error) {
	if err := r.perms.Authorized(ctx, vocab.CollectorCamundaProcesses); err != nil {
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
