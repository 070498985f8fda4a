package enginedb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
)

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
func logKindOf(state *int32) reading.LogKind {
	switch {
	case state == nil:
		return reading.LogCreation
	case *state == logStateFailed:
		return reading.LogFailure
	case *state == logStateSucceeded:
		return reading.LogSuccess
	case *state == logStateDeleted:
		return reading.LogDeletion
	}
	return reading.LogCreation
}

// historyRow is a row of capability.ExternalTaskLogSQL.
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
func (r *Reader) history(ctx context.Context, tx pgx.Tx, hr reading.HistoryRequest) (out reading.HistoryRead, err error) {
	out.Entries, out.Cut, err = readLogRange(ctx, tx, r, "act_hi_ext_task_log", r.keyed(capability.ExternalTaskLogSQL), hr,
		func(row historyRow) reading.HistoryEntry {
			return reading.HistoryEntry{ID: row.ID, TaskID: row.TaskID, Topic: row.Topic, Worker: row.Worker,
				Activity: row.Act, ActInst: row.ActInst, RootPI: row.RootPI, PI: row.PI, Message: row.Message,
				TS: r.instant(row.Timestamp), Kind: logKindOf(row.State)}
		})
	return out, err
}

// readLogRange reads the entries of a history log table (the external-task
// log, the job log) stamped in the request's range, newest first, at most
// max_history_entries (cut: more were there), each row of sql (a format
// for the table prefix, with the range's start, its end and a limit as
// arguments) as R, converted by entry; extra are the query's further
// arguments ($4...).
func readLogRange[R, E any](ctx context.Context, tx pgx.Tx, r *Reader, table, sql string, hr reading.HistoryRequest,
	entry func(R) E, extra ...any) (entries []E, cut bool, err error) {
	// One more than max_history_entries tells a cut reading from one that
	// ends exactly there.
	from, to := r.faceRange(hr)
	args := append([]any{from, to, hr.Max + 1}, extra...)
	rows, err := collectRows(ctx, tx, r, "reading "+table, pgx.RowToStructByPos[R], fmt.Sprintf(sql, r.prefix), args...)
	if err != nil {
		return nil, false, err
	}
	if len(rows) > hr.Max {
		rows, cut = rows[:hr.Max], true
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
// entries (bpmn.go in collectors/engine): which of their tasks' activity
// instances completed their scope (by primary key), and the error catch events
// started around them (ACT_HI_ACTINST's index on START_TIME_).
func (r *Reader) bpmnEvidence(ctx context.Context, tx pgx.Tx, dels []reading.HistoryEntry, max int) (reading.BPMNEvidence, error) {
	ev := reading.BPMNEvidence{ScopeCompleted: map[string]bool{}}
	if len(dels) == 0 {
		return ev, nil
	}
	ids := make([]string, 0, len(dels))
	for _, e := range dels {
		ids = append(ids, e.ActInst)
	}
	completed, err := collectRows(ctx, tx, r, "reading act_hi_actinst", pgx.RowTo[string],
		`SELECT id_ FROM `+r.prefix+`act_hi_actinst WHERE id_ = ANY($1) AND act_inst_state_ = $2`, ids, actInstScopeComplete)
	if err != nil {
		return ev, err
	}
	for _, id := range completed {
		ev.ScopeCompleted[id] = true
	}
	first, last := reading.DeletionSpan(dels)
	if ev.Catches, err = r.catches(ctx, tx, first.Add(-reading.CatchWindow), last.Add(reading.CatchWindow), max); err != nil {
		return ev, err
	}
	return ev, nil
}

// actInstScopeComplete is ActivityInstanceState.SCOPE_COMPLETE in the
// engine: an activity instance that ended its scope.
const actInstScopeComplete = 1

// activitiesSQL reads the activity instances of the types $4 that ended
// from $1 to before $2, newest first: ACT_HI_ACTINST's index on END_TIME_ (the
// engine's ACT_IDX_HI_ACT_INST_END) serves it.
const activitiesSQL = `SELECT id_, coalesce(act_id_, ''), coalesce(proc_def_id_, ''), coalesce(root_proc_inst_id_, ''), start_time_, end_time_,
  coalesce(act_inst_state_, 0), coalesce(tenant_id_, '')
FROM %sact_hi_actinst WHERE end_time_ >= $1::timestamp AND end_time_ < $2::timestamp AND act_type_ = ANY($4)
ORDER BY end_time_ DESC, id_ LIMIT $3`

// activityRow is a row of activitiesSQL.
type activityRow struct {
	ID, Act, Def, RootPI string
	Start, End           time.Time
	State                int32
	Tenant               string
}

// actInstCanceled is ActivityInstanceState.CANCELED in the engine.
const actInstCanceled = 2

// activities reads the activity instances of the request's types that
// ended in its range, newest first, at most max_history_entries.
func (r *Reader) activities(ctx context.Context, tx pgx.Tx, rq reading.TasksRequest) (out reading.ActivitiesRead, err error) {
	out.Entries, out.Cut, err = readLogRange(ctx, tx, r, "act_hi_actinst", activitiesSQL, rq.Activities,
		func(row activityRow) reading.ActivityEntry {
			return reading.ActivityEntry{ID: row.ID, Activity: row.Act, DefID: row.Def, RootPI: row.RootPI, Tenant: row.Tenant,
				Start: r.instant(row.Start), End: r.instant(row.End),
				Canceled: row.State == actInstCanceled, CompleteScope: row.State == actInstScopeComplete}
		}, rq.ActTypes)
	return out, err
}

// CatchEvents implements reading.Reader: the error catch events started
// between from and to (ACT_HI_ACTINST's index on START_TIME_), in a
// transaction of their own (a catch event commits with the deletion it
// catches, so any snapshot that shows the deletion shows it).
func (r *Reader) CatchEvents(ctx context.Context, from, to time.Time, max int) (out []reading.CatchEvent, err error) {
	err = r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		out, err = r.catches(ctx, tx, from, to, max)
		return err
	})
	return out, err
}

// catches reads the error catch events started between from and to.
func (r *Reader) catches(ctx context.Context, tx pgx.Tx, from, to time.Time, max int) ([]reading.CatchEvent, error) {
	rows, err := collectRows(ctx, tx, r, "reading act_hi_actinst", pgx.RowToStructByPos[catchRow],
		`SELECT id_, coalesce(root_proc_inst_id_, ''), start_time_ FROM `+r.prefix+`act_hi_actinst
WHERE act_type_ = ANY($1) AND start_time_ >= $2::timestamp AND start_time_ <= $3::timestamp
ORDER BY id_ LIMIT $4`, []string{reading.ActivityBoundaryError, reading.ActivityErrorStartEvent}, r.wall(from), r.wall(to), max)
	if err != nil {
		return nil, err
	}
	out := make([]reading.CatchEvent, 0, len(rows))
	for _, c := range rows {
		out = append(out, reading.CatchEvent{ID: c.ID, RootPI: c.RootPI, Start: r.instant(c.Start)})
	}
	return out, nil
}

// HistoryLevel implements reading.Reader: the engine's historyLevel property
// (the id of its history level), in a transaction of its own. A role that may
// not read act_ge_property gets an unknown level, never a failed collection,
// and the next collection asks again.
func (r *Reader) HistoryLevel(ctx context.Context, _ reading.LevelFinding) (reading.LevelFinding, error) {
	var value string
	err := r.db.ReadOnly(ctx, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT value_ FROM `+r.prefix+capability.HistoryLevelTable+` WHERE name_ = 'historyLevel'`).Scan(&value)
	})
	if ctx.Err() != nil {
		return reading.LevelFinding{}, ctx.Err()
	}
	if err != nil {
		return reading.LevelFinding{From: reading.LevelFromProperty,
			Why: fmt.Sprintf("%s: cannot read %s%s (%v): GRANT SELECT ON %s to the exporter's role", r.key, r.prefix, capability.HistoryLevelTable, err, capability.HistoryLevelTable)}, nil
	}
	found := reading.LevelFinding{Level: capability.LevelOfProperty(value), From: reading.LevelFromProperty, Final: true}
	if found.Level == capability.LevelUnknown {
		found.Why = fmt.Sprintf("a custom history level (id %s): what it writes cannot be told; set camunda[].history_level", value)
	}
	return found, nil
}
