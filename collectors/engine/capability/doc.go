// Package capability is what the exporter knows of Camunda 7 engines (and
// the forks) apart from reading them: what each history level lets the
// collectors report of each metric (levels.go: the table of
// docs/camunda-states.md, of `workflow-exporter check` and of the status
// page), the grants each collector needs over the REST API and whether the
// configured user holds them (permissions.go), and the engine tables,
// columns and indexes the engine-database mode reads (schema.go: the
// read-only role's grants, the checks before a collector reads, and
// deploy/sql/camunda/001_history_timestamp_index.sql).
//
// The collectors (collectors/engine), their readers (collectors/engine/rest
// and collectors/engine/enginedb), `workflow-exporter check`
// (internal/check), the status page (internal/status) and the generators
// of docs and SQL import it, so each of these facts has one home below all
// of them.
package capability
