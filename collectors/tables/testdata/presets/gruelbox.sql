-- Preset: gruelbox
-- Library: gruelbox transaction-outbox (Java), DefaultPersistor with Dialect.POSTGRESQL_9
-- Repository: gruelbox/transaction-outbox (GitHub)
-- Files (read at tag 7.0.715, commit d619650779a3cafc66455b1273f3866a1f7c6d6b; the migrations last changed in 9c9d62fb, 2025-05-20):
--   transactionoutbox-core/src/main/java/com/gruelbox/transactionoutbox/DefaultDialect.java  (Builder: migrations 1..13,
--       createVersionTableIfNotExists)
--   transactionoutbox-core/src/main/java/com/gruelbox/transactionoutbox/Dialect.java         (POSTGRESQL_9: changeMigration 5, 6, 7;
--       disableMigration 8)
--   transactionoutbox-core/src/main/java/com/gruelbox/transactionoutbox/DefaultMigrationManager.java (order and bookkeeping)
-- Transformation: the statements DefaultMigrationManager.migrate() runs on PostgreSQL, in order, copied verbatim
-- from the Java string literals (each migration runs in its own transaction; statement terminators added).
-- Migration 8 is disabled for POSTGRESQL_9 and migration 13 has no SQL; both still bump TXNO_VERSION.
-- PostgreSQL folds the unquoted names: the table is txno_outbox, the columns id, invocation, nextattempttime,
-- attempts, blocked, version, uniquerequestid, processed, lastattempttime, topic, seq. The migrations hard-code
-- TXNO_OUTBOX; DefaultPersistor.tableName (default "TXNO_OUTBOX") only changes the runtime SQL.

-- DefaultDialect.createVersionTableIfNotExists()
CREATE TABLE IF NOT EXISTS TXNO_VERSION (id INT DEFAULT 0, version INT, PRIMARY KEY (id));
-- DefaultMigrationManager.currentVersion(): no version row yet
INSERT INTO TXNO_VERSION (version) VALUES (0);

-- 1: Create outbox table
CREATE TABLE TXNO_OUTBOX (
    id VARCHAR(36) PRIMARY KEY,
    invocation TEXT,
    nextAttemptTime TIMESTAMP(6),
    attempts INT,
    blacklisted BOOLEAN,
    version INT
);
UPDATE TXNO_VERSION SET version = 1;

-- 2: Add unique request id
ALTER TABLE TXNO_OUTBOX ADD COLUMN uniqueRequestId VARCHAR(100) NULL UNIQUE;
UPDATE TXNO_VERSION SET version = 2;

-- 3: Add processed flag
ALTER TABLE TXNO_OUTBOX ADD COLUMN processed BOOLEAN;
UPDATE TXNO_VERSION SET version = 3;

-- 4: Add flush index
CREATE INDEX IX_TXNO_OUTBOX_1 ON TXNO_OUTBOX (processed, blacklisted, nextAttemptTime);
UPDATE TXNO_VERSION SET version = 4;

-- 5: Increase size of uniqueRequestId (POSTGRESQL_9 variant)
ALTER TABLE TXNO_OUTBOX ALTER COLUMN uniqueRequestId TYPE VARCHAR(250);
UPDATE TXNO_VERSION SET version = 5;

-- 6: Rename column blacklisted to blocked (POSTGRESQL_9 variant)
ALTER TABLE TXNO_OUTBOX RENAME COLUMN blacklisted TO blocked;
UPDATE TXNO_VERSION SET version = 6;

-- 7: Add lastAttemptTime column to outbox (POSTGRESQL_9 variant)
ALTER TABLE TXNO_OUTBOX ADD COLUMN lastAttemptTime TIMESTAMP(6);
UPDATE TXNO_VERSION SET version = 7;

-- 8: Update length of invocation column on outbox for MySQL dialects only.
-- Nothing for POSTGRESQL_9
UPDATE TXNO_VERSION SET version = 8;

-- 9: Add topic
ALTER TABLE TXNO_OUTBOX ADD COLUMN topic VARCHAR(250) NOT NULL DEFAULT '*';
UPDATE TXNO_VERSION SET version = 9;

-- 10: Add sequence
ALTER TABLE TXNO_OUTBOX ADD COLUMN seq BIGINT NULL;
UPDATE TXNO_VERSION SET version = 10;

-- 11: Add sequence table
CREATE TABLE TXNO_SEQUENCE (topic VARCHAR(250) NOT NULL, seq BIGINT NOT NULL, PRIMARY KEY (topic, seq));
UPDATE TXNO_VERSION SET version = 11;

-- 12: Add flush index to support ordering
CREATE INDEX IX_TXNO_OUTBOX_2 ON TXNO_OUTBOX (topic, processed, seq);
UPDATE TXNO_VERSION SET version = 12;

-- 13: Enforce UTF8 collation for outbox messages
-- Nothing for POSTGRESQL_9
UPDATE TXNO_VERSION SET version = 13;
