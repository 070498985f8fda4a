package enginedb

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// processInstancesSQL is the engine's process definition statistics query
// (Statistics.xml: every definition, left joined with the executions that
// are process instances, ID_ = PROC_INST_ID_), summed per key.
const processInstancesSQL = `SELECT d.key_, count(e.id_)
FROM %[1]sact_re_procdef d LEFT JOIN %[1]sact_ru_execution e ON e.proc_def_id_ = d.id_ AND e.id_ = e.proc_inst_id_
GROUP BY d.key_`

// processesRow is a row of processInstancesSQL.
type processesRow struct {
	Key string
	N   int64
}

// ReadProcesses reads the running process instances per process definition
// key, as GET /process-definition/statistics counts them.
func (r *Reader) ReadProcesses(ctx context.Context, _ reading.ProcessesRequest) (map[string]int64, error) {
	out := map[string]int64{}
	err := r.read(ctx, vocab.CollectorCamundaProcesses, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := collectRows(ctx, tx, r, "reading act_ru_execution", pgx.RowToStructByPos[processesRow], r.keyedBy(definitionKeyColumn, fmt.Sprintf(processInstancesSQL, r.prefix)))
		for _, row := range rows {
			out[row.Key] += row.N
		}
		return err
	})
	return out, err
}
