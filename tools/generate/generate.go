// Package generate is the one list of the repository's generated files and
// the commands that write them: `make generate` runs `go generate
// ./tools/generate`. The rules, SLO examples and dashboards are written by
// the exporter's own `render` command, the one users run with their own
// settings, so what a user renders and what the repository ships take one
// code path; the index SQL by tools/gen-indexes, from the collectors'
// declared requirements; the tables of docs/metrics.md and docs/database.md
// by tools/gen-docs. A test beside each generator fails when a committed
// file differs from what the code generates (cmd/exporter's
// TestRenderWritesTheCommittedFiles runs every render line below).
package generate

//go:generate go -C ../.. run ./cmd/exporter render rules --alerts-config alerts/config.yml --out alerts/workflow-alerts.yml
//go:generate go -C ../.. run ./cmd/exporter render rules --alerts-config alerts/config.yml --out deploy/helm/workflow-exporter/files/workflow-alerts.yml
//go:generate go -C ../.. run ./cmd/exporter render rules --alerts-config alerts/config.yml --format prometheusrule --out deploy/kubernetes/prometheusrule.yaml
//go:generate go -C ../.. run ./cmd/exporter render slos --slos-config alerts/slos.example.yml --out alerts/slo-example-rules.yml
//go:generate go -C ../.. run ./cmd/exporter render slos --slos-config alerts/slos.example.yml --format sloth --out alerts/slo-example.sloth.yml
//go:generate go -C ../.. run ./cmd/exporter render dashboards --alerts-config alerts/config.yml --out dashboards/json
//go:generate go -C ../.. run ./cmd/exporter render dashboards --alerts-config alerts/config.yml --out deploy/helm/workflow-exporter/files/dashboards
//go:generate go -C ../.. run ./cmd/exporter render dashboards --alerts-config alerts/config.yml --format configmap --out deploy/kubernetes/grafana-dashboards-configmap.yaml
//go:generate go -C ../.. run ./tools/gen-indexes deploy/sql/003_exporter_indexes.sql deploy/sql/camunda/001_history_timestamp_index.sql deploy/sql/presets
//go:generate go -C ../.. run ./tools/gen-docs docs/metrics.md docs/database.md docs/outbox-shapes.md
