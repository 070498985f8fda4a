package collectors

import (
	"fmt"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/internal/config"
	"github.com/workflow-exporter/workflow-exporter/internal/fold"
	"github.com/workflow-exporter/workflow-exporter/internal/pgschema"
)

// DefaultRequirements returns the requirements of the four table collectors
// with the seed's default names, including the optional duplicate_count
// extension. deploy/sql/003_exporter_indexes.sql is generated from it.
func DefaultRequirements() []pgschema.Requirements {
	cfg, err := config.Parse([]byte("camunda: [{name: main, url: 'http://localhost:8080/engine-rest'}]\ndatabases: [{name: reference, dsn: 'postgres://localhost/reference'}]"))
	if err != nil {
		panic(err)
	}
	t := cfg.Databases[0].Tables
	return []pgschema.Requirements{
		NewIdempotency(IdempotencyOptions{Table: *t.Idempotency, ConfigKey: "tables.idempotency", LabelValueLimit: 1, Folds: fold.NewStats()}).Requirements(),
		NewIdempotencyJoin(IdempotencyJoinOptions{Table: *t.Idempotency, ConfigKey: "tables.idempotency", LabelValueLimit: 1, Folds: fold.NewStats()}).Requirements(),
		NewProcessedJobs(ProcessedJobsOptions{Table: *t.ProcessedJobs, ConfigKey: "tables.processed_jobs", LabelValueLimit: 1, Folds: fold.NewStats()}).Requirements(),
		NewProcessedJobJoin(ProcessedJobJoinOptions{Table: *t.ProcessedJobs, ConfigKey: "tables.processed_jobs", LabelValueLimit: 1, Folds: fold.NewStats()}).Requirements(),
		NewInbox(InboxOptions{Table: *t.Inbox, ConfigKey: "tables.inbox", LabelValueLimit: 1, Folds: fold.NewStats()}).Requirements(),
		NewOutbox(OutboxOptions{Table: *t.Outbox, ConfigKey: "tables.outbox", LabelValueLimit: 1, Folds: fold.NewStats()}).Requirements(),
	}
}

// IndexSQL renders the CREATE INDEX statements of the requirements with the
// reason for each.
func IndexSQL(reqs []pgschema.Requirements) string {
	var b strings.Builder
	b.WriteString(`-- Indexes the exporter needs. Generated from the collectors' requirements
-- (go generate ./collectors); do not edit by hand. Each index keeps one
-- collector query proportional to the rows it reports on (open work, or the
-- last late_commit_window of activity) instead of the table's whole history.
-- CONCURRENTLY builds without blocking writers; run each statement on its
-- own, outside a transaction block. The exporter never creates them itself:
-- it only reads. 'workflow-exporter check' lists the ones a database lacks.
`)
	for _, r := range reqs {
		fmt.Fprintf(&b, "\n-- %s table %s\n", r.Kind, r.Table)
		for _, ix := range r.Indexes {
			if ix.Requires != "" {
				fmt.Fprintf(&b, "-- %s: needs the optional column %s; created by 002_duplicate_count_extension.sql\n", ix.Why, ix.Requires)
				continue
			}
			if ix.ReferencePrimaryKey {
				fmt.Fprintf(&b, "-- %s: the seed's primary key serves this; with another key, run:\n-- %s\n", ix.Why, ix.CreateStatement(r.Table))
				continue
			}
			fmt.Fprintf(&b, "-- %s\n%s\n", ix.Why, ix.CreateStatement(r.Table))
		}
	}
	return b.String()
}
