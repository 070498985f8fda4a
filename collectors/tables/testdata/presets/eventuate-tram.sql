-- Preset: eventuate-tram
-- Library: Eventuate Tram (transactional messaging), PostgreSQL schema shipped by eventuate-common
-- Repository: eventuate-foundation/eventuate-common (GitHub); no release tags in the mirror, read at master
--   commit 6de8d54d50049f0a6444a79f74c90670905754f4 (2026-04-01, version=0.22.0-SNAPSHOT in gradle.properties;
--   postgres/2.initialize-database.sql last changed in fc504a5b "Implemented #118 - Implement inserting into sharded message table").
-- Files: postgres/1.initialize-database.sql, postgres/2.initialize-database.sql (the eventuate-postgres image's
--   docker-entrypoint-initdb.d scripts, postgres/Dockerfile).
-- Transformation: none; both files copied verbatim, one after the other. Not included:
--   postgres/3.initialize-database.sql (pg_create_logical_replication_slot('eventuate_slot'/'eventuate_slot2', 'wal2json'):
--     needs the wal2json plugin and wal_level=logical; only for the WAL-reading CDC),
--   postgres/4.initialize-database-json.sql and 5.initialize-database-db-id.sql (optional variants the image
--     applies only when asked: JSON payload/headers columns; a dbid BIGINT key from a sequence).
-- The same received_messages DDL (with the published column) is in
--   eventuate-common-flyway/src/main/resources/flyway/postgresql/V2__tram_database_postgres.sql.
-- File 1 also creates the Eventuate Local (event sourcing) tables events/entities/snapshots, unused by Tram,
-- and cdc_monitoring, which the CDC service updates (CdcMonitoringDao).

-- postgres/1.initialize-database.sql
CREATE SCHEMA eventuate;

DROP TABLE IF EXISTS eventuate.events CASCADE;
DROP TABLE IF EXISTS eventuate.entities CASCADE;
DROP TABLE IF EXISTS eventuate.snapshots CASCADE;
DROP TABLE IF EXISTS eventuate.cdc_monitoring CASCADE;

CREATE TABLE eventuate.events (
  event_id VARCHAR(1000) PRIMARY KEY,
  event_type VARCHAR(1000),
  event_data VARCHAR(1000) NOT NULL,
  entity_type VARCHAR(1000) NOT NULL,
  entity_id VARCHAR(1000) NOT NULL,
  triggering_event VARCHAR(1000),
  metadata VARCHAR(1000),
  published SMALLINT DEFAULT 0
);

CREATE INDEX events_idx ON eventuate.events(entity_type, entity_id, event_id);
CREATE INDEX events_published_idx ON eventuate.events(published, event_id);

CREATE TABLE eventuate.entities (
  entity_type VARCHAR(1000),
  entity_id VARCHAR(1000),
  entity_version VARCHAR(1000) NOT NULL,
  PRIMARY KEY(entity_type, entity_id)
);

CREATE INDEX entities_idx ON eventuate.entities(entity_type, entity_id);

CREATE TABLE eventuate.snapshots (
  entity_type VARCHAR(1000),
  entity_id VARCHAR(1000),
  entity_version VARCHAR(1000),
  snapshot_type VARCHAR(1000) NOT NULL,
  snapshot_json VARCHAR(1000) NOT NULL,
  triggering_events VARCHAR(1000),
  PRIMARY KEY(entity_type, entity_id, entity_version)
);

CREATE TABLE eventuate.cdc_monitoring (
  reader_id VARCHAR(1000) PRIMARY KEY,
  last_time BIGINT
);

-- postgres/2.initialize-database.sql
DROP TABLE IF EXISTS eventuate.message CASCADE;
DROP TABLE IF EXISTS eventuate.received_messages CASCADE;

CREATE TABLE eventuate.message (
  id VARCHAR(1000) PRIMARY KEY,
  destination TEXT NOT NULL,
  headers TEXT NOT NULL,
  payload TEXT NOT NULL,
  published SMALLINT DEFAULT 0,
  message_partition SMALLINT,
  creation_time BIGINT
);

CREATE INDEX message_published_idx ON eventuate.message(published, id);

CREATE TABLE eventuate.received_messages (
  consumer_id VARCHAR(1000),
  message_id VARCHAR(1000),
  creation_time BIGINT,
  published SMALLINT DEFAULT 0,
  PRIMARY KEY(consumer_id, message_id)
);

CREATE TABLE eventuate.offset_store(
  client_name VARCHAR(255) NOT NULL PRIMARY KEY,
  serialized_offset VARCHAR(255)
);
