-- States written by Eventuate Tram into eventuate.message and eventuate.received_messages.
-- Reference time R = '2026-12-02 12:00:00+00' = 1796212800000 epoch milliseconds. creation_time is BIGINT epoch
-- milliseconds computed by PostgreSQL itself (PostgresDialect current-time expression
-- "(ROUND(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000))"), so it does not depend on any time zone.
-- Code read:
--   eventuate-foundation/eventuate-common @ 6de8d54d:
--     eventuate-common-jdbc/src/main/java/io/eventuate/common/jdbc/EventuateCommonJdbcOperations.java
--       (insertIntoMessageTable -> insertIntoMessageTableApplicationId, published = 0)
--     eventuate-common-jdbc/src/main/java/io/eventuate/common/jdbc/EventuateJdbcOperationsUtils.java
--       ("insert into %s%s(id, destination, headers, payload, creation_time, published, message_partition) values(?, ?, %s, %s, %s, ?, ?)")
--     eventuate-common-jdbc/src/main/java/io/eventuate/common/jdbc/sqldialect/PostgresDialect.java
--   eventuate-tram/eventuate-tram-core @ b50d8e7f:
--     eventuate-tram-producer-jdbc/src/main/java/io/eventuate/tram/messaging/producer/jdbc/MessageProducerJdbcImpl.java
--     eventuate-tram-consumer-jdbc/src/main/java/io/eventuate/tram/consumer/jdbc/SqlTableBasedDuplicateMessageDetector.java
--   eventuate-foundation/eventuate-cdc @ 14bfad0b:
--     eventuate-local-java-cdc-connector-polling/src/main/java/io/eventuate/local/polling/PollingDao.java
-- No status beyond published 0/1, no attempts, no error, no publish time. Rows are only deleted by the CDC service's
-- optional MessageCleaner (eventuate-cdc eventuate-local-java-cdc-connector-unified/.../pipeline/MessageCleaner.java,
-- MessageCleanerProperties.java: message and received_messages cleaning each off by default, max age 2 days, every
-- minute): "delete from eventuate.message where (ROUND(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000)) - creation_time > ?",
-- which ignores published (an unpublished message older than the max age is deleted too).
-- Ids, headers and payloads are illustrative.

-- 1. Pending: MessageProducerJdbcImpl.send() -> EventuateCommonJdbcOperations.insertIntoMessageTable(..., published=false):
--    published 0, creation_time = now in ms, message_partition NULL (OutboxPartitioningSpec.DEFAULT).
--    With the polling CDC this row is picked by "SELECT * FROM eventuate.message WHERE published = 0 ... ORDER BY id ASC".
insert into eventuate.message(id, destination, headers, payload, creation_time, published, message_partition)
values('0000019ad7e7b5a8-0242ac1200040000', 'com.example.Order',
       '{"ID":"0000019ad7e7b5a8-0242ac1200040000","PARTITION_ID":"order-1","DESTINATION":"com.example.Order","event-aggregate-type":"com.example.Order","event-aggregate-id":"order-1","event-type":"com.example.OrderCreated"}',
       '{"orderId":"order-1"}', 1796212800000 - 10000, 0, NULL);

-- 2. Pending for a long time: same INSERT; the polling CDC is down or behind (or the WAL CDC is used, see 4).
insert into eventuate.message(id, destination, headers, payload, creation_time, published, message_partition)
values('0000019ad7b0c6d0-0242ac1200040000', 'com.example.Order',
       '{"ID":"0000019ad7b0c6d0-0242ac1200040000","PARTITION_ID":"order-2","DESTINATION":"com.example.Order"}',
       '{"orderId":"order-2"}', 1796212800000 - 3600000, 0, NULL);

-- 3. Published by the polling CDC: PollingDao.processEvents() sends the batch, then markEventsAsProcessed():
--    "UPDATE eventuate.message SET published = 1 WHERE id in (:ids)". The publish time is not recorded.
insert into eventuate.message(id, destination, headers, payload, creation_time, published, message_partition)
values('0000019ad7a5b6c0-0242ac1200040000', 'com.example.Order',
       '{"ID":"0000019ad7a5b6c0-0242ac1200040000","PARTITION_ID":"order-3","DESTINATION":"com.example.Order"}',
       '{"orderId":"order-3"}', 1796212800000 - 7200000, 0, NULL);
UPDATE eventuate.message SET published = 1 WHERE id in ('0000019ad7a5b6c0-0242ac1200040000');

-- 4. WAL (logical replication) CDC: the reader streams the insert from slot eventuate_slot and never updates the
--    row, so a sent message stays published = 0 exactly like row 1; only the slot's lag tells the backlog.
insert into eventuate.message(id, destination, headers, payload, creation_time, published, message_partition)
values('0000019ad7e7ff00-0242ac1200040000', 'com.example.Customer',
       '{"ID":"0000019ad7e7ff00-0242ac1200040000","DESTINATION":"com.example.Customer"}',
       '{"customerId":"c-4"}', 1796212800000 - 5000, 0, NULL);

-- 5. Consumer-side deduplication: SqlTableBasedDuplicateMessageDetector.doWithMessage() runs, in the handler's
--    transaction, "insert into eventuate.received_messages(consumer_id, message_id, creation_time) values(?, ?, <now ms>)";
--    a duplicate key means "already handled" and the handler is skipped. If the handler throws, the transaction
--    (and this row) rolls back. The published column keeps its default 0: no Tram code writes it.
insert into eventuate.received_messages(consumer_id, message_id, creation_time)
values('com.example.InventoryServiceConsumer', '0000019ad7a5b6c0-0242ac1200040000', 1796212800000 - 7199000);
insert into eventuate.received_messages(consumer_id, message_id, creation_time)
values('com.example.BillingServiceConsumer', '0000019ad7a5b6c0-0242ac1200040000', 1796212800000 - 7198500);

-- 6. MessageCleaner (when enabled) deletes rows older than its max age from both tables; nothing to insert.

-- Expected: eventuate.message published=0: 3 rows (oldest 1 hour), published=1: 1 row; received_messages: 2 rows.
