package alertrouting

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/checks/internal/checktest"
)

// repoRoot is the main module's directory, two levels up from this package
// (checks/alertrouting).
const repoRoot = "../.."

// alertRule is what these tests need of a rule: read from the rule files
// themselves, not from the generator, so a hand-added alert is tested too.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type ruleFile struct {
	Groups []struct {
		Name  string      `yaml:"name"`
		Rules []alertRule `yaml:"rules"`
	} `yaml:"groups"`
}

// loadAlerts returns every alerting rule of the bundle's rule files in
// alerts/ (alerts/config.yml, the generator's input, holds no groups and is
// skipped; so are the SLO example's slo-*.yml, rendered by `render slos`
// from alerts/slos.example.yml and tested by alerts/tests/slo.yml: their
// alerts are the user's objectives, not the bundle's).
func loadAlerts(t *testing.T) []alertRule {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []alertRule
	for _, f := range files {
		if strings.HasPrefix(filepath.Base(f), "slo-") {
			continue
		}
		for _, g := range checktest.Decode[ruleFile](t, f, yaml.Unmarshal).Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					out = append(out, r)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no alerting rules found in alerts/*.yml")
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Alert < out[j].Alert })
	return out
}

// TestRuleFilesHoldTheListedAlerts: the rule files in alerts/ hold exactly
// the alerts of rules.Alerts() (the one list of alerts, severities and
// runbooks the generator, the dashboards and these tests share), each once and
// with its listed severity; an alert added to a rule file by hand fails here.
func TestRuleFilesHoldTheListedAlerts(t *testing.T) {
	listed := map[string]rules.Alert{}
	for _, a := range rules.Alerts() {
		listed[a.Name] = a
	}
	seen := map[string]bool{}
	for _, r := range loadAlerts(t) {
		if seen[r.Alert] {
			t.Errorf("%s: defined twice", r.Alert)
		}
		seen[r.Alert] = true
		a, ok := listed[r.Alert]
		if !ok {
			t.Errorf("%s: not in rules.Alerts() (alerts/rules/alerts.go): add it there, with its rule and a runbook", r.Alert)
			continue
		}
		if got := r.Labels["severity"]; got != a.Severity {
			t.Errorf("%s: severity %q, rules.Alerts() says %q", r.Alert, got, a.Severity)
		}
	}
	for name := range listed {
		if !seen[name] {
			t.Errorf("%s: listed in rules.Alerts() but missing from alerts/*.yml", name)
		}
	}
}

func TestEveryAlertHasAnnotationsAndARunbook(t *testing.T) {
	for _, r := range loadAlerts(t) {
		for _, k := range []string{"summary", "description", "runbook_url"} {
			if r.Annotations[k] == "" {
				t.Errorf("%s: annotation %s is empty", r.Alert, k)
			}
		}
		if got, want := r.Annotations["runbook_url"], rules.RunbookURL(rules.DefaultRunbookBaseURL, r.Alert); got != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
		}
		a, ok := rules.Lookup(r.Alert)
		if !ok {
			continue // reported by TestRuleFilesHoldTheListedAlerts
		}
		if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(a.RunbookPath()))); err != nil {
			t.Errorf("%s: runbook missing: %v", r.Alert, err)
		}
	}
}
