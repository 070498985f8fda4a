package rules

// The committed rule files are written by the exporter's own `render rules`
// command, the one users run on their alerts config, from the repository
// root (go -C).
//go:generate go -C ../.. run ./cmd/exporter render rules --alerts-config alerts/config.yml --out alerts/workflow-alerts.yml
//go:generate go -C ../.. run ./cmd/exporter render rules --alerts-config alerts/config.yml --out deploy/helm/workflow-exporter/files/workflow-alerts.yml
//go:generate go -C ../.. run ./cmd/exporter render rules --alerts-config alerts/config.yml --format prometheusrule --out deploy/kubernetes/prometheusrule.yaml
