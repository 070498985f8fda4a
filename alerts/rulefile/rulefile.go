// Package rulefile is the Prometheus rule file format, and the Prometheus
// Operator's PrometheusRule around it, as the generators of the shipped
// rules (alerts/rules) and of the SLO rules (alerts/slo) both write them:
// YAML with two-space indentation after a header comment. Each generator
// keeps its own rule type and header; the file around them is one.
package rulefile

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// File is a Prometheus rule file whose rules are of type R.
type File[R any] struct {
	Groups []Group[R] `yaml:"groups"`
}

// Group is a rule group.
type Group[R any] struct {
	Name  string `yaml:"name"`
	Rules []R    `yaml:"rules"`
}

// ObjectMeta names a PrometheusRule.
type ObjectMeta struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace,omitempty"`
	Labels    map[string]string `yaml:"labels,omitempty"`
}

// prometheusRule is the Prometheus Operator's PrometheusRule resource; its
// spec is the rule file's content.
type prometheusRule[R any] struct {
	APIVersion string     `yaml:"apiVersion"`
	Kind       string     `yaml:"kind"`
	Metadata   ObjectMeta `yaml:"metadata"`
	Spec       File[R]    `yaml:"spec"`
}

// Encode writes head, then v as YAML with two-space indentation, like the
// shipped rule files.
func Encode(head string, v any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(head)
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodePrometheusRule writes head, then the rule file f as a
// PrometheusRule named by m; a PrometheusRule without a name is refused.
func EncodePrometheusRule[R any](head string, m ObjectMeta, f File[R]) ([]byte, error) {
	if m.Name == "" {
		return nil, fmt.Errorf("PrometheusRule: the name must not be empty")
	}
	return Encode(head, prometheusRule[R]{APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule", Metadata: m, Spec: f})
}
