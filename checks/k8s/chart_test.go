package k8s

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/dashboards"
)

const (
	root     = "../.."
	chartDir = root + "/deploy/helm/workflow-exporter"
)

// render renders the chart as `helm template` does (client-side dry run,
// Helm's default capabilities) with the values on top of values.yaml.
func render(t *testing.T, releaseName string, vals map[string]any) []object {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(action.NewConfiguration())
	in.DryRunStrategy = action.DryRunClient
	in.Replace = true
	in.ReleaseName = releaseName
	in.Namespace = "monitoring"
	rel, err := in.Run(ch, vals)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	r, ok := rel.(*release.Release)
	if !ok {
		t.Fatalf("helm returned a %T", rel)
	}
	objs, err := parseManifests("helm template "+releaseName, []byte(r.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func values(t *testing.T, doc string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func kinds(objs []object) map[string][]*unstructured.Unstructured {
	m := map[string][]*unstructured.Unstructured{}
	for _, o := range objs {
		m[o.obj.GetKind()] = append(m[o.obj.GetKind()], o.obj)
	}
	return m
}

func validateAll(t *testing.T, objs []object) {
	t.Helper()
	v := newValidator(t)
	for _, o := range objs {
		for _, p := range v.validate(o) {
			t.Errorf("%s: %s", o.source, p)
		}
	}
}

// TestChartLints runs helm lint (strict) on the chart.
func TestChartLints(t *testing.T) {
	l := action.NewLint()
	l.Strict = true
	res := l.Run([]string{chartDir}, nil)
	for _, m := range res.Messages {
		t.Logf("helm lint: %s", m)
	}
	for _, err := range res.Errors {
		t.Errorf("helm lint: %v", err)
	}
}

// TestChartDefaults renders the chart with its default values: every
// manifest passes the schemas, and the pieces fit together.
func TestChartDefaults(t *testing.T) {
	objs := render(t, "wfx", nil)
	validateAll(t, objs)
	k := kinds(objs)
	for kind, n := range map[string]int{"Deployment": 1, "Service": 1, "ServiceMonitor": 1, "PrometheusRule": 1, "ConfigMap": 1 + 5} {
		if len(k[kind]) != n {
			t.Errorf("%d %s, want %d", len(k[kind]), kind, n)
		}
	}
	if len(k["Secret"]) != 0 {
		t.Error("the chart creates a Secret; secrets are referenced, never created")
	}
	checkWiring(t, objs)
	checkRules(t, k["PrometheusRule"][0], nil)
	checkDashboards(t, k["ConfigMap"], "grafana_dashboard", "1")

	// The exporter's config in the ConfigMap is valid, and every variable
	// it reads comes from a Secret.
	dep := k["Deployment"][0]
	c := container(t, dep)
	env := map[string]bool{}
	for _, e := range c.Env {
		if e.ValueFrom.SecretKeyRef.Name == "" || e.ValueFrom.SecretKeyRef.Key == "" {
			t.Errorf("env %s does not come from a Secret", e.Name)
		}
		env[e.Name] = true
		t.Setenv(e.Name, "postgres://u@db/x")
	}
	for _, cm := range k["ConfigMap"] {
		doc, ok, _ := unstructured.NestedString(cm.Object, "data", "config.yml")
		if !ok {
			continue
		}
		if _, err := config.Parse([]byte(doc)); err != nil {
			t.Errorf("the chart's exporter config: %v\n%s", err, doc)
		}
		for _, line := range strings.Split(doc, "\n") {
			if _, v, ok := strings.Cut(line, "_env: "); ok && !env[strings.TrimSpace(v)] {
				t.Errorf("the config reads $%s, which the Deployment does not set", strings.TrimSpace(v))
			}
		}
	}
}

// TestChartOptions renders the chart with the options switched: everything
// off, mounted secrets, extra labels, another release name, and rules
// rendered from a user's alerts config.
func TestChartOptions(t *testing.T) {
	off := render(t, "off", values(t, "serviceMonitor: {enabled: false}\nprometheusRule: {enabled: false}\ndashboards: {enabled: false}\n"))
	validateAll(t, off)
	k := kinds(off)
	if len(k["ServiceMonitor"])+len(k["PrometheusRule"]) != 0 || len(k["ConfigMap"]) != 1 {
		t.Errorf("with everything off: %d ServiceMonitor, %d PrometheusRule, %d ConfigMap, want 0, 0, 1", len(k["ServiceMonitor"]), len(k["PrometheusRule"]), len(k["ConfigMap"]))
	}

	cfg, err := rules.Parse([]byte("selector: job=\"workflow-exporter\", env=\"prod\"\noutbox: {oldest_age: 42m}\n"))
	if err != nil {
		t.Fatal(err)
	}
	custom, err := rules.RenderFrom(cfg, "my-alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	on := render(t, "payments-workflow-exporter", values(t, `
image: {repository: registry.example/workflow-exporter, tag: 0.1.0}
config:
  databases: [{name: orders, dsn_file: /etc/workflow-exporter/secrets/orders-dsn}]
secretEnv: []
secretMounts:
  - {name: db, secretName: orders-db, mountPath: /etc/workflow-exporter/secrets}
extraArgs: [--log.level=debug]
serviceMonitor: {additionalLabels: {release: kube-prometheus-stack}, interval: 1m, scrapeTimeout: 20s}
prometheusRule: {additionalLabels: {release: kube-prometheus-stack}}
dashboards: {label: grafana_dashboard_workflow, labelValue: "yes", namespace: grafana, folder: Ops}
resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 128Mi}}
`))
	validateAll(t, on)
	k = kinds(on)
	checkWiring(t, on)
	checkDashboards(t, k["ConfigMap"], "grafana_dashboard_workflow", "yes")
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		if k[kind][0].GetLabels()["release"] != "kube-prometheus-stack" {
			t.Errorf("%s lacks the additional label", kind)
		}
	}
	c := container(t, k["Deployment"][0])
	if c.Image != "registry.example/workflow-exporter:0.1.0" || !slices.Contains(c.Args, "--log.level=debug") {
		t.Errorf("image %s, args %v", c.Image, c.Args)
	}

	// A user's rules through --set-file prometheusRule.rules=...
	withRules := render(t, "wfx", map[string]any{"prometheusRule": map[string]any{"rules": string(custom)}})
	validateAll(t, withRules)
	checkRules(t, kinds(withRules)["PrometheusRule"][0], &cfg)
}

// TestPlainManifests validates deploy/kubernetes/*.yaml and checks that they
// fit together like the chart's.
func TestPlainManifests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "deploy", "kubernetes", "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("deploy/kubernetes: %v %v", files, err)
	}
	var objs []object
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os, err := parseManifests(filepath.Base(f), b)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, os...)
	}
	validateAll(t, objs)
	checkWiring(t, objs)
	k := kinds(objs)
	if len(k["PrometheusRule"]) != 1 {
		t.Fatalf("%d PrometheusRules in deploy/kubernetes", len(k["PrometheusRule"]))
	}
	checkRules(t, k["PrometheusRule"][0], nil)
	var dashCMs []*unstructured.Unstructured
	for _, cm := range k["ConfigMap"] {
		if cm.GetLabels()["grafana_dashboard"] != "" {
			dashCMs = append(dashCMs, cm)
		}
	}
	checkDashboards(t, dashCMs, "grafana_dashboard", "1")
}

type containerSpec struct {
	Image string   `json:"image"`
	Args  []string `json:"args"`
	Env   []struct {
		Name      string `json:"name"`
		ValueFrom struct {
			SecretKeyRef struct{ Name, Key string } `json:"secretKeyRef"`
		} `json:"valueFrom"`
	} `json:"env"`
	Ports []struct {
		Name string `json:"name"`
	} `json:"ports"`
}

func container(t *testing.T, dep *unstructured.Unstructured) containerSpec {
	t.Helper()
	cs, _, _ := unstructured.NestedSlice(dep.Object, "spec", "template", "spec", "containers")
	if len(cs) != 1 {
		t.Fatalf("%d containers", len(cs))
	}
	b, _ := json.Marshal(cs[0])
	var c containerSpec
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// checkWiring: the Deployment's selector picks its pods, the Service
// selects them, the ServiceMonitor selects the Service and scrapes a port it
// has, and the job label it sets is the one the rules select.
func checkWiring(t *testing.T, objs []object) {
	t.Helper()
	k := kinds(objs)
	if len(k["Deployment"]) != 1 || len(k["Service"]) != 1 {
		t.Fatalf("%d Deployments, %d Services", len(k["Deployment"]), len(k["Service"]))
	}
	dep, svc := k["Deployment"][0], k["Service"][0]
	sel, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "selector", "matchLabels")
	podLabels, _, _ := unstructured.NestedStringMap(dep.Object, "spec", "template", "metadata", "labels")
	if !subset(sel, podLabels) {
		t.Errorf("the Deployment's selector %v does not match its pods %v", sel, podLabels)
	}
	svcSel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector")
	if len(svcSel) == 0 || !subset(svcSel, podLabels) {
		t.Errorf("the Service's selector %v does not match the pods %v", svcSel, podLabels)
	}
	for _, sm := range k["ServiceMonitor"] {
		smSel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
		if len(smSel) == 0 || !subset(smSel, svc.GetLabels()) {
			t.Errorf("the ServiceMonitor's selector %v does not match the Service's labels %v", smSel, svc.GetLabels())
		}
		eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
		ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
		for _, ep := range eps {
			port := ep.(map[string]any)["port"]
			found := false
			for _, p := range ports {
				found = found || p.(map[string]any)["name"] == port
			}
			if !found {
				t.Errorf("the ServiceMonitor scrapes port %v, which the Service does not have", port)
			}
		}
		jobLabel, _, _ := unstructured.NestedString(sm.Object, "spec", "jobLabel")
		job := svc.GetName()
		if jobLabel != "" {
			job = svc.GetLabels()[jobLabel]
		}
		if want := `job="` + job + `"`; !strings.Contains(rules.Default().Selector, want) {
			t.Errorf("Prometheus would label the target %s; the rules select %s", want, rules.Default().Selector)
		}
	}
}

func subset(a, b map[string]string) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// checkRules: the PrometheusRule's spec holds exactly the rule groups the
// alerts config generates (the repository's alerts/config.yml when cfg is
// nil).
func checkRules(t *testing.T, pr *unstructured.Unstructured, cfg *rules.Config) {
	t.Helper()
	if cfg == nil {
		c, err := rules.Load(filepath.Join(root, rules.RepositoryConfig))
		if err != nil {
			t.Fatal(err)
		}
		cfg = &c
	}
	spec, _, _ := unstructured.NestedMap(pr.Object, "spec")
	b, _ := json.Marshal(spec)
	var got rules.File
	if err := yaml.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if want := rules.Build(*cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("the PrometheusRule %s does not hold the rules of its alerts config", pr.GetName())
	}
}

// checkDashboards: one ConfigMap per dashboard, with the sidecar's label,
// carrying the dashboard's JSON byte for byte.
func checkDashboards(t *testing.T, cms []*unstructured.Unstructured, label, value string) {
	t.Helper()
	ds, err := dashboards.All()
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]string{}
	for _, cm := range cms {
		data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
		for key, v := range data {
			if !strings.HasSuffix(key, ".json") {
				continue
			}
			byKey[key] = v
			if cm.GetLabels()[label] != value {
				t.Errorf("ConfigMap %s lacks the sidecar label %s: %q", cm.GetName(), label, value)
			}
		}
	}
	if len(byKey) != len(ds) {
		t.Errorf("%d dashboards in ConfigMaps, want %d", len(byKey), len(ds))
	}
	for _, d := range ds {
		if byKey[d.UID+".json"] != string(d.JSON) {
			t.Errorf("the ConfigMap of %s does not carry its JSON verbatim", d.UID)
		}
	}
}

// TestChartVersionIsTheRelease: the chart's version and appVersion are the
// VERSION file's.
func TestChartVersionIsTheRelease(t *testing.T) {
	v, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(v))
	if ch.Metadata.Version != want || ch.Metadata.AppVersion != want {
		t.Errorf("Chart.yaml version %s, appVersion %s; VERSION is %s", ch.Metadata.Version, ch.Metadata.AppVersion, want)
	}
}
