// Package alertrouting holds the test-only checks of the alerting bundle: the
// Alertmanager routing and inhibition tests for deploy/alertmanager.yml, run
// against every alert of the rule files in alerts/, and the generator of those
// rule files (rules, cmd/genalerts). It is a separate module so that the
// alertmanager dependency tree stays out of the exporter's go.mod.
package alertrouting

//go:generate go run ./cmd/genalerts -config ../../alerts/config.yml -out ../../alerts/workflow-alerts.yml
