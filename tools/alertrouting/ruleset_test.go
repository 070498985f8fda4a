package alertrouting

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"gopkg.in/yaml.v3"
)

// repoRoot is the main module's directory, two levels up from this module.
const repoRoot = "../.."

// alertRule is what these tests need of a rule: read from the rule files
// themselves, not from the generator, so a hand-added alert is tested too.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Expr        string            `yaml:"expr"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type ruleFile struct {
	Groups []struct {
		Name  string      `yaml:"name"`
		Rules []alertRule `yaml:"rules"`
	} `yaml:"groups"`
}

// loadAlerts returns every alerting rule of every rule file in alerts/
// (alerts/config.yml, the generator's input, holds no groups and is skipped).
func loadAlerts(t *testing.T) []alertRule {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "alerts", "*.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []alertRule
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rf ruleFile
		if err := yaml.Unmarshal(b, &rf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range rf.Groups {
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

// designAlerts are the alerts DESIGN.md "Alerts" lists, with their severity,
// plus the alerts added beyond that list, WorkflowIdempotencyInDoubt,
// WorkflowOutboxEventsFailed and WorkflowProcessedJobTaskOpen (docs/alerts.md
// explains why for each).
var designAlerts = map[string]string{
	"WorkflowOutboxBacklogStalled":        "critical",
	"WorkflowOutboxOldestEventTooOld":     "critical",
	"WorkflowOutboxBacklogGrowing":        "warning",
	"WorkflowOutboxEventsFailed":          "warning",
	"WorkflowInboxBacklogOld":             "warning",
	"WorkflowUnknownOutcomeRecords":       "warning",
	"WorkflowIdempotencyStaleInProgress":  "warning",
	"WorkflowIdempotencyConflicts":        "warning",
	"WorkflowCompletedSideEffectTaskOpen": "warning",
	"WorkflowIdempotencyInDoubt":          "warning",
	"WorkflowProcessedJobTaskOpen":        "warning",
	"CamundaExternalTaskRetriesExhausted": "warning",
	"CamundaExternalTaskLockExpirations":  "warning",
	"CamundaExternalTaskRetryStorm":       "warning",
	"CamundaExternalTaskBacklogStalled":   "warning",
	"CamundaIncidentsOpen":                "warning",
	"WorkflowExporterSourceDown":          "warning",
	"WorkflowExporterDown":                "warning",
	"WorkflowDuplicatePreventionSpike":    "info",
}

func TestRuleFilesHoldTheDesignedAlerts(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range loadAlerts(t) {
		if seen[r.Alert] {
			t.Errorf("%s: defined twice", r.Alert)
		}
		seen[r.Alert] = true
		want, ok := designAlerts[r.Alert]
		if !ok {
			t.Errorf("%s: not in DESIGN.md's alert list (nor in designAlerts here): add it to both, with a runbook", r.Alert)
			continue
		}
		if got := r.Labels["severity"]; got != want {
			t.Errorf("%s: severity %q, DESIGN.md says %q", r.Alert, got, want)
		}
	}
	for name := range designAlerts {
		if !seen[name] {
			t.Errorf("%s: listed in DESIGN.md but missing from alerts/*.yml", name)
		}
	}
}

func TestEveryAlertHasAnnotationsAndARunbook(t *testing.T) {
	const base = "https://github.com/workflow-exporter/workflow-exporter/blob/main/docs/runbooks/"
	for _, r := range loadAlerts(t) {
		for _, k := range []string{"summary", "description", "runbook_url"} {
			if r.Annotations[k] == "" {
				t.Errorf("%s: annotation %s is empty", r.Alert, k)
			}
		}
		if got, want := r.Annotations["runbook_url"], base+r.Alert+".md"; got != want {
			t.Errorf("%s: runbook_url %q, want %q", r.Alert, got, want)
		}
		if _, err := os.Stat(filepath.Join(repoRoot, "docs", "runbooks", r.Alert+".md")); err != nil {
			t.Errorf("%s: runbook missing: %v", r.Alert, err)
		}
	}
}
