-- Indexes the exporter needs on the tables of preset spring-modulith (docs/outbox-shapes.md).
-- Generated from the collectors' requirements (go generate ./internal/sources);
-- do not edit by hand. Each index keeps one collector query proportional to
-- the rows it reports on (open work, or the last late_commit_window of
-- activity). Where the library's own schema already creates an index that
-- serves a query, the statement is left commented out. CONCURRENTLY builds
-- without blocking writers; run each statement on its own, outside a
-- transaction block. 'workflow-exporter check' asks the planner which ones a
-- database lacks.

-- outbox table event_publication
-- pending and failed gauges read only unpublished events; the index holds nothing else, so the query never touches published history: the library's own index event_publication_by_completion_date_idx serves this; if your table lacks it, run:
-- CREATE INDEX CONCURRENTLY IF NOT EXISTS "event_publication_open_idx" ON "event_publication" ("publication_date") WHERE "completion_date" IS NULL;
-- events_created_total reads the last late_commit_window of inserts
CREATE INDEX CONCURRENTLY IF NOT EXISTS "event_publication_publication_date_idx" ON "event_publication" ("publication_date");
-- events_published_total and the publish-delay histogram read the last late_commit_window of publishes: the library's own index event_publication_by_completion_date_idx serves this; if your table lacks it, run:
-- CREATE INDEX CONCURRENTLY IF NOT EXISTS "event_publication_completion_date_idx" ON "event_publication" ("completion_date") WHERE "completion_date" IS NOT NULL;
