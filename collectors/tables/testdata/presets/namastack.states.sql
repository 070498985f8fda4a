-- States written by namastack-outbox v1.8.1 (JDBC module) into outbox_record, outbox_instance, outbox_partition.
-- Reference time R = '2026-12-02 12:00:00+00'; every time below is R plus/minus an exact interval.
-- Code read (tag v1.8.1):
--   REPO = namastack-outbox-jdbc/src/main/kotlin/io/namastack/outbox/JdbcOutboxRecordRepository.kt
--          (save() = UPDATE ... WHERE id = :id, and INSERT when no row was updated; every state change
--          rewrites all columns from the in-memory OutboxRecord)
--   REC  = namastack-outbox-core/src/main/kotlin/io/namastack/outbox/OutboxRecord.kt
--   PRI  = namastack-outbox-core/src/main/kotlin/io/namastack/outbox/processor/PrimaryOutboxRecordProcessor.kt
--   RET  = namastack-outbox-core/src/main/kotlin/io/namastack/outbox/processor/RetryOutboxRecordProcessor.kt
--   FB   = namastack-outbox-core/src/main/kotlin/io/namastack/outbox/processor/FallbackOutboxRecordProcessor.kt
--   PERM = namastack-outbox-core/src/main/kotlin/io/namastack/outbox/processor/PermanentFailureOutboxRecordProcessor.kt
--   BASE = namastack-outbox-core/src/main/kotlin/io/namastack/outbox/processor/OutboxRecordProcessor.kt (completeRecord)
-- Status values (OutboxRecordStatus): NEW, COMPLETED, FAILED. There is no in-progress status: a record being
-- handled stays NEW. Defaults (OutboxProperties.kt): retry.max-retries 3, exponential policy with initial delay 2 s,
-- processing.stop-on-first-failure true, processing.delete-completed-records false.
-- payload/record_type/handler_id/partition_no values are illustrative (partition_no is really
-- MurmurHash3(record_key) mod 256, PartitionHasher.kt).

-- Instance registry rows (namastack-outbox-jdbc/.../JdbcOutboxInstanceRepository.kt insertInstanceQuery;
-- status ACTIVE | SHUTTING_DOWN | DEAD, OutboxInstanceStatus.kt; heartbeat every 5 s by default).
INSERT INTO outbox_instance (instance_id, hostname, port, status, started_at, last_heartbeat, created_at, updated_at)
VALUES ('6b0c2c1e-instance-a', 'app-1', 8080, 'ACTIVE',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 day', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 seconds',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 day', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 seconds');
-- Partition assignment (JdbcOutboxPartitionAssignmentRepository.kt insert/update with optimistic version).
INSERT INTO outbox_partition (partition_number, instance_id, version, updated_at)
VALUES (17, '6b0c2c1e-instance-a', 3, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 day');

-- 1. NEW, never attempted: REC.Builder.build() -> status NEW, failure_count 0, next_retry_at = created_at,
--    completed_at NULL, failure_reason NULL; REPO.save() -> insertRecordQuery. Due now (next_retry_at <= now).
INSERT INTO outbox_record (id, status, record_key, record_type, payload, context, partition_no, created_at, completed_at,
                           failure_count, failure_reason, next_retry_at, handler_id)
VALUES ('a0000000-0000-0000-0000-000000000001', 'NEW', 'order-1', 'com.example.OrderPlaced', '{"orderId":"order-1"}', NULL, 17,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '20 seconds', NULL,
        0, NULL, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '20 seconds', 'com.example.OrderHandler#handle');

-- 2. NEW, retrying with attempts: the handler threw twice. PRI.handle() catch -> REC.incrementFailureCount(),
--    REC.updateFailureException() (failure_reason = message, trimmed to 1000 chars); RET.handle() ->
--    REC.scheduleNextRetry(delay) (next_retry_at = now + delay) and REPO.save() (updateRecordQuery). Not due yet.
INSERT INTO outbox_record (id, status, record_key, record_type, payload, context, partition_no, created_at, completed_at,
                           failure_count, failure_reason, next_retry_at, handler_id)
VALUES ('a0000000-0000-0000-0000-000000000002', 'NEW', 'order-2', 'com.example.OrderPlaced', '{"orderId":"order-2"}',
        '{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}', 17,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '10 seconds', NULL,
        2, 'Connection refused', TIMESTAMPTZ '2026-12-02 12:00:00+00' + INTERVAL '2 seconds', 'com.example.OrderHandler#handle');

-- 3. COMPLETED (delete-completed-records=false, the default): BASE.completeRecord() -> REC.markCompleted()
--    (status COMPLETED, completed_at = now) -> REPO.save(). Kept forever by the library.
INSERT INTO outbox_record (id, status, record_key, record_type, payload, context, partition_no, created_at, completed_at,
                           failure_count, failure_reason, next_retry_at, handler_id)
VALUES ('a0000000-0000-0000-0000-000000000003', 'COMPLETED', 'order-3', 'com.example.OrderPlaced', '{"orderId":"order-3"}', NULL, 17,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '59 minutes 59 seconds',
        0, NULL, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour', 'com.example.OrderHandler#handle');

-- 4. COMPLETED after failures: retried once, then succeeded. failure_count and failure_reason keep the last
--    failure (markCompleted() does not reset them).
INSERT INTO outbox_record (id, status, record_key, record_type, payload, context, partition_no, created_at, completed_at,
                           failure_count, failure_reason, next_retry_at, handler_id)
VALUES ('a0000000-0000-0000-0000-000000000004', 'COMPLETED', 'order-4', 'com.example.OrderPlaced', '{"orderId":"order-4"}', NULL, 17,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour 59 minutes 57 seconds',
        1, 'Read timed out', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour 59 minutes 58 seconds', 'com.example.OrderHandler#handle');

-- 5. FAILED, retries exhausted: 4th failure makes failure_count 4 > max-retries 3 (REC.retriesExhausted());
--    RET.handle() passes on, FB.handle() finds no fallback handler, PERM.handle() -> REC.markFailed() -> REPO.save().
--    next_retry_at keeps the last scheduled retry; completed_at stays NULL.
INSERT INTO outbox_record (id, status, record_key, record_type, payload, context, partition_no, created_at, completed_at,
                           failure_count, failure_reason, next_retry_at, handler_id)
VALUES ('a0000000-0000-0000-0000-000000000005', 'FAILED', 'customer-9', 'com.example.CustomerRegistered', '{"customerId":"customer-9"}', NULL, 42,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 hours', NULL,
        4, '400 Bad Request: invalid e-mail', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours 59 minutes 46 seconds', 'com.example.MailHandler#handle');

-- 6. NEW but blocked behind the FAILED record of the same key: with stop-on-first-failure (default true) the
--    key query (REPO.recordKeysQueryWithPreviousFailureFilterTemplate) skips a key while an older record of
--    that key has completed_at IS NULL, so this due row is never picked while row 5 stays FAILED.
INSERT INTO outbox_record (id, status, record_key, record_type, payload, context, partition_no, created_at, completed_at,
                           failure_count, failure_reason, next_retry_at, handler_id)
VALUES ('a0000000-0000-0000-0000-000000000006', 'NEW', 'customer-9', 'com.example.CustomerUpdated', '{"customerId":"customer-9"}', NULL, 42,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours', NULL,
        0, NULL, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours', 'com.example.MailHandler#handle');

-- 7. FAILED at once: a non-retryable exception (retry.exclude-exceptions, or a policy whose shouldRetry() is
--    false) goes from PRI straight through RET (not retryable) and FB to PERM after one failure.
INSERT INTO outbox_record (id, status, record_key, record_type, payload, context, partition_no, created_at, completed_at,
                           failure_count, failure_reason, next_retry_at, handler_id)
VALUES ('a0000000-0000-0000-0000-000000000007', 'FAILED', 'order-7', 'com.example.OrderPlaced', '{"orderId":"order-7"}', NULL, 99,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '30 minutes', NULL,
        1, 'java.lang.IllegalArgumentException: unknown currency', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '30 minutes', 'com.example.OrderHandler#handle');

-- 8. COMPLETED through a fallback handler after retries were exhausted: FB.handle() invokes the fallback and
--    calls BASE.completeRecord(); failure_count 4 stays.
INSERT INTO outbox_record (id, status, record_key, record_type, payload, context, partition_no, created_at, completed_at,
                           failure_count, failure_reason, next_retry_at, handler_id)
VALUES ('a0000000-0000-0000-0000-000000000008', 'COMPLETED', 'order-8', 'com.example.OrderPlaced', '{"orderId":"order-8"}', NULL, 99,
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '5 hours', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '4 hours 59 minutes 44 seconds',
        4, 'Connection refused', TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '4 hours 59 minutes 46 seconds', 'com.example.OrderHandler#handle');

-- 9. delete-completed-records=true: BASE.completeRecord() -> REPO.deleteById(); no row remains.
-- 10. Actuator (namastack-outbox-actuator/src/main/kotlin/io/namastack/outbox/OutboxActuatorEndpoint.kt), on request:
--     REPO.deleteByStatus() / deleteByRecordKeyAndStatus() delete rows; nothing to insert.

-- Expected outbox_record by status: NEW 3 (one due, one backing off, one blocked), COMPLETED 3, FAILED 2.
