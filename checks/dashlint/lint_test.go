package dashlint

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/checks/internal/checktest"
	"github.com/workflow-exporter/workflow-exporter/dashboards"
)

var (
	jsonDir  = filepath.Join("..", "..", filepath.FromSlash(dashboards.JSONDir))
	lintFile = filepath.Join(jsonDir, ".lint")
	docsFile = filepath.Join("..", "..", "docs", "dashboards.md")
)

func loadDashboard(t *testing.T, path string) Dashboard {
	t.Helper()
	return checktest.Decode[Dashboard](t, path, json.Unmarshal)
}

// TestStrict lints every committed dashboard in strict mode: any warning or
// error that the .lint file does not exclude fails.
func TestStrict(t *testing.T) {
	cfg, err := LoadConfig(lintFile)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(jsonDir, "*.json"))
	if err != nil || len(files) != 5 {
		t.Fatalf("want the 5 dashboards in %s, found %v (%v)", jsonDir, files, err)
	}
	used := map[string][]int{}
	for rule, re := range cfg.Exclusions {
		used[rule] = make([]int, len(re.Entries))
	}
	excluded := 0
	for _, f := range files {
		d := loadDashboard(t, f)
		rs, u := cfg.Apply(Lint(d))
		for rule, counts := range u {
			for i, n := range counts {
				used[rule][i] += n
			}
		}
		for _, r := range Strict(rs) {
			t.Errorf("%s: %s", filepath.Base(f), r)
		}
		for _, r := range rs {
			if r.Severity == Exclude {
				excluded++
				t.Logf("excluded: %s", r)
			}
		}
	}
	t.Logf("%d findings excluded by %s", excluded, lintFile)

	// Every exclusion says why, matches something, and is documented.
	docs, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatalf("exclusions must be documented in docs/dashboards.md: %v", err)
	}
	rules := map[string]bool{}
	for _, r := range Rules() {
		rules[r.Name] = true
	}
	for _, rule := range slices.Sorted(maps.Keys(cfg.Exclusions)) {
		re := cfg.Exclusions[rule]
		if !rules[rule] {
			t.Errorf(".lint excludes unknown rule %s", rule)
		}
		if re == nil || len(re.Entries) == 0 {
			t.Errorf(".lint excludes %s everywhere; list the panels", rule)
			continue
		}
		if strings.TrimSpace(re.Reason) == "" {
			t.Errorf(".lint: exclusion of %s has no reason", rule)
		}
		for i, e := range re.Entries {
			if strings.TrimSpace(e.Reason) == "" {
				t.Errorf(".lint: %s entry %d (%s / %s) has no reason", rule, i, e.Dashboard, e.Panel)
			}
			if e.Dashboard == "" || e.Panel == "" {
				t.Errorf(".lint: %s entry %d must name a dashboard and a panel", rule, i)
			}
			if used[rule][i] == 0 {
				t.Errorf(".lint: %s entry %d (%s / %s) matches nothing; remove it", rule, i, e.Dashboard, e.Panel)
			}
			if !strings.Contains(string(docs), e.Panel) {
				t.Errorf("docs/dashboards.md does not explain the %s exclusion on panel %q", rule, e.Panel)
			}
		}
		if !strings.Contains(string(docs), rule) {
			t.Errorf("docs/dashboards.md does not mention the excluded rule %s", rule)
		}
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf(".lint downgrades rules to warnings; strict mode fails on warnings anyway, use exclusions with reasons")
	}
}

// TestRulesFail proves the rules catch a broken dashboard.
func TestRulesFail(t *testing.T) {
	d := loadDashboard(t, filepath.Join(jsonDir, dashboards.UIDOutboxInbox+".json"))
	d.Editable = true
	for i := range d.Templating.List {
		switch d.Templating.List[i].Name {
		case "job":
			d.Templating.List[i].AllValue = ""
			d.Templating.List[i].Multi = false
		case "instance":
			d.Templating.List[i].Name = "host"
		case "database":
			d.Templating.List[i].Refresh = 1
		}
	}
	var p *Panel
	for i := range d.Panels {
		if d.Panels[i].Type == "timeseries" {
			p = &d.Panels[i]
			break
		}
	}
	p.Description = ""
	p.Datasource = map[string]any{"uid": "prometheus"}
	p.FieldConfig.Defaults.Unit = "furlongs"
	p.Targets = append(p.Targets,
		Target{Expr: `sum(rate(workflow_outbox_events_published_total{job=~"$job",instance=~"$instance"}[5m]))`},
		Target{Expr: `sum(workflow_outbox_events_published_total{job=~"$job"})`},
		Target{Expr: `sum(rate(workflow_outbox_events_published_total{job=~"$job",instance=~"$instance"}[$__rate_interval])`},
	)
	got := map[string]bool{}
	for _, r := range Strict(Lint(d)) {
		got[r.Rule] = true
	}
	for _, want := range []string{
		"uneditable-dashboard", "template-job-rule", "template-instance-rule", "template-on-time-change-reload-rule",
		"panel-title-description-rule", "panel-datasource-rule", "panel-units-rule",
		"target-rate-interval-rule", "target-counter-agg-rule", "target-instance-rule", "target-promql-rule",
	} {
		if !got[want] {
			t.Errorf("rule %s did not fire on the broken dashboard; fired: %v", want, got)
		}
	}
	// An exclusion that names the panel silences only that panel.
	cfg := Config{Exclusions: map[string]*RuleEntries{"panel-units-rule": {Reason: "test", Entries: []Entry{{Reason: "test", Dashboard: d.Title, Panel: p.Title}}}}}
	rs, used := cfg.Apply(Lint(d))
	for _, r := range Strict(rs) {
		if r.Rule == "panel-units-rule" {
			t.Errorf("exclusion did not apply: %s", r)
		}
	}
	if used["panel-units-rule"][0] != 1 {
		t.Errorf("exclusion matched %d findings, want 1", used["panel-units-rule"][0])
	}
}

// TestConfigMapIsValidYAML parses the generated ConfigMap and checks it
// carries each committed dashboard byte for byte.
func TestConfigMapIsValidYAML(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(dashboards.ConfigMapPath)))
	if err != nil {
		t.Fatal(err)
	}
	type configMap struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Metadata   struct {
			Name   string            `yaml:"name"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Data map[string]string `yaml:"data"`
	}
	data := map[string]string{}
	names := map[string]bool{}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	for {
		var cm configMap
		err := dec.Decode(&cm)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if cm.APIVersion != "v1" || cm.Kind != "ConfigMap" || cm.Metadata.Name == "" || names[cm.Metadata.Name] {
			t.Errorf("not a ConfigMap with a unique name: %s %s %q", cm.APIVersion, cm.Kind, cm.Metadata.Name)
		}
		names[cm.Metadata.Name] = true
		if cm.Metadata.Labels["grafana_dashboard"] != "1" {
			t.Errorf("%s: labels = %v, want grafana_dashboard: \"1\"", cm.Metadata.Name, cm.Metadata.Labels)
		}
		for k, v := range cm.Data {
			data[k] = v
		}
	}
	files, _ := filepath.Glob(filepath.Join(jsonDir, "*.json"))
	if len(data) != len(files) || len(files) == 0 {
		t.Errorf("ConfigMaps carry %d dashboards, %d exist", len(data), len(files))
	}
	for _, f := range files {
		want, _ := os.ReadFile(f)
		if got := data[filepath.Base(f)]; got != string(want) {
			t.Errorf("ConfigMap entry %s differs from %s", filepath.Base(f), f)
		}
	}
}

// TestProvisioningFiles parses the Grafana provisioning files.
func TestProvisioningFiles(t *testing.T) {
	dir := filepath.Join("..", "..", "deploy", "grafana", "provisioning")
	var ds struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name, Type, UID, URL, Access string
			IsDefault                    bool `yaml:"isDefault"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(dir, "datasources", "prometheus.yaml"), &ds)
	if ds.APIVersion != 1 || len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" || ds.Datasources[0].URL == "" || !ds.Datasources[0].IsDefault {
		t.Errorf("datasource provisioning: %+v", ds)
	}
	var dp struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name, Folder, Type string
			AllowUIUpdates     bool `yaml:"allowUiUpdates"`
			DisableDeletion    bool `yaml:"disableDeletion"`
			Options            struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, filepath.Join(dir, "dashboards", "workflow-exporter.yaml"), &dp)
	if dp.APIVersion != 1 || len(dp.Providers) != 1 || dp.Providers[0].Type != "file" || dp.Providers[0].Options.Path == "" || dp.Providers[0].AllowUIUpdates {
		t.Errorf("dashboard provisioning: %+v", dp)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestStrictWithOptions lints the dashboards as `workflow-exporter render
// dashboards` writes them with every option set: the cluster and namespace
// variables, a selector and a default data source.
func TestStrictWithOptions(t *testing.T) {
	cfg, err := LoadConfig(lintFile)
	if err != nil {
		t.Fatal(err)
	}
	ds := checktest.RenderDashboards(t, "datasource: Mimir\nselector: env=\"prod\"\ncluster: {enabled: true}\nnamespace: {enabled: true, label: k8s_namespace}\n")
	for _, rd := range ds {
		var d Dashboard
		if err := json.Unmarshal(rd.JSON, &d); err != nil {
			t.Fatalf("%s: %v", rd.UID, err)
		}
		rs, _ := cfg.Apply(Lint(d))
		for _, r := range Strict(rs) {
			t.Errorf("%s: %s", rd.UID, r)
		}
	}
}
