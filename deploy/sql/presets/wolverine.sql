-- Indexes the exporter needs on the tables of preset wolverine (docs/outbox-shapes.md).
-- Generated from the collectors' requirements (go generate ./internal/sources);
-- do not edit by hand. Each index keeps one collector query proportional to
-- the rows it reports on (open work, or the last late_commit_window of
-- activity). Where the library's own schema already creates an index that
-- serves a query, the statement is left commented out. CONCURRENTLY builds
-- without blocking writers; run each statement on its own, outside a
-- transaction block. 'workflow-exporter check' asks the planner which ones a
-- database lacks.

-- outbox table wolverine.wolverine_outgoing_envelopes
-- the pending query needs no index: every row of the table is pending: the sending agent deletes an envelope once it is sent (or expired)

-- inbox table wolverine.wolverine_incoming_envelopes
-- message and oldest-age gauges read only unfinished messages; finished ones stay out of the index
CREATE INDEX CONCURRENTLY IF NOT EXISTS "wolverine_incoming_envelopes_open_idx" ON "wolverine"."wolverine_incoming_envelopes" ("message_type") WHERE "status" <> 'Handled';

-- inbox table wolverine.wolverine_dead_letters
-- the dead_letters query needs no index: every row is a dead letter waiting for an operator (a replayed one moves back to the incoming table)
