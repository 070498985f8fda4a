-- Indexes the exporter needs on the tables of preset masstransit (docs/outbox-shapes.md).
-- Generated from the collectors' requirements (go generate ./internal/sources);
-- do not edit by hand. Each index keeps one collector query proportional to
-- the rows it reports on (open work, or the last late_commit_window of
-- activity). Where the library's own schema already creates an index that
-- serves a query, the statement is left commented out. CONCURRENTLY builds
-- without blocking writers; run each statement on its own, outside a
-- transaction block. 'workflow-exporter check' asks the planner which ones a
-- database lacks.

-- outbox table OutboxMessage
-- the pending query needs no index: every row of the table is pending: the delivery service deletes a message once it is sent

-- inbox table InboxState
-- message and oldest-age gauges read only unfinished messages; finished ones stay out of the index: the library's own index IX_InboxState_Delivered serves this; if your table lacks it, run:
-- CREATE INDEX CONCURRENTLY IF NOT EXISTS "InboxState_open_idx" ON "InboxState" ("MessageId") WHERE "Delivered" IS NULL;
-- messages_processed_total reads the last late_commit_window of finished messages: the library's own index IX_InboxState_Delivered serves this; if your table lacks it, run:
-- CREATE INDEX CONCURRENTLY IF NOT EXISTS "InboxState_Delivered_idx" ON "InboxState" ("Delivered") WHERE "Delivered" IS NOT NULL;
