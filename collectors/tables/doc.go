// Package tables holds the collectors of the worker tables in a
// PostgreSQL database, one per table kind, and the Camunda joins of the
// kinds whose rows name external tasks:
//
//   - idempotency.go: one row per logical command and its lifecycle
//     (workflow_idempotency_*); its join (join.go) finds the side effects
//     done whose task is still open, and the work in doubt after a lapse;
//   - processed_jobs.go: one row per engine task a worker finished, and
//     its join (the processed row whose task is still open);
//   - inbox.go: one row per consumed message;
//   - outbox.go: one row per event to publish.
//
// What they share is in table.go (a collection in one read-only,
// time-bounded transaction; label tuples remembered so a drained set keeps
// reporting 0; counters from rows through blocks/watermark, late commits
// counted once) and status.go (the status page's lists: one bounded query
// per list, run only when the page is on). Each collector declares what it
// needs of its table (columns, the partial indexes that keep its queries
// off the history, the queries they serve) in Requirements, which the
// collection checks before reading, `workflow-exporter check` reports, and
// the index SQL is generated from.
//
// Which tables a database has is configuration (config.Tables); the one
// list of kinds that turns it into collectors is internal/sources/kinds.go.
// The tests sit beside the collectors and read a real PostgreSQL with the
// reference schema at a frozen database clock (test/harness/collectortest).
package tables
