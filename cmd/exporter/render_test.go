package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
)

// goGenerateRenders returns the render commands of the //go:generate lines
// that write the committed rule and dashboard files, as arguments of the
// exporter, each with the directory it runs in.
func goGenerateRenders(t *testing.T) [][]string {
	t.Helper()
	line := regexp.MustCompile(`(?m)^//go:generate go -C \S+ run ./cmd/exporter (render .*)$`)
	var out [][]string
	for _, f := range []string{"../../tools/generate/generate.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range line.FindAllStringSubmatch(string(b), -1) {
			out = append(out, strings.Fields(m[1]))
		}
	}
	if len(out) < 8 {
		t.Fatalf("found %d render commands in the go:generate lines, want the 8 that write the rules, the SLO examples and dashboards", len(out))
	}
	return out
}

// TestRenderWritesTheCommittedFiles runs the binary with every render command
// go generate runs, writing into a temporary directory, and compares the
// result with the committed files: what a user renders and what the
// repository ships take one code path.
func TestRenderWritesTheCommittedFiles(t *testing.T) {
	bin := exportertest.Build(t)
	root, _ := filepath.Abs("../..")
	for _, args := range goGenerateRenders(t) {
		out := ""
		for i, a := range args {
			if a == "--out" && i+1 < len(args) {
				out = args[i+1]
				args[i+1] = filepath.Join(t.TempDir(), filepath.Base(out))
				defer func(tmp string) { compareTree(t, tmp, filepath.Join(root, out)) }(args[i+1])
			}
		}
		if out == "" {
			t.Fatalf("%v writes to standard output", args)
		}
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, b)
		}
	}
}

// compareTree compares a rendered file, or directory of files, with the
// committed one; a committed directory may hold no file the render did not
// write (but for the dashboard linter's .lint).
func compareTree(t *testing.T, got, want string) {
	t.Helper()
	st, err := os.Stat(got)
	if err != nil {
		t.Fatal(err)
	}
	if !st.IsDir() {
		g, _ := os.ReadFile(got)
		w, err := os.ReadFile(want)
		if err != nil || !bytes.Equal(g, w) {
			t.Errorf("%s is not what `workflow-exporter render` writes (%v); run make generate", want, err)
		}
		return
	}
	rendered, _ := os.ReadDir(got)
	committed, _ := os.ReadDir(want)
	names := map[string]bool{}
	for _, e := range rendered {
		names[e.Name()] = true
		compareTree(t, filepath.Join(got, e.Name()), filepath.Join(want, e.Name()))
	}
	for _, e := range committed {
		if !names[e.Name()] && e.Name() != ".lint" {
			t.Errorf("%s/%s is not written by `workflow-exporter render`; delete it or run make generate", want, e.Name())
		}
	}
}

// TestRenderFromUserSettings renders from a user's alerts and dashboards
// configs: the thresholds, selector and variables arrive, the PrometheusRule
// carries the given labels, and bad input names the key or flag.
func TestRenderFromUserSettings(t *testing.T) {
	bin := exportertest.Build(t)
	dir := t.TempDir()
	alerts := filepath.Join(dir, "my-alerts.yml")
	if err := os.WriteFile(alerts, []byte("selector: job=\"wfx\", env=\"prod\"\noutbox:\n  oldest_age: 42m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dash := filepath.Join(dir, "my-dashboards.yml")
	if err := os.WriteFile(dash, []byte("datasource: Mimir\ncluster: {enabled: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) (string, error) {
		b, err := exec.Command(bin, args...).CombinedOutput()
		return string(b), err
	}
	out, err := run("render", "rules", "--alerts-config", alerts)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"from " + alerts + ". DO NOT EDIT.", `max without (instance, pod) (workflow_outbox_oldest_pending_age_seconds{job="wfx", env="prod"}) > 2520`, "(threshold 42m)"} {
		if !strings.Contains(out, want) {
			t.Errorf("render rules lacks %q", want)
		}
	}
	out, err = run("render", "rules", "--alerts-config", alerts, "--format", "prometheusrule", "--namespace", "monitoring", "--label", "release=kube-prometheus-stack")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"kind: PrometheusRule\n", "  namespace: monitoring\n", "    release: kube-prometheus-stack\n", "spec:\n  groups:\n", "> 2520"} {
		if !strings.Contains(out, want) {
			t.Errorf("render rules --format prometheusrule lacks %q:\n%.600s", want, out)
		}
	}
	jsonDir := filepath.Join(dir, "json")
	if out, err := run("render", "dashboards", "--dashboards-config", dash, "--out", jsonDir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(jsonDir, "workflow-overview.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"text": "Mimir"`, `"name": "cluster"`, `cluster=~\"$cluster\",job=~\"$job\"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("rendered overview lacks %s", want)
		}
	}
	out, err = run("render", "dashboards", "--dashboards-config", dash, "--format", "configmap", "--namespace", "grafana")
	if err != nil || !strings.Contains(out, "  namespace: \"grafana\"\n") || !strings.Contains(out, "grafana_dashboard: \"1\"") {
		t.Errorf("render dashboards --format configmap: %v\n%.400s", err, out)
	}

	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("clustr: {enabled: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render", "dashboards", "--dashboards-config", bad, "--out", jsonDir}, "bad.yml: dashboards config: clustr (line 1): unknown key; did you mean cluster?"},
		{[]string{"render", "rules", "--alerts-config", filepath.Join(dir, "none.yml")}, "none.yml: open"},
		{[]string{"render", "rules", "--format", "prometheusrule", "--label", "a b=c"}, `--label a b=c: "a b" is not a Kubernetes label key`},
		{[]string{"render", "dashboards"}, "render dashboards: --out: give the directory"},
		{[]string{"render", "rules", "--format", "json"}, "enum value must be one of rules,prometheusrule"},
	} {
		out, err := run(tc.args...)
		if exitCode(err) <= 0 || strings.Count(out, tc.want) != 1 {
			t.Errorf("%v: exit %d, want a failure saying once %q:\n%s", tc.args, exitCode(err), tc.want, out)
		}
	}
}

// TestRenderSLOsRefusesWithKeyAndLine: render slos names the key and line of
// every mistake, and checks latency thresholds against the buckets of the
// exporter config it is given.
func TestRenderSLOsRefusesWithKeyAndLine(t *testing.T) {
	bin := exportertest.Build(t)
	dir := t.TempDir()
	slos := filepath.Join(dir, "slos.yml")
	if err := os.WriteFile(slos, []byte("slos:\n  - name: delay\n    objective: 99\n    indicator:\n      latency:\n        metric: workflow_outbox_publish_delay_seconds\n        threshold: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exporterCfg := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(exporterCfg, []byte("databases:\n  - name: orders\n    dsn: postgres://localhost/orders\n    tables: {outbox: {publish_delay_buckets: [10, 30, 120]}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		b, err := exec.Command(bin, append([]string{"render", "slos", "--slos-config", slos}, args...)...).CombinedOutput()
		return string(b), err
	}
	if out, err := run(); err != nil || !strings.Contains(out, "record: workflow_slo:sli_error:ratio_rate5m") {
		t.Fatalf("with the default buckets (60 s is one): %v\n%s", err, out)
	}
	out, err := run("--exporter-config", exporterCfg)
	if err == nil || !strings.Contains(out, "slos[0].indicator.latency.threshold (line 7): 1m is not a bucket boundary of workflow_outbox_publish_delay_seconds (boundaries in seconds: [10 30 120])") {
		t.Errorf("a threshold the configured buckets lack: %v\n%s", err, out)
	}
	if out, err := run("--format", "sloth"); err != nil || !strings.Contains(out, "version: prometheus/v1") {
		t.Errorf("--format sloth: %v\n%s", err, out)
	}
}
