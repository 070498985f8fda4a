package collectors

//go:generate go run ./gen-indexes ../deploy/sql/003_exporter_indexes.sql
