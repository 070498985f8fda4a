-- Preset: spring-modulith-2
-- Library: Spring Modulith, JDBC event publication registry, 2.0.x, "v2" schema (the default since 2.0.0:
--   JdbcConfigurationProperties.useLegacyStructure defaults to false, JdbcRepositorySettings.getSchemaVersion() -> V2,
--   JdbcEventPublicationAutoConfiguration picks JdbcEventPublicationRepositoryV2). Schema unchanged from 2.0.0 to 2.0.7.
-- Repository: spring-projects/spring-modulith (GitHub)
-- Files (read at tag 2.0.7, commit 65f72908f82248a3d15c96265dd1969c028955f8; identical at 2.0.3):
--   spring-modulith-events/spring-modulith-events-jdbc/src/main/resources/org/springframework/modulith/events/jdbc/schemas/v2/schema-postgresql.sql
--   spring-modulith-events/spring-modulith-events-jdbc/src/main/resources/org/springframework/modulith/events/jdbc/schemas/v2/schema-postgresql-archive.sql
-- Transformation: none. Both files are copied verbatim, one after the other.
-- The library runs these only when spring.modulith.events.jdbc.schema-initialization.enabled=true;
-- the archive file only in completion mode ARCHIVE (JdbcRepositorySettings.loadSchema()).
-- CREATE TABLE IF NOT EXISTS does not add the three v2 columns to a table created by 1.x: that upgrade is manual.

-- schemas/v2/schema-postgresql.sql
CREATE TABLE IF NOT EXISTS event_publication
(
  id                     UUID NOT NULL,
  listener_id            TEXT NOT NULL,
  event_type             TEXT NOT NULL,
  serialized_event       TEXT NOT NULL,
  publication_date       TIMESTAMP WITH TIME ZONE NOT NULL,
  completion_date        TIMESTAMP WITH TIME ZONE,
  status                 TEXT,
  completion_attempts    INT,
  last_resubmission_date TIMESTAMP WITH TIME ZONE,
  PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS event_publication_serialized_event_hash_idx ON event_publication USING hash(serialized_event);
CREATE INDEX IF NOT EXISTS event_publication_by_completion_date_idx ON event_publication (completion_date);


-- schemas/v2/schema-postgresql-archive.sql
CREATE TABLE IF NOT EXISTS event_publication_archive
(
  id                     UUID NOT NULL,
  listener_id            TEXT NOT NULL,
  event_type             TEXT NOT NULL,
  serialized_event       TEXT NOT NULL,
  publication_date       TIMESTAMP WITH TIME ZONE NOT NULL,
  completion_date        TIMESTAMP WITH TIME ZONE,
  status                 TEXT,
  completion_attempts    INT,
  last_resubmission_date TIMESTAMP WITH TIME ZONE,
  PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS event_publication_archive_serialized_event_hash_idx ON event_publication_archive USING hash(serialized_event);
CREATE INDEX IF NOT EXISTS event_publication_archive_by_completion_date_idx ON event_publication_archive (completion_date);
