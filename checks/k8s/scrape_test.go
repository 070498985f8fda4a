package k8s

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/test/harness/exportertest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/promtest"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// secrets are the Secrets a test stands in for: name -> key -> value.
type secrets map[string]map[string]string

func (s secrets) get(name, key string) (string, error) {
	v, ok := s[name][key]
	if !ok {
		return "", fmt.Errorf("no Secret %s with key %s", name, key)
	}
	return v, nil
}

// TestServiceMonitorScrapesTheExporter renders the chart with two replicas
// and TLS and basic auth on, runs its two pods the way the kubelet would
// (the ConfigMap's files and the Secrets' keys written where the Deployment
// mounts them, under a temporary root; its arguments; its environment from
// the Secrets), and turns the ServiceMonitor's endpoint into the scrape
// config the Prometheus Operator gives Prometheus for it. Then a real
// Prometheus of each flavor scrapes both pods with that config: up is 1 for
// each, with the endpoint's relabeling applied: one stable instance, the
// Service's address (not a pod's address, which a reschedule changes),
// shared by both replicas and told apart by pod, and the alert rules'
// merging (rules.ReplicaLabels) gives one series per source. The exporter
// refuses a request without the credentials and one over plain HTTP, so the
// scrape went through TLS and basic auth as the chart's web config sets
// them.
func TestServiceMonitorScrapesTheExporter(t *testing.T) {
	testkit.SkipIfShort(t, "the exporter and Prometheus")
	const password = "scrape-password"
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	certs := testkit.NewCertificates(t)
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	sec := secrets{
		"wfx-tls":    {"tls.crt": read(certs.CertFile), "tls.key": read(certs.KeyFile), "ca.crt": read(certs.CAFile)},
		"wfx-scrape": {"username": "prometheus", "password": password},
		// The default values' secretEnv. Nobody listens at the engine and
		// the database (see config below): the exporter serves its own
		// metrics (and source_up 0) all the same.
		"workflow-exporter-secrets": {"camunda-password": "engine-password", "orders-dsn": "postgres://exporter@127.0.0.1:1/orders?connect_timeout=1"},
	}
	objs := render(t, "wfx", values(t, fmt.Sprintf(`
replicas: 2
config:
  camunda: [{name: main, url: "http://127.0.0.1:1/engine-rest", username: exporter, password_env: CAMUNDA_PASSWORD, min_interval: 1s}]
  databases: [{name: orders, dsn_env: ORDERS_DATABASE_URL, min_interval: 1s}]
web:
  tls: {enabled: true, secretName: wfx-tls}
  basicAuthUsers: {prometheus: %q}
serviceMonitor:
  interval: 1s
  scrapeTimeout: 900ms
  tlsConfig: {ca: {secret: {name: wfx-tls, key: ca.crt}}, serverName: localhost}
  basicAuth:
    username: {name: wfx-scrape, key: username}
    password: {name: wfx-scrape, key: password}
  relabelings: [{targetLabel: cluster, replacement: kind-test}]
`, hash)))
	validateAll(t, objs)
	k := kinds(objs)

	x := runPod(t, k["Deployment"][0], k["ConfigMap"], sec)
	x2 := runPod(t, k["Deployment"][0], k["ConfigMap"], sec)

	// Without credentials, and over plain HTTP, the exporter refuses (once
	// it listens: the harness did not wait for it).
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: certs.Pool}}}
	resp, err := client.Get("https://" + x.Addr + "/metrics")
	for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		resp, err = client.Get("https://" + x.Addr + "/metrics")
	}
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /metrics over TLS without credentials: %v %v, want 401", status(resp), err)
	} else {
		resp.Body.Close()
	}
	if resp, err := http.Get("http://" + x.Addr + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET /metrics over plain HTTP: %s, want a refusal", resp.Status)
		}
	}

	svc := k["Service"][0]
	sm := serviceMonitor(t, k["ServiceMonitor"][0])
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("%d endpoints, want 1", len(sm.Spec.Endpoints))
	}
	files := promtest.Files{}
	job := scrapeJob(t, sm, 0, svc, []podTarget{{x.Addr, "wfx-workflow-exporter-7d9f-a1"}, {x2.Addr, "wfx-workflow-exporter-7d9f-b2"}}, sec, files)
	cfg, err := yaml.Marshal(map[string]any{"scrape_configs": []any{job}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scrape config from the ServiceMonitor:\n%s", cfg)

	promtest.Each(t, promtest.Flavors(t), func(t *testing.T, f promtest.Flavor) {
		prom := f.StartPrometheus(t, string(cfg), files)
		var got []promtest.Sample
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			got = prom.Query(t, `up{job="workflow-exporter"} == 1`)
			if len(got) == 2 {
				break
			}
		}
		const instance = "wfx-workflow-exporter.monitoring.svc:7840"
		pods := map[string]bool{}
		for _, s := range got {
			if s.Labels["instance"] != instance || s.Labels["cluster"] != "kind-test" || s.Labels["namespace"] != "monitoring" {
				t.Errorf(`up %v: want instance=%q (the Service's address, not the pod's), cluster="kind-test", namespace="monitoring"`, s.Labels, instance)
			}
			pods[s.Labels["pod"]] = true
		}
		if len(got) != 2 || len(pods) != 2 {
			t.Fatalf(`up{job="workflow-exporter"} == 1: %+v, want a series of 1 for each of the two replicas, told apart by pod`, got)
		}
		if v := prom.Query(t, `workflow_exporter_build_info{job="workflow-exporter"}`); len(v) != 2 {
			t.Errorf("the exporters' own metrics were not scraped: %+v", v)
		}
		// Both replicas report the unreachable database down; merged as
		// the rules merge them, one series.
		var merged []promtest.Sample
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			merged = prom.Query(t, `max without (`+strings.Join(rules.ReplicaLabels(), ", ")+`) (workflow_exporter_source_up{job="workflow-exporter", source="database"})`)
			if len(merged) == 1 {
				break
			}
		}
		if len(merged) != 1 || merged[0].Value != 0 || merged[0].Labels["name"] != "orders" {
			t.Errorf("the replicas' source_up merged: %+v, want one series of 0 for orders", merged)
		}
	})
}

// TestPlainServiceMonitorScrapesTheExporter: deploy/kubernetes's Deployment
// run as two pods and scraped as its ServiceMonitor says: one stable
// instance for both, the Service's address in the namespace the manifests
// are applied to, told apart by pod.
func TestPlainServiceMonitorScrapesTheExporter(t *testing.T) {
	testkit.SkipIfShort(t, "the exporter and Prometheus")
	objs := plainManifests(t)
	k := kinds(objs)
	sec := secrets{"workflow-exporter-secrets": {"camunda-password": "engine-password", "orders-dsn": "postgres://exporter@127.0.0.1:1/orders?connect_timeout=1"}}
	var cms []*unstructured.Unstructured
	for _, cm := range k["ConfigMap"] {
		if cm.GetName() == "workflow-exporter-config" {
			cms = append(cms, cm)
		}
	}
	a := runPod(t, k["Deployment"][0], cms, sec)
	b := runPod(t, k["Deployment"][0], cms, sec)
	sm := serviceMonitor(t, k["ServiceMonitor"][0])
	// kubectl -n monitoring apply -f deploy/kubernetes/ (the file's comment)
	sm.Namespace = "monitoring"
	files := promtest.Files{}
	job := scrapeJob(t, sm, 0, k["Service"][0], []podTarget{{a.Addr, "workflow-exporter-5c7b-x1"}, {b.Addr, "workflow-exporter-5c7b-y2"}}, sec, files)
	job["scrape_interval"], job["scrape_timeout"] = "1s", "900ms"
	cfg, err := yaml.Marshal(map[string]any{"scrape_configs": []any{job}})
	if err != nil {
		t.Fatal(err)
	}
	promtest.Each(t, promtest.Flavors(t), func(t *testing.T, f promtest.Flavor) {
		prom := f.StartPrometheus(t, string(cfg), files)
		var got []promtest.Sample
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			if got = prom.Query(t, `up{job="workflow-exporter"} == 1`); len(got) == 2 {
				break
			}
		}
		if len(got) != 2 || got[0].Labels["instance"] != "workflow-exporter.monitoring.svc:7840" || got[1].Labels["instance"] != got[0].Labels["instance"] ||
			got[0].Labels["pod"] == got[1].Labels["pod"] {
			t.Fatalf(`up{job="workflow-exporter"} == 1: %+v, want both replicas under instance "workflow-exporter.monitoring.svc:7840", told apart by pod`, got)
		}
	})
}

func status(resp *http.Response) string {
	if resp == nil {
		return "no response"
	}
	resp.Body.Close()
	return resp.Status
}

// runPod starts the exporter as the Deployment's one container: the
// volumes it mounts (ConfigMaps of cms, Secrets of sec) written under a
// temporary root, every path in its arguments and in the files it reads
// moved under that root, its environment taken from the Secrets, and a free
// 127.0.0.1 port instead of its listen address.
func runPod(t *testing.T, dep *unstructured.Unstructured, cms []*unstructured.Unstructured, sec secrets) *exportertest.Exporter {
	t.Helper()
	pod := podSpec(t, dep)
	c := pod.Containers[0]
	root := t.TempDir()
	var mountPaths []string
	for _, m := range c.VolumeMounts {
		mountPaths = append(mountPaths, m.MountPath)
	}
	// Longest first, so /a/b moves before /a.
	sort.Slice(mountPaths, func(i, j int) bool { return len(mountPaths[i]) > len(mountPaths[j]) })
	rooted := func(s string) string {
		for _, p := range mountPaths {
			s = strings.ReplaceAll(s, p, filepath.Join(root, p))
		}
		return s
	}
	for _, m := range c.VolumeMounts {
		data := volumeData(t, pod.Volumes, m.Name, cms, sec)
		if m.SubPath != "" {
			write(t, filepath.Join(root, m.MountPath), rooted(data[m.SubPath]))
			continue
		}
		for key, v := range data {
			write(t, filepath.Join(root, m.MountPath, key), rooted(v))
		}
	}
	var flags []string
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "--web.listen-address") {
			flags = append(flags, rooted(a))
		}
	}
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if ref := e.ValueFrom; ref != nil && ref.SecretKeyRef != nil {
			var err error
			if v, err = sec.get(ref.SecretKeyRef.Name, ref.SecretKeyRef.Key); err != nil {
				t.Fatalf("env %s: %v", e.Name, err)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	// TLS and basic auth: the harness's plain readiness probe cannot get
	// through; Prometheus's up is the probe.
	return exportertest.Start(t, exportertest.Options{Flags: flags, Env: env, NoWait: true})
}

// volumeData is the content of the pod's volume name: a ConfigMap's data or
// a Secret's keys.
func volumeData(t *testing.T, vols []corev1.Volume, name string, cms []*unstructured.Unstructured, sec secrets) map[string]string {
	t.Helper()
	for _, v := range vols {
		if v.Name != name {
			continue
		}
		switch {
		case v.ConfigMap != nil:
			for _, cm := range cms {
				if cm.GetName() == v.ConfigMap.Name {
					data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
					return data
				}
			}
			t.Fatalf("volume %s: the chart renders no ConfigMap %s", name, v.ConfigMap.Name)
		case v.Secret != nil:
			data, ok := sec[v.Secret.SecretName]
			if !ok {
				t.Fatalf("volume %s: no Secret %s", name, v.Secret.SecretName)
			}
			return data
		}
		t.Fatalf("volume %s: neither a ConfigMap nor a Secret", name)
	}
	t.Fatalf("no volume %s", name)
	return nil
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func serviceMonitor(t *testing.T, u *unstructured.Unstructured) *monitoringv1.ServiceMonitor {
	t.Helper()
	var sm monitoringv1.ServiceMonitor
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &sm); err != nil {
		t.Fatal(err)
	}
	return &sm
}

// podTarget is one pod behind the Service: its address and name.
type podTarget struct{ addr, pod string }

// scrapeJob is the scrape config the Prometheus Operator generates for
// endpoint i of the ServiceMonitor, with targets standing for the
// Service's endpoints that Kubernetes discovery would find (each with the
// meta labels discovery gives it: namespace, Service, pod, container): the
// labels the operator sets on every target (namespace, service, pod,
// container, job from the Service's jobLabel label, endpoint), then the
// endpoint's path, scheme, interval, timeout, TLS (its CA and client
// certificate from Secrets, written to files), basic auth (from Secrets),
// relabelings and metric relabelings. A field of the endpoint it does not
// convert fails the test, so a new value of the chart cannot slip past it
// untested.
func scrapeJob(t *testing.T, sm *monitoringv1.ServiceMonitor, i int, svc *unstructured.Unstructured, targets []podTarget, sec secrets, files promtest.Files) map[string]any {
	t.Helper()
	ep := sm.Spec.Endpoints[i]
	var raw map[string]any
	b, _ := json.Marshal(ep)
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	for _, known := range []string{"port", "path", "scheme", "interval", "scrapeTimeout", "tlsConfig", "basicAuth", "relabelings", "metricRelabelings"} {
		delete(raw, known)
	}
	if len(raw) > 0 {
		t.Fatalf("the ServiceMonitor's endpoint has fields the test cannot turn into a scrape config: %v", raw)
	}
	secretValue := func(what string, sel corev1.SecretKeySelector) string {
		v, err := sec.get(sel.Name, sel.Key)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	// The operator names the job after the ServiceMonitor and sets the job
	// label from the Service's jobLabel label (or its name).
	job := svc.GetName()
	if sm.Spec.JobLabel != "" {
		job = svc.GetLabels()[sm.Spec.JobLabel]
	}
	// helm template leaves the release's namespace out of the manifests.
	ns := sm.Namespace
	if ns == "" {
		ns = "monitoring"
	}
	// What the operator's relabelings make of discovery's meta labels.
	relabels := []any{
		map[string]any{"source_labels": []string{"__meta_kubernetes_namespace"}, "target_label": "namespace"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_service_name"}, "target_label": "service"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_pod_name"}, "target_label": "pod"},
		map[string]any{"source_labels": []string{"__meta_kubernetes_pod_container_name"}, "target_label": "container"},
		map[string]any{"target_label": "job", "replacement": job},
		map[string]any{"target_label": "endpoint", "replacement": ep.Port},
	}
	relabels = append(relabels, relabelConfigs(ep.RelabelConfigs)...)
	// The Service's namespace: the release's, where the ServiceMonitor
	// selects it (namespaceSelector) or where it stands.
	svcNS := ns
	if sm.Spec.NamespaceSelector.MatchNames != nil {
		svcNS = sm.Spec.NamespaceSelector.MatchNames[0]
	}
	var groups []any
	for _, tg := range targets {
		groups = append(groups, map[string]any{"targets": []string{tg.addr}, "labels": map[string]string{
			"__meta_kubernetes_namespace": svcNS, "__meta_kubernetes_service_name": svc.GetName(),
			"__meta_kubernetes_pod_name": tg.pod, "__meta_kubernetes_pod_container_name": "exporter",
		}})
	}
	out := map[string]any{
		"job_name":        fmt.Sprintf("serviceMonitor/%s/%s/%d", ns, sm.Name, i),
		"static_configs":  groups,
		"relabel_configs": relabels,
	}
	if ep.Path != "" {
		out["metrics_path"] = ep.Path
	}
	if ep.Scheme != nil {
		out["scheme"] = strings.ToLower(string(*ep.Scheme))
	}
	if ep.Interval != "" {
		out["scrape_interval"] = string(ep.Interval)
	}
	if ep.ScrapeTimeout != "" {
		out["scrape_timeout"] = string(ep.ScrapeTimeout)
	}
	if tc := ep.TLSConfig; tc != nil {
		tlsCfg := map[string]any{}
		file := func(key, name, content string) {
			files[name] = content
			tlsCfg[key] = name
		}
		if s := tc.CA.Secret; s != nil {
			file("ca_file", "tls/ca", secretValue("tlsConfig.ca", *s))
		}
		if s := tc.Cert.Secret; s != nil {
			file("cert_file", "tls/cert", secretValue("tlsConfig.cert", *s))
		}
		if s := tc.KeySecret; s != nil {
			file("key_file", "tls/key", secretValue("tlsConfig.keySecret", *s))
		}
		if tc.CA.ConfigMap != nil || tc.Cert.ConfigMap != nil || tc.CAFile != "" || tc.CertFile != "" || tc.KeyFile != "" {
			t.Fatal("tlsConfig: ConfigMaps and files of the Prometheus pod are not converted")
		}
		if tc.ServerName != nil {
			tlsCfg["server_name"] = *tc.ServerName
		}
		if tc.InsecureSkipVerify != nil {
			tlsCfg["insecure_skip_verify"] = *tc.InsecureSkipVerify
		}
		out["tls_config"] = tlsCfg
	}
	if ba := ep.BasicAuth; ba != nil {
		out["basic_auth"] = map[string]any{"username": secretValue("basicAuth.username", ba.Username), "password": secretValue("basicAuth.password", ba.Password)}
	}
	if mr := relabelConfigs(ep.MetricRelabelConfigs); len(mr) > 0 {
		out["metric_relabel_configs"] = mr
	}
	return out
}

// relabelConfigs writes the operator's relabelings as Prometheus's.
func relabelConfigs(rs []monitoringv1.RelabelConfig) []any {
	var out []any
	for _, r := range rs {
		m := map[string]any{}
		if len(r.SourceLabels) > 0 {
			var ls []string
			for _, l := range r.SourceLabels {
				ls = append(ls, string(l))
			}
			m["source_labels"] = ls
		}
		if r.Separator != nil {
			m["separator"] = *r.Separator
		}
		if r.TargetLabel != "" {
			m["target_label"] = r.TargetLabel
		}
		if r.Regex != "" {
			m["regex"] = r.Regex
		}
		if r.Modulus != 0 {
			m["modulus"] = r.Modulus
		}
		if r.Replacement != nil {
			m["replacement"] = *r.Replacement
		}
		if r.Action != "" {
			m["action"] = strings.ToLower(r.Action)
		}
		out = append(out, m)
	}
	return out
}
