-- Indexes the exporter needs on the tables of preset namastack (docs/outbox-shapes.md).
-- Generated from the collectors' requirements (go generate ./internal/sources);
-- do not edit by hand. Each index keeps one collector query proportional to
-- the rows it reports on (open work, or the last late_commit_window of
-- activity). Where the library's own schema already creates an index that
-- serves a query, the statement is left commented out. CONCURRENTLY builds
-- without blocking writers; run each statement on its own, outside a
-- transaction block. 'workflow-exporter check' asks the planner which ones a
-- database lacks.

-- outbox table outbox_record
-- pending and failed gauges read only unpublished events; the index holds nothing else, so the query never touches published history
CREATE INDEX CONCURRENTLY IF NOT EXISTS "outbox_record_open_idx" ON "outbox_record" ("created_at") WHERE "completed_at" IS NULL;
-- events_created_total reads the last late_commit_window of inserts
CREATE INDEX CONCURRENTLY IF NOT EXISTS "outbox_record_created_at_idx" ON "outbox_record" ("created_at");
-- events_published_total and the publish-delay histogram read the last late_commit_window of publishes
CREATE INDEX CONCURRENTLY IF NOT EXISTS "outbox_record_completed_at_idx" ON "outbox_record" ("completed_at") WHERE "completed_at" IS NOT NULL;
