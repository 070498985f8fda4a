package enginedb

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/workflow-exporter/workflow-exporter/collectors/engine/reading"
	"github.com/workflow-exporter/workflow-exporter/vocab"
)

// CleanableSQL is the cleanable process instance report of the engine's
// default, removal-time-based cleanup strategy, summed per key: every
// finished instance of a deployed definition, those whose removal time has
// come ($1, the database clock in the engine's zone), and those of
// definitions without a time to live. It reads every finished instance:
// it runs under its own statement timeout, at history_cleanup.interval.
const CleanableSQL = `SELECT d.key_, count(*),
  count(*) FILTER (WHERE p.removal_time_ <= $1::timestamp),
  count(*) FILTER (WHERE d.history_ttl_ IS NULL)
FROM %[1]sact_re_procdef d JOIN %[1]sact_hi_procinst p ON p.proc_def_id_ = d.id_
WHERE p.end_time_ IS NOT NULL
GROUP BY d.key_`

// cleanupJobsSQL reads the history cleanup's jobs (the engine's
// HistoryCleanupJobHandler type).
const cleanupJobsSQL = `SELECT coalesce(retries_, 0), exception_msg_ IS NOT NULL
FROM %sact_ru_job WHERE handler_type_ = 'history-cleanup'`

// tableBytesSQL are the ten largest engine tables (act_*) of the schema
// the reader reads ($1; empty: the role's search path), with their indexes
// and TOAST.
const tableBytesSQL = `SELECT c.relname::text, pg_total_relation_size(c.oid)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND c.relname LIKE 'act\_%%'
  AND (CASE WHEN $1::text = '' THEN pg_table_is_visible(c.oid) ELSE n.nspname = $1::text END)
ORDER BY 2 DESC, 1 LIMIT 10`

type cleanableRow struct {
	Key                             string
	Finished, Cleanable, WithoutTTL int64
}

type cleanupJobRow struct {
	Retries   int32
	Exception bool
}

type tableBytesRow struct {
	Table string
	Bytes int64
}

// ReadCleanup reads the history aspect from the engine's tables in one
// read-only transaction (the cleanable count under its own statement
// timeout), and the cleanup's switch over REST.
func (r *Reader) ReadCleanup(ctx context.Context, rq reading.CleanupRequest) (*reading.CleanupRead, error) {
	out := &reading.CleanupRead{PerKey: map[string]reading.FinishedCounts{}, TableBytes: map[string]int64{}}
	err := r.readNow(ctx, vocab.CollectorCamundaHistory, func(ctx context.Context, tx pgx.Tx, now time.Time) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", rq.StatementTimeout.Milliseconds())); err != nil {
			return fmt.Errorf("%s: setting the history count's statement timeout: %w", r.key, err)
		}
		rows, err := collectRows(ctx, tx, r, "counting act_hi_procinst", pgx.RowToStructByPos[cleanableRow], r.keyedBy(definitionKeyColumn, fmt.Sprintf(CleanableSQL, r.prefix)), r.wall(now))
		if err != nil {
			return err
		}
		for _, row := range rows {
			out.PerKey[row.Key] = reading.FinishedCounts{Finished: row.Finished, Cleanable: row.Cleanable, WithoutTTL: row.WithoutTTL}
		}
		jobs, err := collectRows(ctx, tx, r, "reading act_ru_job", pgx.RowToStructByPos[cleanupJobRow], fmt.Sprintf(cleanupJobsSQL, r.prefix))
		if err != nil {
			return err
		}
		for _, j := range jobs {
			out.Jobs++
			if reading.CleanupJobFailing(int(j.Retries), j.Exception) {
				out.Failing++
			}
		}
		sizes, err := collectRows(ctx, tx, r, "reading pg_class", pgx.RowToStructByPos[tableBytesRow], tableBytesSQL, r.schema)
		if err != nil {
			return err
		}
		for _, s := range sizes {
			out.TableBytes[s.Table] = s.Bytes
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.client == nil {
		return out, nil // without the REST API the cleanup's switch is not known
	}
	if err := reading.ReadCleanupState(ctx, r.client, out); err != nil {
		return nil, err
	}
	return out, nil
}
