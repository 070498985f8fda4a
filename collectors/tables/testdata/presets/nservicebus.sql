-- Preset: nservicebus
-- Library: NServiceBus SQL persistence (NServiceBus.Persistence.Sql), outbox, PostgreSQL dialect
-- Repository: Particular/NServiceBus.Persistence.Sql (GitHub)
-- File (read at tag 9.0.3, commit 0543d3fe06e94f56b8b194100679f7cc88d89791; unchanged since c9acb71a, 2017-11-15,
--   so the same script ships in 7.x and 8.x):
--   src/ScriptBuilder/Outbox/Create_PostgreSql.sql
-- The script defines pg_temp.create_outbox_table(tablePrefix, schema), whose body builds the DDL as a string and
-- EXECUTEs it, and calls it with two Npgsql parameters bound by SqlDialect.ExecuteTableCommand() and
-- SqlDialect.PostgreSql.AddCreationScriptParameters():
--     @tablePrefix -> 'Sales_'  (default prefix: TableNameCleaner.Clean(endpointName) + "_", i.e. the endpoint name with
--                                '.' replaced by '_', plus '_'; SqlPersistenceConfig_TablePrefix.cs; here endpoint "Sales")
--     @schema      -> 'public'  (SqlDialect.PostgreSql() default Schema = "public")
-- Transformation: the statements below are the string the function EXECUTEs, with tableNameNonQuoted = 'Sales_OutboxData'
-- and schema = 'public' substituted; text, spacing and case otherwise verbatim. (Expanded so that the file runs one
-- statement at a time, e.g. with test/harness/pgtest.ExecFile, which splits at lines ending in ';' and so cannot run the
-- plpgsql function.) The original script follows in comments, verbatim except for its UTF-8 byte order mark.
-- Result: table "public"."Sales_OutboxData" with indexes "Index_DispatchedAt" and "Index_Dispatched". The index names
-- carry no prefix: a second endpoint's outbox table in the same schema gets no indexes (IF NOT EXISTS).

create table if not exists "public"."Sales_OutboxData"
    (
        "MessageId" character varying(200),
        "Dispatched" boolean not null default false,
        "DispatchedAt" timestamp,
        "PersistenceVersion" character varying(23),
        "Operations" jsonb not null,
        primary key ("MessageId")
    );
    create index if not exists "Index_DispatchedAt" on "public"."Sales_OutboxData" using btree ("DispatchedAt" asc nulls last);
    create index if not exists "Index_Dispatched" on "public"."Sales_OutboxData" using btree ("Dispatched" asc nulls last);

-- Original src/ScriptBuilder/Outbox/Create_PostgreSql.sql (tag 9.0.3):
-- create or replace function pg_temp.create_outbox_table(tablePrefix varchar, schema varchar)
--   returns integer as
--   $body$
--     declare
--       tableNameNonQuoted varchar;
--       createTable text;
--     begin
--         tableNameNonQuoted := tablePrefix || 'OutboxData';
--         createTable = 'create table if not exists "' || schema || '"."' || tableNameNonQuoted || '"
--     (
--         "MessageId" character varying(200),
--         "Dispatched" boolean not null default false,
--         "DispatchedAt" timestamp,
--         "PersistenceVersion" character varying(23),
--         "Operations" jsonb not null,
--         primary key ("MessageId")
--     );
--     create index if not exists "Index_DispatchedAt" on "' || schema || '"."' || tableNameNonQuoted || '" using btree ("DispatchedAt" asc nulls last);
--     create index if not exists "Index_Dispatched" on "' || schema || '"."' || tableNameNonQuoted || '" using btree ("Dispatched" asc nulls last);
-- ';
--         execute createTable;
--         return 0;
--     end;
--   $body$
--   language 'plpgsql';
--
-- select pg_temp.create_outbox_table(@tablePrefix, @schema);
