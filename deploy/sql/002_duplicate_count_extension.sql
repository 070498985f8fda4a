-- Optional schema extension: a per-record count of duplicate attempts that the
-- idempotency record absorbed. Workers increment it (and updated_at) whenever
-- they find the record already present for the same key and request:
--
--   UPDATE workflow_idempotency_record
--      SET duplicate_count = duplicate_count + 1, updated_at = now()
--    WHERE scope = $1 AND idempotency_key = $2;
--
-- With it, the exporter serves workflow_idempotency_duplicates_prevented_total
-- (duplicates detected are the protection working; a rising trend is the
-- smell). Without it, that metric is simply absent.
ALTER TABLE workflow_idempotency_record
  ADD COLUMN IF NOT EXISTS duplicate_count integer NOT NULL DEFAULT 0;

-- The exporter reads the records that absorbed duplicates once, when it
-- starts; this partial index keeps that read to those records. Run it on its
-- own, outside a transaction block.
CREATE INDEX CONCURRENTLY IF NOT EXISTS "workflow_idempotency_record_duplicates_idx" ON "workflow_idempotency_record" ("updated_at") WHERE "duplicate_count" > 0;
