package sources

import (
	"fmt"
	"strings"

	"github.com/workflow-exporter/workflow-exporter/blocks/labellimit"
	"github.com/workflow-exporter/workflow-exporter/blocks/pgschema"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// DefaultRequirements returns the requirements of every table kind's
// collector and join, with the default table and column names, including
// the optional duplicate_count extension. deploy/sql/003_exporter_indexes.sql
// and the index table of docs/database.md are generated from it.
func DefaultRequirements() []pgschema.Requirements {
	cfg, err := config.Parse([]byte("camunda: [{name: main, url: 'http://localhost:8080/engine-rest'}]\ndatabases: [{name: reference, dsn: 'postgres://localhost/reference'}]"))
	if err != nil {
		panic(err)
	}
	o := kindOptions{prefix: "tables.", labelValueLimit: 1, folds: labellimit.NewStats()}
	var out []pgschema.Requirements
	for _, k := range tableKinds() {
		for _, c := range []TableCollector{k.collector(cfg.Databases[0].Tables, o), k.horizon(cfg.Databases[0].Tables, o), k.join(cfg.Databases[0].Tables, o)} {
			if c != nil {
				out = append(out, c.Requirements())
			}
		}
	}
	return out
}

// IndexSQL renders the CREATE INDEX statements of the requirements with the
// reason for each.
func IndexSQL(reqs []pgschema.Requirements) string {
	var b strings.Builder
	b.WriteString(`-- Indexes the exporter needs. Generated from the collectors' requirements
-- (make generate); do not edit by hand. Each index keeps one
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
				fmt.Fprintf(&b, "-- %s: the reference schema's primary key serves this; with another key, run:\n-- %s\n", ix.Why, ix.CreateStatement(r.Table))
				continue
			}
			fmt.Fprintf(&b, "-- %s\n%s\n", ix.Why, ix.CreateStatement(r.Table))
		}
	}
	return b.String()
}
