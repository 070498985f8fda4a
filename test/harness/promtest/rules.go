package promtest

import (
	"testing"

	alertrules "github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/alerts/slo"
)

// GenerateRules returns the bundle's alert rules generated from an alerts
// config document (the format of alerts/config.yml; keys left out keep the
// shipped defaults). End-to-end tests use it to shorten windows and for:
// durations, e.g.
//
//	outbox: {stalled_window: 2m, stalled_for: 0s}
//
// It runs the generator of alerts/workflow-alerts.yml (alerts/rules) in
// process.
func GenerateRules(t testing.TB, config string) string {
	t.Helper()
	cfg, err := alertrules.Parse([]byte(config))
	if err != nil {
		t.Fatalf("generate rules: %v", err)
	}
	b, err := alertrules.Render(cfg)
	if err != nil {
		t.Fatalf("generate rules: %v", err)
	}
	return string(b)
}

// LiveSLOs is an objective for the dashboards' live checks: a completion
// ratio over every topic, which any engine's series satisfy, so that the
// dashboards' SLO panels have recording rules to read.
const LiveSLOs = `
slos:
  - name: live-task-success
    objective: 99.5
    indicator:
      ratio:
        good: camunda_external_task_completions_total
        bad: camunda_external_task_failures_total
`

// SLORules renders the SLO rule file of workflow-exporter render slos for
// an SLO config (ratio objectives: no histogram buckets needed), for
// StartPrometheus's Files under SLORulesFile.
func SLORules(t testing.TB, config string) string {
	t.Helper()
	cfg, err := slo.Parse([]byte(config), nil)
	if err != nil {
		t.Fatalf("SLO rules: %v", err)
	}
	b, err := slo.Rules(cfg, "test")
	if err != nil {
		t.Fatalf("SLO rules: %v", err)
	}
	return string(b)
}

// SLORulesFile is the second rule file PrometheusConfig loads, when a test
// writes it.
const SLORulesFile = "slo-rules.yml"
