-- States written by Wolverine V6.29.2 (PostgreSQL message store, default settings) into
-- wolverine.wolverine_incoming_envelopes, wolverine.wolverine_outgoing_envelopes, wolverine.wolverine_dead_letters.
-- Reference time R = '2026-12-02 12:00:00+00'. All time columns are timestamp with time zone written from
-- DateTimeOffset values: R plus/minus an exact interval.
-- Code read (tag V6.29.2):
--   PERS = src/Persistence/Wolverine.RDBMS/DatabasePersistence.cs (BuildIncomingStorageCommand, ConfigureOutgoingCommand,
--          ConfigureDeadLetterCommands: the INSERT column lists below are DatabaseConstants.IncomingFields/OutgoingFields/DeadLetterFields)
--   INC  = src/Persistence/Wolverine.RDBMS/MessageDatabase.Incoming.cs (MarkIncomingEnvelopeAsHandledAsync,
--          IncrementIncomingEnvelopeAttemptsAsync, MoveToDeadLetterStorageAsync)
--   SCH  = src/Persistence/Wolverine.RDBMS/MessageDatabase.Scheduled.cs (ScheduleExecutionAsync)
--   OUT  = src/Persistence/Wolverine.RDBMS/MessageDatabase.Outgoing.cs (DeleteOutgoingAsync)
--   RCV  = src/Wolverine/Runtime/WorkerQueues/DurableReceiver.cs; ROUTE = src/Wolverine/Runtime/Routing/MessageRoute.cs
--   SEND = src/Wolverine/Transports/Sending/SendingAgent.cs
--   SWEEP= src/Persistence/Wolverine.RDBMS/Durability/DeleteExpiredEnvelopesOperation.cs,
--          MoveReplayableErrorMessagesToIncomingOperation.cs, ReleaseOrphanedMessagesCommand.cs
-- owner_id: 0 = any node (TransportConstants.AnyNode), otherwise the owning node's number.
-- No creation time in any table by default (incoming/outgoing get a "timestamp" column only with InboxStaleTime /
-- OutboxStaleTime). received_at is the destination URI, not a time. Bodies, URIs and ids are illustrative.

-- ===== incoming (durable inbox; also the deduplication table: the PK on id rejects a second copy) =====

-- 1. Incoming, owned by this node: RCV sets OwnerId = AssignedNodeNumber and StoreIncomingAsync -> PERS:
--    insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
values ('\x7b7d'::bytea, '50000000-0000-0000-0000-000000000001', 'Incoming', 1, NULL, 0,
        'Sales.OrderPlaced', 'rabbitmq://queue/orders', NULL);

-- 2. Incoming, retried with attempts: the handler failed twice and the retry policy retried inline;
--    INC.IncrementIncomingEnvelopeAttemptsAsync(): update ... set attempts = @attempts where id = @id and received_at = @uri
insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
values ('\x7b7d'::bytea, '50000000-0000-0000-0000-000000000002', 'Incoming', 1, NULL, 0,
        'Sales.OrderPlaced', 'rabbitmq://queue/orders', NULL);
update wolverine.wolverine_incoming_envelopes set attempts = 2 where id = '50000000-0000-0000-0000-000000000002' and received_at = 'rabbitmq://queue/orders';

-- 3. Incoming, unowned: its node died; ReleaseOrphanedMessagesCommand (or ReleaseIncomingAsync) set owner_id = 0,
--    waiting for recovery by another node. Messages stored for "any node" (ROUTE, local durable queues) look the same.
insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
values ('\x7b7d'::bytea, '50000000-0000-0000-0000-000000000003', 'Incoming', 7, NULL, 1,
        'Billing.InvoiceRequested', 'local://durable/billing', NULL);
update wolverine.wolverine_incoming_envelopes set owner_id = 0 where owner_id in (7);

-- 4. Scheduled for retry later: retry policy ScheduleRetry / RCV.MoveToScheduledUntilAsync() -> SCH.ScheduleExecutionAsync():
--    update ... set execution_time = @time, status = 'Scheduled', attempts = @attempts, owner_id = 0 where id = @id and received_at = @uri
insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
values ('\x7b7d'::bytea, '50000000-0000-0000-0000-000000000004', 'Incoming', 1, NULL, 0,
        'Shipping.ShipOrder', 'rabbitmq://queue/shipping', NULL);
update wolverine.wolverine_incoming_envelopes set execution_time = TIMESTAMPTZ '2026-12-02 12:00:00+00' + INTERVAL '5 minutes',
       status = 'Scheduled', attempts = 3, owner_id = 0
 where id = '50000000-0000-0000-0000-000000000004' and received_at = 'rabbitmq://queue/shipping';

-- 5. Scheduled message (bus.ScheduleAsync / delayed local durable send): ROUTE sets Status = Scheduled, OwnerId = AnyNode,
--    ScheduledTime -> execution_time; PERS insert.
insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
values ('\x7b7d'::bytea, '50000000-0000-0000-0000-000000000005', 'Scheduled', 0,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' + INTERVAL '1 day', 0, 'Sales.CancelUnpaidOrder', 'local://durable/sales', NULL);

-- 6. Handled: INC.MarkIncomingEnvelopeAsHandledAsync(): update ... set status = 'Handled', keep_until = @keepUntil
--    (UtcNow + KeepAfterMessageHandling, 5 minutes by default) where id = @id and received_at = @uri.
--    Kept for deduplication; SWEEP DeleteExpiredEnvelopesOperation deletes status = 'Handled' and keep_until <= now.
insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
values ('\x7b7d'::bytea, '50000000-0000-0000-0000-000000000006', 'Incoming', 1, NULL, 0,
        'Sales.OrderPlaced', 'rabbitmq://queue/orders', NULL);
update wolverine.wolverine_incoming_envelopes set status = 'Handled',
       keep_until = TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 minute' + INTERVAL '5 minutes'
 where id = '50000000-0000-0000-0000-000000000006' and received_at = 'rabbitmq://queue/orders';

-- 7. Stored directly as Handled (idempotency record for an envelope handled before it was persisted):
--    PERS.BuildIncomingStorageCommand stores an empty body when envelope.Status == Handled.
insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
values ('\x'::bytea, '50000000-0000-0000-0000-000000000007', 'Handled', 1, NULL, 0,
        'Sales.OrderPlaced', 'rabbitmq://queue/orders', TIMESTAMPTZ '2026-12-02 12:00:00+00' + INTERVAL '4 minutes 30 seconds');

-- ===== dead letters =====

-- 8. Dead-lettered: retries exhausted (or a poison message); INC.MoveToDeadLetterStorageAsync():
--    delete from ...incoming WHERE id = @id and received_at = @uri; then PERS.ConfigureDeadLetterCommands:
--    insert into wolverine.wolverine_dead_letters (id, execution_time, body, message_type, received_at, source,
--    exception_type, exception_message, sent_at, replayable) values (...), replayable = false.
--    sent_at = envelope.SentAt (when the SENDER sent it), not the time of dead-lettering, which is not recorded.
insert into wolverine.wolverine_incoming_envelopes(body, id, status, owner_id, execution_time, attempts, message_type, received_at, keep_until)
values ('\x7b7d'::bytea, '50000000-0000-0000-0000-000000000008', 'Incoming', 1, NULL, 3,
        'Billing.ChargeCard', 'rabbitmq://queue/billing', NULL);
delete from wolverine.wolverine_incoming_envelopes WHERE id = '50000000-0000-0000-0000-000000000008' and received_at = 'rabbitmq://queue/billing';
insert into wolverine.wolverine_dead_letters (id, execution_time, body, message_type, received_at, source, exception_type, exception_message, sent_at, replayable)
values ('50000000-0000-0000-0000-000000000008', NULL, '\x7b7d'::bytea, 'Billing.ChargeCard', 'rabbitmq://queue/billing',
        'sales-api', 'System.Net.Http.HttpRequestException', 'Response status code does not indicate success: 502 (Bad Gateway).',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '45 minutes', false);

-- 9. Marked for replay: the dead letter admin (MessageDatabase.DeadLetterAdminService.cs) sets replayable = true; the
--    durability agent's MoveReplayableErrorMessagesToIncomingOperation then inserts it back into incoming as
--    ('Incoming', owner 0, attempts 0) and deletes it from dead letters.
insert into wolverine.wolverine_dead_letters (id, execution_time, body, message_type, received_at, source, exception_type, exception_message, sent_at, replayable)
values ('50000000-0000-0000-0000-000000000009', NULL, '\x7b7d'::bytea, 'Billing.ChargeCard', 'rabbitmq://queue/billing',
        'sales-api', 'System.TimeoutException', 'The operation has timed out.',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 hours', false);
update wolverine.wolverine_dead_letters set replayable = true where id = '50000000-0000-0000-0000-000000000009';

-- ===== outgoing (durable outbox) =====

-- 10. Pending, owned by the sending node: SEND sets Status = Outgoing, OwnerId = AssignedNodeNumber; PERS:
--     insert into wolverine.wolverine_outgoing_envelopes (body, id, owner_id, destination, deliver_by, attempts, message_type)
--     On a successful send OUT.DeleteOutgoingAsync() deletes the row. attempts is written once at insert and never updated.
insert into wolverine.wolverine_outgoing_envelopes (body, id, owner_id, destination, deliver_by, attempts, message_type)
values ('\x7b7d'::bytea, '60000000-0000-0000-0000-000000000010', 1, 'rabbitmq://exchange/orders', NULL, 0, 'Sales.OrderPlaced');

-- 11. Pending with an expiry (DeliverWithin): deliver_by set; expired envelopes are discarded (deleted) by the
--     sending agent / recovery instead of sent.
insert into wolverine.wolverine_outgoing_envelopes (body, id, owner_id, destination, deliver_by, attempts, message_type)
values ('\x7b7d'::bytea, '60000000-0000-0000-0000-000000000011', 1, 'rabbitmq://exchange/quotes',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' + INTERVAL '30 seconds', 0, 'Sales.PriceQuote');

-- 12. Unowned: the sender's circuit broke or its node died; owner_id reset to 0 (ReleaseOrphanedMessagesCommand /
--     MessageDatabase.Admin.cs ReleaseAllOwnershipAsync) until a node's outgoing recovery takes it.
insert into wolverine.wolverine_outgoing_envelopes (body, id, owner_id, destination, deliver_by, attempts, message_type)
values ('\x7b7d'::bytea, '60000000-0000-0000-0000-000000000012', 7, 'rabbitmq://exchange/billing', NULL, 0, 'Billing.InvoiceRequested');
update wolverine.wolverine_outgoing_envelopes set owner_id = 0 where owner_id in (7);

-- Expected: incoming by status: Incoming 3 (one with owner 0, one with attempts 2), Scheduled 2, Handled 2;
-- dead letters 2 (one replayable); outgoing 3 (one with owner 0). No row carries its creation time.
