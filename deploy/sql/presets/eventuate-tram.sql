-- Indexes the exporter needs on the tables of preset eventuate-tram (docs/outbox-shapes.md).
-- Generated from the collectors' requirements (go generate ./internal/sources);
-- do not edit by hand. Each index keeps one collector query proportional to
-- the rows it reports on (open work, or the last late_commit_window of
-- activity). Where the library's own schema already creates an index that
-- serves a query, the statement is left commented out. CONCURRENTLY builds
-- without blocking writers; run each statement on its own, outside a
-- transaction block. 'workflow-exporter check' asks the planner which ones a
-- database lacks.

-- outbox table eventuate.message
-- pending and failed gauges read only unpublished events; the index holds nothing else, so the query never touches published history: the library's own index message_published_idx serves this; if your table lacks it, run:
-- CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_open_idx" ON "eventuate"."message" ("id") WHERE "published" = 0;
-- events_created_total reads the last late_commit_window of inserts
CREATE INDEX CONCURRENTLY IF NOT EXISTS "message_creation_time_idx" ON "eventuate"."message" ("creation_time");

-- inbox table eventuate.received_messages
-- messages_processed_total reads the last late_commit_window of finished messages
CREATE INDEX CONCURRENTLY IF NOT EXISTS "received_messages_creation_time_idx" ON "eventuate"."received_messages" ("creation_time") WHERE "creation_time" IS NOT NULL;
