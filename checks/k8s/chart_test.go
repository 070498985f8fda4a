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
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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
	r, err := renderRelease(t, releaseName, vals)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	objs, err := parseManifests("helm template "+releaseName, []byte(r.Manifest))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// renderRelease is render's release (manifest and NOTES.txt), or Helm's
// error: values that values.schema.json refuses, or a template's fail.
func renderRelease(t *testing.T, releaseName string, vals map[string]any) (*release.Release, error) {
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
		return nil, err
	}
	r, ok := rel.(*release.Release)
	if !ok {
		t.Fatalf("helm returned a %T", rel)
	}
	return r, nil
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
	for kind, n := range map[string]int{"Deployment": 1, "Service": 1, "ServiceAccount": 1, "ServiceMonitor": 1, "PrometheusRule": 1, "ConfigMap": 1 + 5, "NetworkPolicy": 0} {
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
	if sa := k["ServiceAccount"][0]; sa.Object["automountServiceAccountToken"] != false {
		t.Errorf("the ServiceAccount mounts a token: automountServiceAccountToken %v", sa.Object["automountServiceAccountToken"])
	}

	// The exporter's config in the ConfigMap is valid, and every variable
	// it reads comes from a Secret.
	ps := podSpec(t, k["Deployment"][0])
	if ps.ServiceAccountName != k["ServiceAccount"][0].GetName() || ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Errorf("the pod runs as ServiceAccount %q, automount %v; want the chart's, no token", ps.ServiceAccountName, ps.AutomountServiceAccountToken)
	}
	c := ps.Containers[0]
	env := map[string]bool{}
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name == "" || e.ValueFrom.SecretKeyRef.Key == "" {
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

// TestChartNotes: NOTES.txt names the Secrets the exporter reads and the
// command that reaches it, and warns when the ServiceMonitor has no label a
// Prometheus could select it by.
func TestChartNotes(t *testing.T) {
	r, err := renderRelease(t, "wfx", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"$ORDERS_DATABASE_URL <- Secret workflow-exporter-secrets, key orders-dsn",
		"port-forward svc/wfx-workflow-exporter 7840", "http://127.0.0.1:7840/status", "set serviceMonitor.additionalLabels"} {
		if !strings.Contains(r.Info.Notes, want) {
			t.Errorf("NOTES.txt lacks %q:\n%s", want, r.Info.Notes)
		}
	}
	r, err = renderRelease(t, "wfx", values(t, "web: {tls: {enabled: true, secretName: tls}}\nserviceMonitor: {additionalLabels: {release: kps}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Info.Notes, "https://127.0.0.1:7840/metrics") || strings.Contains(r.Info.Notes, "serviceMonitor.additionalLabels") {
		t.Errorf("NOTES.txt with TLS and a selectable ServiceMonitor:\n%s", r.Info.Notes)
	}
	if strings.Contains(r.Info.Notes, "replicas:") || strings.Contains(r.Info.Notes, "NetworkPolicy") {
		t.Errorf("NOTES.txt of one replica without a NetworkPolicy speaks of them:\n%s", r.Info.Notes)
	}
	r, err = renderRelease(t, "wfx", values(t, "replicas: 2\nnetworkPolicy: {enabled: true, ingressFrom: [{podSelector: {}}], egress: [{ports: [{port: 5432}]}]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"2 replicas: each collects from the sources on its own", "each alert reaches Alertmanager once", "The NetworkPolicy admits only networkPolicy.ingressFrom"} {
		if !strings.Contains(r.Info.Notes, want) {
			t.Errorf("NOTES.txt with two replicas and a NetworkPolicy lacks %q:\n%s", want, r.Info.Notes)
		}
	}
}

// TestValuesSchema: values.schema.json accepts the chart's own values
// (every other test renders them) and makes Helm refuse a value of the
// wrong type and a misspelt key.
func TestValuesSchema(t *testing.T) {
	if _, err := renderRelease(t, "wfx", nil); err != nil {
		t.Fatalf("the default values: %v", err)
	}
	for name, doc := range map[string]string{
		"replicas not a number":  "replicas: one\n",
		"port not a number":      "service: {port: http}\n",
		"label value not a text": "commonLabels: {team: {name: x}}\n",
		"misspelt key":           "serviceMonitor: {intervall: 30s}\n",
		"bad duration":           "serviceMonitor: {interval: 30 seconds}\n",
		"password, not a hash":   "web: {basicAuthUsers: {prometheus: secret}}\n",
		"unknown section":        "servicemonitor: {enabled: false}\n",
	} {
		_, err := renderRelease(t, "wfx", values(t, doc))
		if err == nil || !strings.Contains(err.Error(), "schema") {
			t.Errorf("%s (%q): Helm accepted it or failed for another reason: %v", name, doc, err)
		}
	}
	// A template's own check: TLS without its Secret.
	if _, err := renderRelease(t, "wfx", values(t, "web: {tls: {enabled: true}}\n")); err == nil || !strings.Contains(err.Error(), "web.tls.secretName") {
		t.Errorf("TLS without a Secret: %v", err)
	}
	// A NetworkPolicy that would let no scrape through, or cut every
	// source off, is refused naming the value.
	for doc, want := range map[string]string{
		"networkPolicy: {enabled: true, egress: [{ports: [{port: 5432}]}]}\n":                        "networkPolicy.ingressFrom",
		"networkPolicy: {enabled: true, ingressFrom: [{podSelector: {}}]}\n":                         "networkPolicy.egress",
		"networkPolicy: {enabled: true, ingressFrom: [{podSelector: {}}], egress: [], dnss: true}\n": "schema",
	} {
		if _, err := renderRelease(t, "wfx", values(t, doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error naming %s", doc, err, want)
		}
	}
}

// TestChartOptions renders the chart with the options switched: everything
// off, mounted secrets, extra labels, environment and volumes, another
// ServiceAccount, the Service's type, TLS and basic auth on the exporter
// and the ServiceMonitor that scrapes it that way from another namespace,
// another release name, and rules rendered from a user's alerts config.
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
extraEnv: [{name: TZ, value: UTC}]
extraVolumes: [{name: scratch, emptyDir: {}}]
extraVolumeMounts: [{name: scratch, mountPath: /tmp}]
commonLabels: {team: payments}
serviceAccount: {create: false, name: shared-reader}
podSecurityContext: {runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, fsGroup: 10001}
readinessProbe: {httpGet: {path: /-/ready, port: metrics}, periodSeconds: 5}
service: {type: NodePort, annotations: {example.com/scrape: "false"}, labels: {tier: monitoring}}
web:
  tls: {enabled: true, secretName: exporter-tls}
  basicAuthUsers: {prometheus: $2y$10$0000000000000000000000000000000000000000000000000000a}
serviceMonitor:
  namespace: observability
  additionalLabels: {release: kube-prometheus-stack}
  interval: 1m
  scrapeTimeout: 20s
  path: /metrics
  tlsConfig: {ca: {secret: {name: exporter-tls, key: ca.crt}}, serverName: payments-workflow-exporter.monitoring.svc}
  basicAuth: {username: {name: scrape, key: user}, password: {name: scrape, key: password}}
  relabelings: [{targetLabel: cluster, replacement: eu-1}]
  metricRelabelings: [{sourceLabels: [__name__], regex: go_.*, action: drop}]
prometheusRule: {namespace: observability, additionalLabels: {release: kube-prometheus-stack}}
dashboards: {label: grafana_dashboard_workflow, labelValue: "yes", namespace: grafana, folder: Ops}
replicas: 2
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector: {matchLabels: {app.kubernetes.io/instance: payments-workflow-exporter}}
networkPolicy:
  enabled: true
  ingressFrom:
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: observability}}
      podSelector: {matchLabels: {app.kubernetes.io/name: prometheus}}
  egress:
    - to: [{ipBlock: {cidr: 10.20.0.0/24}}]
      ports: [{port: 5432, protocol: TCP}]
resources: {requests: {cpu: 50m, memory: 64Mi}, limits: {memory: 128Mi}}
`))
	validateAll(t, on)
	k = kinds(on)
	checkWiring(t, on)
	checkDashboards(t, k["ConfigMap"], "grafana_dashboard_workflow", "yes")
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		if k[kind][0].GetLabels()["release"] != "kube-prometheus-stack" || k[kind][0].GetNamespace() != "observability" {
			t.Errorf("%s lacks the additional label or its namespace: %v in %q", kind, k[kind][0].GetLabels(), k[kind][0].GetNamespace())
		}
	}
	for _, o := range on {
		if o.obj.GetLabels()["team"] != "payments" {
			t.Errorf("%s lacks the common label", o.source)
		}
	}
	if len(k["ServiceAccount"]) != 0 {
		t.Errorf("serviceAccount.create false, yet %d ServiceAccounts", len(k["ServiceAccount"]))
	}
	ps := podSpec(t, k["Deployment"][0])
	c := ps.Containers[0]
	if c.Image != "registry.example/workflow-exporter:0.1.0" || !slices.Contains(c.Args, "--log.level=debug") {
		t.Errorf("image %s, args %v", c.Image, c.Args)
	}
	if ps.ServiceAccountName != "shared-reader" || *ps.SecurityContext.RunAsUser != 10001 {
		t.Errorf("ServiceAccount %q, runAsUser %d", ps.ServiceAccountName, *ps.SecurityContext.RunAsUser)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "TZ" || len(ps.Volumes) != 4 || c.VolumeMounts[len(c.VolumeMounts)-1].MountPath != "/tmp" {
		t.Errorf("extra env %v, volumes %v, mounts %v", c.Env, ps.Volumes, c.VolumeMounts)
	}
	// Basic auth on: the probes knock on the port (an httpGet would get 401),
	// keeping their timings.
	if p := c.ReadinessProbe; p.TCPSocket == nil || p.HTTPGet != nil || p.PeriodSeconds != 5 || c.LivenessProbe.TCPSocket == nil {
		t.Errorf("probes with basic auth: readiness %+v, liveness %+v", p, c.LivenessProbe)
	}
	if !slices.Contains(c.Args, "--web.config.file=/etc/workflow-exporter/web-config.yml") {
		t.Errorf("args %v lack the web config", c.Args)
	}
	webConfig := ""
	for _, cm := range k["ConfigMap"] {
		if v, ok, _ := unstructured.NestedString(cm.Object, "data", "web-config.yml"); ok {
			webConfig = v
		}
	}
	for _, want := range []string{"cert_file: /etc/workflow-exporter/tls/tls.crt", "key_file: /etc/workflow-exporter/tls/tls.key", "prometheus: $2y$10$"} {
		if !strings.Contains(webConfig, want) {
			t.Errorf("web-config.yml lacks %q:\n%s", want, webConfig)
		}
	}
	svc := k["Service"][0]
	if typ, _, _ := unstructured.NestedString(svc.Object, "spec", "type"); typ != "NodePort" || svc.GetAnnotations()["example.com/scrape"] != "false" || svc.GetLabels()["tier"] != "monitoring" {
		t.Errorf("Service type %q, annotations %v, labels %v", typ, svc.GetAnnotations(), svc.GetLabels())
	}
	sm := serviceMonitor(t, k["ServiceMonitor"][0])
	ep := sm.Spec.Endpoints[0]
	if !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{"monitoring"}) || ep.Scheme.String() != "https" || ep.TLSConfig == nil ||
		ep.BasicAuth == nil || ep.BasicAuth.Password.Name != "scrape" || len(ep.RelabelConfigs) != 2 || len(ep.MetricRelabelConfigs) != 1 {
		t.Errorf("the ServiceMonitor from another namespace, over TLS with basic auth: %+v", sm.Spec)
	}

	// The NetworkPolicy: the exporter's pods, ingress from Prometheus to the
	// metrics port only, egress to the database and DNS.
	if len(k["NetworkPolicy"]) != 1 {
		t.Fatalf("%d NetworkPolicies with networkPolicy.enabled", len(k["NetworkPolicy"]))
	}
	var np networkingv1.NetworkPolicy
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(k["NetworkPolicy"][0].Object, &np); err != nil {
		t.Fatal(err)
	}
	podLabels, _, _ := unstructured.NestedStringMap(k["Deployment"][0].Object, "spec", "template", "metadata", "labels")
	if !subset(np.Spec.PodSelector.MatchLabels, podLabels) || len(np.Spec.PodSelector.MatchLabels) == 0 {
		t.Errorf("the NetworkPolicy selects %v, not the exporter's pods %v", np.Spec.PodSelector.MatchLabels, podLabels)
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 || np.Spec.Ingress[0].From[0].PodSelector.MatchLabels["app.kubernetes.io/name"] != "prometheus" ||
		len(np.Spec.Ingress[0].Ports) != 1 || np.Spec.Ingress[0].Ports[0].Port.String() != c.Ports[0].Name {
		t.Errorf("NetworkPolicy ingress %+v: want Prometheus's pods, to the %s port only", np.Spec.Ingress, c.Ports[0].Name)
	}
	if len(np.Spec.Egress) != 2 || np.Spec.Egress[0].To[0].IPBlock.CIDR != "10.20.0.0/24" || np.Spec.Egress[1].Ports[0].Port.IntValue() != 53 {
		t.Errorf("NetworkPolicy egress %+v: want the database, then DNS", np.Spec.Egress)
	}
	if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
		t.Errorf("NetworkPolicy policyTypes %v", np.Spec.PolicyTypes)
	}
	if r, _, _ := unstructured.NestedInt64(k["Deployment"][0].Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas %d, want 2", r)
	}
	// Two replicas get one stable instance (the Service's address in the
	// release's namespace), told apart by the operator's pod label.
	if rl := ep.RelabelConfigs; len(rl) != 2 || rl[0].TargetLabel != "instance" || rl[0].Replacement == nil ||
		*rl[0].Replacement != "payments-workflow-exporter.$1.svc:7840" || len(rl[0].SourceLabels) != 1 || rl[0].SourceLabels[0] != "__meta_kubernetes_namespace" {
		t.Errorf("the ServiceMonitor's relabelings %+v: want the stable instance first, then the user's", rl)
	}

	// TLS alone: the probes ask over HTTPS.
	c = podSpec(t, kinds(render(t, "wfx", values(t, "web: {tls: {enabled: true, secretName: exporter-tls}}\n")))["Deployment"][0]).Containers[0]
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p.HTTPGet == nil || p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("probe with TLS: %+v", p)
		}
	}

	// A user's rules through --set-file prometheusRule.rules=...
	withRules := render(t, "wfx", map[string]any{"prometheusRule": map[string]any{"rules": string(custom)}})
	validateAll(t, withRules)
	checkRules(t, kinds(withRules)["PrometheusRule"][0], &cfg)
}

// TestPlainManifests validates deploy/kubernetes/*.yaml and checks that they
// fit together like the chart's.
func TestPlainManifests(t *testing.T) {
	objs := plainManifests(t)
	validateAll(t, objs)
	checkWiring(t, objs)
	k := kinds(objs)
	// Secrets are the user's (the file's comment says how to create one):
	// a Secret of placeholder values here would be applied as is.
	if len(k["Secret"]) != 0 {
		t.Errorf("deploy/kubernetes creates %d Secrets", len(k["Secret"]))
	}
	ps := podSpec(t, k["Deployment"][0])
	if len(k["ServiceAccount"]) != 1 || k["ServiceAccount"][0].Object["automountServiceAccountToken"] != false ||
		ps.ServiceAccountName != k["ServiceAccount"][0].GetName() || ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Errorf("the pod's ServiceAccount %q mounts a token, or is not the file's", ps.ServiceAccountName)
	}
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

// plainManifests are the objects of deploy/kubernetes/*.yaml.
func plainManifests(t *testing.T) []object {
	t.Helper()
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
	return objs
}

// podSpec is the Deployment's pod, with its one container.
func podSpec(t *testing.T, dep *unstructured.Unstructured) corev1.PodSpec {
	t.Helper()
	var pod corev1.PodTemplateSpec
	tmpl, _, _ := unstructured.NestedMap(dep.Object, "spec", "template")
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &pod); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Spec.Containers))
	}
	return pod.Spec
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
		if want := `job="` + job + `"`; !strings.Contains(rules.Default().Selector.String(), want) {
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
// VERSION file's, and so is the plain manifests' image tag.
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
	for _, dep := range kinds(plainManifests(t))["Deployment"] {
		if img := podSpec(t, dep).Containers[0].Image; img != "workflow-exporter:"+want {
			t.Errorf("deploy/kubernetes runs %s, want workflow-exporter:%s", img, want)
		}
	}
}
