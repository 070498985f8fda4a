-- Preset: debezium-outbox
-- Library: Debezium outbox event router SMT (io.debezium.transforms.outbox.EventRouter), default configuration
-- Repository: debezium/debezium (GitHub)
-- File: documentation/modules/ROOT/pages/transformations/outbox-event-router.adoc, section "Basic outbox table"
--   (stored version at commit 013581962634deea64f0dcc2e6c0b513db2af942)
-- DERIVED, NOT COPIED: Debezium creates no table; the document lists the columns the SMT expects by default as a
-- psql \d listing:
--     id            | uuid                   | not null
--     aggregatetype | character varying(255) | not null
--     aggregateid   | character varying(255) | not null
--     type          | character varying(255) | not null
--     payload       | jsonb                  |
-- Transformation: that listing written as CREATE TABLE. The document names no table and no key; the table name
-- outboxevent (schema inventory) is the one in the document's example change event ("schema": "inventory",
-- "table": "outboxevent"); the primary key on id is an assumption (the column is the event's unique id, and
-- PostgreSQL logical decoding needs a replica identity for the DELETEs of the insert-then-delete pattern).
-- Column option defaults (same document): table.field.event.id = id, table.field.event.key = aggregateid,
-- table.field.event.payload = payload, route.by.field = aggregatetype, table.field.event.timestamp unset
-- (the message gets the Debezium event time). The Debezium Quarkus outbox extension's entity (default table
-- "OutboxEvent") adds a "timestamp" column and, optionally, tracingspancontext; not reproduced here.

CREATE SCHEMA IF NOT EXISTS inventory;

CREATE TABLE inventory.outboxevent (
    id            uuid                   NOT NULL,
    aggregatetype character varying(255) NOT NULL,
    aggregateid   character varying(255) NOT NULL,
    type          character varying(255) NOT NULL,
    payload       jsonb,
    PRIMARY KEY (id)
);
