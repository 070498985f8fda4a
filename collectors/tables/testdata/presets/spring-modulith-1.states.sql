-- States written by Spring Modulith 1.4.x (tag 1.4.12) into event_publication / event_publication_archive.
-- Reference time R = '2026-12-02 12:00:00+00'; every time below is R minus an exact interval.
-- Code read: spring-modulith-events/spring-modulith-events-jdbc/src/main/java/org/springframework/modulith/events/jdbc/JdbcEventPublicationRepository.java
--            spring-modulith-events/spring-modulith-events-core/src/main/java/org/springframework/modulith/events/core/DefaultEventPublicationRegistry.java
--            spring-modulith-events/spring-modulith-events-core/src/main/java/org/springframework/modulith/events/support/CompletionRegisteringAdvisor.java
-- 1.x has only two row shapes: incomplete (completion_date IS NULL) and completed. A failing listener
-- writes nothing (DefaultEventPublicationRegistry.markFailed only unregisters the in-memory publication),
-- so "failed" and "pending" look alike; there is no attempt or error column.

-- 1. Pending: just published, listener not finished yet.
--    JdbcEventPublicationRepository.create():
--    INSERT INTO EVENT_PUBLICATION (ID, EVENT_TYPE, LISTENER_ID, PUBLICATION_DATE, SERIALIZED_EVENT) VALUES (?, ?, ?, ?, ?)
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event)
VALUES ('11111111-0000-0000-0000-000000000001', 'com.example.order.OrderPlaced',
        'com.example.inventory.InventoryListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '30 seconds',
        '{"orderId":"o-1"}');

-- 2. Failed listener: same INSERT as above; the listener threw, CompletionRegisteringAdvisor.handleFailure()
--    called registry.markFailed(), which in 1.4.12 issues no SQL. The row stays incomplete until a
--    resubmission (IncompleteEventPublications.resubmitIncompletePublications*, or
--    spring.modulith.events.republish-outstanding-events-on-restart) completes it. Only its age tells it apart.
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event)
VALUES ('11111111-0000-0000-0000-000000000002', 'com.example.order.OrderPlaced',
        'com.example.billing.BillingListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours',
        '{"orderId":"o-2"}');

-- 3. Completed, completion mode UPDATE (the default, CompletionMode.from(): UPDATE when the property is unset).
--    JdbcEventPublicationRepository.markCompleted(): SQL_STATEMENT_UPDATE_BY_EVENT_AND_LISTENER_ID
--    UPDATE EVENT_PUBLICATION SET COMPLETION_DATE = ? WHERE LISTENER_ID = ? AND COMPLETION_DATE IS NULL AND SERIALIZED_EVENT = ?
--    (or SQL_STATEMENT_UPDATE_BY_ID). The row is kept until deleteCompletedPublications*/deletePublicationsOlderThan.
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event)
VALUES ('11111111-0000-0000-0000-000000000003', 'com.example.order.OrderPlaced',
        'com.example.inventory.InventoryListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour',
        '{"orderId":"o-3"}');
UPDATE event_publication SET completion_date = TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '59 minutes'
WHERE listener_id = 'com.example.inventory.InventoryListener.on(com.example.order.OrderPlaced)'
  AND completion_date IS NULL AND serialized_event = '{"orderId":"o-3"}';

-- 4. Completed, completion mode ARCHIVE: the row is copied into event_publication_archive with its
--    completion date and deleted from event_publication.
--    JdbcEventPublicationRepository.markCompleted(): SQL_STATEMENT_COPY_TO_ARCHIVE_BY_EVENT_AND_LISTENER_ID
--    then SQL_STATEMENT_DELETE_BY_EVENT_AND_LISTENER_ID.
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event)
VALUES ('11111111-0000-0000-0000-000000000004', 'com.example.order.OrderShipped',
        'com.example.mail.MailListener.on(com.example.order.OrderShipped)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 hours',
        '{"orderId":"o-4"}');
INSERT INTO event_publication_archive (ID, LISTENER_ID, EVENT_TYPE, SERIALIZED_EVENT, PUBLICATION_DATE, COMPLETION_DATE)
SELECT ID, LISTENER_ID, EVENT_TYPE, SERIALIZED_EVENT, PUBLICATION_DATE, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours 59 minutes 58 seconds'
  FROM event_publication
 WHERE LISTENER_ID = 'com.example.mail.MailListener.on(com.example.order.OrderShipped)'
   AND SERIALIZED_EVENT = '{"orderId":"o-4"}'
   AND NOT EXISTS (SELECT 1 FROM event_publication_archive WHERE ID = EVENT_PUBLICATION.ID);
DELETE FROM event_publication
 WHERE LISTENER_ID = 'com.example.mail.MailListener.on(com.example.order.OrderShipped)'
   AND SERIALIZED_EVENT = '{"orderId":"o-4"}';

-- 5. Completed, completion mode DELETE: SQL_STATEMENT_DELETE_BY_EVENT_AND_LISTENER_ID removes the row;
--    nothing remains to insert.

-- Expected: event_publication has 3 rows (2 incomplete, 1 completed), event_publication_archive has 1.
