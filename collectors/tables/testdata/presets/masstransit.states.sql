-- States written by MassTransit v8.5.8 (Entity Framework Core outbox, PostgreSQL) into "InboxState", "OutboxState",
-- "OutboxMessage" (DDL: masstransit.sql, derived).
-- Reference time R = '2026-12-02 12:00:00+00'. Every DateTime the code writes is DateTime.UtcNow into
-- timestamp with time zone, so the values are true instants: R plus/minus an exact interval.
-- Code read (tag v8.5.8), P = src/Persistence/MassTransit.EntityFrameworkCoreIntegration/EntityFrameworkCoreIntegration/:
--   FACT = P/EntityFrameworkOutboxContextFactory.cs   (consumer inbox: insert / lock + ReceiveCount++ per pass)
--   CTX  = P/DbContextOutboxConsumeContext.cs          (SetConsumed, SetDelivered, NotifyOutboxMessageDelivered, RemoveOutboxMessages)
--   PIPE = src/MassTransit/Middleware/OutboxMessagePipe.cs (consume -> deliver one pass at a time -> remove)
--   EXT  = P/EntityFrameworkOutboxExtensions.cs         (AddSend: the OutboxMessage columns)
--   BUS  = P/EntityFrameworkScopedBusContext.cs         (bus outbox: new OutboxState { OutboxId, Created = UtcNow })
--   DEL  = P/BusOutboxDeliveryService.cs               (bus outbox delivery, removal)
--   CLN  = P/InboxCleanupService.cs                    (deletes InboxState rows Delivered < UtcNow - DuplicateDetectionWindow)
-- Defaults: DuplicateDetectionWindow 30 min, QueryDelay 10 s (EntityFrameworkOutboxConfigurator.cs); consumer outbox
-- MessageDeliveryLimit 1 (OutboxConsumePipeSpecificationObserver.cs); bus outbox MessageDeliveryLimit 100
-- (OutboxDeliveryServiceOptions.cs). Each FACT pass is its own transaction and bumps ReceiveCount once; a pass that
-- throws (consumer fault, send fault) rolls back, ReceiveCount included. No failed/dead-letter/error columns:
-- faulted messages go to the transport's _error queue. "RowVersion" stays NULL (EF never writes a bytea rowversion).
-- Bodies, headers, addresses and ids are illustrative.

-- ===== Consumer side (inbox + consumer outbox), one consumer ConsumerId c0000000-...-0001 =====

-- 1. Received, consumer not finished: FACT.Send() first pass, no InboxState yet ->
--    new InboxState { MessageId, ConsumerId, Received = UtcNow, LockId = NewId, ReceiveCount = 0 }, SaveChanges, commit.
INSERT INTO "InboxState" ("MessageId", "ConsumerId", "LockId", "Received", "ReceiveCount")
VALUES ('10000000-0000-0000-0000-000000000001', 'c0000000-0000-0000-0000-000000000001',
        '1a000000-0000-0000-0000-000000000001', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '20 seconds', 0);

-- 2. Consumer keeps faulting: same row as 1, only older. Every later pass does ReceiveCount++ and runs the consumer
--    in one transaction; the fault rolls both back, so ReceiveCount stays 0 and "Consumed" NULL. The row is never
--    cleaned up by CLN (it only deletes rows with "Delivered" set).
INSERT INTO "InboxState" ("MessageId", "ConsumerId", "LockId", "Received", "ReceiveCount")
VALUES ('10000000-0000-0000-0000-000000000002', 'c0000000-0000-0000-0000-000000000001',
        '1a000000-0000-0000-0000-000000000002', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours', 0);

-- 3. Consumed, its published message not delivered yet: second pass, ReceiveCount 1; PIPE runs the consumer, which
--    publishes -> CTX.AddSend -> EXT.AddSend adds an OutboxMessage (InboxMessageId/InboxConsumerId set, OutboxId NULL,
--    SentTime = UtcNow); then CTX.SetConsumed(): "Consumed" = UtcNow.
INSERT INTO "InboxState" ("MessageId", "ConsumerId", "LockId", "Received", "ReceiveCount", "Consumed")
VALUES ('10000000-0000-0000-0000-000000000003', 'c0000000-0000-0000-0000-000000000001',
        '1a000000-0000-0000-0000-000000000003', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '12 seconds', 1,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '11 seconds');
INSERT INTO "OutboxMessage" ("SequenceNumber", "SentTime", "Headers", "InboxMessageId", "InboxConsumerId", "MessageId",
                             "ContentType", "MessageType", "Body", "ConversationId", "SourceAddress", "DestinationAddress")
VALUES (101, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '11 seconds', '{}',
        '10000000-0000-0000-0000-000000000003', 'c0000000-0000-0000-0000-000000000001',
        '20000000-0000-0000-0000-000000000101', 'application/vnd.masstransit+json',
        'urn:message:Sales.Contracts:OrderAccepted', '{"message":{"orderId":"o-3"}}',
        '30000000-0000-0000-0000-000000000003', 'rabbitmq://localhost/order-consumer', 'rabbitmq://localhost/Sales.Contracts:OrderAccepted');

-- 4. Delivered and finished: pass 3 delivers message 102 (CTX.NotifyOutboxMessageDelivered: "LastSequenceNumber" = 102),
--    pass 4 finds no more messages -> CTX.SetDelivered(): "Delivered" = UtcNow, pass 5 -> CTX.RemoveOutboxMessages()
--    deletes its OutboxMessage rows. ReceiveCount 4. Kept as the dedup record until CLN deletes it 30 min after "Delivered".
INSERT INTO "InboxState" ("MessageId", "ConsumerId", "LockId", "Received", "ReceiveCount", "Consumed", "Delivered", "LastSequenceNumber")
VALUES ('10000000-0000-0000-0000-000000000004', 'c0000000-0000-0000-0000-000000000001',
        '1a000000-0000-0000-0000-000000000004', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '5 minutes 3 seconds', 4,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '5 minutes 2 seconds',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '5 minutes', 102);

-- 5. Delivered 29 minutes ago, consumer published nothing (LastSequenceNumber NULL): passes insert, consume,
--    SetDelivered, remove -> ReceiveCount 3. CLN deletes it one minute from now.
INSERT INTO "InboxState" ("MessageId", "ConsumerId", "LockId", "Received", "ReceiveCount", "Consumed", "Delivered")
VALUES ('10000000-0000-0000-0000-000000000005', 'c0000000-0000-0000-0000-000000000001',
        '1a000000-0000-0000-0000-000000000005', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '29 minutes 2 seconds', 3,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '29 minutes 1 second',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '29 minutes');

-- ===== Publisher side (bus outbox: UseBusOutbox(), publish outside a consumer) =====

-- 6. Pending: BUS adds new OutboxState { OutboxId, Created = UtcNow } (LockId left Guid.Empty) and EXT.AddSend adds
--    OutboxMessage rows with OutboxId; the user's SaveChanges commits them with the business data.
--    Message 202 was sent with a delay: "EnqueueTime" = UtcNow + delay.
INSERT INTO "OutboxState" ("OutboxId", "LockId", "Created")
VALUES ('40000000-0000-0000-0000-000000000006', '00000000-0000-0000-0000-000000000000',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '15 seconds');
INSERT INTO "OutboxMessage" ("SequenceNumber", "SentTime", "Headers", "OutboxId", "MessageId", "ContentType", "MessageType", "Body", "DestinationAddress")
VALUES (201, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '15 seconds', '{}', '40000000-0000-0000-0000-000000000006',
        '20000000-0000-0000-0000-000000000201', 'application/vnd.masstransit+json',
        'urn:message:Sales.Contracts:OrderSubmitted', '{"message":{"orderId":"o-6"}}', 'rabbitmq://localhost/Sales.Contracts:OrderSubmitted');
INSERT INTO "OutboxMessage" ("SequenceNumber", "EnqueueTime", "SentTime", "Headers", "OutboxId", "MessageId", "ContentType", "MessageType", "Body", "DestinationAddress")
VALUES (202, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '15 seconds' + INTERVAL '1 hour',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '15 seconds', '{}', '40000000-0000-0000-0000-000000000006',
        '20000000-0000-0000-0000-000000000202', 'application/vnd.masstransit+json',
        'urn:message:Sales.Contracts:OrderReminder', '{"message":{"orderId":"o-6"}}', 'rabbitmq://localhost/Sales.Contracts:OrderReminder');

-- 7. Stuck: the broker refuses the send. DEL.DeliverOutbox() locks the oldest OutboxState (ORDER BY "Created" ... FOR
--    UPDATE SKIP LOCKED), writes a new "LockId" and SaveChanges; DEL.DeliverOutboxMessages() catches the send fault,
--    logs "Outbox Send Fault" and breaks; the transaction commits with only the new LockId. No attempt count is kept.
INSERT INTO "OutboxState" ("OutboxId", "LockId", "Created")
VALUES ('40000000-0000-0000-0000-000000000007', '00000000-0000-0000-0000-000000000000',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour');
UPDATE "OutboxState" SET "LockId" = '1a000000-0000-0000-0000-000000000007' WHERE "OutboxId" = '40000000-0000-0000-0000-000000000007';
INSERT INTO "OutboxMessage" ("SequenceNumber", "SentTime", "Headers", "OutboxId", "MessageId", "ContentType", "MessageType", "Body", "DestinationAddress")
VALUES (150, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour', '{}', '40000000-0000-0000-0000-000000000007',
        '20000000-0000-0000-0000-000000000150', 'application/vnd.masstransit+json',
        'urn:message:Sales.Contracts:OrderSubmitted', '{"message":{"orderId":"o-7"}}', 'rabbitmq://localhost/Sales.Contracts:OrderSubmitted');

-- 8. Partly delivered: DEL sent and deleted message 160, then a send fault broke the loop; "LastSequenceNumber" = 160
--    is saved, message 161 remains.
INSERT INTO "OutboxState" ("OutboxId", "LockId", "Created")
VALUES ('40000000-0000-0000-0000-000000000008', '00000000-0000-0000-0000-000000000000',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '40 minutes');
INSERT INTO "OutboxMessage" ("SequenceNumber", "SentTime", "Headers", "OutboxId", "MessageId", "ContentType", "MessageType", "Body", "DestinationAddress")
VALUES (160, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '40 minutes', '{}', '40000000-0000-0000-0000-000000000008',
        '20000000-0000-0000-0000-000000000160', 'application/vnd.masstransit+json',
        'urn:message:Sales.Contracts:OrderSubmitted', '{"message":{"orderId":"o-8a"}}', 'rabbitmq://localhost/Sales.Contracts:OrderSubmitted'),
       (161, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '40 minutes', '{}', '40000000-0000-0000-0000-000000000008',
        '20000000-0000-0000-0000-000000000161', 'application/vnd.masstransit+json',
        'urn:message:Billing.Contracts:InvoiceRequested', '{"message":{"orderId":"o-8b"}}', 'rabbitmq://localhost/Billing.Contracts:InvoiceRequested');
UPDATE "OutboxState" SET "LockId" = '1a000000-0000-0000-0000-000000000008' WHERE "OutboxId" = '40000000-0000-0000-0000-000000000008';
DELETE FROM "OutboxMessage" WHERE "SequenceNumber" = 160;
UPDATE "OutboxState" SET "LastSequenceNumber" = 160 WHERE "OutboxId" = '40000000-0000-0000-0000-000000000008';

-- 9. Delivered, awaiting removal: DEL.DeliverOutboxMessages() sent everything on a pass that already had a
--    LastSequenceNumber, so it sets "Delivered" = UtcNow and keeps the row; the next pass (DEL.RemoveOutbox) deletes
--    the OutboxState and any OutboxMessage left. (Delivered on the first pass, the OutboxState is deleted at once.)
INSERT INTO "OutboxState" ("OutboxId", "LockId", "Created", "Delivered", "LastSequenceNumber")
VALUES ('40000000-0000-0000-0000-000000000009', '1a000000-0000-0000-0000-000000000009',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 minutes', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 second', 171);

-- Expected: InboxState 5 rows (Consumed NULL: 2; Consumed set, Delivered NULL: 1; Delivered set: 2);
-- OutboxState 4 rows (Delivered NULL: 3); OutboxMessage 5 rows (consumer outbox: 1; bus outbox: 4).
