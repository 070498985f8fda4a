// Package enginedb is the engine-database reader of a Camunda engine: it
// implements reading.Reader over the engine's own tables in its PostgreSQL
// database (camunda[].database), one file per aspect (tasks.go,
// history.go, incidents.go, jobs.go, processes.go, cleanup.go), with the
// checks of the tables, columns and time zone before a collector reads
// (schema.go; the tables and columns themselves are
// capability.EngineTables). Reader says how it reads: the engine's own SQL
// filters, one short read-only transaction per reading.
package enginedb
