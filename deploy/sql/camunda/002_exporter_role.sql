-- A login role for the exporter's engine-database mode (camunda[].database)
-- that can only read the engine tables it uses. Run it in the engine's
-- database as a role that may grant on the engine's tables; replace the
-- password (or use your secret manager) and point dsn_file or dsn_env at a
-- DSN for this role. With a schema other than public, grant USAGE on it and
-- qualify the tables. The exporter also reads in read-only transactions, and
-- `workflow-exporter check` warns when the role could write.
CREATE ROLE workflow_exporter_engine LOGIN PASSWORD 'change-me';
GRANT USAGE ON SCHEMA public TO workflow_exporter_engine;
GRANT SELECT ON act_ru_ext_task, act_hi_ext_task_log, act_hi_actinst, act_ru_incident, act_re_procdef, act_ru_execution, act_ru_job, act_hi_job_log, act_re_deployment, act_hi_procinst TO workflow_exporter_engine;
-- The engine's history level (its historyLevel property, docs/camunda-states.md#history-levels);
-- without it the level reads as unknown and the series that need history are absent. With
-- camunda[].url left out (the engine read from its database alone), the version comes from the
-- schema log and the flavor from the installation id's property.
GRANT SELECT ON act_ge_property, act_ge_schema_log TO workflow_exporter_engine;
-- Only for an engine read without camunda[].url below history level full: the process models
-- (the deployments' resources). The table also holds serialized process variables.
-- GRANT SELECT ON act_ge_bytearray TO workflow_exporter_engine;
ALTER ROLE workflow_exporter_engine SET default_transaction_read_only = on;
