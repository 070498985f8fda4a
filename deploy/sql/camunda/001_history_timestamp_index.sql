-- The indexes the exporter relies on in the engine's own database, for both
-- modes. Generated from the collectors' requirements (make generate); do not
-- edit by hand.
--
-- Camunda 7 (and Operaton) create no index on ACT_HI_EXT_TASK_LOG.TIMESTAMP_
-- or ACT_HI_JOB_LOG.TIMESTAMP_. The exporter reads only the history log
-- entries written since its previous collection, newest first: over REST
-- (GET /history/external-task-log and GET /history/job-log sorted by
-- timestamp) and in engine-database mode (a timestamp range). Without the
-- indexes each collection sorts or scans the whole history tables, which hold
-- rows per task and job ever created until history cleanup removes them. The
-- engine inserts into these tables once per task or job event, so each index
-- adds one index entry per insert.
--
-- CONCURRENTLY builds without blocking the engine; run each statement on its
-- own, outside a transaction block, as a role that may create indexes on
-- the engine's tables (usually the engine's schema owner). With a table
-- prefix or schema, qualify the table names. 'workflow-exporter check' says
-- whether an index serves each query (any index whose first column is
-- timestamp_ does).

-- engine table act_hi_ext_task_log: failures and completions read the history log entries of the last late_commit_window; without this index every collection scans (and, over REST, sorts) the whole history table
CREATE INDEX CONCURRENTLY IF NOT EXISTS "act_hi_ext_task_log_timestamp_idx" ON "act_hi_ext_task_log" ("timestamp_");

-- engine table act_hi_job_log: job failures and successes read the job log entries of the last late_commit_window; without this index every collection scans (and, over REST, sorts) the whole job log
CREATE INDEX CONCURRENTLY IF NOT EXISTS "act_hi_job_log_timestamp_idx" ON "act_hi_job_log" ("timestamp_");
