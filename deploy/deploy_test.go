// Package deploy holds deployment files; this test keeps them loadable.
package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/workflow-exporter/workflow-exporter/internal/config"
)

// TestYAMLFilesParse catches a broken manifest before a user's kubectl does.
func TestYAMLFilesParse(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
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
