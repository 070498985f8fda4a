-- States of a Debezium outbox table (debezium-outbox.sql). Reference time R = '2026-12-02 12:00:00+00' (unused:
-- the documented table has no time column, so no age can be read from it).
-- Sources:
--   debezium/debezium documentation/modules/ROOT/pages/transformations/outbox-event-router.adoc
--     (table.op.invalid.behavior: "All changes in an outbox table are expected to be INSERT operations ... updates to
--      records in an outbox table are not allowed. The SMT automatically filters out DELETE operations.")
--   debezium/debezium-quarkus (and older debezium/debezium debezium-quarkus-outbox) DebeziumOutboxRuntimeConfig /
--     DebeziumOutboxCommonRuntimeConfig: quarkus.debezium-outbox.remove-after-insert, default true.
-- Debezium itself writes nothing to this table: the application inserts; the connector reads the WAL through its
-- replication slot. A row never changes state, so "published" cannot be read from the table: only the slot's
-- confirmed_flush_lsn against the row's insert LSN says whether the connector has passed it.

-- 1. Inserted and kept (remove-after-insert = false, or a hand-written outbox): the row stays forever unless the
--    application deletes it; it looks the same before and after the connector emitted it.
INSERT INTO inventory.outboxevent (id, aggregatetype, aggregateid, type, payload)
VALUES ('406c07f3-26f0-4eea-a50c-109940064b8f', 'Order', '1', 'OrderCreated',
        '{"id": 1, "customerId": 123, "orderDate": "2019-01-31T12:13:01"}');

-- 2. Inserted and deleted in the same transaction (the Quarkus extension's default, remove-after-insert = true):
--    the WAL keeps the INSERT for the connector; the DELETE is filtered out by the SMT; the table stays empty.
BEGIN;
INSERT INTO inventory.outboxevent (id, aggregatetype, aggregateid, type, payload)
VALUES ('4d47e190-0402-4048-bc2c-89dd54343cdc', 'Order', '2', 'OrderShipped', '{"id": 2}');
DELETE FROM inventory.outboxevent WHERE id = '4d47e190-0402-4048-bc2c-89dd54343cdc';
COMMIT;

-- Expected: 1 row.
