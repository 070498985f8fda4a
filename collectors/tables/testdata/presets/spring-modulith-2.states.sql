-- States written by Spring Modulith 2.0.x (tag 2.0.7; same SQL at 2.0.3) into the v2 event_publication /
-- event_publication_archive tables.
-- Reference time R = '2026-12-02 12:00:00+00'; every time below is R minus (or plus) an exact interval.
-- Code read:
--   J = spring-modulith-events/spring-modulith-events-jdbc/src/main/java/org/springframework/modulith/events/jdbc/JdbcEventPublicationRepositoryV2.java
--   D = spring-modulith-events/spring-modulith-events-core/src/main/java/org/springframework/modulith/events/core/DefaultEventPublication.java
--   G = spring-modulith-events/spring-modulith-events-core/src/main/java/org/springframework/modulith/events/core/DefaultEventPublicationRegistry.java
--   A = spring-modulith-events/spring-modulith-events-core/src/main/java/org/springframework/modulith/events/support/CompletionRegisteringAdvisor.java
-- Status values (EventPublication.Status): PUBLISHED, PROCESSING, COMPLETED, FAILED, RESUBMITTED.
-- The library's own readings (J): completed = COMPLETION_DATE IS NOT NULL OR STATUS = 'COMPLETED';
-- failed = STATUS = 'FAILED' OR (STATUS IS NULL AND COMPLETION_DATE IS NULL).

-- 1. PUBLISHED: J.create() inserts the publication built by D's constructor:
--    status PUBLISHED, completion_attempts 1, last_resubmission_date = publication_date (not NULL).
--    INSERT INTO EVENT_PUBLICATION (ID, EVENT_TYPE, LISTENER_ID, PUBLICATION_DATE, SERIALIZED_EVENT, STATUS, COMPLETION_ATTEMPTS, LAST_RESUBMISSION_DATE)
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
VALUES ('22222222-0000-0000-0000-000000000001', 'com.example.order.OrderPlaced',
        'com.example.inventory.InventoryListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '5 seconds', '{"orderId":"o-1"}',
        'PUBLISHED', 1, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '5 seconds');

-- 2. PROCESSING: the listener started. A.invoke() -> G.markProcessing() -> J.markProcessing():
--    UPDATE EVENT_PUBLICATION SET STATUS = 'PROCESSING' WHERE ID = ? AND STATUS != 'PROCESSING'
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
VALUES ('22222222-0000-0000-0000-000000000002', 'com.example.order.OrderPlaced',
        'com.example.billing.BillingListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '40 seconds', '{"orderId":"o-2"}',
        'PUBLISHED', 1, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '40 seconds');
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-000000000002' AND STATUS != 'PROCESSING';

-- 3. COMPLETED, completion mode UPDATE (default): A -> G.markCompleted() -> J.markCompleted():
--    UPDATE EVENT_PUBLICATION SET STATUS = 'COMPLETED', COMPLETION_DATE = ? WHERE ID = ?   (SQL_STATEMENT_UPDATE_BY_ID)
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
VALUES ('22222222-0000-0000-0000-000000000003', 'com.example.order.OrderPlaced',
        'com.example.inventory.InventoryListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour', '{"orderId":"o-3"}',
        'PUBLISHED', 1, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour');
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-000000000003' AND STATUS != 'PROCESSING';
UPDATE event_publication SET STATUS = 'COMPLETED', COMPLETION_DATE = TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '59 minutes 58 seconds'
WHERE ID = '22222222-0000-0000-0000-000000000003';

-- 4. FAILED after the first attempt: the listener threw; A.handleFailure() -> G.markFailed() -> J.markFailed():
--    UPDATE EVENT_PUBLICATION SET STATUS = 'FAILED' WHERE ID = ? AND STATUS != 'FAILED'
--    completion_date stays NULL, completion_attempts stays 1. No error text is stored.
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
VALUES ('22222222-0000-0000-0000-000000000004', 'com.example.order.OrderPlaced',
        'com.example.billing.BillingListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours', '{"orderId":"o-4"}',
        'PUBLISHED', 1, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours');
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-000000000004' AND STATUS != 'PROCESSING';
UPDATE event_publication SET STATUS = 'FAILED' WHERE ID = '22222222-0000-0000-0000-000000000004' AND STATUS != 'FAILED';

-- 5. RESUBMITTED: G.processFailedPublications() (FailedEventPublications.resubmit) -> J.markResubmitted():
--    UPDATE EVENT_PUBLICATION SET STATUS = 'RESUBMITTED', COMPLETION_ATTEMPTS = COMPLETION_ATTEMPTS + 1,
--           LAST_RESUBMISSION_DATE = ? WHERE ID = ? AND STATUS != 'RESUBMITTED'
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
VALUES ('22222222-0000-0000-0000-000000000005', 'com.example.order.OrderPlaced',
        'com.example.mail.MailListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 hours', '{"orderId":"o-5"}',
        'PUBLISHED', 1, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 hours');
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-000000000005' AND STATUS != 'PROCESSING';
UPDATE event_publication SET STATUS = 'FAILED' WHERE ID = '22222222-0000-0000-0000-000000000005' AND STATUS != 'FAILED';
UPDATE event_publication SET STATUS = 'RESUBMITTED', COMPLETION_ATTEMPTS = COMPLETION_ATTEMPTS + 1,
       LAST_RESUBMISSION_DATE = TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '10 seconds'
WHERE ID = '22222222-0000-0000-0000-000000000005' AND STATUS != 'RESUBMITTED';

-- 6. FAILED again after two resubmissions (retried with attempts): FAILED -> RESUBMITTED (attempts 2)
--    -> PROCESSING -> FAILED -> RESUBMITTED (attempts 3) -> PROCESSING -> FAILED. Same J methods as above.
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
VALUES ('22222222-0000-0000-0000-000000000006', 'com.example.order.OrderPlaced',
        'com.example.billing.BillingListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 day', '{"orderId":"o-6"}',
        'PUBLISHED', 1, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 day');
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-000000000006' AND STATUS != 'PROCESSING';
UPDATE event_publication SET STATUS = 'FAILED' WHERE ID = '22222222-0000-0000-0000-000000000006' AND STATUS != 'FAILED';
UPDATE event_publication SET STATUS = 'RESUBMITTED', COMPLETION_ATTEMPTS = COMPLETION_ATTEMPTS + 1,
       LAST_RESUBMISSION_DATE = TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '12 hours'
WHERE ID = '22222222-0000-0000-0000-000000000006' AND STATUS != 'RESUBMITTED';
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-000000000006' AND STATUS != 'PROCESSING';
UPDATE event_publication SET STATUS = 'FAILED' WHERE ID = '22222222-0000-0000-0000-000000000006' AND STATUS != 'FAILED';
UPDATE event_publication SET STATUS = 'RESUBMITTED', COMPLETION_ATTEMPTS = COMPLETION_ATTEMPTS + 1,
       LAST_RESUBMISSION_DATE = TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '1 hour'
WHERE ID = '22222222-0000-0000-0000-000000000006' AND STATUS != 'RESUBMITTED';
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-000000000006' AND STATUS != 'PROCESSING';
UPDATE event_publication SET STATUS = 'FAILED' WHERE ID = '22222222-0000-0000-0000-000000000006' AND STATUS != 'FAILED';

-- 7. FAILED by the staleness monitor: G.markStalePublicationsFailed() marks PUBLISHED / PROCESSING / RESUBMITTED
--    rows older than spring.modulith.events.staleness.* (all default to 0 = off) with the same J.markFailed() SQL.
--    Here: a PROCESSING row that was abandoned (e.g. the instance died mid-listener).
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
VALUES ('22222222-0000-0000-0000-000000000007', 'com.example.order.OrderPlaced',
        'com.example.inventory.InventoryListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '6 hours', '{"orderId":"o-7"}',
        'PUBLISHED', 1, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '6 hours');
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-000000000007' AND STATUS != 'PROCESSING';
UPDATE event_publication SET STATUS = 'FAILED' WHERE ID = '22222222-0000-0000-0000-000000000007' AND STATUS != 'FAILED';

-- 8. Legacy rows from 1.x in a table that was ALTERed to v2: status, completion_attempts and
--    last_resubmission_date NULL. J.findFailedPublications() counts (STATUS IS NULL AND COMPLETION_DATE IS NULL)
--    as failed; J.findCompletedPublications() counts COMPLETION_DATE IS NOT NULL as completed. Written by the
--    1.x INSERT (see spring-modulith-1.states.sql), not by 2.x code.
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event)
VALUES ('22222222-0000-0000-0000-000000000008', 'com.example.order.OrderPlaced',
        'com.example.billing.BillingListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '30 days', '{"orderId":"o-8"}');
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, completion_date)
VALUES ('22222222-0000-0000-0000-000000000009', 'com.example.order.OrderPlaced',
        'com.example.inventory.InventoryListener.on(com.example.order.OrderPlaced)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '30 days', '{"orderId":"o-9"}',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '30 days' + INTERVAL '1 second');

-- 9. COMPLETED, completion mode ARCHIVE: J.markCompleted() runs SQL_STATEMENT_COPY_TO_ARCHIVE_BY_ID
--    (writes STATUS 'COMPLETED' and the completion date into the archive, keeps COMPLETION_ATTEMPTS and
--    LAST_RESUBMISSION_DATE) and then SQL_STATEMENT_DELETE_BY_ID.
INSERT INTO event_publication (id, event_type, listener_id, publication_date, serialized_event, status, completion_attempts, last_resubmission_date)
VALUES ('22222222-0000-0000-0000-00000000000a', 'com.example.order.OrderShipped',
        'com.example.mail.MailListener.on(com.example.order.OrderShipped)',
        TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '4 hours', '{"orderId":"o-10"}',
        'PUBLISHED', 1, TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '4 hours');
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-00000000000a' AND STATUS != 'PROCESSING';
UPDATE event_publication SET STATUS = 'FAILED' WHERE ID = '22222222-0000-0000-0000-00000000000a' AND STATUS != 'FAILED';
UPDATE event_publication SET STATUS = 'RESUBMITTED', COMPLETION_ATTEMPTS = COMPLETION_ATTEMPTS + 1,
       LAST_RESUBMISSION_DATE = TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '3 hours'
WHERE ID = '22222222-0000-0000-0000-00000000000a' AND STATUS != 'RESUBMITTED';
UPDATE event_publication SET STATUS = 'PROCESSING' WHERE ID = '22222222-0000-0000-0000-00000000000a' AND STATUS != 'PROCESSING';
INSERT INTO event_publication_archive (ID, LISTENER_ID, EVENT_TYPE, SERIALIZED_EVENT, PUBLICATION_DATE, STATUS, COMPLETION_DATE, COMPLETION_ATTEMPTS, LAST_RESUBMISSION_DATE)
SELECT ID, LISTENER_ID, EVENT_TYPE, SERIALIZED_EVENT, PUBLICATION_DATE, 'COMPLETED',
       TIMESTAMPTZ '2026-12-02 12:00:00+00' - INTERVAL '2 hours 59 minutes 59 seconds', COMPLETION_ATTEMPTS, LAST_RESUBMISSION_DATE
  FROM event_publication
 WHERE ID = '22222222-0000-0000-0000-00000000000a'
   AND NOT EXISTS (SELECT 1 FROM event_publication_archive WHERE ID = EVENT_PUBLICATION.ID);
DELETE FROM event_publication WHERE ID = '22222222-0000-0000-0000-00000000000a';

-- 10. Completion mode DELETE: SQL_STATEMENT_DELETE_BY_ID removes the row; nothing remains.

-- Expected event_publication by status: PUBLISHED 1, PROCESSING 1, COMPLETED 1, FAILED 3, RESUBMITTED 1,
-- NULL 2 (one incomplete, one completed); event_publication_archive: 1 COMPLETED row with completion_attempts 2.
