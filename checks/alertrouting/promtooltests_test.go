package alertrouting

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/checks/internal/checktest"
	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
)

// summaryLabelRe finds the labels a summary prints.
var summaryLabelRe = regexp.MustCompile(`\$labels\.([a-z_]+)`)

// optionalInSummary: labels a summary prints only where the alert has them
// ({{ with }} or {{ if }} around them).
func optionalInSummary(alert, label string) bool {
	switch alert {
	case rules.WorkflowUnknownOutcomeRecords:
		return label == "scope" || label == "source_system" || label == "message_type"
	case rules.WorkflowDeduplicationWindowExceeded:
		return label == "scope" || label == "source_system"
	case rules.WorkflowExporterSourceDown, rules.WorkflowExporterCollectorDown:
		return label == "collector"
	}
	return false
}

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
// it fires, asserting its severity and every annotation of its rule exactly,
// with the labels its summary names (so the pager's title is proven to say
// where), and a case where it must stay quiet (the watchdog aside: it always
// fires). promtool itself checks the values.
func TestEveryAlertHasFiringAndQuietPromtoolCases(t *testing.T) {
	annotations := map[string][]string{}
	summaryLabels := map[string][]string{}
	for _, r := range loadAlerts(t) {
		for k := range r.Annotations {
			annotations[r.Alert] = append(annotations[r.Alert], k)
		}
		for _, m := range summaryLabelRe.FindAllStringSubmatch(r.Annotations["summary"], -1) {
			summaryLabels[r.Alert] = append(summaryLabels[r.Alert], m[1])
		}
	}
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
					for _, k := range annotations[at.Alertname] {
						if ea.ExpAnnotations[k] == "" {
							complete = false
						}
					}
					for _, l := range summaryLabels[at.Alertname] {
						if _, ok := ea.ExpLabels[l]; !ok && !optionalInSummary(at.Alertname, l) {
							t.Errorf("%s / %q / %s: the summary names %s, which the alert does not carry", filepath.Base(f), tc.Name, at.Alertname, l)
						}
					}
				}
				if !complete {
					t.Errorf("%s / %q / %s: a firing case must assert severity and every annotation of the rule (%v)", filepath.Base(f), tc.Name, at.Alertname, annotations[at.Alertname])
				}
				fires[at.Alertname] = true
			}
		}
	}
	for _, r := range loadAlerts(t) {
		if !fires[r.Alert] {
			t.Errorf("%s: no promtool case where it fires", r.Alert)
		}
		if !quiet[r.Alert] && r.Alert != rules.WorkflowExporterWatchdog {
			t.Errorf("%s: no promtool case where it stays quiet", r.Alert)
		}
	}
}
