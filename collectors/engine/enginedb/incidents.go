package enginedb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/camunda"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

// incidentsSQL groups the open incidents (act_ru_incident holds open ones
// only) by type, process definition key (the definition's id when it is
// gone) and activity, oldest first.
const incidentsSQL = `SELECT coalesce(i.incident_type_, ''), coalesce(i.tenant_id_, ''), coalesce(d.key_, i.proc_def_id_, ''), coalesce(i.activity_id_, ''),
  count(*), min(i.incident_timestamp_)
FROM %[1]sact_ru_incident i LEFT JOIN %[1]sact_re_procdef d ON d.id_ = i.proc_def_id_
GROUP BY 1, 2, 3, 4
ORDER BY 6, 1, 3, 4, 2`

// incidentRow is a row of incidentsSQL.
type incidentRow struct {
	Type, Tenant, Key, Activity string
	N                           int64
	Oldest                      *time.Time
}

// incidents groups the open incidents by type, process definition key and
// activity, oldest first: exact counts whatever their number (the REST
// reader can list only max_listed_tasks of them).
func (r *Reader) incidents(ctx context.Context, tx pgx.Tx) (reading.IncidentRead, error) {
	rows, err := collectRows(ctx, tx, r, "reading act_ru_incident", pgx.RowToStructByPos[incidentRow], fmt.Sprintf(incidentsSQL, r.prefix))
	if err != nil {
		return reading.IncidentRead{}, err
	}
	out := reading.IncidentRead{Oldest: map[string]time.Time{}}
	for _, row := range rows {
		g := reading.IncidentGroup{Key: reading.IncidentKey{Type: row.Type, Key: r.keyOf(row.Tenant, row.Key), Activity: row.Activity}, N: row.N}
		out.Groups = append(out.Groups, g)
		if row.Oldest != nil {
			ts := r.instant(*row.Oldest)
			if prev, ok := out.Oldest[g.Key.Type]; !ok || ts.Before(prev) {
				out.Oldest[g.Key.Type] = ts
			}
		}
	}
	return out, nil
}

// incidentMessagesSQL lists the open incidents with their messages,
// oldest first, one more than the budget ($1) to tell a cut list.
const incidentMessagesSQL = `SELECT coalesce(i.incident_type_, ''), coalesce(i.tenant_id_, ''), coalesce(d.key_, i.proc_def_id_, ''),
  coalesce(left(i.incident_msg_, 4096), ''), coalesce(i.proc_inst_id_, ''), i.incident_timestamp_
FROM %[1]sact_ru_incident i LEFT JOIN %[1]sact_re_procdef d ON d.id_ = i.proc_def_id_
ORDER BY i.incident_timestamp_, i.id_
LIMIT $1`

// incidentMessageRow is a row of incidentMessagesSQL.
type incidentMessageRow struct {
	Type, Tenant, Key, Message, PI string
	TS                             time.Time
}

// incidentMessages reads the open incidents' messages for the incident
// groups, as the REST reader lists them: oldest first, at most budget.
func (r *Reader) incidentMessages(ctx context.Context, tx pgx.Tx, budget int, out *reading.IncidentRead) error {
	rows, err := collectRows(ctx, tx, r, "reading act_ru_incident", pgx.RowToStructByPos[incidentMessageRow], fmt.Sprintf(incidentMessagesSQL, r.prefix), budget+1)
	if err != nil {
		return err
	}
	if len(rows) > budget {
		rows, out.MessagesCut = rows[:budget], true
	}
	for _, row := range rows {
		out.Messages = append(out.Messages, reading.IncidentMessage{Type: row.Type, Key: r.keyOf(row.Tenant, row.Key), Message: row.Message, PI: row.PI, TS: r.instant(row.TS)})
	}
	return nil
}

// incidentTopicsSQL is the oldest failedExternalTask incident ($1) per
// topic: incidents joined with their task by the incident's configuration
// (the task id).
const incidentTopicsSQL = `SELECT t.topic_name_, min(i.incident_timestamp_)
FROM %[1]sact_ru_incident i JOIN %[1]sact_ru_ext_task t ON t.id_ = i.configuration_
WHERE i.incident_type_ = $1
GROUP BY t.topic_name_`

// incidentTopicRow is a row of incidentTopicsSQL.
type incidentTopicRow struct {
	Topic  *string
	Oldest time.Time
}

// incidentTopics reads the oldest failedExternalTask incident of each
// reported topic, exact whatever their number.
func (r *Reader) incidentTopics(ctx context.Context, tx pgx.Tx, out *reading.TasksRead) error {
	rows, err := collectRows(ctx, tx, r, "reading act_ru_incident", pgx.RowToStructByPos[incidentTopicRow],
		r.keyed(fmt.Sprintf(incidentTopicsSQL, r.prefix)), camunda.IncidentFailedExternalTask)
	if err != nil {
		return err
	}
	for _, row := range rows {
		if row.Topic == nil {
			continue
		}
		if tr := out.Topics[*row.Topic]; tr != nil {
			tr.OldestIncident = r.instant(row.Oldest)
		}
	}
	return nil
}

// exhaustedSQL is the engine-database twin of the REST reader's two
// requests (ReadExhausted in collectors/engine/rest): the oldest
// failedExternalTask incidents with their task and business key.
const exhaustedSQL = `SELECT i.incident_timestamp_, t.id_, coalesce(t.topic_name_, ''), coalesce(t.worker_id_, ''),
  coalesce(t.proc_inst_id_, ''), coalesce(t.act_id_, ''), coalesce(pi.business_key_, ''), t.suspension_state_ = 2
FROM %[1]sact_ru_incident i JOIN %[1]sact_ru_ext_task t ON t.id_ = i.configuration_
  LEFT JOIN %[1]sact_ru_execution pi ON pi.id_ = t.proc_inst_id_
WHERE i.incident_type_ = 'failedExternalTask'
ORDER BY i.incident_timestamp_, i.id_
LIMIT $1`

// exhaustedRow is a row of exhaustedSQL.
type exhaustedRow struct {
	Incident                                time.Time
	ID, Topic, Worker, PI, Act, BusinessKey string
	Suspended                               bool
}

// ReadExhausted lists the oldest failedExternalTask incidents with their
// tasks in one query (its own short transaction).
func (r *Reader) ReadExhausted(ctx context.Context, rq reading.ExhaustedRequest) ([]reading.ExhaustedTask, error) {
	var rows []exhaustedRow
	err := r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		res, err := tx.Query(ctx, r.keyed(fmt.Sprintf(exhaustedSQL, r.prefix)), rq.Max)
		if err == nil {
			rows, err = pgx.CollectRows(res, pgx.RowToStructByPos[exhaustedRow])
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: listing exhausted tasks: %w", r.key, err)
	}
	out := make([]reading.ExhaustedTask, 0, len(rows))
	for _, row := range rows {
		out = append(out, reading.ExhaustedTask{Incident: r.instant(row.Incident), Suspended: row.Suspended,
			Obs: reading.TaskObs{ID: row.ID, Topic: row.Topic, Worker: row.Worker, PI: row.PI, Activity: row.Act, BusinessKey: row.BusinessKey}})
	}
	return out, nil
}
