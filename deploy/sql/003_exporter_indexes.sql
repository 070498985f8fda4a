-- Indexes the exporter needs. Generated from the collectors' requirements
-- (make generate); do not edit by hand. Each index keeps one
-- collector query proportional to the rows it reports on (open work, or the
-- last late_commit_window of activity) instead of the table's whole history.
-- CONCURRENTLY builds without blocking writers; run each statement on its
-- own, outside a transaction block. The exporter never creates them itself:
-- it only reads. 'workflow-exporter check' lists the ones a database lacks.

-- idempotency table workflow_idempotency_record
-- records, oldest age and stale gauges read only non-terminal records; terminal history stays out of the index
CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_idempotency_record_open_idx" ON "workflow_idempotency_record" ("scope", "status", "updated_at") WHERE ("status" IS NULL OR "status" NOT IN ('COMPLETED', 'FAILED_FINAL', 'RECONCILED'));
-- transitions, conflicts and duplicates counters read the last late_commit_window of updates
CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_idempotency_record_updated_at_idx" ON "workflow_idempotency_record" ("updated_at");
-- one read of records that absorbed duplicates when the exporter starts (only with the duplicate_count extension): needs the optional column duplicate_count; created by 002_duplicate_count_extension.sql

-- idempotency (retention horizon) table workflow_idempotency_record
-- the retention horizon reads the least recently updated finished record of each scope, one index entry per scope
CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_idempotency_record_horizon_idx" ON "workflow_idempotency_record" ("scope", "updated_at") WHERE "status" IN ('COMPLETED', 'FAILED_FINAL', 'RECONCILED');

-- idempotency table workflow_idempotency_record
-- the Camunda join looks up the records of in-flight tasks by external task id (= ANY)
CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_idempotency_record_job_reference_idx" ON "workflow_idempotency_record" ("job_reference") WHERE "job_reference" IS NOT NULL;

-- processed_jobs table workflow_processed_job
-- processed_jobs_total reads the last late_commit_window of completions
CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_processed_job_completed_at_idx" ON "workflow_processed_job" ("completed_at");

-- processed_jobs table workflow_processed_job
-- the Camunda join looks up rows of in-flight tasks by engine and external task id: the reference schema's primary key serves this; with another key, run:
-- CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_processed_job_engine_job_reference_idx" ON "workflow_processed_job" ("engine", "job_reference");

-- inbox table message_inbox
-- message and oldest-age gauges read only unfinished messages; finished ones stay out of the index
CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_inbox_open_idx" ON "message_inbox" ("source_system", "message_type", "processing_status", "received_at") WHERE ("processing_status" IS NULL OR "processing_status" NOT IN ('FAILED_FINAL', 'IGNORED_DUPLICATE', 'PROCESSED'));
-- messages_processed_total reads the last late_commit_window of finished messages
CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_inbox_processed_at_idx" ON "message_inbox" ("processed_at") WHERE "processed_at" IS NOT NULL;

-- inbox (retention horizon) table message_inbox
-- the retention horizon reads the oldest processed_at of each source system's finished messages, one index entry per source system
CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_inbox_horizon_idx" ON "message_inbox" ("source_system", "processed_at") WHERE "processed_at" IS NOT NULL AND "processing_status" IN ('FAILED_FINAL', 'IGNORED_DUPLICATE', 'PROCESSED');

-- outbox table event_outbox
-- pending and failed gauges read only unpublished events; the index holds nothing else, so the query never touches published history
CREATE INDEX CONCURRENTLY IF NOT EXISTS "event_outbox_unpublished_idx" ON "event_outbox" ("aggregate_type", "event_type", "created_at") WHERE "published_at" IS NULL;
-- events_created_total reads the last late_commit_window of inserts
CREATE INDEX CONCURRENTLY IF NOT EXISTS "event_outbox_created_at_idx" ON "event_outbox" ("created_at");
-- events_published_total and the publish-delay histogram read the last late_commit_window of publishes
CREATE INDEX CONCURRENTLY IF NOT EXISTS "event_outbox_published_at_idx" ON "event_outbox" ("published_at", "event_id") WHERE "published_at" IS NOT NULL;

-- outbox (deliveries[]) table event_outbox
-- a delivery (deliveries[]) reads the window's published events in keyset pages, newest first, by publish time and event id: the index event_outbox_published_at_idx above serves this

-- inbox (deliveries[]) table message_inbox
-- a delivery (deliveries[]) looks the window's events up in the consumer's inbox by message id (= ANY)
CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_inbox_message_id_idx" ON "message_inbox" ("message_id");
