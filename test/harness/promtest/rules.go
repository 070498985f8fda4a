package promtest

import (
	"testing"

	alertrules "github.com/workflow-exporter/workflow-exporter/alerts/rules"
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
