package dashboards

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
)

// grafanaForSchema maps a dashboard schemaVersion to the first Grafana
// release that writes it (from the defaults of @grafana/schema: 41 in
// 12.0.0 and 12.1.0, 42 in 12.2.0). A newer SDK that writes a newer schema
// fails TestMinGrafanaVersionIsStated until the stated minimum follows.
var grafanaForSchema = map[uint16]string{41: "12.0.0", 42: "12.2.0"}

func TestMinGrafanaVersionIsStated(t *testing.T) {
	sv := dashboard.NewDashboard().SchemaVersion
	if want, ok := grafanaForSchema[sv]; !ok || want != MinGrafanaVersion {
		t.Fatalf("the SDK writes schemaVersion %d (Grafana %q); MinGrafanaVersion is %s", sv, want, MinGrafanaVersion)
	}
	ds, err := All()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		var jd struct {
			Requires []struct {
				Type, ID, Version string
			} `json:"__requires"`
			Description   string `json:"description"`
			SchemaVersion uint16 `json:"schemaVersion"`
		}
		if err := json.Unmarshal(d.JSON, &jd); err != nil {
			t.Fatal(err)
		}
		if jd.SchemaVersion != sv {
			t.Errorf("%s: schemaVersion %d, want %d", d.UID, jd.SchemaVersion, sv)
		}
		if len(jd.Requires) == 0 || jd.Requires[0].ID != "grafana" || jd.Requires[0].Version != MinGrafanaVersion {
			t.Errorf("%s: __requires does not start with Grafana %s: %+v", d.UID, MinGrafanaVersion, jd.Requires)
		}
		if !strings.HasSuffix(jd.Description, "Built for Grafana "+MinGrafanaVersion+" or later.") {
			t.Errorf("%s: the description does not state the minimum Grafana version: %q", d.UID, jd.Description)
		}
	}
}

var selectorRE = regexp.MustCompile(`\b([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}`)

// TestOptionsScopeEverySelector renders with cluster and namespace variables
// (renamed labels) and a selector: every selector of every panel and
// variable query carries the matchers, the variables come right after the
// data source, and the data source variable defaults to the configured one.
func TestOptionsScopeEverySelector(t *testing.T) {
	o, err := ParseOptions([]byte(`
datasource: Mimir
selector: env="prod"
cluster: {enabled: true, label: k8s_cluster}
namespace: {enabled: true}
`))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`k8s_cluster=~"$cluster"`, `namespace=~"$namespace"`, `env="prod"`}
	checked := 0
	for _, d := range ds {
		var jd jsonDashboard
		if err := json.Unmarshal(d.JSON, &jd); err != nil {
			t.Fatal(err)
		}
		var exprs []string
		for _, p := range flatten(jd.Panels) {
			for _, tg := range p.Targets {
				exprs = append(exprs, tg.Expr)
			}
		}
		var names []string
		for _, v := range jd.Templating.List {
			names = append(names, v.Name)
			q, _ := v.Query.(string)
			switch v.Name {
			case "cluster":
				if q != `label_values(workflow_exporter_build_info{env="prod"}, k8s_cluster)` {
					t.Errorf("%s: cluster variable query %q", d.UID, q)
				}
			case "namespace":
				if q != `label_values(workflow_exporter_build_info{k8s_cluster=~"$cluster",env="prod"}, namespace)` {
					t.Errorf("%s: namespace variable query %q", d.UID, q)
				}
			default:
				if q != "" {
					exprs = append(exprs, q)
				}
			}
		}
		if len(names) < 5 || strings.Join(names[:5], ",") != "datasource,cluster,namespace,job,instance" {
			t.Errorf("%s: variables %v, want datasource, cluster, namespace, job, instance first", d.UID, names)
		}
		for _, e := range exprs {
			for _, m := range selectorRE.FindAllStringSubmatch(e, -1) {
				if strings.HasPrefix(m[0], "rate_interval") {
					continue
				}
				checked++
				for _, w := range want {
					if !strings.Contains(m[2], w) {
						t.Errorf("%s: selector %s lacks %s\n\t%s", d.UID, m[0], w, e)
					}
				}
			}
		}
		if !strings.Contains(string(d.JSON), `"current": {
          "selected": true,
          "text": "Mimir",
          "value": "Mimir"
        }`) {
			t.Errorf("%s: the datasource variable does not default to Mimir", d.UID)
		}
	}
	if checked < 100 {
		t.Errorf("only %d selectors checked", checked)
	}
	// The zero value changes nothing but the stated version.
	plain, _ := All()
	zero, _ := Render(Options{})
	for i := range plain {
		if string(plain[i].JSON) != string(zero[i].JSON) || strings.Contains(string(plain[i].JSON), "$cluster") {
			t.Errorf("%s: the zero Options are not the shipped dashboards", plain[i].UID)
		}
	}
}

func TestOptionsErrorsNameTheKey(t *testing.T) {
	for doc, want := range map[string]string{
		"datasorce: x\n":                                 "dashboards config: datasorce (line 1): unknown key; did you mean datasource?",
		"cluster: {enabled: true, lable: c}":             "dashboards config: cluster.lable (line 1): unknown key; did you mean cluster.label?",
		"selector: '{env=\"x\"}'\n":                      "dashboards config: selector (line 1): give the matchers without braces",
		"selector: env=prod\n":                           `dashboards config: selector (line 1): "env=prod" is not a label matcher`,
		"cluster: {enabled: true, label: k8s-cluster}\n": `dashboards config: cluster.label (line 1): "k8s-cluster" is not a label name`,
		"namespace: {label: ns}\n":                       "dashboards config: namespace.label (line 1): set, but namespace.enabled is false",
		"cluster: {enabled: true, label: x}\nnamespace: {enabled: true, label: x}\n": `dashboards config: namespace.label (line 2): "x" is the cluster label too`,
	} {
		_, err := ParseOptions([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", doc, err, want)
		}
	}
}

// TestOptionsReportEveryErrorWithItsLine: every mistake at once, each with
// its key and line, in the order of the file.
func TestOptionsReportEveryErrorWithItsLine(t *testing.T) {
	_, err := ParseOptions([]byte("selector: team=~\"(a\"\ncluster:\n  label: k8s-cluster\nnamespace: {label: ns}\n"))
	want := `dashboards config: selector (line 1): "team=~\"(a\"": the value is not a regular expression: error parsing regexp: missing closing ): ` + "`^(?:(a)$`" + `
cluster.label (line 3): "k8s-cluster" is not a label name (letters, digits and _, not starting with a digit)
namespace.label (line 4): set, but namespace.enabled is false; set enabled: true to add the variable`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n%v\nwant\n%s", err, want)
	}
	// The selector may end in a comma, as in PromQL; the queries do not.
	o, err := ParseOptions([]byte("selector: 'env=\"prod\", '\n"))
	if err != nil || o.Selector.String() != `env="prod"` {
		t.Fatalf("%v %q", err, o.Selector.String())
	}
}
