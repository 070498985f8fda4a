// Package engine collects a Camunda 7 engine (or fork): Engine is one
// configured engine, its poll source's probe (GET /version) and its
// collectors, each of which fails alone: "camunda" (the external-task
// collector, externaltasks.go: the state partition tasks.go, the lock
// tracking locks.go, the history counters history.go, durations.go,
// bpmn.go, activities.go with models.go, ended.go, incidents.go,
// failures.go, the status page's lists status.go), "camunda_jobs"
// (jobs.go), "camunda_processes" (processes.go) and "camunda_history"
// (cleanup.go). Every rule that does not depend on how the engine was read
// (topic admission topics.go, the tenant labels tenants.go, the history
// level learnt per engine version levels.go, the label limits) is here,
// once.
//
// The packages below it hold the rest, each by what it is:
//
//   - collectors/engine/reading: the reader contract, the Reader interface
//     with a request and a result type per aspect, which the collectors
//     call and both transports implement;
//   - collectors/engine/rest: the REST reader, the default;
//   - collectors/engine/enginedb: the engine-database reader
//     (camunda[].database);
//   - collectors/engine/capability: what the exporter knows of Camunda
//     apart from reading it (what each history level lets it report, the
//     grants each collector needs over REST, the engine tables, columns
//     and indexes of engine-database mode), which `workflow-exporter
//     check`, the status page and the generators import without the
//     collectors.
//
// New picks the reader once per engine; docs/camunda-states.md says what
// each aspect reads and costs, and what cannot be known.
package engine
