-- States written by gruelbox transaction-outbox 7.0.715 into txno_outbox / txno_sequence.
-- Reference time R = '2026-12-02 12:00:00+00'. nextattempttime and lastattempttime are TIMESTAMP(6) WITHOUT
-- TIME ZONE written with PreparedStatement.setTimestamp(Timestamp.from(instant)), i.e. the wall clock of the
-- JVM's default time zone. This fixture assumes a JVM in UTC: every time is TIMESTAMP '2026-12-02 12:00:00'
-- (R as a UTC wall clock) plus/minus an exact interval.
-- Code read (tag 7.0.715), under transactionoutbox-core/src/main/java/com/gruelbox/transactionoutbox/:
--   IMPL = TransactionOutboxImpl.java (newEntry, schedule, doFlush, pushBack, processNowInternal, updateAttemptCount, after)
--   PERS = DefaultPersistor.java (save: INSERT of ALL_FIELDS; update; delete; unblock; deleteProcessedAndExpired)
-- Defaults (TransactionOutboxImpl builder): attemptFrequency 2 minutes, blockAfterAttempts 5, retentionThreshold 7 days.
-- There is no creation-time, status or error column. invocation values are illustrative JSON in the shape of
-- Invocation.java (@SerializedName c, m, p, a, x).

-- 1. Pending, just scheduled: IMPL.schedule() -> IMPL.newEntry(): lastAttemptTime NULL, nextAttemptTime = now,
--    attempts 0, blocked false, processed false, version 0, topic '*' -> PERS.save():
--    INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime,
--    attempts, blocked, processed, version) VALUES (...). The post-commit hook then submits it at once;
--    if the JVM died before that, the row is due (nextattempttime < now) for the next flush().
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000001', NULL,
        '{"c":"com.example.OrderService","m":"publishOrderPlaced","p":["String"],"a":[{"t":"String","v":"order-1"}],"x":{}}',
        '*', NULL, NULL, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '15 seconds', 0, false, false, 0);

-- 2. Pending, scheduled with a delay: IMPL.schedule() with delayForAtLeast (with().delayForAtLeast(...)):
--    nextAttemptTime = now + delay. Not due yet.
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000002', NULL,
        '{"c":"com.example.ReminderService","m":"sendReminder","p":["String"],"a":[{"t":"String","v":"cart-2"}],"x":{}}',
        '*', NULL, NULL, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '1 minute' + INTERVAL '1 hour', 0, false, false, 0);

-- 3. Claimed by a flush and in progress: IMPL.doFlush() -> IMPL.pushBack(): lastAttemptTime = now,
--    nextAttemptTime = now + attemptFrequency, version + 1 (PERS.update); attempts unchanged. It looks exactly
--    like a row backing off after a failure with attempts 0.
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000003', NULL,
        '{"c":"com.example.OrderService","m":"publishOrderPlaced","p":["String"],"a":[{"t":"String","v":"order-3"}],"x":{}}',
        '*', NULL, NULL, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '10 minutes', 0, false, false, 0);
UPDATE TXNO_OUTBOX SET lastAttemptTime = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '5 seconds',
       nextAttemptTime = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '5 seconds' + INTERVAL '2 minutes',
       attempts = 0, blocked = false, processed = false, version = 1
 WHERE id = 'b0000000-0000-0000-0000-000000000003' and version = 0;

-- 4. Failed, retrying with attempts: the invocation threw twice. Each time IMPL.updateAttemptCount():
--    attempts + 1, blocked = (topic == null && attempts >= blockAfterAttempts) = false, then IMPL.pushBack():
--    lastAttemptTime = now, nextAttemptTime = now + 2 minutes (PERS.update, version + 1). No error text is stored.
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000004', NULL,
        '{"c":"com.example.PaymentService","m":"capture","p":["String"],"a":[{"t":"String","v":"pay-4"}],"x":{}}',
        '*', NULL, NULL, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '3 minutes', 0, false, false, 0);
UPDATE TXNO_OUTBOX SET lastAttemptTime = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '3 minutes',
       nextAttemptTime = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '1 minute', attempts = 1, blocked = false, processed = false, version = 1
 WHERE id = 'b0000000-0000-0000-0000-000000000004' and version = 0;
UPDATE TXNO_OUTBOX SET lastAttemptTime = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '1 minute',
       nextAttemptTime = TIMESTAMP '2026-12-02 12:00:00' + INTERVAL '1 minute', attempts = 2, blocked = false, processed = false, version = 2
 WHERE id = 'b0000000-0000-0000-0000-000000000004' and version = 1;

-- 5. Blocked (the library's dead letter): 5th failure, attempts 5 >= blockAfterAttempts 5 and no topic ->
--    IMPL.updateAttemptCount() sets blocked = true, pushBack() writes it (PERS.update); listener.blocked() fires.
--    selectBatch (blocked = false) never picks it again until TransactionOutbox.unblock().
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000005', NULL,
        '{"c":"com.example.PaymentService","m":"capture","p":["String"],"a":[{"t":"String","v":"pay-5"}],"x":{}}',
        '*', NULL, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '30 minutes',
        TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '28 minutes', 5, true, false, 5);

-- 6. Unblocked: TransactionOutbox.unblock(id) -> PERS.unblock():
--    UPDATE TXNO_OUTBOX SET attempts = 0, blocked = false WHERE blocked = true AND processed = false AND id = ?
--    lastAttemptTime/nextAttemptTime are left as they were, so the row is due at the next flush.
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000006', NULL,
        '{"c":"com.example.PaymentService","m":"capture","p":["String"],"a":[{"t":"String","v":"pay-6"}],"x":{}}',
        '*', NULL, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '2 hours',
        TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '1 hour 58 minutes', 5, true, false, 5);
UPDATE TXNO_OUTBOX SET attempts = 0, blocked = false WHERE blocked = true AND processed = false AND id = 'b0000000-0000-0000-0000-000000000006';

-- 7. Processed and retained for idempotency: uniqueRequestId set (with().uniqueRequestId(...)); on success
--    IMPL.processNowInternal() sets processed = true, lastAttemptTime = now, nextAttemptTime = now + retentionThreshold
--    (7 days) and calls PERS.update. PERS.deleteProcessedAndExpired() deletes it once nextAttemptTime < now.
--    (Without uniqueRequestId a success is PERS.delete(): the row disappears.)
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000007', 'order-7-confirmation',
        '{"c":"com.example.MailService","m":"sendConfirmation","p":["String"],"a":[{"t":"String","v":"order-7"}],"x":{}}',
        '*', NULL, NULL, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '1 hour 1 second', 0, false, false, 0);
UPDATE TXNO_OUTBOX SET lastAttemptTime = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '1 hour',
       nextAttemptTime = TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '1 hour' + INTERVAL '7 days',
       attempts = 0, blocked = false, processed = true, version = 1
 WHERE id = 'b0000000-0000-0000-0000-000000000007' and version = 0;

-- 8. Ordered (topic) entries: with().ordered("orders") -> PERS.save() -> setNextSequence(): seq from TXNO_SEQUENCE
--    (INSERT INTO TXNO_SEQUENCE (topic, seq) VALUES (?, ?) for the first, then UPDATE TXNO_SEQUENCE SET seq = ? WHERE topic = ?).
--    An ordered entry is never blocked (blocked requires topic == null), so seq 1 keeps failing with growing
--    attempts and holds back seq 2 (fetchNextInAllTopics only takes MIN(seq) of unprocessed rows per topic).
INSERT INTO TXNO_SEQUENCE (topic, seq) VALUES ('orders', 1);
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000008', NULL,
        '{"c":"com.example.LedgerService","m":"post","p":["String"],"a":[{"t":"String","v":"entry-1"}],"x":{}}',
        'orders', 1, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '1 minute 30 seconds',
        TIMESTAMP '2026-12-02 12:00:00' + INTERVAL '30 seconds', 12, false, false, 12);
UPDATE TXNO_SEQUENCE SET seq = 2 WHERE topic = 'orders';
INSERT INTO TXNO_OUTBOX (id, uniqueRequestId, invocation, topic, seq, lastAttemptTime, nextAttemptTime, attempts, blocked, processed, version)
VALUES ('b0000000-0000-0000-0000-000000000009', NULL,
        '{"c":"com.example.LedgerService","m":"post","p":["String"],"a":[{"t":"String","v":"entry-2"}],"x":{}}',
        'orders', 2, NULL, TIMESTAMP '2026-12-02 12:00:00' - INTERVAL '20 minutes', 0, false, false, 0);

-- Expected txno_outbox: 9 rows; blocked 1; processed 1; attempts > 0 on rows 4, 5, 8.
