-- Reference schema of the four worker tables: the idempotency record, the
-- processed job, the inbox and the outbox (docs/design.md, "The worker
-- patterns behind the metrics"). Their names are the config's defaults;
-- teams rarely use these exact names: the exporter's config maps tables,
-- columns and status values. The exporter never creates or changes tables; this file is for the
-- demo, the tests and as a starting point.

CREATE TABLE IF NOT EXISTS workflow_idempotency_record (
  scope               text        NOT NULL,
  idempotency_key     text        NOT NULL,
  business_entity_id  text        NOT NULL,
  process_instance_id text        NULL,
  job_reference       text        NULL,
  status              text        NOT NULL,
  request_hash        text        NULL,
  result_payload      jsonb       NULL,
  error_code          text        NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  completed_at        timestamptz NULL,
  PRIMARY KEY (scope, idempotency_key)
);

CREATE TABLE IF NOT EXISTS workflow_processed_job (
  engine             text        NOT NULL,
  job_reference      text        NOT NULL,
  process_instance   text        NOT NULL,
  activity_id        text        NOT NULL,
  worker_name        text        NOT NULL,
  status             text        NOT NULL,
  completed_at       timestamptz NOT NULL DEFAULT now(),
  result_payload     jsonb       NULL,
  PRIMARY KEY (engine, job_reference)
);

CREATE TABLE IF NOT EXISTS message_inbox (
  source_system      text        NOT NULL,
  message_id         text        NOT NULL,
  message_type       text        NOT NULL,
  correlation_key    text        NOT NULL,
  payload_hash       text        NULL,
  processing_status  text        NOT NULL,
  received_at        timestamptz NOT NULL DEFAULT now(),
  processed_at       timestamptz NULL,
  error_message      text        NULL,
  PRIMARY KEY (source_system, message_id)
);

CREATE TABLE IF NOT EXISTS event_outbox (
  event_id          uuid        PRIMARY KEY,
  aggregate_type    text        NOT NULL,
  aggregate_id      text        NOT NULL,
  event_type        text        NOT NULL,
  idempotency_key   text        NOT NULL,
  payload           jsonb       NOT NULL,
  status            text        NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  published_at      timestamptz NULL
);
