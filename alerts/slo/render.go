package slo

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
)

// The recording rules' names, one series per objective (label slo):
//
//	workflow_slo:sli_error:ratio_rate<window>  the share of bad events over the window
//	workflow_slo:events:rate<shortest>         events per second over the shortest window
//	workflow_slo:bad_events:rate<shortest>     bad events per second over the shortest window
//	workflow_slo:objective:ratio               the objective (0.995)
//	workflow_slo:error_budget:ratio            1 - objective (0.005)
//	workflow_slo:error_budget_remaining:ratio  1 - (bad share over the period / budget): 1 untouched, 0 spent, below 0 overspent
//
// The dashboards read them (the Camunda dashboard's row "Service level
// objectives"), so the names are exported.
const (
	RecordErrorRatio      = "workflow_slo:sli_error:ratio_rate"
	RecordEvents          = "workflow_slo:events:rate"
	RecordBadEvents       = "workflow_slo:bad_events:rate"
	RecordObjective       = "workflow_slo:objective:ratio"
	RecordBudget          = "workflow_slo:error_budget:ratio"
	RecordBudgetRemaining = "workflow_slo:error_budget_remaining:ratio"
)

// RecordPrefix starts the name of every recording rule of the SLOs.
const RecordPrefix = "workflow_slo:"

// Severities of the two kinds of burn-rate alert, as the shipped alerts
// use them (Alertmanager routes critical to the pager, warning to tickets).
const (
	severityPage   = rulefile.Critical
	severityTicket = rulefile.Warning
)

// ruleFile and ruleGroup are the rule file of the SLOs' rules.
type (
	ruleFile  = rulefile.File[rule]
	ruleGroup = rulefile.Group[rule]
)

// rule is a recording or an alerting rule; its labels and annotations keep
// the order they are built in.
type rule struct {
	Record      string     `yaml:"record,omitempty"`
	Alert       string     `yaml:"alert,omitempty"`
	Expr        string     `yaml:"expr"`
	Labels      *yaml.Node `yaml:"labels,omitempty"`
	Annotations *yaml.Node `yaml:"annotations,omitempty"`
}

// Rules renders the recording and alerting rules of every objective as a
// Prometheus rule file: one group per objective, its recording rules
// first. source names the SLO file in the header.
func Rules(cfg Config, source string) ([]byte, error) {
	return rulefile.Encode(header("render slos", source), build(cfg))
}

// Meta is a PrometheusRule's metadata.
type Meta = rulefile.ObjectMeta

// PrometheusRule renders the rules as a PrometheusRule of the Prometheus
// Operator.
func PrometheusRule(cfg Config, source string, m Meta) ([]byte, error) {
	return rulefile.EncodePrometheusRule(header("render slos --format prometheusrule", source), m, build(cfg))
}

func header(cmd, source string) string {
	return rulefile.Header(cmd, source, "SLO recording rules and multi-window, multi-burn-rate alerts: change the SLO file and render again.")
}

// build makes the rules of every objective.
func build(cfg Config) ruleFile {
	var f ruleFile
	for _, o := range cfg.SLOs {
		g := ruleGroup{Name: "slo-" + o.Name}
		labels := sortedLabels(cfg.Labels, o.Labels, map[string]string{"slo": o.Name})
		for _, w := range cfg.windows() {
			g.Rules = append(g.Rules, rule{Record: RecordErrorRatio + w.String(), Expr: cfg.errorRatio(o, w), Labels: mapping(labels)})
		}
		budget := 1 - o.Objective/100
		sel := fmt.Sprintf(`{slo=%q}`, o.Name)
		short := cfg.windows()[0]
		bad, total := cfg.eventRates(o, short.String())
		g.Rules = append(g.Rules,
			rule{Record: RecordEvents + short.String(), Expr: total, Labels: mapping(labels)},
			rule{Record: RecordBadEvents + short.String(), Expr: bad, Labels: mapping(labels)},
			// The share over the period: the bad events of the period over
			// all its events, summed from the shortest window's rates (a
			// range as long as the period over the raw series would read
			// every sample of the period at each evaluation). Sums, not a
			// mean of shares: a busy hour weighs more than a quiet one, and
			// a window without events (a share of 0/0) adds nothing.
			rule{Record: RecordErrorRatio + cfg.Period.String(), Labels: mapping(labels),
				Expr: fmt.Sprintf("sum_over_time(%s%s%s[%s])\n/\nsum_over_time(%s%s%s[%s])",
					RecordBadEvents, short, sel, cfg.Period, RecordEvents, short, sel, cfg.Period)},
			rule{Record: RecordObjective, Expr: formatFloat(o.Objective / 100), Labels: mapping(labels)},
			rule{Record: RecordBudget, Expr: formatFloat(budget), Labels: mapping(labels)},
			rule{Record: RecordBudgetRemaining, Labels: mapping(labels),
				Expr: fmt.Sprintf("1 - (%s%s%s / %s)", RecordErrorRatio, cfg.Period, sel, formatFloat(budget))},
		)
		for _, kind := range []struct {
			severity string
			page     bool
			windows  []Window
		}{{severityPage, true, cfg.PageWindows}, {severityTicket, false, cfg.TicketWindows}} {
			g.Rules = append(g.Rules, rule{Alert: o.Alert, Expr: burnExpr(sel, budget, kind.windows),
				Labels:      mapping(sortedLabels(cfg.Labels, o.Labels, map[string]string{"slo": o.Name, "severity": kind.severity})),
				Annotations: annotations(cfg, o, kind.page, budget, kind.windows)})
		}
		f.Groups = append(f.Groups, g)
	}
	return f
}

// windows returns every window the rules record an error ratio over,
// shortest first.
func (c Config) windows() []model.Duration {
	seen := map[model.Duration]bool{}
	for _, w := range append(append([]Window(nil), c.PageWindows...), c.TicketWindows...) {
		seen[w.Long], seen[w.Short] = true, true
	}
	return slices.Sorted(maps.Keys(seen))
}

// burnExpr fires when, for any pair of windows, the error ratio over both
// exceeds the pair's factor times the budget.
func burnExpr(sel string, budget float64, ws []Window) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		limit := formatFloat(w.Factor * budget)
		parts[i] = fmt.Sprintf("(\n  %s%s%s > %s\nand\n  %s%s%s > %s\n)",
			RecordErrorRatio, w.Long, sel, limit, RecordErrorRatio, w.Short, sel, limit)
	}
	return strings.Join(parts, "\nor\n")
}

func annotations(cfg Config, o Objective, page bool, budget float64, ws []Window) *yaml.Node {
	var pairs []string
	for _, w := range ws {
		// At factor times the sustainable rate the budget lasts period/factor.
		lasts := time.Duration(float64(cfg.Period) / w.Factor).Round(time.Hour)
		pairs = append(pairs, fmt.Sprintf("%gx the sustainable rate over %s and %s (the budget gone in %s)", w.Factor, w.Long, w.Short, model.Duration(lasts)))
	}
	desc := o.Description
	if desc == "" {
		desc = fmt.Sprintf("SLO %s: %s%% good events.", o.Name, formatFloat(o.Objective))
	}
	summary := fmt.Sprintf("SLO %s is burning its error budget fast.", o.Name)
	if !page {
		summary = fmt.Sprintf("SLO %s is burning its error budget faster than the %s period allows.", o.Name, cfg.Period)
	}
	return mapping([][2]string{
		{"description", fmt.Sprintf("%s Bad events: {{ $value | humanizePercentage }} over the longer window, against a budget of %s over %s. Fires at %s.",
			desc, percent(budget), cfg.Period, strings.Join(pairs, ", or at "))},
		{"runbook_url", cfg.RunbookURL},
		{"summary", summary},
	})
}

// percent formats a ratio as a percentage (0.005 -> 0.5%).
func percent(v float64) string { return formatFloat(v*100) + "%" }

// errorRatio is the share of bad events over window w.
func (c Config) errorRatio(o Objective, w model.Duration) string {
	bad, total := c.eventRates(o, w.String())
	return fmt.Sprintf("(\n  %s\n)\n/\n(\n  %s\n)", bad, total)
}

// eventRates are the bad events and all events per second over window w
// (a duration, or Sloth's {{.window}}).
func (c Config) eventRates(o Objective, w string) (bad, total string) {
	switch ind := o.Indicator; {
	case ind.Latency != nil:
		l := ind.Latency
		total = fmt.Sprintf("sum(rate(%s_count%s[%s]))", l.Metric, c.selector(l.Matchers), w)
		fast := fmt.Sprintf("sum(rate(%s_bucket%s[%s]))", l.Metric, c.selector(l.Matchers, leMatcher(time.Duration(l.Threshold).Seconds())), w)
		return total + " - " + fast, total
	default:
		r := ind.Ratio
		sel := c.selector(r.Matchers)
		bad = fmt.Sprintf("sum(rate(%s%s[%s]))", r.Bad, sel, w)
		return bad, fmt.Sprintf("sum(rate(%s%s[%s])) + %s", r.Good, sel, w, bad)
	}
}

// selector joins the config's selector, the matchers (sorted) and extra
// matchers into a PromQL selector.
func (c Config) selector(matchers map[string]string, extra ...string) string {
	var parts []string
	if s := c.Selector.String(); s != "" {
		parts = append(parts, s)
	}
	for _, kv := range sortedLabels(matchers) {
		parts = append(parts, kv[0]+"="+strconv.Quote(kv[1]))
	}
	parts = append(parts, extra...)
	return "{" + strings.Join(parts, ", ") + "}"
}

// leMatcher matches a bucket's le label in both spellings: the exporter
// writes 60, and Prometheus 3 normalises classic histograms' le values to
// OpenMetrics floats at scrape time (60.0).
func leMatcher(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if v == math.Trunc(v) && !strings.ContainsAny(s, "e") {
		return fmt.Sprintf(`le=~"%s(\\.0)?"`, s)
	}
	return fmt.Sprintf(`le=~"%s"`, strings.NewReplacer(".", `\\.`, "+", `\\+`).Replace(s))
}

func formatFloat(v float64) string {
	// Round away binary noise (1 - 0.995 = 0.0050000000000000044).
	return strconv.FormatFloat(math.Round(v*1e12)/1e12, 'g', -1, 64)
}

// mapping builds a YAML mapping node in the given order.
func mapping(kvs [][2]string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, kv := range kvs {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: kv[0]}, &yaml.Node{Kind: yaml.ScalarNode, Value: kv[1], Style: quoteStyle(kv[1])})
	}
	return n
}

// quoteStyle keeps values that YAML would read as numbers or booleans
// strings.
func quoteStyle(v string) yaml.Style {
	var x any
	if err := yaml.Unmarshal([]byte(v), &x); err != nil || reflect.TypeOf(x) != reflect.TypeOf("") {
		return yaml.DoubleQuotedStyle
	}
	return 0
}

// slothSpec is Sloth's prometheus/v1 specification (the fields used).
type slothSpec struct {
	Version string            `yaml:"version"`
	Service string            `yaml:"service"`
	Labels  map[string]string `yaml:"labels,omitempty"`
	SLOs    []slothSLO        `yaml:"slos"`
}

type slothSLO struct {
	Name        string            `yaml:"name"`
	Objective   float64           `yaml:"objective"`
	Description string            `yaml:"description,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	SLI         struct {
		Events struct {
			ErrorQuery string `yaml:"error_query"`
			TotalQuery string `yaml:"total_query"`
		} `yaml:"events"`
	} `yaml:"sli"`
	Alerting slothAlerting `yaml:"alerting"`
}

type slothAlerting struct {
	Name        string            `yaml:"name"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
	PageAlert   slothAlert        `yaml:"page_alert"`
	TicketAlert slothAlert        `yaml:"ticket_alert"`
}

type slothAlert struct {
	Labels map[string]string `yaml:"labels"`
}

// Sloth renders the objectives as a Sloth prometheus/v1 specification.
// Sloth brings its own windows and a 30-day default period, which are the
// defaults here too; an SLO file that changes them is refused rather than
// rendered into a spec that would alert differently.
func Sloth(cfg Config, service string) ([]byte, error) {
	if cfg.Period != DefaultPeriod || !reflect.DeepEqual(cfg.PageWindows, DefaultPageWindows()) || !reflect.DeepEqual(cfg.TicketWindows, DefaultTicketWindows()) {
		return nil, fmt.Errorf("render slos --format sloth: the SLO file changes the period or the windows; a Sloth spec cannot carry them (give Sloth its own, --default-slo-period and --slo-period-windows-path), so render the rules instead")
	}
	spec := slothSpec{Version: "prometheus/v1", Service: service, Labels: cfg.Labels}
	for _, o := range cfg.SLOs {
		s := slothSLO{Name: o.Name, Objective: o.Objective, Description: o.Description, Labels: o.Labels}
		s.SLI.Events.ErrorQuery, s.SLI.Events.TotalQuery = cfg.eventRates(o, "{{.window}}")
		s.Alerting = slothAlerting{Name: o.Alert,
			Annotations: map[string]string{"runbook_url": cfg.RunbookURL, "summary": fmt.Sprintf("SLO %s is burning its error budget.", o.Name)},
			PageAlert:   slothAlert{Labels: map[string]string{"severity": severityPage}},
			TicketAlert: slothAlert{Labels: map[string]string{"severity": severityTicket}}}
		spec.SLOs = append(spec.SLOs, s)
	}
	return rulefile.Encode(rulefile.Header("render slos --format sloth", "", "A Sloth specification (prometheus/v1): change the SLO file and render again."), spec)
}
