-- Sample rows for `make run` and the dashboards' live test (test/e2e): a
-- little of every situation the dashboards and alerts care about, with
-- timestamps relative to now().
INSERT INTO workflow_idempotency_record (scope, idempotency_key, business_entity_id, process_instance_id, job_reference, status, error_code, created_at, updated_at, duplicate_count) VALUES
  ('ORDER_FULFILLMENT_SUBMISSION', 'order-1001:attempt-1', 'order-1001', 'pi-1', 'task-1', 'COMPLETED', NULL, now() - interval '2 hours', now() - interval '2 hours', 0),
  ('ORDER_FULFILLMENT_SUBMISSION', 'order-1002:attempt-1', 'order-1002', 'pi-2', 'task-2', 'STARTED', NULL, now() - interval '40 minutes', now() - interval '40 minutes', 0),
  ('ORDER_FULFILLMENT_SUBMISSION', 'order-1003:attempt-1', 'order-1003', 'pi-3', 'task-3', 'SIDE_EFFECT_SUBMITTED', NULL, now() - interval '2 minutes', now() - interval '2 minutes', 0),
  ('ORDER_FULFILLMENT_SUBMISSION', 'order-1004:attempt-1', 'order-1004', 'pi-4', 'task-4', 'UNKNOWN_OUTCOME', 'UPSTREAM_TIMEOUT', now() - interval '25 minutes', now() - interval '20 minutes', 0),
  ('QUOTE_APPROVAL_DECISION', 'quote-77:task-9:v1', 'quote-77', 'pi-9', 'task-9', 'COMPLETED', NULL, now() - interval '1 hour', now() - interval '50 minutes', 3),
  ('QUOTE_APPROVAL_DECISION', 'quote-78:task-10:v1', 'quote-78', 'pi-10', 'task-10', 'FAILED_RETRYABLE', 'HTTP_503', now() - interval '5 minutes', now() - interval '1 minute', 1),
  ('QUOTE_APPROVAL_DECISION', 'quote-79:task-11:v2', 'quote-79', 'pi-11', 'task-11', 'FAILED_FINAL', 'IDEMPOTENCY_CONFLICT', now() - interval '3 hours', now() - interval '3 hours', 0);

INSERT INTO workflow_processed_job (engine, job_reference, process_instance, activity_id, worker_name, status, completed_at) VALUES
  ('main', 'task-1', 'pi-1', 'submitFulfillment', 'fulfillment-worker/pod-a', 'COMPLETED', now() - interval '2 hours'),
  ('main', 'task-9', 'pi-9', 'approveQuote', 'quote-worker/pod-b', 'COMPLETED', now() - interval '50 minutes');

INSERT INTO message_inbox (source_system, message_id, message_type, correlation_key, processing_status, received_at, processed_at) VALUES
  ('kafka', 'm-1', 'OrderValidated', 'order-1001', 'PROCESSED', now() - interval '2 hours', now() - interval '2 hours'),
  ('kafka', 'm-2', 'OrderValidated', 'order-1002', 'RECEIVED', now() - interval '3 minutes', NULL),
  ('rabbitmq', 'r-1', 'FulfillmentReply', 'order-1003', 'PROCESSING', now() - interval '30 seconds', NULL),
  ('rabbitmq', 'r-2', 'FulfillmentReply', 'order-1004', 'UNKNOWN_OUTCOME', now() - interval '20 minutes', NULL);

INSERT INTO event_outbox (event_id, aggregate_type, aggregate_id, event_type, idempotency_key, payload, status, created_at, published_at) VALUES
  (gen_random_uuid(), 'Order', 'order-1001', 'OrderFulfillmentSubmitted', 'order-1001:attempt-1', '{}', 'PUBLISHED', now() - interval '2 hours', now() - interval '2 hours' + interval '1 second'),
  (gen_random_uuid(), 'Order', 'order-1003', 'OrderFulfillmentSubmitted', 'order-1003:attempt-1', '{}', 'PENDING', now() - interval '90 seconds', NULL),
  (gen_random_uuid(), 'Quote', 'quote-77', 'QuoteApproved', 'quote-77:task-9:v1', '{}', 'DEAD', now() - interval '50 minutes', NULL);
