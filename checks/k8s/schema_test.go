package k8s

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/kube-openapi/pkg/spec3"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	openapivalidate "k8s.io/kube-openapi/pkg/validation/validate"
	"sigs.k8s.io/controller-tools/pkg/crd"
	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// object is one document of a manifest file.
type object struct {
	source string // file (and document index)
	obj    *unstructured.Unstructured
}

// parseManifests splits a multi-document YAML file into objects; empty
// documents (comments only) are skipped.
func parseManifests(source string, b []byte) ([]object, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []object
	for i := 0; ; i++ {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", source, i, err)
		}
		if doc == nil {
			continue
		}
		// Through JSON, so numbers are what the API server sees
		// (int64/float64) and maps have string keys.
		js, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", source, i, err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(js); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", source, i, err)
		}
		out = append(out, object{source: fmt.Sprintf("%s[%d] %s/%s", source, i, u.GetKind(), u.GetName()), obj: u})
	}
}

// validator validates objects of the kinds this repository ships.
type validator struct {
	openAPI map[string]*spec.Schema // by GVK "group/version/Kind"
	crds    map[schema.GroupVersionKind]*crdSchema
}

type crdSchema struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
}

var (
	sharedOnce sync.Once
	shared     *validator
	sharedErr  error
)

// newValidator loads the Kubernetes OpenAPI v3 documents of core/v1 and
// apps/v1 from client-go and generates the CRD schemas of ServiceMonitor and
// PrometheusRule from the prometheus-operator's types; once per test binary.
func newValidator(t *testing.T) *validator {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = loadValidator() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func loadValidator() (*validator, error) {
	v := &validator{openAPI: map[string]*spec.Schema{}, crds: map[schema.GroupVersionKind]*crdSchema{}}
	paths, err := openapitest.NewEmbeddedFileClient().Paths()
	if err != nil {
		return nil, err
	}
	for path, gv := range map[string]schema.GroupVersion{"api/v1": {Version: "v1"}, "apis/apps/v1": {Group: "apps", Version: "v1"}} {
		p, ok := paths[path]
		if !ok {
			return nil, fmt.Errorf("client-go has no OpenAPI document for %s", path)
		}
		b, err := p.Schema("application/json")
		if err != nil {
			return nil, err
		}
		var raw struct {
			Components struct {
				Schemas map[string]any `json:"schemas"`
			} `json:"components"`
		}
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, err
		}
		var doc spec3.OpenAPI
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for name, s := range raw.Components.Schemas {
			m, _ := s.(map[string]any)
			gvks, _ := m["x-kubernetes-group-version-kind"].([]any)
			for _, g := range gvks {
				gm, _ := g.(map[string]any)
				if gm["group"] != gv.Group || gm["version"] != gv.Version {
					continue
				}
				inlined := inline(m, raw.Components.Schemas, 0)
				js, _ := json.Marshal(inlined)
				var sch spec.Schema
				if err := json.Unmarshal(js, &sch); err != nil {
					return nil, fmt.Errorf("%s: schema %s: %w", path, name, err)
				}
				v.openAPI[gvKey(gv.Group, gv.Version, gm["kind"].(string))] = &sch
			}
		}
	}
	if err := v.loadCRDs(); err != nil {
		return nil, err
	}
	return v, nil
}

func gvKey(group, version, kind string) string { return group + "/" + version + "/" + kind }

// inline replaces every $ref to #/components/schemas/ with the schema it
// names (the Kubernetes types used here are not recursive; depth bounds it).
func inline(v any, all map[string]any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if ref, ok := x["$ref"].(string); ok && depth < 40 {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			return inline(all[name], all, depth+1)
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = inline(e, all, depth)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = inline(e, all, depth)
		}
		return out
	}
	return v
}

// loadCRDs generates the CustomResourceDefinitions of the operator's
// monitoring/v1 kinds from their Go types and markers, the way the operator
// generates its own CRDs with controller-gen.
func (v *validator) loadCRDs() error {
	pkgs, err := loader.LoadRoots("github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1")
	if err != nil {
		return fmt.Errorf("loading the prometheus-operator types: %w", err)
	}
	reg := &markers.Registry{}
	if err := crdmarkers.Register(reg); err != nil {
		return err
	}
	parser := &crd.Parser{Collector: &markers.Collector{Registry: reg}, Checker: &loader.TypeChecker{}, AllowDangerousTypes: true}
	crd.AddKnownTypes(parser)
	for _, p := range pkgs {
		parser.NeedPackage(p)
	}
	for _, kind := range []string{monitoringv1.ServiceMonitorsKind, monitoringv1.PrometheusRuleKind} {
		gk := schema.GroupKind{Group: monitoringv1.SchemeGroupVersion.Group, Kind: kind}
		parser.NeedCRDFor(gk, nil)
		def, ok := parser.CustomResourceDefinitions[gk]
		if !ok {
			return fmt.Errorf("controller-tools made no CRD for %s", gk)
		}
		for _, ver := range def.Spec.Versions {
			if ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
				return fmt.Errorf("CRD %s %s has no schema", gk, ver.Name)
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(ver.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
				return err
			}
			sv, _, err := validation.NewSchemaValidator(&internal)
			if err != nil {
				return err
			}
			st, err := structuralschema.NewStructural(&internal)
			if err != nil {
				return fmt.Errorf("CRD %s: not a structural schema: %w", gk, err)
			}
			v.crds[schema.GroupVersionKind{Group: gk.Group, Version: ver.Name, Kind: kind}] = &crdSchema{validator: sv, structural: st}
		}
	}
	return nil
}

var typeConverter = applyconfigurations.NewTypeConverter(scheme.Scheme)

// validate returns every schema violation of the object.
func (v *validator) validate(o object) []string {
	u := o.obj
	gvk := u.GroupVersionKind()
	var problems []string
	if c, ok := v.crds[gvk]; ok {
		for _, e := range validation.ValidateCustomResource(field.NewPath(""), u.UnstructuredContent(), c.validator) {
			problems = append(problems, e.Error())
		}
		// Fields the schema does not know: the API server would prune
		// them (kubectl's strict field validation refuses them).
		pruned := pruning.PruneWithOptions(u.DeepCopy().UnstructuredContent(), c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		for _, p := range pruned {
			problems = append(problems, "unknown field "+p)
		}
		return problems
	}
	s, ok := v.openAPI[gvKey(gvk.Group, gvk.Version, gvk.Kind)]
	if !ok && gvk == networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy") {
		// client-go embeds no OpenAPI document of networking.k8s.io/v1:
		// the structured schema (field names and types, as server-side
		// apply checks them) and the values the API server allows.
		if _, err := typeConverter.ObjectToTyped(u); err != nil {
			problems = append(problems, err.Error())
		}
		return append(problems, networkPolicyValues(u)...)
	}
	if !ok {
		return []string{fmt.Sprintf("no schema for %s: add it to the validator", gvk)}
	}
	res := openapivalidate.NewSchemaValidator(s, nil, "", strfmt.Default).Validate(u.UnstructuredContent())
	for _, e := range res.Errors {
		problems = append(problems, e.Error())
	}
	// The structured schema (the one server-side apply uses) refuses
	// fields the type does not have.
	if _, err := typeConverter.ObjectToTyped(u); err != nil {
		problems = append(problems, err.Error())
	}
	return problems
}

// networkPolicyValues returns the values of a NetworkPolicy the API server
// would refuse that its structured schema does not know: protocols, policy
// types, ports in range, CIDRs.
func networkPolicyValues(u *unstructured.Unstructured) []string {
	var np networkingv1.NetworkPolicy
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, &np, true); err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, pt := range np.Spec.PolicyTypes {
		if pt != networkingv1.PolicyTypeIngress && pt != networkingv1.PolicyTypeEgress {
			problems = append(problems, fmt.Sprintf("spec.policyTypes: unsupported value %q", pt))
		}
	}
	ports := func(where string, ps []networkingv1.NetworkPolicyPort) {
		for _, p := range ps {
			if p.Protocol != nil && *p.Protocol != corev1.ProtocolTCP && *p.Protocol != corev1.ProtocolUDP && *p.Protocol != corev1.ProtocolSCTP {
				problems = append(problems, fmt.Sprintf("%s.ports.protocol: unsupported value %q", where, *p.Protocol))
			}
			if p.Port != nil && p.Port.Type == intstr.Int && (p.Port.IntVal < 1 || p.Port.IntVal > 65535) {
				problems = append(problems, fmt.Sprintf("%s.ports.port: %d out of range", where, p.Port.IntVal))
			}
		}
	}
	peers := func(where string, ps []networkingv1.NetworkPolicyPeer) {
		for _, p := range ps {
			if p.IPBlock != nil {
				if _, _, err := net.ParseCIDR(p.IPBlock.CIDR); err != nil {
					problems = append(problems, fmt.Sprintf("%s.ipBlock.cidr: %v", where, err))
				}
			}
			if p.IPBlock == nil && p.PodSelector == nil && p.NamespaceSelector == nil {
				problems = append(problems, where+": a peer needs podSelector, namespaceSelector or ipBlock")
			}
		}
	}
	for _, r := range np.Spec.Ingress {
		ports("spec.ingress", r.Ports)
		peers("spec.ingress.from", r.From)
	}
	for _, r := range np.Spec.Egress {
		ports("spec.egress", r.Ports)
		peers("spec.egress.to", r.To)
	}
	return problems
}

// TestValidatorCatchesMistakes proves each schema can fail: an unknown
// field, a wrong type, a missing required field, a bad enum or pattern, in a
// built-in kind and in each operator kind.
func TestValidatorCatchesMistakes(t *testing.T) {
	v := newValidator(t)
	cases := map[string]string{
		"deployment unknown field":  "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: i, imagee: typo}]}\n",
		"deployment wrong type":     "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  replicas: one\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: i}]}\n",
		"deployment no selector":    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    metadata: {labels: {a: b}}\n    spec: {containers: [{name: c, image: i}]}\n",
		"service port not a number": "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec: {ports: [{port: eighty}]}\n",
		"servicemonitor interval":   "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\nspec:\n  selector: {}\n  endpoints: [{port: m, interval: 30 seconds}]\n",
		"servicemonitor unknown":    "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata: {name: x}\nspec:\n  selector: {}\n  endpoints: [{port: m, intervall: 30s}]\n",
		"prometheusrule no expr":    "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: x}\nspec:\n  groups: [{name: g, rules: [{alert: A}]}]\n",
		"prometheusrule for":        "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: x}\nspec:\n  groups: [{name: g, rules: [{alert: A, expr: up, for: 5 minutes}]}]\n",
		"networkpolicy unknown":     "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: x}\nspec:\n  podSelector: {}\n  ingress: [{form: [{podSelector: {}}]}]\n",
		"networkpolicy protocol":    "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: x}\nspec:\n  podSelector: {}\n  egress: [{ports: [{port: 5432, protocol: TCPP}]}]\n",
		"networkpolicy wrong type":  "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: x}\nspec:\n  podSelector: {}\n  ingress: [{from: {podSelector: {}}}]\n",
		"networkpolicy cidr":        "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: x}\nspec:\n  podSelector: {}\n  egress: [{to: [{ipBlock: {cidr: 10.0.0.0}}]}]\n",
	}
	for name, doc := range cases {
		objs, err := parseManifests(name, []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if ps := v.validate(objs[0]); len(ps) == 0 {
			t.Errorf("%s: accepted", name)
		} else {
			t.Logf("%s: %s", name, strings.Join(ps, "; "))
		}
	}
}
