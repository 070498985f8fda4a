package rules

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// rulesOf returns the rules of the named alert in the built file.
func rulesOf(f File, name string) []Rule {
	var out []Rule
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert == name {
				out = append(out, r)
			}
		}
	}
	return out
}

func mustParse(t *testing.T, doc string) Config {
	t.Helper()
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return c
}

func TestAlertCanBeTurnedOffRelabelledAndReSeveritied(t *testing.T) {
	c := mustParse(t, `
alerts:
  WorkflowDuplicatePreventionSpike: {enabled: false}
  CamundaExternalTaskRetriesExhausted: {severity: critical, labels: {team: fulfillment}}
`)
	f := Build(c)
	if rs := rulesOf(f, WorkflowDuplicatePreventionSpike); len(rs) != 0 {
		t.Errorf("turned off, still built: %v", rs)
	}
	rs := rulesOf(f, CamundaExternalTaskRetriesExhausted)
	if len(rs) != 1 || rs[0].Labels["severity"] != rulefile.Critical || rs[0].Labels["team"] != "fulfillment" {
		t.Errorf("severity and labels not applied: %+v", rs)
	}
	// The others keep theirs.
	if rs := rulesOf(f, CamundaExternalTaskRetryStorm); len(rs) != 1 || rs[0].Labels["severity"] != rulefile.Warning || len(rs[0].Labels) != 1 {
		t.Errorf("an alert not named changed: %+v", rs)
	}
}

// A selector gets its own rule with its thresholds and its matchers on
// every series; the alert's own rule leaves its series out; a later
// selector leaves out the series of an earlier one (the first match wins).
func TestSelectorsGetTheirOwnThresholds(t *testing.T) {
	c := mustParse(t, `
alerts:
  CamundaExternalTaskBacklogStalled:
    labels: {team: fulfillment}
    selectors:
      - match: topic="billing.export"
        set: {camunda: {backlog_stalled_age: 2h, backlog_stalled_for: 30m}}
        severity: warning
        labels: {team: billing}
      - match: topic=~"billing.*"
        set: {camunda: {backlog_stalled_age: 1h}}
`)
	rs := rulesOf(Build(c), CamundaExternalTaskBacklogStalled)
	if len(rs) != 3 {
		t.Fatalf("%d rules, want the alert's and one per selector", len(rs))
	}
	def, export, billing := rs[0], rs[1], rs[2]
	for _, want := range []string{"> 600", `unless on (topic) camunda_external_task_oldest_waiting_age_seconds{job="workflow-exporter", topic="billing.export"}`,
		`unless on (topic) camunda_external_task_oldest_waiting_age_seconds{job="workflow-exporter", topic=~"billing.*"}`} {
		if !strings.Contains(def.Expr, want) {
			t.Errorf("the alert's rule lacks %q:\n%s", want, def.Expr)
		}
	}
	if def.Labels["team"] != "fulfillment" || def.Labels["severity"] != rulefile.Critical || def.For != "10m" {
		t.Errorf("the alert's rule: labels %v, for %s", def.Labels, def.For)
	}
	if !strings.Contains(export.Expr, "> 7200") || !strings.Contains(export.Expr, `topic="billing.export"}`) || export.For != "30m" ||
		export.Labels["severity"] != rulefile.Warning || export.Labels["team"] != "billing" {
		t.Errorf("the first selector's rule: for %s, labels %v:\n%s", export.For, export.Labels, export.Expr)
	}
	// Every series of the selector's rule carries its matcher.
	for _, sel := range selectorRe.FindAllStringSubmatch(export.Expr, -1) {
		if !strings.Contains(sel[2], `topic="billing.export"`) {
			t.Errorf("a series of the selector's rule lacks its matcher: %s{%s}", sel[1], sel[2])
		}
	}
	if !strings.Contains(billing.Expr, "> 3600") || !strings.Contains(billing.Expr, `unless on (topic) camunda_external_task_oldest_waiting_age_seconds{job="workflow-exporter", topic="billing.export"}`) ||
		billing.Labels["team"] != "fulfillment" || billing.Labels["severity"] != rulefile.Critical {
		t.Errorf("the second selector's rule: labels %v:\n%s", billing.Labels, billing.Expr)
	}
	if strings.Contains(export.Expr, "unless on (topic) camunda_external_task_oldest_waiting_age_seconds{job=\"workflow-exporter\", topic=~") {
		t.Errorf("the first selector's rule must not leave out a later selector's series:\n%s", export.Expr)
	}
}

func TestAlertsConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"alerts:\n  CamundaBacklogStalled: {enabled: false}\n", "alerts.CamundaBacklogStalled (line 2): unknown alert; did you mean CamundaJobExecutorStalled?"},
		{"alerts:\n  WorkflowOutboxBacklogStalled: {severity: page}\n", `alerts.WorkflowOutboxBacklogStalled.severity (line 2): "page" is not one of`},
		{"alerts:\n  WorkflowOutboxBacklogStalled: {labels: {severity: critical}}\n", "alerts.WorkflowOutboxBacklogStalled.labels.severity (line 2): set the severity with"},
		{"alerts:\n  WorkflowOutboxBacklogStalled: {labels: {database: x}}\n", `alerts.WorkflowOutboxBacklogStalled.labels.database (line 2): "database" is a label the alert takes from its series`},
		{"alerts:\n  WorkflowOutboxBacklogStalled: {labels: {2x: y}}\n", `"2x" is not a label name`},
		{"alerts:\n  WorkflowOutboxBacklogStalled:\n    selectors: [{match: 'topic=\"x\"', severity: warning}]\n", "alerts.WorkflowOutboxBacklogStalled.selectors[0].match (line 3): topic is not a label of WorkflowOutboxBacklogStalled's series"},
		{"alerts:\n  WorkflowOutboxBacklogStalled:\n    selectors: [{match: 'event_type', severity: warning}]\n", "selectors[0].match (line 3): \"event_type\" is not a label matcher"},
		{"alerts:\n  WorkflowOutboxBacklogStalled:\n    selectors: [{match: 'event_type=\"x\"', set: {camunda: {backlog_stalled_age: 1h}}}]\n", "selectors[0].set (line 3): changes nothing WorkflowOutboxBacklogStalled uses"},
		{"alerts:\n  WorkflowOutboxBacklogStalled:\n    selectors: [{match: 'event_type=\"x\"'}]\n", "selectors[0] (line 3): sets neither set, severity nor labels"},
		{"alerts:\n  WorkflowOutboxBacklogStalled:\n    selectors: [{match: 'event_type=\"x\"', set: {outbox: {stalled_window: 30s}}}]\n", "selectors[0].set.outbox.stalled_window"},
		{"alerts:\n  WorkflowOutboxBacklogStalled:\n    selectors: [{match: 'event_type=\"x\"', set: {outbox: {stalled_windw: 30s}}}]\n", "selectors[0].set.outbox.stalled_windw (line 3): unknown key; did you mean"},
		{"alerts:\n  WorkflowExporterWatchdog: {severity: critical}\n", "alerts.WorkflowExporterWatchdog (line 2): the watchdog can be turned off or labelled"},
		{"alerts:\n  WorkflowDeduplicationWindowExceeded:\n    selectors: [{match: 'topic=\"x\"', severity: info}]\n", "alerts.WorkflowDeduplicationWindowExceeded.selectors (line 3): its expression joins the engine's topics"},
		{"deduplication: {deletion_window: 1m}\n", "deduplication.deletion_window (line 1): 1m is shorter than 2m"},
		{"dashboard_base_url: grafana:3000\n", "dashboard_base_url (line 1): must be an http:// or https:// URL"},
	} {
		_, err := Parse([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.doc, err, c.want)
		}
	}
}

// A consequence must not fire before its root cause, or Alertmanager has
// nothing to inhibit it with when its notification is due; a selector that
// lengthens a root's for: counts too.
func TestConsequenceForNotShorterThanItsRoot(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"camunda: {lock_expirations_for: 5m}\n", "camunda.lock_expirations_for (line 1): 5m is shorter than idempotency.completed_task_open_for of WorkflowCompletedSideEffectTaskOpen"},
		{"idempotency: {in_doubt_for: 30m}\n", "is shorter than idempotency.in_doubt_for of WorkflowIdempotencyInDoubt"},
		{"camunda: {retry_storm_for: 20m}\n", "camunda.lock_expirations_for (line 1): 15m is shorter than camunda.retry_storm_for of CamundaExternalTaskRetryStorm"},
		{"alerts:\n  WorkflowOutboxBacklogStalled:\n    selectors: [{match: 'event_type=\"x\"', set: {outbox: {stalled_for: 10m}}}]\n",
			"outbox.oldest_age_for: 2m is shorter than outbox.stalled_for of WorkflowOutboxBacklogStalled"},
	} {
		_, err := Parse([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.doc, err, c.want)
		}
	}
	// Turning the root off lifts the constraint.
	mustParse(t, "camunda: {lock_expirations_for: 5m}\nalerts:\n  WorkflowCompletedSideEffectTaskOpen: {enabled: false}\n  WorkflowProcessedJobTaskOpen: {enabled: false}\n  WorkflowIdempotencyInDoubt: {enabled: false}\n  CamundaExternalTaskRetryStorm: {enabled: false}\n")
}

// The inhibitions name alerts of the list, and compare lane labels every
// one of their alerts carries, so one lane never mutes another.
func TestInhibitionsCompareLaneLabels(t *testing.T) {
	for _, in := range Inhibitions() {
		names := append([]string{in.Source}, in.Targets...)
		if len(in.Equal) == 0 || in.Why == "" {
			t.Errorf("%s: no equal labels or no reason", in.Source)
		}
		for _, n := range names {
			a, ok := Lookup(n)
			if !ok {
				t.Errorf("%s: not an alert", n)
				continue
			}
			for _, l := range in.Equal {
				if !slices.Contains(a.Lane, l) {
					t.Errorf("inhibition by %s: %s does not carry %s", in.Source, n, l)
				}
			}
			if _, ok := ForKeys()[n]; !ok {
				t.Errorf("%s: no for: key (ForKeys)", n)
			}
		}
	}
}

func TestDashboardURLSetsTheLanesVariables(t *testing.T) {
	rs := rulesOf(Build(mustParse(t, "dashboard_base_url: https://grafana.example.com/\nstatus_page_url: 'http://{{ $labels.instance }}/status'\n")), CamundaExternalTaskBacklogStalled)
	want := `https://grafana.example.com/d/camunda-external-tasks?{{ with $labels.job }}var-job={{ . | urlquery }}{{ end }}{{ with $labels.instance }}&var-instance={{ . | urlquery }}{{ end }}{{ with $labels.engine }}&var-engine={{ . | urlquery }}{{ end }}{{ with $labels.tenant }}&var-tenant={{ . | urlquery }}{{ end }}{{ with $labels.topic }}&var-topic={{ . | urlquery }}{{ end }}`
	if got := rs[0].Annotations["dashboard_url"]; got != want {
		t.Errorf("dashboard_url\n%s\nwant\n%s", got, want)
	}
	if got := rs[0].Annotations["status_page_url"]; got != "http://{{ $labels.instance }}/status" {
		t.Errorf("status_page_url %q", got)
	}
	// Without a Grafana address or status page, no such annotations.
	for _, r := range rulesOf(Build(mustParse(t, "dashboard_base_url: ''\n")), CamundaExternalTaskBacklogStalled) {
		if _, ok := r.Annotations["dashboard_url"]; ok {
			t.Errorf("dashboard_url without dashboard_base_url: %v", r.Annotations)
		}
		if _, ok := r.Annotations["status_page_url"]; ok {
			t.Errorf("status_page_url without status_page_url: %v", r.Annotations)
		}
	}
}

// The default runbook links point at the release's tag once CHANGELOG.md
// dates the section of VERSION, at main while it says unreleased: the rule
// file of a release links the runbooks of that release.
func TestRunbookRefFollowsTheRelease(t *testing.T) {
	version, err := os.ReadFile(testkit.Path(t, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile(testkit.Path(t, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(version))
	head := regexp.MustCompile(`(?m)^## ` + regexp.QuoteMeta(v) + ` / (.+)$`).FindSubmatch(changelog)
	if head == nil {
		t.Fatalf("CHANGELOG.md has no section for VERSION %s", v)
	}
	want := "v" + v
	if strings.TrimSpace(string(head[1])) == "unreleased" {
		want = "main"
	}
	if RunbookRef != want {
		t.Errorf("RunbookRef = %q; with VERSION %s and its CHANGELOG.md section %q it must be %q", RunbookRef, v, head[1], want)
	}
}

// TestEveryErrorWithItsLine: the alerts config reports every error at once,
// each with its key and line, in the order of the file.
func TestEveryErrorWithItsLine(t *testing.T) {
	doc := `selector: job=workflow-exporter
outbox:
  stalled_window: 1m
  oldest_age: 0s
alerts:
  WorkflowOutboxBacklogStalled:
    severity: page
    labels: {2x: y}
    selectors:
      - match: ''
        severity: warning
  CamundaBacklogStalled: {enabled: false}
`
	_, err := Parse([]byte(doc))
	want := `alerts config: selector (line 1): "job=workflow-exporter" is not a label matcher: write a label name, one of = != =~ !~ and the value in double quotes, e.g. topic="billing.charge"
outbox.stalled_window (line 3): 1m is shorter than 2m, 4 polls of exporter.min_interval 30s: shorter windows hold too few samples and are noise
outbox.oldest_age (line 4): must be positive
alerts.WorkflowOutboxBacklogStalled.severity (line 7): "page" is not one of critical, warning, info
alerts.WorkflowOutboxBacklogStalled.labels.2x (line 8): "2x" is not a label name (letters, digits and _, not starting with a digit)
alerts.WorkflowOutboxBacklogStalled.selectors[0].match (line 10): must list the label matchers of the series it tunes, e.g. topic="billing.charge"
alerts.CamundaBacklogStalled (line 12): unknown alert; did you mean CamundaJobExecutorStalled?`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
	// A config built in code names the keys, without lines.
	c := Default()
	c.Outbox.OldestAge = 0
	c.Inbox.OldestAge = 0
	if err := c.Validate(); err == nil || err.Error() != "alerts config: outbox.oldest_age: must be positive\ninbox.oldest_age: must be positive" {
		t.Errorf("Validate: %v", err)
	}
}
