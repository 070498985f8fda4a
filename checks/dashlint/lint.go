// Package dashlint lints the generated dashboards with the rules of
// grafana/dashboard-linter, in its strict mode (a warning fails like an
// error), reading exclusions from the linter's own .lint file format.
//
// The linter module itself cannot be had from the module proxy this project
// builds with (github.com/grafana/dashboard-linter: v0.1.1 and @main were
// refused), so this package ports its rules: same rule names, same checks,
// same messages where it matters, same .lint file next to the dashboards.
// Should the linter become available, `dashboard-linter lint --strict` over
// dashboards/json/*.json reads the same .lint file.
package dashlint

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// Severity of a result, as in the linter.
type Severity int

// Severities.
const (
	Success Severity = iota
	Exclude
	Warning
	Error
)

func (s Severity) String() string {
	return [...]string{"success", "excluded", "warning", "error"}[s]
}

// Dashboard is the part of the classic dashboard model the rules read.
type Dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Editable   bool    `json:"editable"`
	Panels     []Panel `json:"panels"`
	Templating struct {
		List []Template `json:"list"`
	} `json:"templating"`
}

// Template is a dashboard variable.
type Template struct {
	Name       string         `json:"name"`
	Label      string         `json:"label"`
	Type       string         `json:"type"`
	RawQuery   any            `json:"query"`
	Datasource map[string]any `json:"datasource"`
	Multi      bool           `json:"multi"`
	AllValue   string         `json:"allValue"`
	Refresh    int            `json:"refresh"`
}

// Query returns the variable's query string.
func (t Template) Query() string {
	switch q := t.RawQuery.(type) {
	case string:
		return q
	case map[string]any:
		s, _ := q["query"].(string)
		return s
	}
	return ""
}

// Panel is a dashboard panel.
type Panel struct {
	ID          int             `json:"id"`
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Datasource  map[string]any  `json:"datasource"`
	Targets     []Target        `json:"targets"`
	Panels      []Panel         `json:"panels"`
	Options     json.RawMessage `json:"options"`
	FieldConfig *struct {
		Defaults struct {
			Unit     string          `json:"unit"`
			Mappings json.RawMessage `json:"mappings"`
		} `json:"defaults"`
		Overrides []struct {
			Properties []struct {
				ID    string `json:"id"`
				Value any    `json:"value"`
			} `json:"properties"`
		} `json:"overrides"`
	} `json:"fieldConfig"`
}

// Target is a panel query.
type Target struct {
	Idx  int    `json:"-"`
	Expr string `json:"expr"`
}

// Result is one finding.
type Result struct {
	Rule      string
	Severity  Severity
	Dashboard string // title
	Panel     string // title, "" for dashboard rules
	TargetIdx int    // -1 unless a target rule
	Message   string
}

func (r Result) String() string {
	where := r.Dashboard
	if r.Panel != "" {
		where += " / " + strconv.Quote(r.Panel)
	}
	if r.TargetIdx >= 0 {
		where += fmt.Sprintf(" / target %d", r.TargetIdx)
	}
	return fmt.Sprintf("[%s] %s: %s: %s", r.Severity, r.Rule, where, r.Message)
}

// Panel types, as in the linter.
const (
	panelTypeStat       = "stat"
	panelTypeSingleStat = "singlestat"
	panelTypeGauge      = "gauge"
	panelTypeGraph      = "graph"
	panelTypeTimeSeries = "timeseries"
	panelTypeTable      = "table"
)

// rateIntervalMagic is what $__rate_interval expands to, so a range of this
// duration is known to be $__rate_interval (the linter's value).
const rateIntervalMagic = 8869990787 * time.Millisecond

var globalVariables = map[string]string{
	"__rate_interval": "8869990787ms",
	"__interval":      "4867856611ms",
	"__interval_ms":   "7781188786",
	"__range_ms":      "6737667980",
	"__range_s":       "9397795485",
	"__range":         "6069770749ms",
	"__auto":          "12345ms",
}

var variableRef = regexp.MustCompile(`\$([[:word:]]+)|\$\{([^}]+)\}|\[\[([^\[\]]+)\]\]`)

// expandVariables replaces Grafana's variables outside double-quoted strings,
// as the linter does: global variables ($__rate_interval, ...) by sample
// values, any other variable by its name. Inside quotes (label matchers)
// variables stay as written, so job=~"$job" is checked literally.
func expandVariables(expr string, vars []Template) (string, error) {
	parts := strings.Split(expr, `"`)
	for i := 0; i < len(parts); i += 2 {
		parts[i] = variableRef.ReplaceAllStringFunc(parts[i], func(m string) string {
			sub := variableRef.FindStringSubmatch(m)
			ref := sub[1] + sub[2] + sub[3]
			name, _, _ := strings.Cut(ref, ":")
			if v, ok := globalVariables[name]; ok {
				return v
			}
			return name
		})
	}
	_ = vars // the linter would use a variable's current value; the bundle's variables are only used inside matchers
	return strings.Join(parts, `"`), nil
}

func parsePromQL(expr string, vars []Template) (parser.Expr, error) {
	e, err := expandVariables(expr, vars)
	if err != nil {
		return nil, fmt.Errorf("could not expand variables: %w", err)
	}
	return parser.NewParser(parser.Options{}).ParseExpr(e)
}

func dsUID(ds map[string]any) string {
	s, _ := ds["uid"].(string)
	return s
}

func templateDatasource(d Dashboard) *Template {
	for _, t := range d.Templating.List {
		if t.Type == "datasource" {
			return &t
		}
	}
	return nil
}

func isPrometheus(d Dashboard) bool {
	t := templateDatasource(d)
	return t != nil && t.Query() == "prometheus"
}

// Rule is one lint rule.
type Rule struct {
	Name, Description string
	dashboard         func(Dashboard, func(Severity, string))
	panel             func(Dashboard, Panel, func(Severity, string))
	target            func(Dashboard, Panel, Target, func(Severity, string))
}

// Rules returns the rules of grafana/dashboard-linter for Prometheus
// dashboards (the Loki rules do not apply).
func Rules() []Rule {
	return []Rule{
		{Name: "template-datasource-rule", Description: "Checks that the dashboard has a templated datasource.", dashboard: templateDatasourceRule},
		{Name: "template-job-rule", Description: "Checks that the dashboard has a templated job.", dashboard: templateRule("job")},
		{Name: "template-instance-rule", Description: "Checks that the dashboard has a templated instance.", dashboard: templateRule("instance")},
		{Name: "template-label-promql-rule", Description: "Checks that the dashboard templated labels have proper PromQL expressions.", dashboard: templateLabelPromQLRule},
		{Name: "template-on-time-change-reload-rule", Description: "Checks that the dashboard template variables are configured to reload on time change.", dashboard: templateReloadRule},
		{Name: "uneditable-dashboard", Description: "Checks that the dashboard is not editable.", dashboard: func(d Dashboard, add func(Severity, string)) {
			if d.Editable {
				add(Error, "is editable, it should be set to 'editable: false'")
			}
		}},
		{Name: "panel-datasource-rule", Description: "Checks that each panel uses the templated datasource.", panel: panelDatasourceRule},
		{Name: "panel-title-description-rule", Description: "Checks that each panel has a title and description.", panel: panelTitleDescriptionRule},
		{Name: "panel-units-rule", Description: "Checks that each panel uses has valid units defined.", panel: panelUnitsRule},
		{Name: "panel-no-targets-rule", Description: "Checks that each panel has at least one target.", panel: panelNoTargetsRule},
		{Name: "target-promql-rule", Description: "Checks that each target uses a valid PromQL query.", target: targetPromQLRule},
		{Name: "target-rate-interval-rule", Description: "Checks that each target uses $__rate_interval.", target: targetRateIntervalRule},
		{Name: "target-job-rule", Description: "Checks that every PromQL query has a job matcher.", target: targetMatcherRule("job")},
		{Name: "target-instance-rule", Description: "Checks that every PromQL query has a instance matcher.", target: targetMatcherRule("instance")},
		{Name: "target-counter-agg-rule", Description: "Checks that any counter metric (ending in _total) is aggregated with rate, irate, or increase.", target: targetCounterAggRule},
	}
}

func templateDatasourceRule(d Dashboard, add func(Severity, string)) {
	var ds []Template
	for _, t := range d.Templating.List {
		if strings.EqualFold(t.Type, "datasource") {
			ds = append(ds, t)
		}
	}
	if len(ds) == 0 {
		add(Error, "does not have a templated data source")
	}
	for _, t := range ds {
		q := t.Query()
		uid := strings.ToLower(q) + "_datasource"
		name := strings.ToUpper(q[:min(1, len(q))]) + q[min(1, len(q)):] + " data source"
		okUID := t.Name == uid || (len(ds) == 1 && t.Name == "datasource")
		okName := t.Label == name || (len(ds) == 1 && t.Label == "Data source")
		if !okUID {
			add(Error, fmt.Sprintf("templated data source variable named '%s', should be named '%s', or 'datasource'", t.Name, uid))
		}
		if !okName {
			add(Warning, fmt.Sprintf("templated data source variable labeled '%s', should be labeled '%s', or 'Data source'", t.Label, name))
		}
	}
}

func templateRule(name string) func(Dashboard, func(Severity, string)) {
	return func(d Dashboard, add func(Severity, string)) {
		if !isPrometheus(d) {
			return
		}
		var t *Template
		for _, v := range d.Templating.List {
			if v.Name == name {
				t = &v
				break
			}
		}
		if t == nil {
			add(Error, fmt.Sprintf("is missing the %s template", name))
			return
		}
		switch uid := dsUID(t.Datasource); uid {
		case "$datasource", "${datasource}", "$prometheus_datasource", "${prometheus_datasource}":
		default:
			add(Error, fmt.Sprintf("%s template should use datasource '$datasource', is currently '%s'", name, uid))
		}
		if t.Type != "query" {
			add(Error, fmt.Sprintf("%s template should be a Prometheus query, is currently '%s'", name, t.Type))
		}
		if label := strings.ToUpper(name[:1]) + name[1:]; t.Label != label {
			add(Warning, fmt.Sprintf("%s template should be a labeled '%s', is currently '%s'", name, label, t.Label))
		}
		if !t.Multi {
			add(Error, fmt.Sprintf("%s template should be a multi select", name))
		}
		if t.AllValue != ".+" {
			add(Error, fmt.Sprintf("%s template allValue should be '.+', is currently '%s'", name, t.AllValue))
		}
	}
}

var templatedLabel = regexp.MustCompile(`([a-z_]+)\((.+)\)`)

func templateLabelPromQLRule(d Dashboard, add func(Severity, string)) {
	if !isPrometheus(d) {
		return
	}
	for _, t := range d.Templating.List {
		if t.Type != "query" {
			continue
		}
		tokens := templatedLabel.FindStringSubmatch(t.Query())
		if tokens == nil {
			add(Error, fmt.Sprintf("template '%s' invalid templated label '%s': invalid 'query'", t.Name, t.Query()))
			continue
		}
		if !slices.Contains([]string{"label_names", "label_values", "metrics", "query_result"}, tokens[1]) {
			add(Error, fmt.Sprintf("template '%s' invalid templated label '%s': invalid 'function': %v", t.Name, t.Query(), tokens[1]))
			continue
		}
		arg := tokens[2]
		if tokens[1] == "label_values" {
			// label_values(selector, label): parse the selector.
			if i := strings.LastIndex(arg, ","); i >= 0 {
				arg = arg[:i]
			}
		}
		if _, err := parsePromQL(arg, d.Templating.List); err != nil {
			add(Error, fmt.Sprintf("template '%s' invalid templated label '%s': %v", t.Name, t.Query(), err))
		}
	}
}

func templateReloadRule(d Dashboard, add func(Severity, string)) {
	for _, t := range d.Templating.List {
		if t.Type == "query" && t.Refresh != 2 {
			add(Error, fmt.Sprintf("templated datasource variable named '%s', should be set to be refreshed 'On Time Range Change (value 2)', is currently '%d'", t.Name, t.Refresh))
		}
	}
}

func panelDatasourceRule(d Dashboard, p Panel, add func(Severity, string)) {
	switch p.Type {
	case panelTypeSingleStat, panelTypeGraph, panelTypeTable, panelTypeTimeSeries:
		allowed := map[string]bool{}
		for _, t := range d.Templating.List {
			if strings.EqualFold(t.Type, "datasource") {
				allowed["$"+t.Name] = true
				allowed["${"+t.Name+"}"] = true
			}
		}
		if uid := dsUID(p.Datasource); !allowed[uid] {
			add(Error, fmt.Sprintf("does not use a templated datasource, uses '%s'", uid))
		}
	}
}

func panelTitleDescriptionRule(d Dashboard, p Panel, add func(Severity, string)) {
	switch p.Type {
	case panelTypeStat, panelTypeSingleStat, panelTypeGraph, panelTypeTable, panelTypeTimeSeries, panelTypeGauge:
		if p.Title == "" || p.Description == "" {
			add(Error, fmt.Sprintf("has missing title or description, currently has title '%s' and description: '%s'", p.Title, p.Description))
		}
	}
}

func panelNoTargetsRule(d Dashboard, p Panel, add func(Severity, string)) {
	switch p.Type {
	case panelTypeStat, panelTypeSingleStat, panelTypeGraph, panelTypeTable, panelTypeTimeSeries, panelTypeGauge:
		if p.Targets == nil {
			add(Error, "has no targets")
		}
	}
}

func panelUnitsRule(d Dashboard, p Panel, add func(Severity, string)) {
	switch p.Type {
	case panelTypeStat, panelTypeSingleStat, panelTypeGraph, panelTypeTable, panelTypeTimeSeries, panelTypeGauge:
	default:
		return
	}
	if p.Type == panelTypeStat {
		var o struct {
			ReduceOptions struct {
				Fields string `json:"fields"`
			} `json:"reduceOptions"`
		}
		if json.Unmarshal(p.Options, &o) == nil && o.ReduceOptions.Fields != "" {
			return
		}
	}
	unit := ""
	if p.FieldConfig != nil {
		for _, o := range p.FieldConfig.Overrides {
			for _, prop := range o.Properties {
				if prop.ID == "mappings" && prop.Value != nil {
					return
				}
				if prop.ID == "unit" {
					unit, _ = prop.Value.(string)
				}
			}
		}
		if m := p.FieldConfig.Defaults.Mappings; len(m) > 0 && string(m) != "null" {
			return
		}
		if unit == "" {
			unit = p.FieldConfig.Defaults.Unit
		}
	}
	if unit == "" || !slices.Contains(validUnits, unit) {
		add(Error, fmt.Sprintf("has no or invalid units defined: '%s'", unit))
	}
}

func panelHasQueries(p Panel) bool {
	return slices.Contains([]string{panelTypeSingleStat, panelTypeGauge, panelTypeTable, panelTypeStat, "state-timeline", panelTypeTimeSeries}, p.Type)
}

func targetPromQLRule(d Dashboard, p Panel, t Target, add func(Severity, string)) {
	if !isPrometheus(d) || !panelHasQueries(p) {
		return
	}
	if _, err := parsePromQL(t.Expr, d.Templating.List); err != nil {
		add(Error, fmt.Sprintf("invalid PromQL query '%s': %v", t.Expr, err))
	}
}

type inspector func(parser.Node, []parser.Node) error

func (f inspector) Visit(node parser.Node, path []parser.Node) (parser.Visitor, error) {
	if err := f(node, path); err != nil {
		return nil, err
	}
	return f, nil
}

func targetRateIntervalRule(d Dashboard, p Panel, t Target, add func(Severity, string)) {
	if !isPrometheus(d) || !panelHasQueries(p) {
		return
	}
	expr, err := parsePromQL(t.Expr, d.Templating.List)
	if err != nil {
		return
	}
	err = parser.Walk(inspector(func(node parser.Node, parents []parser.Node) error {
		sel, ok := node.(*parser.MatrixSelector)
		if !ok || sel.Range == rateIntervalMagic || len(parents) == 0 {
			return nil
		}
		call, ok := parents[len(parents)-1].(*parser.Call)
		if !ok {
			return fmt.Errorf("invalid PromQL query '%s': $__rate_interval used in non-rate function", t.Expr)
		}
		if call.Func.Name != "rate" && call.Func.Name != "irate" {
			return nil
		}
		return fmt.Errorf("invalid PromQL query '%s': should use $__rate_interval", t.Expr)
	}), expr, nil)
	if err != nil {
		add(Error, err.Error())
	}
}

func targetMatcherRule(name string) func(Dashboard, Panel, Target, func(Severity, string)) {
	return func(d Dashboard, p Panel, t Target, add func(Severity, string)) {
		if !isPrometheus(d) {
			return
		}
		node, err := parsePromQL(t.Expr, d.Templating.List)
		if err != nil {
			return
		}
		for _, sel := range parser.ExtractSelectors(node) {
			if err := checkForMatcher(sel, name, labels.MatchRegexp, "$"+name); err != nil {
				add(Error, fmt.Sprintf("invalid PromQL query '%s': %v", t.Expr, err))
			}
		}
	}
}

// checkForMatcher requires name=~"$name".
func checkForMatcher(sel []*labels.Matcher, name string, ty labels.MatchType, value string) error {
	result := fmt.Errorf("%s selector not found", name)
	for _, m := range sel {
		if m.Name != name {
			continue
		}
		if m.Type == ty && m.Value == value {
			return nil
		}
		if m.Type != ty {
			result = fmt.Errorf("%s selector is %s, not %s", name, m.Type, ty)
		}
		if m.Value != value {
			result = fmt.Errorf("%s selector is %s, not %s", name, m.Value, value)
		}
	}
	return result
}

func targetCounterAggRule(d Dashboard, p Panel, t Target, add func(Severity, string)) {
	expr, err := parsePromQL(t.Expr, d.Templating.List)
	if err != nil {
		return
	}
	err = parser.Walk(inspector(func(node parser.Node, parents []parser.Node) error {
		sel, ok := node.(*parser.VectorSelector)
		if !ok || !strings.HasSuffix(sel.Name, "_total") {
			return nil
		}
		msg := fmt.Errorf("counter metric '%s' is not aggregated with rate, irate, or increase", node)
		if len(parents) < 2 {
			return msg
		}
		if _, ok := parents[len(parents)-1].(*parser.MatrixSelector); !ok {
			return msg
		}
		call, ok := parents[len(parents)-2].(*parser.Call)
		if !ok || (call.Func.Name != "rate" && call.Func.Name != "irate" && call.Func.Name != "increase") {
			return msg
		}
		return nil
	}), expr, nil)
	if err != nil {
		add(Error, err.Error())
	}
}

// flatten returns every panel, including those inside collapsed rows.
func flatten(ps []Panel) []Panel {
	var out []Panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

// Lint runs every rule over a dashboard and returns the findings (no
// successes).
func Lint(d Dashboard) []Result {
	var out []Result
	for _, r := range Rules() {
		emit := func(panel string, idx int) func(Severity, string) {
			return func(s Severity, msg string) {
				out = append(out, Result{Rule: r.Name, Severity: s, Dashboard: d.Title, Panel: panel, TargetIdx: idx, Message: msg})
			}
		}
		if r.dashboard != nil {
			r.dashboard(d, emit("", -1))
		}
		for _, p := range flatten(d.Panels) {
			if r.panel != nil {
				r.panel(d, p, emit(p.Title, -1))
			}
			if r.target != nil {
				for i, t := range p.Targets {
					t.Idx = i
					r.target(d, p, t, emit(p.Title, i))
				}
			}
		}
	}
	return out
}

// Config is the linter's .lint file.
type Config struct {
	Exclusions map[string]*RuleEntries `yaml:"exclusions"`
	Warnings   map[string]*RuleEntries `yaml:"warnings"`
}

// RuleEntries lists where a rule is excluded, with the reason.
type RuleEntries struct {
	Reason  string  `yaml:"reason"`
	Entries []Entry `yaml:"entries"`
}

// Entry matches findings by dashboard title, panel title and target index;
// an empty field matches anything.
type Entry struct {
	Reason    string `yaml:"reason"`
	Dashboard string `yaml:"dashboard"`
	Panel     string `yaml:"panel"`
	TargetIdx string `yaml:"targetIdx"`
}

// Matches reports whether the entry covers the finding.
func (e Entry) Matches(r Result) bool {
	if e.Dashboard != "" && e.Dashboard != r.Dashboard {
		return false
	}
	if e.Panel != "" && r.Panel != "" && e.Panel != r.Panel {
		return false
	}
	if e.TargetIdx != "" && r.TargetIdx >= 0 {
		if i, err := strconv.Atoi(e.TargetIdx); err == nil && i != r.TargetIdx {
			return false
		}
	}
	return true
}

// LoadConfig reads a .lint file; a missing file is an empty config.
func LoadConfig(path string) (Config, error) {
	var c Config
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Apply marks excluded findings (Exclude) and downgrades warnings-listed
// ones (Warning), as the linter does. It returns, per rule and entry index,
// how many findings each exclusion entry matched.
func (c Config) Apply(rs []Result) ([]Result, map[string][]int) {
	used := map[string][]int{}
	for rule, re := range c.Exclusions {
		used[rule] = make([]int, len(re.Entries))
	}
	out := make([]Result, len(rs))
	for i, r := range rs {
		if re, ok := c.Exclusions[r.Rule]; ok {
			matched := re == nil || len(re.Entries) == 0
			if re != nil {
				for j, e := range re.Entries {
					if e.Matches(r) {
						matched = true
						used[r.Rule][j]++
					}
				}
			}
			if matched {
				r.Severity = Exclude
				r.Message += " (Excluded)"
			}
		}
		if re, ok := c.Warnings[r.Rule]; ok && r.Severity != Exclude {
			matched := re == nil || len(re.Entries) == 0
			if re != nil {
				for _, e := range re.Entries {
					matched = matched || e.Matches(r)
				}
			}
			if matched {
				r.Severity = Warning
			}
		}
		out[i] = r
	}
	return out, used
}

// Strict returns the findings that fail strict mode: warnings and errors.
func Strict(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Severity >= Warning {
			out = append(out, r)
		}
	}
	return out
}

// validUnits are Grafana's unit ids as enumerated by the linter from
// grafana/packages/grafana-data/src/valueFormats/categories.ts, less the
// physical categories (energy, mass, length, currency, ...) no workflow
// panel uses: a unit from those fails here, which is stricter than the
// linter, never laxer.
var validUnits = []string{
	"none", "string",
	"short", "percent", "percentunit", "humidity", "dB", "hex0x", "hex", "sci", "locale", "pixel",
	"accMS2", "accFS2", "accG",
	"degree", "radian", "grad", "arcmin", "arcsec",
	"areaM2", "areaF2", "areaMI2",
	"flops", "mflops", "gflops", "tflops", "pflops", "eflops", "zflops", "yflops",
	"ppm", "conppb", "conngm3", "conngNm3", "conμgm3", "conμgNm3", "conmgm3", "conmgNm3", "congm3", "congNm3", "conmgdL", "conmmolL",
	"bytes", "decbytes", "bits", "decbits", "kbytes", "deckbytes", "mbytes", "decmbytes", "gbytes", "decgbytes", "tbytes", "dectbytes", "pbytes", "decpbytes",
	"pps", "binBps", "Bps", "binbps", "bps", "KiBs", "Kibits", "KBs", "Kbits", "MiBs", "Mibits", "MBs", "Mbits", "GiBs", "Gibits", "GBs", "Gbits", "TiBs", "Tibits", "TBs", "Tbits", "PiBs", "Pibits", "PBs", "Pbits",
	"dateTimeAsIso", "dateTimeAsIsoNoDateIfToday", "dateTimeAsUS", "dateTimeAsUSNoDateIfToday", "dateTimeAsLocal",
	"dateTimeAsLocalNoDateIfToday", "dateTimeAsSystem", "dateTimeFromNow",
	"hertz", "ns", "µs", "ms", "s", "m", "h", "d", "dtdurationms", "dtdurations", "dthms", "dtdhms", "timeticks", "clockms", "clocks",
	"cps", "ops", "reqps", "rps", "wps", "iops", "cpm", "opm", "rpm", "wpm", "mps", "mpm",
	"bool", "bool_yes_no", "bool_on_off",
}
