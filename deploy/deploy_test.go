// Package deploy holds deployment files; this test keeps them loadable.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/config"
	"github.com/workflow-exporter/workflow-exporter/dashboards"
	"github.com/workflow-exporter/workflow-exporter/test/harness/testkit"
)

// TestYAMLFilesParse catches a broken manifest before a user's kubectl does.
// The Helm chart's templates are Go templates, not YAML: checks/k8s
// renders them with Helm and validates the result.
func TestYAMLFilesParse(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && filepath.ToSlash(p) == "helm/workflow-exporter/templates" {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".yaml")) {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found only %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for i := 0; ; i++ {
			var doc any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Errorf("%s document %d: %v", f, i, err)
				break
			}
		}
	}
}

// TestExampleConfigsAreValid loads every exporter config shipped here.
func TestExampleConfigsAreValid(t *testing.T) {
	t.Setenv("CAMUNDA_PASSWORD", "x")
	t.Setenv("ORDERS_DATABASE_URL", "postgres://localhost/orders")
	for _, f := range []string{"config.example.yml", "compose/exporter.yml"} {
		if _, err := config.Load(f); err != nil {
			t.Fatal(err)
		}
	}
	// The Kubernetes ConfigMap embeds a config that reads files at
	// /etc/...; check its shape with the files swapped for env vars.
	b, err := os.ReadFile("kubernetes/exporter.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&cm); err != nil {
		t.Fatal(err)
	}
	doc := cm.Data["config.yml"]
	doc = strings.ReplaceAll(doc, "password_file: /etc/workflow-exporter/secrets/camunda-password", "password_env: CAMUNDA_PASSWORD")
	doc = strings.ReplaceAll(doc, "dsn_file: /etc/workflow-exporter/secrets/orders-dsn", "dsn_env: ORDERS_DATABASE_URL")
	if _, err := config.Parse([]byte(doc)); err != nil {
		t.Fatalf("ConfigMap config: %v\n%s", err, doc)
	}
}

// Kubernetes can enforce runAsNonRoot only for a numeric user: with a user
// name in the image and no runAsUser in the pod, the kubelet refuses to start
// the container (CreateContainerConfigError). The secrets are mounted 0440,
// readable by that user only through fsGroup.
func TestKubernetesRunsTheImageAsItsNumericUser(t *testing.T) {
	b, err := os.ReadFile(testkit.Path(t, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "USER" {
			user = f[1]
		}
	}
	if user != "65532:65532" {
		t.Fatalf("Dockerfile USER %q, want the numeric 65532:65532", user)
	}
	m, err := os.ReadFile(filepath.Join("kubernetes", "exporter.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(m))
	found := false
	for {
		var doc struct {
			Kind string `yaml:"kind"`
			Spec struct {
				Template struct {
					Spec struct {
						SecurityContext map[string]any `yaml:"securityContext"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind != "Deployment" {
			continue
		}
		found = true
		sc := doc.Spec.Template.Spec.SecurityContext
		for _, k := range []string{"runAsUser", "runAsGroup", "fsGroup"} {
			if sc[k] != 65532 {
				t.Errorf("Deployment securityContext.%s = %v, want 65532", k, sc[k])
			}
		}
		if sc["runAsNonRoot"] != true {
			t.Error("Deployment securityContext.runAsNonRoot is not true")
		}
	}
	if !found {
		t.Fatal("no Deployment in deploy/kubernetes/exporter.yaml")
	}
}

// TestComposeGrafanaRunsTheDashboards: the compose stack's Grafana is at
// least the version the dashboards are built for.
func TestComposeGrafanaRunsTheDashboards(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("compose", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Image string `yaml:"image"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	image := c.Services["grafana"].Image
	_, tag, ok := strings.Cut(image, ":")
	if !ok || !strings.HasPrefix(image, "grafana/grafana:") {
		t.Fatalf("compose grafana image %q, want grafana/grafana:<version>", image)
	}
	if semverLess(tag, dashboards.MinGrafanaVersion) {
		t.Errorf("compose runs Grafana %s; the dashboards need %s or later", tag, dashboards.MinGrafanaVersion)
	}
}

// semverLess compares dotted numeric versions.
func semverLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}
