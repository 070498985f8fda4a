package slo

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

const example = "alerts/slos.example.yml"

// loadExample loads the example SLO file, on histograms with the default
// buckets.
func loadExample(t *testing.T) Config {
	t.Helper()
	cfg, err := Load(testkit.Path(t, example), BucketsOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestExampleFilesAreCurrent: the committed rules and Sloth spec are what
// the example SLO file renders to (make generate rewrites them).
func TestExampleFilesAreCurrent(t *testing.T) {
	cfg := loadExample(t)
	rules, err := Rules(cfg, example)
	if err != nil {
		t.Fatal(err)
	}
	sloth, err := Sloth(cfg, "workflow-exporter")
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string][]byte{"alerts/slo-example-rules.yml": rules, "alerts/slo-example.sloth.yml": sloth} {
		got, err := os.ReadFile(testkit.Path(t, file))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is stale: run make generate", file)
		}
	}
}

// TestBadFilesNameTheKeyAndLine: every mistake names its key and line, and
// all of them are reported at once.
func TestBadFilesNameTheKeyAndLine(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"unknown key", "slos:\n  - name: a\n    objectiv: 99\n", []string{"slos[0].objectiv (line 3): unknown key; did you mean slos[0].objective?"}},
		{"unknown metric", "slos:\n  - name: a\n    objective: 99\n    indicator:\n      latency: {metric: workflow_outbox_publish_delay, threshold: 1m}\n",
			[]string{`slos[0].indicator.latency.metric (line 5): unknown metric "workflow_outbox_publish_delay"; the histograms of the catalog are camunda_external_task_duration_seconds, workflow_delivery_latency_seconds, workflow_outbox_publish_delay_seconds`}},
		{"a counter as a latency", "slos:\n  - name: a\n    objective: 99\n    indicator:\n      latency: {metric: camunda_external_task_completions_total, threshold: 1m}\n",
			[]string{"slos[0].indicator.latency.metric (line 5): camunda_external_task_completions_total is a counter, not a histogram"}},
		{"a gauge as good events", "slos:\n  - name: a\n    objective: 99\n    indicator:\n      ratio: {good: workflow_outbox_events_pending, bad: camunda_external_task_failures_total}\n",
			[]string{"slos[0].indicator.ratio.good (line 5): workflow_outbox_events_pending is a gauge, not a counter"}},
		{"threshold between two buckets", "slos:\n  - name: a\n    objective: 99\n    indicator:\n      latency:\n        metric: camunda_external_task_duration_seconds\n        threshold: 45s\n",
			[]string{"slos[0].indicator.latency.threshold (line 7): 45s is not a bucket boundary of camunda_external_task_duration_seconds (boundaries in seconds: [0.1 0.5 1 2.5 5 10 30 60 120 300 600 1800 3600])"}},
		{"objective out of range", "slos:\n  - name: a\n    objective: 100\n    indicator: {ratio: {good: camunda_external_task_completions_total, bad: camunda_external_task_failures_total}}\n",
			[]string{"slos[0].objective (line 3): must be a percentage above 0 and below 100, e.g. 99.5, got 100"}},
		{"no indicator", "slos:\n  - name: a\n    objective: 99\n", []string{"slos[0].indicator (line 2): needs latency: {metric, threshold} or ratio: {good, bad}"}},
		{"label the metric lacks", "slos:\n  - name: a\n    objective: 99\n    indicator:\n      ratio:\n        good: camunda_external_task_completions_total\n        bad: camunda_external_task_failures_total\n        matchers: {database: orders}\n",
			[]string{`slos[0].indicator.ratio.matchers (line 8): camunda_external_task_completions_total has no label "database" (its labels: engine, topic)`}},
		{"window the wrong way round", "page_windows: [{long: 5m, short: 1h, factor: 14.4}]\nslos:\n  - name: a\n    objective: 99\n    indicator: {ratio: {good: camunda_external_task_completions_total, bad: camunda_external_task_failures_total}}\n",
			[]string{"page_windows[0] (line 1): short (1h) must be shorter than long (5m)"}},
		{"window without a factor", "ticket_windows: [{long: 1d, short: 2h}]\nslos:\n  - name: a\n    objective: 99\n    indicator: {ratio: {good: camunda_external_task_completions_total, bad: camunda_external_task_failures_total}}\n",
			[]string{"ticket_windows[0].factor (line 1): must be above 0, got 0"}},
		{"the same name twice", "slos:\n  - {name: a, objective: 99, indicator: {ratio: {good: camunda_external_task_completions_total, bad: camunda_external_task_failures_total}}}\n  - {name: a, objective: 98, indicator: {ratio: {good: camunda_external_task_completions_total, bad: camunda_external_task_failures_total}}}\n",
			[]string{`slos[1].name (line 3): "a" is used twice`}},
		{"a label the generator sets", "labels: {severity: page}\nslos:\n  - {name: a, objective: 99, indicator: {ratio: {good: camunda_external_task_completions_total, bad: camunda_external_task_failures_total}}}\n",
			[]string{`labels (line 1): label "severity" is not a label name a rule may set`}},
		{"nothing to do", "period: 30d\n", []string{"slos: lists no objective"}},
		{"an indicator without a value", "slos:\n  - name: a\n    objective: 99\n    indicator:\n      latency:\n",
			[]string{"slos[0].indicator.latency (line 5): has no value; give the histogram and the threshold, e.g. {metric: workflow_outbox_publish_delay_seconds, threshold: 1m}, or remove the key"}},
		{"a selector that is no matcher", "selector: job=workflow-exporter\nslos:\n  - {name: a, objective: 99, indicator: {ratio: {good: camunda_external_task_completions_total, bad: camunda_external_task_failures_total}}}\n",
			[]string{`slos config: selector (line 1): "job=workflow-exporter" is not a label matcher`}},
		{"every error in the order of the file", "period: 1h\nslos:\n  - name: A\n    objective: 100\n",
			// The default windows are not in the file: no line, last.
			[]string{"slos config: period (line 1): must be at least 1d, got 1h\n" +
				"slos[0].name (line 3): must be lower case letters, digits, - and _, got \"A\"\n" +
				"slos[0].indicator (line 3): needs latency: {metric, threshold} or ratio: {good, bad}\n" +
				"slos[0].objective (line 4): must be a percentage above 0 and below 100, e.g. 99.5, got 100\n" +
				"page_windows[1]: long (6h) must not exceed the period (1h)\n" +
				"ticket_windows[0]: long (1d) must not exceed the period (1h)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), BucketsOf(nil))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\nlacks\n%s", err, w)
				}
			}
		})
	}
}

// TestBucketsFromTheExporterConfig: a threshold must be a boundary of every
// configured engine's buckets, since one rule serves them all.
func TestBucketsFromTheExporterConfig(t *testing.T) {
	exp, err := config.Parse([]byte(`camunda:
  - {name: a, url: 'http://a:8080/engine-rest', duration_buckets: [1, 45, 60]}
  - {name: b, url: 'http://b:8080/engine-rest', duration_buckets: [45, 300]}
`))
	if err != nil {
		t.Fatal(err)
	}
	b := BucketsOf(exp)
	doc := func(th string) string {
		return "slos:\n  - name: a\n    objective: 99\n    indicator:\n      latency: {metric: camunda_external_task_duration_seconds, threshold: " + th + "}\n"
	}
	if _, err := Parse([]byte(doc("45s")), b); err != nil {
		t.Errorf("45s is a boundary of both engines: %v", err)
	}
	if _, err := Parse([]byte(doc("1m")), b); err == nil || !strings.Contains(err.Error(), "boundaries in seconds: [45]") {
		t.Errorf("1m is engine b's boundary only: %v", err)
	}
}

// TestRulesOfTheExample: the windows recorded, the burn thresholds
// (factor times the budget), the severities, and the labels; the rule file
// is valid YAML with one group per objective.
func TestRulesOfTheExample(t *testing.T) {
	b, err := Rules(loadExample(t), example)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Groups) != 3 {
		t.Fatalf("%d groups, want one per objective", len(f.Groups))
	}
	g := f.Groups[2] // payment-task-success: 99.5%, a budget of 0.005
	var records, alerts []string
	for _, r := range g.Rules {
		if r.Record != "" {
			records = append(records, r.Record)
		} else {
			alerts = append(alerts, r.Alert+" "+r.Expr)
		}
	}
	want := []string{"workflow_slo:sli_error:ratio_rate5m", "workflow_slo:sli_error:ratio_rate30m", "workflow_slo:sli_error:ratio_rate1h",
		"workflow_slo:sli_error:ratio_rate2h", "workflow_slo:sli_error:ratio_rate6h", "workflow_slo:sli_error:ratio_rate1d",
		"workflow_slo:sli_error:ratio_rate3d", "workflow_slo:events:rate5m", "workflow_slo:bad_events:rate5m",
		"workflow_slo:sli_error:ratio_rate30d", "workflow_slo:objective:ratio", "workflow_slo:error_budget:ratio",
		"workflow_slo:error_budget_remaining:ratio"}
	if strings.Join(records, " ") != strings.Join(want, " ") {
		t.Errorf("records %v\nwant %v", records, want)
	}
	if len(alerts) != 2 {
		t.Fatalf("alerts %v", alerts)
	}
	for _, w := range []string{"ratio_rate1h{slo=\"payment-task-success\"} > 0.072", "ratio_rate5m{slo=\"payment-task-success\"} > 0.072",
		"ratio_rate6h{slo=\"payment-task-success\"} > 0.03", "ratio_rate30m{slo=\"payment-task-success\"} > 0.03"} {
		if !strings.Contains(alerts[0], w) {
			t.Errorf("page alert lacks %s:\n%s", w, alerts[0])
		}
	}
	for _, w := range []string{"ratio_rate1d{slo=\"payment-task-success\"} > 0.015", "ratio_rate2h{slo=\"payment-task-success\"} > 0.015",
		"ratio_rate3d{slo=\"payment-task-success\"} > 0.005", "ratio_rate6h{slo=\"payment-task-success\"} > 0.005"} {
		if !strings.Contains(alerts[1], w) {
			t.Errorf("ticket alert lacks %s:\n%s", w, alerts[1])
		}
	}
	if !strings.HasPrefix(alerts[0], "WorkflowSLOPaymentTaskSuccessBudgetBurn ") {
		t.Errorf("alert name: %s", alerts[0])
	}
}

// TestLeMatcherMatchesBothSpellings: the exporter writes le="60" and
// Prometheus 3 stores le="60.0".
func TestLeMatcherMatchesBothSpellings(t *testing.T) {
	for v, want := range map[float64]string{60: `le=~"60(\\.0)?"`, 0.5: `le=~"0\\.5"`, 2.5: `le=~"2\\.5"`, 3600: `le=~"3600(\\.0)?"`} {
		if got := leMatcher(v); got != want {
			t.Errorf("leMatcher(%g) = %s, want %s", v, got, want)
		}
	}
}

// TestSlothRefusesWhatItCannotCarry: a Sloth spec has no place for another
// period or other windows.
func TestSlothRefusesWhatItCannotCarry(t *testing.T) {
	doc := "period: 28d\nslos:\n  - {name: a, objective: 99, indicator: {ratio: {good: camunda_external_task_completions_total, bad: camunda_external_task_failures_total}}}\n"
	cfg, err := Parse([]byte(doc), BucketsOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Sloth(cfg, "x"); err == nil || !strings.Contains(err.Error(), "period or the windows") {
		t.Errorf("Sloth with a 28d period: %v", err)
	}
	if _, err := Rules(cfg, ""); err != nil {
		t.Errorf("the rules carry any period: %v", err)
	}
}

// TestPrometheusRule wraps the same groups.
func TestPrometheusRule(t *testing.T) {
	cfg := loadExample(t)
	b, err := PrometheusRule(cfg, example, Meta{Name: "slos", Namespace: "monitoring", Labels: map[string]string{"release": "kps"}})
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		Kind     string   `yaml:"kind"`
		Metadata Meta     `yaml:"metadata"`
		Spec     ruleFile `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &pr); err != nil {
		t.Fatal(err)
	}
	if pr.Kind != "PrometheusRule" || pr.Metadata.Namespace != "monitoring" || len(pr.Spec.Groups) != 3 {
		t.Errorf("%+v", pr)
	}
	if _, err := PrometheusRule(cfg, "", Meta{}); err == nil {
		t.Error("a PrometheusRule without a name was rendered")
	}
}
