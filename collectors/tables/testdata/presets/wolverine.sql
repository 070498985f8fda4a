-- Preset: wolverine
-- Library: Wolverine (JasperFx) durable inbox/outbox, PostgreSQL message store (WolverineFx.Postgresql)
-- Repository: JasperFx/wolverine (GitHub)
-- Files (read at tag V6.29.2, commit 38b65dd0b14d99ac9b2d5f81759aed38c683a481):
--   src/Persistence/Wolverine.Postgresql/Schema/IncomingEnvelopeTable.cs
--   src/Persistence/Wolverine.Postgresql/Schema/OutgoingEnvelopeTable.cs
--   src/Persistence/Wolverine.Postgresql/Schema/DeadLettersTable.cs
--   src/Persistence/Wolverine.RDBMS/DatabaseConstants.cs (table and column names)
--   src/Persistence/Wolverine.Postgresql/PostgresqlBackedPersistence.cs (schema name default "wolverine")
--   src/Wolverine/DurabilitySettings.cs (MessageIdentity IdOnly, InboxStaleTime/OutboxStaleTime null,
--     EnableInboxPartitioning false, DeadLetterQueueExpirationEnabled false by default)
-- DERIVED, NOT COPIED: Wolverine ships no SQL; Weasel (JasperFx/weasel 9.25.1, the version pinned in Wolverine's
-- Directory.Packages.props; read at commit 062b2506) turns these Table objects into DDL at startup
-- (AutoCreate.CreateOrUpdate). This file is that DDL written by hand for the DEFAULT settings, following
-- Weasel.Postgresql: Tables/Table.cs WriteCreateStatement + PrimaryKeyDeclaration (CREATE TABLE IF NOT EXISTS,
-- constraint pkey_<table>_<columns>), Tables/TableColumn.cs Declaration() ("NULL"/"NOT NULL", " DEFAULT ..."),
-- Tables/IndexDefinition.cs ToDDL() (USING btree, WHERE (<predicate>)), PostgresqlProvider.cs + NpgsqlTypeMapping.cs
-- (Guid -> uuid, string -> varchar, int -> integer, DateTimeOffset -> timestamp with time zone, bool -> boolean),
-- PostgresqlMigrator.cs (schema created first; Weasel wraps CREATE SCHEMA IF NOT EXISTS in a DO block that
-- swallows duplicate_schema/unique_violation).
-- Settings that change this DDL:
--   MessageIdentity = IdAndDestination -> received_at becomes part of the primary key of incoming and dead letters;
--   InboxStaleTime / OutboxStaleTime   -> extra column "timestamp" timestamp with time zone DEFAULT (now() at time zone 'utc')
--                                         on incoming / outgoing;
--   EnableInboxPartitioning            -> incoming partitioned BY LIST (status) into _incoming/_scheduled/_handled;
--   DeadLetterQueueExpirationEnabled   -> dead letters gain expires timestamp with time zone and an index on it.
-- The same store also creates node/agent tables (wolverine_nodes, wolverine_node_assignments,
-- wolverine_control_queue, wolverine_node_records, wolverine_agent_restrictions, ...) not reproduced here.

CREATE SCHEMA IF NOT EXISTS wolverine;

CREATE TABLE IF NOT EXISTS wolverine.wolverine_outgoing_envelopes (
    id uuid NOT NULL,
    owner_id integer NOT NULL,
    destination varchar NOT NULL,
    deliver_by timestamp with time zone NULL,
    body bytea NOT NULL,
    attempts integer NULL DEFAULT 0,
    message_type varchar NOT NULL,
    CONSTRAINT pkey_wolverine_outgoing_envelopes_id PRIMARY KEY (id)
);

CREATE INDEX idx_wolverine_outgoing_envelopes_owner ON wolverine.wolverine_outgoing_envelopes USING btree (owner_id) WHERE (owner_id <> 0);

CREATE TABLE IF NOT EXISTS wolverine.wolverine_incoming_envelopes (
    id uuid NOT NULL,
    status varchar NOT NULL,
    owner_id integer NOT NULL,
    execution_time timestamp with time zone NULL DEFAULT NULL,
    attempts integer NULL DEFAULT 0,
    body bytea NOT NULL,
    message_type varchar NOT NULL,
    received_at varchar NULL,
    keep_until timestamp with time zone NULL,
    CONSTRAINT pkey_wolverine_incoming_envelopes_id PRIMARY KEY (id)
);

CREATE INDEX idx_wolverine_incoming_envelopes_owner ON wolverine.wolverine_incoming_envelopes USING btree (owner_id) WHERE (owner_id <> 0);

CREATE TABLE IF NOT EXISTS wolverine.wolverine_dead_letters (
    id uuid NOT NULL,
    execution_time timestamp with time zone NULL DEFAULT NULL,
    body bytea NOT NULL,
    message_type varchar NOT NULL,
    received_at varchar NULL,
    source varchar NULL,
    exception_type varchar NULL,
    exception_message varchar NULL,
    sent_at timestamp with time zone NULL,
    replayable boolean NULL,
    CONSTRAINT pkey_wolverine_dead_letters_id PRIMARY KEY (id)
);

CREATE INDEX idx_wolverine_dead_letters_replayable ON wolverine.wolverine_dead_letters USING btree (replayable) WHERE (replayable = true);
