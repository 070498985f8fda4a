// Package k8s holds the test-only checks of the Kubernetes deployment
// files: the Helm chart in deploy/helm/workflow-exporter rendered with Helm's
// own renderer (helm.sh/helm/v4), and every manifest, the chart's output and
// deploy/kubernetes/*.yaml alike, validated against the schemas of the
// Kubernetes API (the OpenAPI v3 documents and the structured schema that
// client-go carries) and of the prometheus-operator's custom resources (the
// CustomResourceDefinition schemas generated from its Go types with
// controller-tools, as the operator generates its CRDs). It lives in the
// checks module (checks/) so that Helm and the Kubernetes libraries stay out
// of the exporter's go.mod.
package k8s
