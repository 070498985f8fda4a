package alertrouting

import (
	"path/filepath"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/checks/internal/checktest"
	"go.yaml.in/yaml/v3"
)

type promtoolFile struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name          string `yaml:"name"`
		AlertRuleTest []struct {
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `yaml:"exp_labels"`
				ExpAnnotations map[string]string `yaml:"exp_annotations"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// TestEveryAlertHasFiringAndQuietPromtoolCases makes sure the promtool tests
// in alerts/tests keep up with the rule files: each alert has a case where
// it fires, asserting its severity and all three annotations exactly, and a
// case where it must stay quiet. promtool itself checks the values.
func TestEveryAlertHasFiringAndQuietPromtoolCases(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "tests", "*.yml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool tests in alerts/tests: %v", err)
	}
	fires := map[string]bool{}
	quiet := map[string]bool{}
	for _, f := range files {
		pf := checktest.Decode[promtoolFile](t, f, yaml.Unmarshal)
		if len(pf.RuleFiles) == 1 && pf.RuleFiles[0] == "../slo-example-rules.yml" {
			continue // the SLO example's tests (see loadAlerts)
		}
		if len(pf.RuleFiles) != 1 || pf.RuleFiles[0] != "../workflow-alerts.yml" {
			t.Errorf("%s: rule_files %v, want [../workflow-alerts.yml]", f, pf.RuleFiles)
		}
		for _, tc := range pf.Tests {
			for _, at := range tc.AlertRuleTest {
				if len(at.ExpAlerts) == 0 {
					quiet[at.Alertname] = true
					continue
				}
				complete := true
				for _, ea := range at.ExpAlerts {
					if ea.ExpLabels["severity"] == "" {
						complete = false
					}
					for _, k := range []string{"summary", "description", "runbook_url"} {
						if ea.ExpAnnotations[k] == "" {
							complete = false
						}
					}
				}
				if !complete {
					t.Errorf("%s / %q / %s: a firing case must assert severity and summary, description, runbook_url", filepath.Base(f), tc.Name, at.Alertname)
				}
				fires[at.Alertname] = true
			}
		}
	}
	for _, r := range loadAlerts(t) {
		if !fires[r.Alert] {
			t.Errorf("%s: no promtool case where it fires", r.Alert)
		}
		if !quiet[r.Alert] {
			t.Errorf("%s: no promtool case where it stays quiet", r.Alert)
		}
	}
}
