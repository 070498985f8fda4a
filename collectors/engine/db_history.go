package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// historySQL reads the history log entries since $1, newest first. It is
// the one engine query whose cost would grow with the history without an
// index (the engine creates none on TIMESTAMP_).
const historySQL = `SELECT id_, timestamp_, coalesce(ext_task_id_, ''), coalesce(topic_name_, ''), coalesce(worker_id_, ''), state_,
  coalesce(act_id_, ''), coalesce(act_inst_id_, ''), coalesce(root_proc_inst_id_, ''),
  coalesce(proc_inst_id_, ''), CASE WHEN state_ = 1 THEN coalesce(left(error_msg_, 4096), '') ELSE '' END
FROM %sact_hi_ext_task_log WHERE timestamp_ >= $1::timestamp
ORDER BY timestamp_ DESC, id_ LIMIT $2`

// History log states: the state_ of act_hi_ext_task_log (ExternalTaskState
// in the engine) and the job_state_ of act_hi_job_log (JobState) share
// these codes.
const (
	logStateCreated   = 0
	logStateFailed    = 1
	logStateSucceeded = 2
	logStateDeleted   = 3
)

// logKindOf is the kind of a history log entry by its state (NULL and
// unknown codes read as a creation, as the engine writes them).
func logKindOf(state *int32) logKind {
	switch {
	case state == nil:
		return logCreation
	case *state == logStateFailed:
		return logFailure
	case *state == logStateSucceeded:
		return logSuccess
	case *state == logStateDeleted:
		return logDeletion
	}
	return logCreation
}

// historyRow is a row of historySQL.
type historyRow struct {
	ID                    string
	Timestamp             time.Time
	TaskID, Topic, Worker string
	State                 *int32
	Act, ActInst, RootPI  string
	PI, Message           string
}

// history reads the history log entries of the request's range, newest
// first, at most max_history_entries.
func (r *dbReader) history(ctx context.Context, tx pgx.Tx, hr historyRequest) (out historyRead, err error) {
	out.entries, out.cut, err = readLogRange(ctx, tx, r, "act_hi_ext_task_log", historySQL, hr,
		func(row historyRow) historyEntry {
			return historyEntry{id: row.ID, taskID: row.TaskID, topic: row.Topic, worker: row.Worker,
				activity: row.Act, actInst: row.ActInst, rootPI: row.RootPI, pi: row.PI, message: row.Message,
				ts: r.instant(row.Timestamp), kind: logKindOf(row.State)}
		})
	return out, err
}

// readLogRange reads the entries of a history log table (the external-task
// log, the job log) stamped in the request's range, newest first, at most
// max_history_entries (cut: more were there), each row of sql (a format
// for the table prefix, with the range's start and a limit as arguments)
// as R, converted by entry.
func readLogRange[R, E any](ctx context.Context, tx pgx.Tx, r *dbReader, table, sql string, hr historyRequest,
	entry func(R) E) (entries []E, cut bool, err error) {
	// One more than max_history_entries tells a cut reading from one that
	// ends exactly there.
	rows, err := collectRows(ctx, tx, r, "reading "+table, pgx.RowToStructByPos[R], fmt.Sprintf(sql, r.prefix), r.wall(hr.from), hr.max+1)
	if err != nil {
		return nil, false, err
	}
	if len(rows) > hr.max {
		rows, cut = rows[:hr.max], true
	}
	for _, row := range rows {
		entries = append(entries, entry(row))
	}
	return entries, cut, nil
}

// catchRow is an error catch event's row of act_hi_actinst.
type catchRow struct {
	ID, RootPI string
	Start      time.Time
}

// bpmnEvidence looks up what tells a BPMN error apart for the new deletion
// entries (bpmn.go): which of their tasks' activity instances completed
// their scope (by primary key), and the error catch events started around
// them (ACT_HI_ACTINST's index on START_TIME_).
func (r *dbReader) bpmnEvidence(ctx context.Context, tx pgx.Tx, dels []historyEntry) (bpmnEvidence, error) {
	ev := bpmnEvidence{scopeCompleted: map[string]bool{}}
	if len(dels) == 0 {
		return ev, nil
	}
	ids := make([]string, 0, len(dels))
	for _, e := range dels {
		ids = append(ids, e.actInst)
	}
	completed, err := collectRows(ctx, tx, r, "reading act_hi_actinst", pgx.RowTo[string],
		`SELECT id_ FROM `+r.prefix+`act_hi_actinst WHERE id_ = ANY($1) AND act_inst_state_ = $2`, ids, actInstScopeComplete)
	if err != nil {
		return ev, err
	}
	for _, id := range completed {
		ev.scopeCompleted[id] = true
	}
	first, last := deletionSpan(dels)
	catches, err := collectRows(ctx, tx, r, "reading act_hi_actinst", pgx.RowToStructByPos[catchRow],
		`SELECT id_, coalesce(root_proc_inst_id_, ''), start_time_ FROM `+r.prefix+`act_hi_actinst
WHERE act_type_ = ANY($1) AND start_time_ >= $2::timestamp AND start_time_ <= $3::timestamp
ORDER BY id_`, []string{activityBoundaryError, activityErrorStartEvent}, r.wall(first.Add(-catchWindow)), r.wall(last.Add(catchWindow)))
	if err != nil {
		return ev, err
	}
	for _, c := range catches {
		ev.catches = append(ev.catches, catchEvent{id: c.ID, rootPI: c.RootPI, start: r.instant(c.Start)})
	}
	return ev, nil
}

// actInstScopeComplete is ActivityInstanceState.SCOPE_COMPLETE in the
// engine: an activity instance that ended its scope.
const actInstScopeComplete = 1
