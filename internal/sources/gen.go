package sources

//go:generate go run ./gen-indexes ../../deploy/sql/003_exporter_indexes.sql ../../deploy/sql/camunda/001_history_timestamp_index.sql ../../deploy/sql/presets
