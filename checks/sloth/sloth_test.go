// Package sloth checks the Sloth specification `workflow-exporter render
// slos --format sloth` writes against Sloth's own spec types
// (github.com/slok/sloth/pkg/prometheus/api/v1): every field known to
// Sloth, each objective in range, each query valid PromQL once Sloth's
// {{.window}} is filled in, and the catalog's metrics only.
//
// Sloth's generator and its validation package do not build with the
// Prometheus module this checks module uses (sloth v0.16.0 is written
// against an older parser API), so the spec is checked here with Sloth's
// types and the Prometheus parser; `make check-sloth` builds the sloth
// command from its own module and runs `sloth validate` and `sloth
// generate` on the same file (docs/slos.md).
package sloth

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	slothv1 "github.com/slok/sloth/pkg/prometheus/api/v1"
	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/alerts/slo"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// specOf renders the example SLO file's Sloth spec the way the command
// does and decodes it strictly into Sloth's types.
func specOf(t *testing.T, doc []byte) slothv1.Spec {
	t.Helper()
	cfg, err := slo.Parse(doc, slo.BucketsOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	out, err := slo.Sloth(cfg, "workflow-exporter")
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, out)
}

// decode reads YAML into Sloth's spec the way Sloth reads its files (YAML
// to JSON, then its JSON tags), refusing unknown fields.
func decode(t *testing.T, y []byte) slothv1.Spec {
	t.Helper()
	var generic any
	if err := yaml.Unmarshal(y, &generic); err != nil {
		t.Fatal(err)
	}
	j, err := json.Marshal(generic)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	var spec slothv1.Spec
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("not a Sloth spec: %v", err)
	}
	return spec
}

// problems lists what Sloth would refuse, or what would generate rules that
// watch nothing.
func problems(spec slothv1.Spec) []string {
	var out []string
	if spec.Version != slothv1.Version {
		out = append(out, "version "+spec.Version)
	}
	if spec.Service == "" || len(spec.SLOs) == 0 {
		out = append(out, "no service or no SLO")
	}
	for _, s := range spec.SLOs {
		if s.Objective <= 0 || s.Objective >= 100 {
			out = append(out, s.Name+": objective out of range")
		}
		if s.SLI.Events == nil {
			out = append(out, s.Name+": no events SLI")
			continue
		}
		for _, q := range []string{s.SLI.Events.ErrorQuery, s.SLI.Events.TotalQuery} {
			expr, err := parser.NewParser(parser.Options{}).ParseExpr(strings.ReplaceAll(q, "{{.window}}", "5m"))
			if err != nil {
				out = append(out, s.Name+": "+err.Error())
				continue
			}
			parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok && !catalog.KnownSeries(vs.Name) {
					out = append(out, s.Name+": "+vs.Name+" is not a series the exporter serves")
				}
				return nil
			})
		}
		if s.Alerting.PageAlert.Disable || s.Alerting.TicketAlert.Disable || s.Alerting.Name == "" {
			out = append(out, s.Name+": an alert is off or unnamed")
		}
	}
	return out
}

// TestExampleSpecIsSloths: the committed example spec is what the command
// writes, and it passes.
func TestExampleSpecIsSloths(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "alerts", "slos.example.yml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := specOf(t, doc)
	if p := problems(spec); len(p) != 0 {
		t.Errorf("the example spec: %v", p)
	}
	committed, err := os.ReadFile(filepath.Join("..", "..", "alerts", "slo-example.sloth.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if p := problems(decode(t, committed)); len(p) != 0 {
		t.Errorf("alerts/slo-example.sloth.yml: %v", p)
	}
	if len(spec.SLOs) != 3 || spec.SLOs[2].Objective != 99.5 || spec.SLOs[2].Alerting.PageAlert.Labels["severity"] != "critical" {
		t.Errorf("spec %+v", spec)
	}
}

// TestCheckCatchesBrokenSpecs: the check itself refuses a spec with an
// unknown field, a broken query or an unknown metric.
func TestCheckCatchesBrokenSpecs(t *testing.T) {
	good := "version: prometheus/v1\nservice: s\nslos:\n  - name: a\n    objective: 99\n    sli:\n      events:\n        error_query: sum(rate(camunda_external_task_failures_total[{{.window}}]))\n        total_query: sum(rate(camunda_external_task_completions_total[{{.window}}]))\n    alerting:\n      name: A\n      page_alert: {labels: {severity: critical}}\n      ticket_alert: {labels: {severity: warning}}\n"
	if p := problems(decode(t, []byte(good))); len(p) != 0 {
		t.Fatalf("a good spec: %v", p)
	}
	for name, bad := range map[string]string{
		"broken query":   strings.Replace(good, "sum(rate(camunda_external_task_failures_total", "sum(rate((camunda_external_task_failures_total", 1),
		"unknown metric": strings.Replace(good, "camunda_external_task_failures_total", "camunda_external_task_failure_total", 1),
		"objective 100":  strings.Replace(good, "objective: 99", "objective: 100", 1),
	} {
		if p := problems(decode(t, []byte(bad))); len(p) == 0 {
			t.Errorf("%s: passed", name)
		}
	}
}
