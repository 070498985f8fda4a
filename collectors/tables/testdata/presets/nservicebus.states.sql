-- States written by NServiceBus.Persistence.Sql 9.0.3 (PostgreSQL dialect) into "public"."Sales_OutboxData".
-- Reference time R = '2026-12-02 12:00:00+00'.
-- "DispatchedAt" is TIMESTAMP WITHOUT TIME ZONE. OutboxPersister.SetAsDispatched() passes DateTime.UtcNow with
-- DbType.DateTime (Extensions.AddParameter(string, DateTime)); Npgsql 6+ sends DbType.DateTime as timestamptz,
-- and PostgreSQL stores its wall clock in the session's TimeZone. This fixture assumes TimeZone = UTC, so every
-- time is TIMESTAMP '2026-12-02 12:00:00' (R as a UTC wall clock) minus an exact interval.
-- Code read (tag 9.0.3):
--   src/SqlPersistence/Outbox/SqlDialect_PostgreSql.cs (the SQL text of every command below)
--   src/SqlPersistence/Outbox/OptimisticConcurrencyControlStrategy.cs (default mode: insert at Complete)
--   src/SqlPersistence/Outbox/PessimisticConcurrencyControlStrategy.cs (pessimistic mode: insert at Begin, update at Complete)
--   src/SqlPersistence/Outbox/OutboxPersister.cs (SetAsDispatched, Get, RemoveEntriesOlderThan)
--   src/SqlPersistence/Outbox/SqlOutboxFeature.cs (cleanup every 1 minute, keep dispatched rows 7 days)
-- The row is keyed by the INCOMING message id: it is the endpoint's deduplication record as well as its outbox.
-- No creation time, no attempts, no error columns. "Operations" JSON and the version string are illustrative
-- (PersistenceVersion is StaticVersions.PersistenceVersion, the assembly file version, as text).

-- 1. Handled, outgoing messages not dispatched yet: the handler's transaction committed with
--    OptimisticConcurrencyControlStrategy.Complete() -> GetOutboxOptimisticStoreCommand:
--    insert into "public"."Sales_OutboxData" ("MessageId", "Operations", "PersistenceVersion") values (@MessageId, @Operations, @PersistenceVersion)
--    "Dispatched" takes its default false. Dispatch follows immediately; a row that stays like this means the
--    dispatch failed and waits for the incoming message to be retried (recoverability), which re-dispatches it.
insert into "public"."Sales_OutboxData"
(
    "MessageId",
    "Operations",
    "PersistenceVersion"
)
values
(
    '7f1c0a4e-5b2d-4c1e-9a51-b2f0c0000001',
    '[{"Body":"eyJPcmRlcklkIjoiby0xIn0=","Headers":{"NServiceBus.EnclosedMessageTypes":"Sales.OrderAccepted"},"MessageId":"7f1c0a4e-5b2d-4c1e-9a51-b2f0c1000001","Options":{"Destination":"Billing"}}]',
    '9.0.3.0'
);

-- 2. Handled with no outgoing messages: same insert with "Operations" = '[]'; not yet marked dispatched.
insert into "public"."Sales_OutboxData"
(
    "MessageId",
    "Operations",
    "PersistenceVersion"
)
values
(
    '7f1c0a4e-5b2d-4c1e-9a51-b2f0c0000002',
    '[]',
    '9.0.3.0'
);

-- 3. Dispatched: OutboxPersister.SetAsDispatched() -> GetOutboxSetAsDispatchedCommand:
--    update ... set "Dispatched" = true, "DispatchedAt" = @DispatchedAt, "Operations" = '[]' where "MessageId" = @MessageId
--    The row is kept as the deduplication record until the cleaner deletes it (row 4).
insert into "public"."Sales_OutboxData" ("MessageId", "Operations", "PersistenceVersion")
values ('7f1c0a4e-5b2d-4c1e-9a51-b2f0c0000003',
        '[{"Body":"eyJPcmRlcklkIjoiby0zIn0=","Headers":{},"MessageId":"7f1c0a4e-5b2d-4c1e-9a51-b2f0c1000003","Options":{"Destination":"Billing"}}]',
        '9.0.3.0');
update "public"."Sales_OutboxData"
set
    "Dispatched" = true,
    "DispatchedAt" = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '30 seconds',
    "Operations" = '[]'
where "MessageId" = '7f1c0a4e-5b2d-4c1e-9a51-b2f0c0000003';

-- 4. Dispatched 6 days 23 hours ago: still inside the 7-day deduplication window. OutboxCleaner runs
--    RemoveEntriesOlderThan(utcNow - 7 days) every minute -> GetOutboxCleanupCommand:
--    delete ... where ctid in (select ctid ... where "Dispatched" = true and "DispatchedAt" < @DispatchedBefore limit @BatchSize)
insert into "public"."Sales_OutboxData" ("MessageId", "Operations", "PersistenceVersion")
values ('7f1c0a4e-5b2d-4c1e-9a51-b2f0c0000004', '[]', '9.0.3.0');
update "public"."Sales_OutboxData"
set
    "Dispatched" = true,
    "DispatchedAt" = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '6 days 23 hours',
    "Operations" = '[]'
where "MessageId" = '7f1c0a4e-5b2d-4c1e-9a51-b2f0c0000004';

-- 5. Pessimistic mode (outbox.UsePessimisticConcurrencyControl()): PessimisticConcurrencyControlStrategy.Begin()
--    inserts ("MessageId", '[]', "PersistenceVersion") inside the handler's transaction and Complete() updates
--    "Operations" in the same transaction, so other sessions only ever see a committed row shaped like row 1 or 2.

-- Expected: 4 rows; "Dispatched" = false: 2 (no time column at all), true: 2 (DispatchedAt 30 s and 6 d 23 h ago).
