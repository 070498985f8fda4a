package dashboards

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/blocks/promlabel"
	"github.com/workflow-exporter/workflow-exporter/blocks/yamlfile"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// MinGrafanaVersion is the oldest Grafana the dashboards are built for: the
// first release whose dashboard schema version (schemaVersion 42, written by
// grafana-foundation-sdk v0.0.22) is the one the JSON is in. Every dashboard
// states it in its __requires section and its description.
const MinGrafanaVersion = "12.2.0"

// Options adapt the dashboards to a Grafana and Prometheus setup without
// changing the Go code: `workflow-exporter render dashboards --dashboards-config
// FILE` reads them from YAML. The zero value is the shipped bundle.
type Options struct {
	// Datasource is the data source the datasource variable selects by
	// default (a data source name or uid); empty: Grafana's default one.
	Datasource string `yaml:"datasource"`
	// Selector is added to every selector of every panel and variable
	// query, e.g. `env="prod"`: matchers without braces.
	Selector promlabel.Selector `yaml:"selector"`
	// Cluster and Namespace add a variable of that label, as the monitoring
	// mixins do for fleets in one Prometheus (or Thanos, Mimir): every query
	// is scoped by it, and the job variable lists only the jobs of the
	// chosen cluster and namespace. Both are off by default.
	Cluster   LabelVariable `yaml:"cluster"`
	Namespace LabelVariable `yaml:"namespace"`

	// Alerts is the alerts config the rules are rendered from
	// (`render dashboards --alerts-config`): the panels show its thresholds
	// (per-selector ones as overrides of the series they match) and link
	// its runbooks. Nil: the shipped defaults.
	Alerts *rules.Config `yaml:"-"`
}

// alerts returns the alerts config the dashboards follow.
func (o Options) alerts() rules.Config {
	if o.Alerts != nil {
		return *o.Alerts
	}
	return rules.Default()
}

// LabelVariable is an optional variable over a target label.
type LabelVariable struct {
	Enabled bool `yaml:"enabled"`
	// Label is the label's name; default "cluster" or "namespace".
	Label string `yaml:"label"`
}

const (
	varCluster   = "cluster"
	varNamespace = "namespace"
)

// LoadOptions reads options from a YAML file.
func LoadOptions(path string) (Options, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Options{}, fmt.Errorf("dashboards config: %w", err)
	}
	o, err := ParseOptions(b)
	if err != nil {
		return Options{}, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// ParseOptions decodes options from YAML and validates them. Every error
// names its key and line (blocks/yamlfile), all of them at once.
func ParseOptions(b []byte) (Options, error) {
	var o Options
	doc, err := yamlfile.Decode(b, &o, yamlfile.Options{})
	if err != nil {
		return Options{}, fmt.Errorf("dashboards config: %w", err)
	}
	return o, o.validate(doc)
}

// Validate reports every invalid setting, each naming its key, and those
// of the alerts config the options carry.
func (o Options) Validate() error { return o.validate(nil) }

// validate is Validate for options decoded from doc: every error also
// names its line.
func (o Options) validate(doc *yamlfile.Document) error {
	errs := doc.Errors()
	add := errs.Add
	if _, err := o.Selector.Matchers(); err != nil {
		add("selector", "%v", err)
	}
	for _, v := range []struct {
		key string
		v   LabelVariable
	}{{"cluster", o.Cluster}, {"namespace", o.Namespace}} {
		if v.v.Label != "" && !promlabel.ValidName(v.v.Label) {
			add(v.key+".label", "%v", promlabel.CheckName(v.v.Label))
		} else if v.v.Label != "" && !v.v.Enabled {
			add(v.key+".label", "set, but %s.enabled is false; set enabled: true to add the variable", v.key)
		}
	}
	if o.Cluster.Enabled && o.Namespace.Enabled && o.clusterLabel() == o.namespaceLabel() {
		add("namespace.label", "%q is the cluster label too", o.namespaceLabel())
	}
	var err error
	if e := errs.Err(); e != nil {
		err = fmt.Errorf("dashboards config: %w", e)
	}
	if o.Alerts != nil {
		err = errors.Join(err, o.Alerts.Validate())
	}
	return err
}

func (o Options) clusterLabel() string {
	if o.Cluster.Label != "" {
		return o.Cluster.Label
	}
	return "cluster"
}

func (o Options) namespaceLabel() string {
	if o.Namespace.Label != "" {
		return o.Namespace.Label
	}
	return "namespace"
}

// scope returns the matchers every selector gets in front of job and
// instance (cluster, namespace, selector), and those of the cluster variable's
// query (selector) and of the namespace variable's (cluster, selector).
func (o Options) scope() (all, forCluster, forNamespace []string) {
	var cluster, namespace, sel []string
	if o.Cluster.Enabled {
		cluster = []string{o.clusterLabel() + `=~"$` + varCluster + `"`}
	}
	if o.Namespace.Enabled {
		namespace = []string{o.namespaceLabel() + `=~"$` + varNamespace + `"`}
	}
	if s := o.Selector.String(); s != "" {
		sel = []string{s}
	}
	return concat(cluster, namespace, sel), sel, concat(cluster, sel)
}

func concat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// apply rewrites a built dashboard for the options. The builders scope every
// selector with sel (job and instance first), so the extra matchers go in
// front of those two; the job and instance variables, Prometheus's ALERTS
// series and the new variables are handled here.
func (o Options) apply(db *dashboard.Dashboard) {
	all, forCluster, forNamespace := o.scope()
	if len(all) > 0 {
		prefix := strings.Join(all, ",")
		rewrite := func(expr string) string {
			expr = strings.ReplaceAll(expr, mJob+","+mInstance, prefix+","+mJob+","+mInstance)
			return strings.ReplaceAll(expr, "ALERTS{", "ALERTS{"+prefix+",")
		}
		eachTarget(db, func(q *prometheus.Dataquery) { q.Expr = rewrite(q.Expr) })
		list := db.Templating.List
		for i := range list {
			v := &list[i]
			if v.Query == nil || v.Query.String == nil {
				continue
			}
			q := *v.Query.String
			switch v.Name {
			case varJob:
				q = "label_values(" + catalog.ExporterBuildInfo + "{" + prefix + "}, job)"
			case varInstance:
				q = "label_values(" + catalog.ExporterBuildInfo + "{" + prefix + "," + mJob + "}, instance)"
			default:
				q = rewrite(q)
			}
			setQuery(v, q)
		}
	}
	var extra []dashboard.VariableModel
	if o.Cluster.Enabled {
		extra = append(extra, labelVariable(varCluster, "Cluster", o.clusterLabel(), forCluster))
	}
	if o.Namespace.Enabled {
		extra = append(extra, labelVariable(varNamespace, "Namespace", o.namespaceLabel(), forNamespace))
	}
	if len(extra) > 0 {
		// After the datasource variable, before job.
		list := db.Templating.List
		at := 0
		for i, v := range list {
			if v.Name == varDatasource {
				at = i + 1
			}
		}
		db.Templating.List = append(append(append([]dashboard.VariableModel(nil), list[:at]...), extra...), list[at:]...)
	}
	if o.Datasource != "" {
		for i := range db.Templating.List {
			if v := &db.Templating.List[i]; v.Name == varDatasource {
				v.Current = &dashboard.VariableOption{
					Selected: ptr(true),
					Text:     dashboard.StringOrArrayOfString{String: ptr(o.Datasource)},
					Value:    dashboard.StringOrArrayOfString{String: ptr(o.Datasource)},
				}
			}
		}
	}
}

func setQuery(v *dashboard.VariableModel, q string) {
	v.Query = &dashboard.StringOrMap{String: ptr(q)}
	v.Definition = ptr(q)
}

// labelVariable is a cluster or namespace variable: the label's values on
// the exporter's build_info series, multi-select with All (".*", so targets
// without the label still match).
func labelVariable(name, title, label string, matchers []string) dashboard.VariableModel {
	series := catalog.ExporterBuildInfo
	if len(matchers) > 0 {
		series += "{" + strings.Join(matchers, ",") + "}"
	}
	v, err := queryVar(name, title, "label_values("+series+", "+label+")", ".*").Build()
	if err != nil {
		panic(fmt.Sprintf("dashboards: variable %s: %v", name, err)) // a programming error
	}
	return v
}

// eachTarget calls f with every Prometheus query of the dashboard, in rows
// too.
func eachTarget(db *dashboard.Dashboard, f func(*prometheus.Dataquery)) {
	visit := func(p *dashboard.Panel) {
		for i, t := range p.Targets {
			switch q := t.(type) {
			case *prometheus.Dataquery:
				f(q)
			case prometheus.Dataquery:
				f(&q)
				p.Targets[i] = q
			}
		}
	}
	for i := range db.Panels {
		if p := db.Panels[i].Panel; p != nil {
			visit(p)
		}
		if r := db.Panels[i].RowPanel; r != nil {
			for j := range r.Panels {
				visit(&r.Panels[j])
			}
		}
	}
}

// require is an entry of a dashboard's __requires list, the section of
// Grafana's export format that names what the dashboard needs.
type require struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// exported is the dashboard JSON with its requirements first.
type exported struct {
	Requires []require `json:"__requires"`
	dashboard.Dashboard
}

var panelNames = map[string]string{"stat": "Stat", "table": "Table", "text": "Text", "timeseries": "Time series"}

// renderOne builds one dashboard, applies the options, states the minimum
// Grafana version (in __requires and the description) and renders the JSON.
func renderOne(b *board, o Options) (Dashboard, error) {
	d, err := b.build()
	if err != nil {
		return Dashboard{}, err
	}
	o.apply(&d)
	if d.Description != nil {
		d.Description = ptr(strings.TrimSpace(*d.Description) + " Built for Grafana " + MinGrafanaVersion + " or later.")
	}
	reqs := []require{
		{Type: "grafana", ID: "grafana", Name: "Grafana", Version: MinGrafanaVersion},
		{Type: "datasource", ID: "prometheus", Name: "Prometheus", Version: "1.0.0"},
	}
	seen := map[string]bool{}
	var types []string
	for _, p := range d.Panels {
		var ps []dashboard.Panel
		if p.Panel != nil {
			ps = append(ps, *p.Panel)
		}
		if p.RowPanel != nil {
			ps = append(ps, p.RowPanel.Panels...)
		}
		for _, q := range ps {
			if !seen[q.Type] {
				seen[q.Type] = true
				types = append(types, q.Type)
			}
		}
	}
	slices.Sort(types)
	for _, t := range types {
		name, ok := panelNames[t]
		if !ok {
			return Dashboard{}, fmt.Errorf("dashboards: panel type %q has no name for __requires", t)
		}
		reqs = append(reqs, require{Type: "panel", ID: t, Name: name, Version: ""})
	}
	js, err := json.MarshalIndent(exported{Requires: reqs, Dashboard: d}, "", "  ")
	if err != nil {
		return Dashboard{}, err
	}
	return Dashboard{UID: *d.Uid, Title: *d.Title, JSON: append(js, '\n')}, nil
}
