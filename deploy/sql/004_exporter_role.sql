-- A login role for the exporter that can only read the four worker tables.
-- Replace the password (or use your secret manager); point dsn_file or
-- dsn_env at a DSN for this role. The exporter also runs every query in a
-- read-only transaction, so it cannot write even with a broader role, but a
-- SELECT-only role is the safe default: `workflow-exporter check` warns when
-- the role could write.
CREATE ROLE workflow_exporter LOGIN PASSWORD 'change-me';
GRANT USAGE ON SCHEMA public TO workflow_exporter;
GRANT SELECT ON workflow_idempotency_record, workflow_processed_job, message_inbox, event_outbox TO workflow_exporter;
ALTER ROLE workflow_exporter SET default_transaction_read_only = on;
-- An outbox relay (tables.outbox.relay) needs nothing more: the slot, the
-- table's statistics, the publications and the WAL position are readable by
-- PUBLIC (no REPLICATION attribute, no pg_monitor; docs/database.md, Roles).
