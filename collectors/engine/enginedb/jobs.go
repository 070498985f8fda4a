package enginedb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/capability"
	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// Job queries. executableJobsSQL is the engine's job query with
// executable=true (Job.xml: retries left, due date null or not after now,
// no execution or its process instance not suspended) and active=true (the
// job not suspended), grouped by key with the oldest due time (the due
// date, or the creation for a job without one).
const (
	exhaustedJobsSQL = `SELECT coalesce(j.tenant_id_, ''), coalesce(nullif(j.process_def_key_, ''), d.key_, ''), count(*), NULL::timestamp
FROM %[1]sact_ru_job j LEFT JOIN %[1]sact_re_procdef d ON d.id_ = j.process_def_id_
WHERE j.retries_ = 0
GROUP BY 1, 2
ORDER BY min(j.id_)`
	executableJobsSQL = `SELECT coalesce(j.tenant_id_, ''), coalesce(nullif(j.process_def_key_, ''), d.key_, ''), count(*), min(coalesce(j.duedate_, j.create_time_))
FROM %[1]sact_ru_job j LEFT JOIN %[1]sact_re_procdef d ON d.id_ = j.process_def_id_
  LEFT JOIN %[1]sact_ru_execution pi ON pi.id_ = j.process_instance_id_
WHERE j.retries_ > 0 AND (j.duedate_ IS NULL OR j.duedate_ <= $1::timestamp)
  AND (j.execution_id_ IS NULL OR pi.suspension_state_ = 1 OR pi.suspension_state_ IS NULL)
  AND j.suspension_state_ = 1
GROUP BY 1, 2
ORDER BY min(j.id_)`
)

// jobGroupRow is a row of exhaustedJobsSQL and executableJobsSQL.
type jobGroupRow struct {
	Tenant string
	Key    string
	N      int64
	Oldest *time.Time
}

// jobLogRow is a row of capability.JobLogSQL.
type jobLogRow struct {
	ID        string
	Timestamp time.Time
	Tenant    string
	Key       string
	State     *int32
	JobID, PI string
	Host, Msg string
}

// ReadJobs reads the jobs aspect in one read-only transaction: the jobs
// with no retries left and the executable jobs grouped by process
// definition key, in the order of their first job id (the REST reader's
// admission order), and the job log entries of the request's range.
func (r *Reader) ReadJobs(ctx context.Context, rq reading.JobsRequest) (*reading.JobsRead, error) {
	out := &reading.JobsRead{}
	err := r.readNow(ctx, vocab.CollectorCamundaJobs, func(ctx context.Context, tx pgx.Tx, now time.Time) (err error) {
		out.Now = now
		groups := func(query string, args ...any) ([]reading.JobGroup, error) {
			rows, err := collectRows(ctx, tx, r, "reading act_ru_job", pgx.RowToStructByPos[jobGroupRow], fmt.Sprintf(query, r.prefix), args...)
			var gs []reading.JobGroup
			for _, row := range rows {
				if row.Oldest != nil {
					if ts := r.instant(*row.Oldest); out.OldestDue.IsZero() || ts.Before(out.OldestDue) {
						out.OldestDue = ts
					}
				}
				gs = append(gs, reading.JobGroup{Key: r.keyOf(row.Tenant, row.Key), N: row.N})
			}
			return gs, err
		}
		if out.Exhausted, err = groups(exhaustedJobsSQL); err != nil {
			return err
		}
		if out.Executable, err = groups(executableJobsSQL, r.wall(now)); err != nil {
			return err
		}
		if !rq.Level.ReadsTaskLog() {
			return nil // no job log below history level full
		}
		out.Log, out.LogCut, err = readLogRange(ctx, tx, r, "act_hi_job_log", capability.JobLogSQL, rq.Log,
			func(row jobLogRow) reading.JobLogEntry {
				return reading.JobLogEntry{ID: row.ID, Key: r.keyOf(row.Tenant, row.Key), TS: r.instant(row.Timestamp), Kind: logKindOf(row.State),
					JobID: row.JobID, PI: row.PI, Host: row.Host, Message: row.Msg}
			})
		return err
	})
	return out, err
}
