// Package promql parses the PromQL of the generated dashboards with the
// Prometheus parser and checks it against the metric catalog: every series a
// query names must be served by the exporter (catalog.KnownSeries), by its
// standard collectors or Prometheus itself (catalog.StandardSeries), or be
// Prometheus's ALERTS series; every label a query matches on or groups by must
// be a label of that metric; counters are read only through rate() or
// increase() over $__rate_interval; histogram quantiles aggregate by le.
//
// It lives in the checks module (checks/) because github.com/prometheus/prometheus
// brings many dependencies the exporter must not carry.
package promql

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/prometheus/promql/parser"

	"github.com/workflow-exporter/workflow-exporter/alerts/slo"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// RateInterval is the duration $__rate_interval becomes before parsing: an
// odd value no panel would write by hand, so a range equal to it is known to
// be $__rate_interval (the same trick as grafana/dashboard-linter).
const RateInterval = 8869990787 * time.Millisecond

const rateIntervalText = "8869990787ms"

// Interval macros of Grafana and what they become.
var macros = map[string]string{
	"__rate_interval": rateIntervalText,
	"__interval":      "4867856611ms",
	"__range":         "6069770749ms",
	"__auto":          "12345ms",
	"__range_s":       "9397795485",
	"__range_ms":      "6737667980",
	"__interval_ms":   "7781188786",
}

var grafanaVariable = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[A-Za-z0-9_]+)?\}|\[\[([A-Za-z0-9_]+)\]\]|\$([A-Za-z0-9_]+)`)

// Substitute replaces Grafana's macros and variables ($x, ${x}, ${x:regex},
// [[x]]) with placeholders the PromQL parser accepts: interval macros with
// durations, other variables with their name.
func Substitute(expr string) string {
	return grafanaVariable.ReplaceAllStringFunc(expr, func(m string) string {
		sub := grafanaVariable.FindStringSubmatch(m)
		name := sub[1] + sub[2] + sub[3]
		if v, ok := macros[name]; ok {
			return v
		}
		return name
	})
}

// Series names allowed beside the catalog.
const alerts = "ALERTS"

// Labels every series has: target labels added by Prometheus, and pod,
// which the chart's ServiceMonitor (the Prometheus Operator) adds and tells
// an exporter's replicas apart by.
var targetLabels = []string{"job", "instance", "pod"}

// labelsOf returns the labels a series can carry, or nil when it is unknown
// (standard series: no label check); the engine's series per topic or key
// can carry the tenant (camunda[].tenant_label).
func labelsOf(series string) ([]string, bool) {
	if series == alerts {
		return nil, false
	}
	name := series
	extra := []string{}
	for _, suf := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(series, suf); ok {
			if m, found := catalog.Lookup(base); found && m.Type == catalog.Histogram {
				name = base
				if suf == "_bucket" {
					extra = append(extra, "le")
				}
			}
		}
	}
	m, ok := catalog.Lookup(name)
	if !ok {
		return nil, false
	}
	return append(append(append([]string{}, m.WithTenant().Labels...), targetLabels...), extra...), true
}

func isCounterSeries(series string) bool {
	if m, ok := catalog.Lookup(series); ok {
		return m.Type == catalog.Counter
	}
	if base, ok := strings.CutSuffix(series, "_bucket"); ok {
		if m, ok := catalog.Lookup(base); ok && m.Type == catalog.Histogram {
			return true
		}
	}
	return strings.HasSuffix(series, "_total")
}

func seriesName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == "__name__" {
			return m.Value
		}
	}
	return ""
}

// Options tune a check.
type Options struct {
	// RequireMatchers are label=~"$label" matchers every selector (except
	// ALERTS) must carry, e.g. job and instance.
	RequireMatchers []string
	// TargetLabels are labels of the scrape target beyond job and instance
	// that every series may carry (cluster, namespace, a selector's env).
	TargetLabels []string
}

// CheckExpr parses a panel expression (with Grafana variables) and returns
// every problem found; nil means the expression is fine.
func CheckExpr(expr string, opts Options) []string {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(Substitute(expr))
	if err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	parser.Inspect(e, func(node parser.Node, path []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			name := seriesName(n)
			switch {
			case name == "":
				add("selector %s names no metric", n)
				return nil
			case name == alerts:
			case strings.HasPrefix(name, slo.RecordPrefix):
				// An SLO's recording rule (render slos): label slo and the
				// objective's labels, the job and the dashboards' variables
				// aggregated away: no label to check.
				return nil
			case !catalog.KnownSeries(name) && !catalog.StandardSeries(name):
				add("series %s is not in the catalog", name)
				return nil
			}
			if name != alerts {
				for _, req := range opts.RequireMatchers {
					if !hasMatcher(n, req) {
						add("selector %s lacks %s=~\"$%s\"", n, req, req)
					}
				}
			}
			if ls, ok := labelsOf(name); ok {
				for _, m := range n.LabelMatchers {
					if m.Name != "__name__" && !slices.Contains(ls, m.Name) && !slices.Contains(opts.TargetLabels, m.Name) {
						add("series %s has no label %q", name, m.Name)
					}
				}
			}
			if isCounterSeries(name) {
				checkCounterUse(n, name, path, add)
			}
		case *parser.MatrixSelector:
			if n.Range != RateInterval {
				inner, _ := n.VectorSelector.(*parser.VectorSelector)
				if inner == nil || isCounterSeries(seriesName(inner)) {
					add("range [%s] of %s is not $__rate_interval", n.Range, n.VectorSelector)
				} else if len(path) == 0 || !isOverTime(path[len(path)-1]) {
					add("range [%s] of %s is not $__rate_interval", n.Range, n.VectorSelector)
				}
			}
		case *parser.AggregateExpr:
			checkGrouping(n, add)
		case *parser.Call:
			if n.Func.Name == "histogram_quantile" {
				checkQuantile(n, add)
			}
			if n.Func.Name == "irate" {
				add("irate() is not used in this bundle; use rate() over $__rate_interval")
			}
		}
		return nil
	})
	return problems
}

func hasMatcher(vs *parser.VectorSelector, label string) bool {
	for _, m := range vs.LabelMatchers {
		if m.Name == label && m.Type.String() == "=~" && m.Value == label {
			return true
		}
	}
	return false
}

func isOverTime(n parser.Node) bool {
	c, ok := n.(*parser.Call)
	return ok && strings.HasSuffix(c.Func.Name, "_over_time")
}

// checkCounterUse requires the selector to be the matrix argument of rate()
// or increase() over $__rate_interval.
func checkCounterUse(vs *parser.VectorSelector, name string, path []parser.Node, add func(string, ...any)) {
	if len(path) < 2 {
		add("counter %s is read without rate() or increase()", name)
		return
	}
	ms, ok := path[len(path)-1].(*parser.MatrixSelector)
	if !ok {
		add("counter %s is read without rate() or increase()", name)
		return
	}
	call, ok := path[len(path)-2].(*parser.Call)
	if !ok || (call.Func.Name != "rate" && call.Func.Name != "increase") {
		add("counter %s is read without rate() or increase()", name)
		return
	}
	if ms.Range != RateInterval {
		add("counter %s is read over [%s], not $__rate_interval", name, ms.Range)
	}
}

// innerSelector returns the selector an aggregation reads directly (through
// rate/increase and their range, or a plain selector), or nil.
func innerSelector(e parser.Expr) *parser.VectorSelector {
	for {
		switch n := e.(type) {
		case *parser.ParenExpr:
			e = n.Expr
		case *parser.VectorSelector:
			return n
		case *parser.MatrixSelector:
			e = n.VectorSelector
		case *parser.Call:
			if len(n.Args) != 1 {
				return nil
			}
			e = n.Args[0]
		default:
			return nil
		}
	}
}

func checkGrouping(a *parser.AggregateExpr, add func(string, ...any)) {
	vs := innerSelector(a.Expr)
	if vs == nil {
		return
	}
	name := seriesName(vs)
	ls, ok := labelsOf(name)
	if !ok {
		return
	}
	for _, g := range a.Grouping {
		if !slices.Contains(ls, g) {
			add("%s by (%s): series %s has no label %q", a.Op, strings.Join(a.Grouping, ", "), name, g)
		}
	}
}

// checkQuantile requires histogram_quantile(φ, sum by (le, ...) (rate(x_bucket[$__rate_interval]))).
func checkQuantile(c *parser.Call, add func(string, ...any)) {
	if len(c.Args) != 2 {
		return
	}
	if _, ok := c.Args[0].(*parser.NumberLiteral); !ok {
		add("histogram_quantile: the quantile is not a number")
	}
	agg, ok := c.Args[1].(*parser.AggregateExpr)
	if !ok || agg.Op.String() != "sum" || agg.Without || !slices.Contains(agg.Grouping, "le") {
		add("histogram_quantile: the buckets are not aggregated with sum by (le, ...)")
		return
	}
	rate, ok := agg.Expr.(*parser.Call)
	if !ok || rate.Func.Name != "rate" {
		add("histogram_quantile: the buckets are not read through rate()")
		return
	}
	if vs := innerSelector(rate); vs == nil || !strings.HasSuffix(seriesName(vs), "_bucket") {
		add("histogram_quantile: not over a _bucket series")
	}
}

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$`)

// CheckVariableQuery checks a variable query label_values(selector, label):
// the selector must parse and name a catalog series that has the label.
func CheckVariableQuery(q string, opts Options) []string {
	m := labelValues.FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return []string{"not of the form label_values(selector, label): " + q}
	}
	problems := CheckExpr(m[1], opts)
	e, err := parser.NewParser(parser.Options{}).ParseExpr(Substitute(m[1]))
	if err != nil {
		return problems
	}
	vs, ok := e.(*parser.VectorSelector)
	if !ok {
		return append(problems, "label_values over something other than a selector: "+m[1])
	}
	if ls, ok := labelsOf(seriesName(vs)); ok && !slices.Contains(ls, m[2]) && !slices.Contains(opts.TargetLabels, m[2]) {
		problems = append(problems, fmt.Sprintf("series %s has no label %q", seriesName(vs), m[2]))
	}
	return problems
}
