-- Preset: spring-modulith-1
-- Library: Spring Modulith, JDBC event publication registry, 1.4.x (schema unchanged from 1.4.0 to 1.4.12)
-- Repository: spring-projects/spring-modulith (GitHub)
-- Files (read at tag 1.4.12, commit 2a5c9f60953b42c6e1b65891182c034eda1ed41c):
--   spring-modulith-events/spring-modulith-events-jdbc/src/main/resources/schema-postgresql.sql
--   spring-modulith-events/spring-modulith-events-jdbc/src/main/resources/schema-postgresql-archive.sql
-- Transformation: none. Both files are copied verbatim, one after the other.
-- The library runs these only when spring.modulith.events.jdbc.schema-initialization.enabled=true;
-- the archive file only when spring.modulith.events.completion-mode=archive
-- (DatabaseSchemaLocator.java). Table names are the defaults (no spring.modulith.events.jdbc.schema).

-- schema-postgresql.sql
CREATE TABLE IF NOT EXISTS event_publication
(
  id               UUID NOT NULL,
  listener_id      TEXT NOT NULL,
  event_type       TEXT NOT NULL,
  serialized_event TEXT NOT NULL,
  publication_date TIMESTAMP WITH TIME ZONE NOT NULL,
  completion_date  TIMESTAMP WITH TIME ZONE,
  PRIMARY KEY (id)
);
CREATE INDEX IF NOT EXISTS event_publication_serialized_event_hash_idx ON event_publication USING hash(serialized_event);
CREATE INDEX IF NOT EXISTS event_publication_by_completion_date_idx ON event_publication (completion_date);


-- schema-postgresql-archive.sql
CREATE TABLE IF NOT EXISTS event_publication_archive
(
    id               UUID NOT NULL,
    listener_id      TEXT NOT NULL,
    event_type       TEXT NOT NULL,
    serialized_event TEXT NOT NULL,
    publication_date TIMESTAMP WITH TIME ZONE NOT NULL,
    completion_date  TIMESTAMP WITH TIME ZONE,
    PRIMARY KEY (id)
    );
CREATE INDEX IF NOT EXISTS event_publication_archive_serialized_event_hash_idx ON event_publication_archive USING hash(serialized_event);
CREATE INDEX IF NOT EXISTS event_publication_archive_by_completion_date_idx ON event_publication_archive (completion_date);

