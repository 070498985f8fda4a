package rules

import (
	"bytes"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestCommittedRulesMatchConfig fails when alerts/workflow-alerts.yml was
// edited by hand or not regenerated after a change to alerts/config.yml or
// to this package.
func TestCommittedRulesMatchConfig(t *testing.T) {
	cfg, err := Load(testkit.Path(t, "alerts/config.yml"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(testkit.Path(t, "alerts/workflow-alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("alerts/workflow-alerts.yml is out of date with alerts/config.yml: run `make generate` (go generate ./...)")
	}
	// The Helm chart carries the same rule file; the PrometheusRule has
	// the same groups under spec.
	chart, err := os.ReadFile(testkit.Path(t, "deploy/helm/workflow-exporter/files/workflow-alerts.yml"))
	if err != nil || !bytes.Equal(chart, want) {
		t.Errorf("deploy/helm/workflow-exporter/files/workflow-alerts.yml is not alerts/workflow-alerts.yml (%v): run `make generate`", err)
	}
	pr, err := RenderPrometheusRule(cfg, RepositoryConfig, ObjectMeta{Name: "workflow-exporter",
		Labels: map[string]string{"app.kubernetes.io/name": "workflow-exporter", "app.kubernetes.io/component": "alerts"}})
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(testkit.Path(t, "deploy/kubernetes/prometheusrule.yaml"))
	if err != nil || !bytes.Equal(committed, pr) {
		t.Errorf("deploy/kubernetes/prometheusrule.yaml is out of date (%v): run `make generate`", err)
	}
	var doc struct {
		Spec File `yaml:"spec"`
	}
	if err := yaml.Unmarshal(pr, &doc); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(doc.Spec, Build(cfg)) {
		t.Error("the PrometheusRule's spec is not the rule file's groups")
	}
}

var (
	metricToken   = regexp.MustCompile(`\b(?:camunda|workflow)_[a-z0-9_]+\b|\bup\b`)
	selectorRe    = regexp.MustCompile(`\b([a-z_][a-z0-9_]*)\{([^}]*)\}`)
	matcherRe     = regexp.MustCompile(`([a-z_][a-z0-9_]*)\s*(?:=~|!~|!=|=)`)
	labelsRefRe   = regexp.MustCompile(`\$labels\.([a-z_][a-z0-9_]*)`)
	replaceDestRe = regexp.MustCompile(`,\s*"([a-z_][a-z0-9_]*)",\s*"\$1"`)
	quotedRe      = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
)

// metricsOf returns the metric names of an expression, outside its quoted
// strings (a matcher's value may read like a metric name).
func metricsOf(expr string) []string {
	return metricToken.FindAllString(quotedRe.ReplaceAllString(expr, `""`), -1)
}

// labelsOf are the labels a metric may have: with the tenant of
// camunda[].tenant_label.
func labelsOf(name string) ([]string, bool) {
	if m, ok := catalog.Lookup(name); ok {
		return m.WithTenant().Labels, true
	}
	if catalog.StandardSeries(name) {
		return nil, true
	}
	return nil, false
}

// TestRulesUseOnlyCatalogMetricsAndLabels checks every metric a rule names,
// every label it matches on and every label its description prints against
// the catalog, the exporter's contract.
func TestRulesUseOnlyCatalogMetricsAndLabels(t *testing.T) {
	for _, g := range Build(Default()).Groups {
		for _, r := range g.Rules {
			allowed := map[string]bool{"job": true, "instance": true}
			metrics := metricsOf(r.Expr)
			if len(metrics) == 0 && r.Alert != WorkflowExporterWatchdog {
				t.Errorf("%s: names no metric", r.Alert)
			}
			for _, m := range metrics {
				ls, ok := labelsOf(m)
				if !ok {
					t.Errorf("%s: metric %s is not in the catalog", r.Alert, m)
				}
				for _, l := range ls {
					allowed[l] = true
				}
			}
			for _, m := range replaceDestRe.FindAllStringSubmatch(r.Expr, -1) {
				allowed[m[1]] = true
			}
			for _, s := range selectorRe.FindAllStringSubmatch(r.Expr, -1) {
				ls, _ := labelsOf(s[1])
				known := map[string]bool{"job": true, "instance": true}
				for _, l := range ls {
					known[l] = true
				}
				for _, m := range matcherRe.FindAllStringSubmatch(s[2], -1) {
					if !known[m[1]] {
						t.Errorf("%s: selector %s{...} matches on label %q, which %s does not have", r.Alert, s[1], m[1], s[1])
					}
				}
			}
			for k, v := range r.Annotations {
				for _, m := range labelsRefRe.FindAllStringSubmatch(v, -1) {
					if !allowed[m[1]] {
						t.Errorf("%s: annotation %s prints $labels.%s, which none of its metrics has", r.Alert, k, m[1])
					}
				}
			}
		}
	}
}

// TestEveryRuleIsComplete: a known severity; a summary that says where
// (it names labels of the alert's lane, never its value); a templated
// description; a dashboard link for every alert with a dashboard.
func TestEveryRuleIsComplete(t *testing.T) {
	for _, g := range Build(Default()).Groups {
		for _, r := range g.Rules {
			a := mustLookup(r.Alert)
			if !slices.Contains(rulefile.Severities(), r.Labels["severity"]) {
				t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
			}
			sum := r.Annotations["summary"]
			if strings.Contains(sum, "$value") {
				t.Errorf("%s: the summary must not print the value (it changes, and the pager's title with it): %q", r.Alert, sum)
			}
			for _, m := range labelsRefRe.FindAllStringSubmatch(sum, -1) {
				if !slices.Contains(a.Lane, m[1]) && m[1] != "status" {
					t.Errorf("%s: the summary names $labels.%s, which is not of its lane %v", r.Alert, m[1], a.Lane)
				}
			}
			if a.Severity != rulefile.None && !strings.Contains(sum, "$labels.") {
				t.Errorf("%s: the summary names no label: %q", r.Alert, sum)
			}
			if a.Severity != rulefile.None && !strings.Contains(r.Annotations["description"], "{{") {
				t.Errorf("%s: description should be templated", r.Alert)
			}
			if got := r.Annotations["dashboard_url"]; (a.Dashboard != "") != (got != "") {
				t.Errorf("%s: dashboard %q, dashboard_url %q", r.Alert, a.Dashboard, got)
			}
			for k, v := range r.Annotations {
				if strings.Contains(v, "%!") {
					t.Errorf("%s: annotation %s has a formatting error: %q", r.Alert, k, v)
				}
			}
			if strings.Contains(r.Expr, "%!") {
				t.Errorf("%s: expr has a formatting error: %q", r.Alert, r.Expr)
			}
		}
	}
}

func TestSelectorAndThresholdsComeFromConfig(t *testing.T) {
	cfg, err := Parse([]byte(`
selector: job="wf", env="prod"
outbox:
  oldest_age: 30m
  stalled_window: 10m
`))
	if err != nil {
		t.Fatal(err)
	}
	f := Build(cfg)
	n := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			n++
			if strings.Contains(r.Expr, "workflow-exporter") {
				t.Errorf("%s: default selector left in %q", r.Alert, r.Expr)
			}
			for _, s := range selectorRe.FindAllStringSubmatch(r.Expr, -1) {
				if !strings.HasPrefix(s[2], `job="wf", env="prod"`) {
					t.Errorf("%s: selector %s{%s} lacks the configured matchers", r.Alert, s[1], s[2])
				}
			}
			switch r.Alert {
			case "WorkflowOutboxOldestEventTooOld":
				if !strings.Contains(r.Expr, "> 1800") || !strings.Contains(r.Annotations["description"], "threshold 30m") {
					t.Errorf("oldest_age not applied: %q / %q", r.Expr, r.Annotations["description"])
				}
			case "WorkflowOutboxBacklogStalled":
				if !strings.Contains(r.Expr, "> 600") || !strings.Contains(r.Expr, "[10m]") {
					t.Errorf("stalled_window not applied: %q", r.Expr)
				}
			}
		}
	}
	if n != len(Alerts()) {
		t.Errorf("rule count changed with the config: %d", n)
	}
	// every metric selector carries the matchers, including bare ones like up
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			expr := quotedRe.ReplaceAllString(r.Expr, `""`)
			for _, m := range metricToken.FindAllStringIndex(expr, -1) {
				if m[1] >= len(expr) || expr[m[1]] != '{' {
					t.Errorf("%s: %s without the selector in %q", r.Alert, expr[m[0]:m[1]], r.Expr)
				}
			}
		}
	}
}

func TestEmptySelectorLeavesNoEmptyBraces(t *testing.T) {
	cfg, err := Parse([]byte(`selector: ""`))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Build(cfg).Groups {
		for _, r := range g.Rules {
			if strings.Contains(r.Expr, "{}") {
				t.Errorf("%s: empty braces in %q", r.Alert, r.Expr)
			}
		}
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"outbox:\n  stalled_windw: 5m\n", "alerts config: outbox.stalled_windw (line 2): unknown key; did you mean outbox.stalled_window?"},
		{"runbook_url: x\n", "alerts config: runbook_url (line 1): unknown key; did you mean runbook_base_url?"},
		{"outbox:\n  stalled_window: 30s\n", "outbox.stalled_window"},
		{"camunda:\n  retry_storm_failure_ratio: 1.5\n", "camunda.retry_storm_failure_ratio"},
		{"idempotency:\n  duplicates_baseline: 30m\n", "idempotency.duplicates_baseline"},
		{"selector: '{job=\"x\"}'\n", "selector"},
		{"inbox:\n  oldest_age: 0s\n", "inbox.oldest_age"},
		{"idempotency:\n  conflicts_max: -1\n", "idempotency.conflicts_max"},
		{"exporter:\n  pages_keep_firing_for: 5m\n", "exporter.pages_keep_firing_for"}, // not longer than source_down_for 5m
	} {
		_, err := Parse([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one naming %q", c.doc, err, c.want)
		}
	}
}

func TestKeepFiringForCanBeTurnedOff(t *testing.T) {
	cfg, err := Parse([]byte("exporter:\n  pages_keep_firing_for: 0s\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Build(cfg).Groups {
		for _, r := range g.Rules {
			if r.KeepFiringFor != "" {
				t.Errorf("%s: keep_firing_for %s with exporter.pages_keep_firing_for 0", r.Alert, r.KeepFiringFor)
			}
		}
	}
}

// The pages on a source's data, and only they, keep firing over a gap in
// their series (exporter.pages_keep_firing_for): the exporter's own pages
// are the outage, and tickets may resolve.
func TestPagesKeepFiring(t *testing.T) {
	cfg, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range Build(cfg).Groups {
		for _, r := range g.Rules {
			a, ok := Lookup(r.Alert)
			if !ok {
				continue
			}
			want := ""
			if a.Severity == rulefile.Critical && a.Group != GroupExporter {
				want = "10m"
			}
			if r.KeepFiringFor != want {
				t.Errorf("%s (%s): keep_firing_for %q, want %q", r.Alert, a.Severity, r.KeepFiringFor, want)
			}
		}
	}
}

func TestEmptyConfigIsTheDefault(t *testing.T) {
	cfg, err := Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := Render(cfg)
	b, _ := Render(Default())
	if !bytes.Equal(a, b) {
		t.Error("an empty config does not give the defaults")
	}
}

func TestSelRejectsUnknownMetric(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("sel accepted a metric outside the catalog")
		}
	}()
	builder{c: Default()}.sel("workflow_not_in_catalog")
}

// TestAlertsListIsTheRuleFile checks the one list of alerts: names unique,
// a known severity, groups contiguous (Prometheus refuses a group name
// twice), a runbook file each, and the built rule file holds exactly these
// alerts in this order, with these severities and groups.
func TestAlertsListIsTheRuleFile(t *testing.T) {
	as := Alerts()
	seen := map[string]bool{}
	closed := map[string]bool{}
	for i, a := range as {
		if seen[a.Name] {
			t.Errorf("%s: listed twice", a.Name)
		}
		seen[a.Name] = true
		if !slices.Contains(rulefile.Severities(), a.Severity) {
			t.Errorf("%s: severity %q is not one of %v", a.Name, a.Severity, rulefile.Severities())
		}
		if i > 0 && as[i-1].Group != a.Group {
			closed[as[i-1].Group] = true
		}
		if closed[a.Group] {
			t.Errorf("%s: group %s continues after another group began", a.Name, a.Group)
		}
		if _, err := os.Stat(testkit.Path(t, a.RunbookPath())); err != nil {
			t.Errorf("%s: runbook missing: %v", a.Name, err)
		}
	}
	var got, want []string
	for _, g := range Build(Default()).Groups {
		for _, r := range g.Rules {
			got = append(got, r.Alert+"/"+r.Labels["severity"]+"/"+g.Name)
			if want := RunbookURL(DefaultRunbookBaseURL, r.Alert); r.Annotations["runbook_url"] != want {
				t.Errorf("%s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
			}
		}
	}
	for _, a := range as {
		want = append(want, a.Name+"/"+a.Severity+"/"+a.Group)
	}
	if !slices.Equal(got, want) {
		t.Errorf("built rules\n%v\ndiffer from Alerts()\n%v", got, want)
	}
}

func TestRunbookURL(t *testing.T) {
	for _, base := range []string{"https://example.com/runbooks", "https://example.com/runbooks/"} {
		if got, want := RunbookURL(base, "X"), "https://example.com/runbooks/X.md"; got != want {
			t.Errorf("RunbookURL(%q) = %q, want %q", base, got, want)
		}
	}
	if got, want := (Alert{Name: WorkflowExporterDown}).RunbookPath(), "docs/runbooks/WorkflowExporterDown.md"; got != want {
		t.Errorf("RunbookPath = %q, want %q", got, want)
	}
}

// A window must hold four polls of exporter.min_interval: 2m for the
// default 30s, 1m for an exporter polling every 15s; shorter is refused
// naming the key.
func TestWindowsHoldFourPolls(t *testing.T) {
	if _, err := Parse([]byte("outbox: {stalled_window: 1m}\n")); err == nil || !strings.Contains(err.Error(), "outbox.stalled_window") {
		t.Fatalf("a 1m window with the default 30s min_interval: err = %v", err)
	}
	if _, err := Parse([]byte("exporter: {min_interval: 15s}\noutbox: {stalled_window: 1m}\n")); err != nil {
		t.Fatalf("a 1m window with min_interval 15s: %v", err)
	}
	if _, err := Parse([]byte("exporter: {min_interval: 0s}\n")); err == nil || !strings.Contains(err.Error(), "exporter.min_interval") {
		t.Fatalf("min_interval 0: err = %v", err)
	}
}

// TestRunbooksSayImpactConfirmMitigateEscalate: every runbook states its
// alert's severity and how soon to act, then Impact, Confirm, Mitigate and
// Escalate, in that order (other sections may come between).
func TestRunbooksSayImpactConfirmMitigateEscalate(t *testing.T) {
	heading := regexp.MustCompile(`(?m)^## (\S+)`)
	for _, a := range Alerts() {
		b, err := os.ReadFile(testkit.Path(t, a.RunbookPath()))
		if err != nil {
			t.Errorf("%s: %v", a.Name, err)
			continue
		}
		s := string(b)
		if !strings.Contains(s, "**Severity:** "+a.Severity+" ") {
			t.Errorf("%s: the runbook does not say **Severity:** %s", a.Name, a.Severity)
		}
		if !regexp.MustCompile(`(?m)^\*\*Act:\*\* \S`).MatchString(s) {
			t.Errorf("%s: the runbook does not say how soon to act (**Act:**)", a.Name)
		}
		var order []string
		for _, m := range heading.FindAllStringSubmatch(s, -1) {
			switch m[1] {
			case "Impact", "Confirm", "Mitigate", "Escalate":
				order = append(order, m[1])
			}
		}
		if want := []string{"Impact", "Confirm", "Mitigate", "Escalate"}; !slices.Equal(order, want) {
			t.Errorf("%s: runbook sections %v, want %v", a.Name, order, want)
		}
	}
}
