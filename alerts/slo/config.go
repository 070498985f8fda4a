// Package slo turns service level objectives stated on the exporter's
// histograms and counters ("99% of outbox events published within 1
// minute", "99.5% of payment tasks completed rather than failed") into
// Prometheus recording rules and multi-window, multi-burn-rate alerts, the
// scheme of the SRE workbook (chapter "Alerting on SLOs"): a page when the
// error budget of the period burns 14.4 times too fast over 1h (confirmed
// over 5m) or 6 times over 6h (confirmed over 30m), a ticket at 3 times
// over 1d (2h) or once over 3d (6h). It also writes the same objectives as
// a Sloth specification (prometheus/v1) for teams that generate their SLO
// rules with Sloth. `workflow-exporter render slos` runs it; docs/slos.md
// has a worked example.
//
// An objective names its metric from the catalog, so a typo is an error
// with the key and line, not a rule that silently matches nothing; a
// latency threshold must be a bucket boundary of the histogram (checked
// against the exporter's configuration when one is given, else against
// the defaults), since a threshold between two boundaries cannot be
// answered from the buckets.
package slo

import (
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/blocks/promlabel"
	"github.com/workflow-exporter/workflow-exporter/blocks/yamlfile"
	"github.com/workflow-exporter/workflow-exporter/catalog"
	"github.com/workflow-exporter/workflow-exporter/config"
)

// Config is an SLO file: the objectives and the settings all of them share.
type Config struct {
	// Selector is added to every selector of every rule, like the alert
	// rules' selector (e.g. job="workflow-exporter"); empty selects all
	// jobs.
	Selector promlabel.Selector `yaml:"selector"`
	// Period is the SLO period the error budget is counted over (30d).
	Period model.Duration `yaml:"period"`
	// PageWindows and TicketWindows are the burn-rate alert windows; left
	// out, the SRE workbook's (DefaultPageWindows, DefaultTicketWindows).
	PageWindows   []Window `yaml:"page_windows"`
	TicketWindows []Window `yaml:"ticket_windows"`
	// Labels go on every generated rule (e.g. team, service).
	Labels map[string]string `yaml:"labels"`
	// RunbookURL is the runbook of the burn-rate alerts.
	RunbookURL string `yaml:"runbook_url"`
	// SLOs are the objectives.
	SLOs []Objective `yaml:"slos"`
}

// Window is one pair of windows of a multi-window burn-rate alert: it fires
// when the error ratio over both the long and the short window exceeds
// Factor times the error budget (the short window makes the alert stop
// soon after the burning stops).
type Window struct {
	Long   model.Duration `yaml:"long"`
	Short  model.Duration `yaml:"short"`
	Factor float64        `yaml:"factor"`
}

// Objective is one SLO.
type Objective struct {
	// Name is the SLO's name: the value of the slo label of its rules.
	Name string `yaml:"name"`
	// Objective is the share of good events, in percent (99.5).
	Objective   float64 `yaml:"objective"`
	Description string  `yaml:"description"`
	// Alert is the name of its burn-rate alert (default: WorkflowSLO plus
	// the name in CamelCase plus BudgetBurn).
	Alert string `yaml:"alert"`
	// Labels go on this objective's rules, after Config.Labels.
	Labels    map[string]string `yaml:"labels"`
	Indicator Indicator         `yaml:"indicator"`
}

// Indicator is what counts as good and bad: exactly one of its fields.
type Indicator struct {
	// Latency: an event is good when the histogram observed it at or
	// below Threshold.
	Latency *Latency `yaml:"latency"`
	// Ratio: good and bad events are two counters.
	Ratio *Ratio `yaml:"ratio"`
}

// Latency is a latency indicator on a histogram of the catalog.
type Latency struct {
	Metric    string            `yaml:"metric"`
	Threshold model.Duration    `yaml:"threshold"`
	Matchers  map[string]string `yaml:"matchers"`
}

// Ratio is an indicator from two counters of the catalog: the events are
// good plus bad.
type Ratio struct {
	Good     string            `yaml:"good"`
	Bad      string            `yaml:"bad"`
	Matchers map[string]string `yaml:"matchers"`
}

// DefaultPeriod is the SLO period without a period: key.
const DefaultPeriod = model.Duration(30 * 24 * time.Hour)

// DefaultPageWindows are the SRE workbook's paging windows: 2% of a 30-day
// budget in 1h, 5% in 6h.
func DefaultPageWindows() []Window {
	return []Window{{model.Duration(time.Hour), model.Duration(5 * time.Minute), 14.4}, {model.Duration(6 * time.Hour), model.Duration(30 * time.Minute), 6}}
}

// DefaultTicketWindows are the SRE workbook's ticket windows: 10% of a
// 30-day budget in 1d, 10% in 3d.
func DefaultTicketWindows() []Window {
	return []Window{{model.Duration(24 * time.Hour), model.Duration(2 * time.Hour), 3}, {model.Duration(72 * time.Hour), model.Duration(6 * time.Hour), 1}}
}

// Buckets are the histograms' bucket boundaries the thresholds are checked
// against, by metric name.
type Buckets map[string][]float64

// Load reads and validates an SLO file.
func Load(path string, b Buckets) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	cfg, err := Parse(data, b)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Parse reads and validates an SLO file's contents. Every error names the
// key and the line (blocks/yamlfile), all of them at once.
func Parse(data []byte, b Buckets) (Config, error) {
	var cfg Config
	doc, err := yamlfile.Decode(data, &cfg, yamlfile.Options{EmptySection: map[reflect.Type]string{
		reflect.TypeOf(Latency{}): "give the histogram and the threshold, e.g. {metric: " + catalog.OutboxPublishDelay + ", threshold: 1m}, or remove the key",
		reflect.TypeOf(Ratio{}):   "give the counters of good and bad events, e.g. {good: " + catalog.CamundaExternalTaskCompletions + ", bad: " + catalog.CamundaExternalTaskFailures + "}, or remove the key",
	}})
	if err != nil {
		return Config{}, fmt.Errorf("slos config: %w", err)
	}
	cfg.applyDefaults()
	if err := cfg.validate(b, doc); err != nil {
		return Config{}, fmt.Errorf("slos config: %w", err)
	}
	return cfg, nil
}

func (c *Config) applyDefaults() {
	if c.Period == 0 {
		c.Period = DefaultPeriod
	}
	if c.PageWindows == nil {
		c.PageWindows = DefaultPageWindows()
	}
	if c.TicketWindows == nil {
		c.TicketWindows = DefaultTicketWindows()
	}
	if c.Selector == "" {
		c.Selector = `job="workflow-exporter"`
	}
	if c.RunbookURL == "" {
		c.RunbookURL = "https://github.com/workflow-exporter/workflow-exporter/blob/main/docs/runbooks/" + BudgetBurnRunbook + ".md"
	}
	for i := range c.SLOs {
		if c.SLOs[i].Alert == "" {
			c.SLOs[i].Alert = "WorkflowSLO" + camel(c.SLOs[i].Name) + "BudgetBurn"
		}
	}
}

var (
	nameRE  = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]*[a-z0-9])?$`)
	alertRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// validate checks everything a rule needs and returns every problem, each
// naming its key and, where the file (doc) has it, its line.
func (c *Config) validate(b Buckets, doc *yamlfile.Document) error {
	errs := doc.Errors()
	add := errs.Add
	if _, err := c.Selector.Matchers(); err != nil {
		add("selector", "%v", err)
	}
	if time.Duration(c.Period) < 24*time.Hour {
		add("period", "must be at least 1d, got %s", c.Period)
	}
	for _, ws := range []struct {
		key string
		ws  []Window
	}{{"page_windows", c.PageWindows}, {"ticket_windows", c.TicketWindows}} {
		if len(ws.ws) == 0 {
			add(ws.key, "needs at least one window")
		}
		for i, w := range ws.ws {
			key := fmt.Sprintf("%s[%d]", ws.key, i)
			switch {
			case w.Long <= 0 || w.Short <= 0:
				add(key, "long and short must both be set, e.g. {long: 1h, short: 5m, factor: 14.4}")
			case w.Short >= w.Long:
				add(key, "short (%s) must be shorter than long (%s)", w.Short, w.Long)
			case w.Long > c.Period:
				add(key, "long (%s) must not exceed the period (%s)", w.Long, c.Period)
			}
			if w.Factor <= 0 {
				add(key+".factor", "must be above 0, got %g", w.Factor)
			}
		}
	}
	checkLabels(c.Labels, "labels", add)
	if len(c.SLOs) == 0 {
		add("slos", "lists no objective")
	}
	seen := map[string]bool{}
	for i, o := range c.SLOs {
		key := fmt.Sprintf("slos[%d]", i)
		if !nameRE.MatchString(o.Name) {
			add(key+".name", "must be lower case letters, digits, - and _, got %q", o.Name)
		}
		if seen[o.Name] {
			add(key+".name", "%q is used twice", o.Name)
		}
		seen[o.Name] = true
		if !alertRE.MatchString(o.Alert) {
			add(key+".alert", "is not a valid alert name: %q", o.Alert)
		}
		if !(o.Objective > 0 && o.Objective < 100) || math.IsNaN(o.Objective) {
			add(key+".objective", "must be a percentage above 0 and below 100, e.g. 99.5, got %g", o.Objective)
		}
		checkLabels(o.Labels, key+".labels", add)
		o.Indicator.validate(key+".indicator", b, add)
	}
	return errs.Err()
}

func checkLabels(labels map[string]string, key string, add func(string, string, ...any)) {
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if !promlabel.ValidName(k) || k == "slo" || k == "severity" || k == "__name__" {
			add(key, "label %q is not a label name a rule may set (slo and severity are the generator's)", k)
		}
	}
}

func (ind Indicator) validate(key string, b Buckets, add func(string, string, ...any)) {
	switch {
	case ind.Latency == nil && ind.Ratio == nil:
		add(key, "needs latency: {metric, threshold} or ratio: {good, bad}")
	case ind.Latency != nil && ind.Ratio != nil:
		add(key, "has both latency and ratio; an objective has one indicator")
	case ind.Latency != nil:
		l := ind.Latency
		m, ok := metricOf(l.Metric, catalog.Histogram, key+".latency.metric", add)
		if ok {
			checkMatchers(l.Matchers, m, key+".latency.matchers", add)
			th := time.Duration(l.Threshold).Seconds()
			switch bs := b[m.Name]; {
			case th <= 0:
				add(key+".latency.threshold", "must be above 0, e.g. 1m")
			case !slices.Contains(bs, th):
				add(key+".latency.threshold", "%s is not a bucket boundary of %s (boundaries in seconds: %v): the buckets cannot say how many events were faster; pick a boundary or add it to the histogram's buckets in the exporter's config",
					l.Threshold, m.Name, bs)
			}
		}
	default:
		r := ind.Ratio
		g, okG := metricOf(r.Good, catalog.Counter, key+".ratio.good", add)
		bad, okB := metricOf(r.Bad, catalog.Counter, key+".ratio.bad", add)
		if okG && okB {
			if r.Good == r.Bad {
				add(key+".ratio", "good and bad are the same counter %s", r.Good)
			}
			checkMatchers(r.Matchers, g, key+".ratio.matchers", add)
			checkMatchers(r.Matchers, bad, key+".ratio.matchers", add)
		}
	}
}

// metricOf looks name up in the catalog and requires type t.
func metricOf(name string, t catalog.Type, key string, add func(string, string, ...any)) (catalog.Metric, bool) {
	m, ok := catalog.Lookup(name)
	if !ok {
		var of []string
		for _, c := range catalog.All() {
			if c.Type == t {
				of = append(of, c.Name)
			}
		}
		add(key, "unknown metric %q; the %ss of the catalog are %s", name, t, strings.Join(of, ", "))
		return catalog.Metric{}, false
	}
	if m.Type != t {
		add(key, "%s is a %s, not a %s", name, m.Type, t)
		return catalog.Metric{}, false
	}
	return m, true
}

// checkMatchers requires every matcher's label to be one of the metric's.
func checkMatchers(matchers map[string]string, m catalog.Metric, key string, add func(string, string, ...any)) {
	for _, k := range slices.Sorted(maps.Keys(matchers)) {
		if !slices.Contains(m.Labels, k) {
			add(key, "%s has no label %q (its labels: %s)", m.Name, k, strings.Join(m.Labels, ", "))
		}
	}
}

// camel turns "payment-task_success" into "PaymentTaskSuccess".
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// sortedLabels returns the labels as sorted key, value pairs.
func sortedLabels(ms ...map[string]string) [][2]string {
	all := map[string]string{}
	for _, m := range ms {
		maps.Copy(all, m)
	}
	out := make([][2]string, 0, len(all))
	for _, k := range slices.Sorted(maps.Keys(all)) {
		out = append(out, [2]string{k, all[k]})
	}
	return out
}

// BucketsOf returns the bucket boundaries of the exporter's histograms
// under an exporter configuration: those every configured engine (or
// every database with an outbox) has, since one threshold serves all of
// them. A nil configuration gives the defaults.
func BucketsOf(cfg *config.Config) Buckets {
	durations := [][]float64{config.DefaultDurationBuckets()}
	delays := [][]float64{config.DefaultPublishDelayBuckets()}
	if cfg != nil {
		durations, delays = nil, nil
		for _, e := range cfg.Camunda {
			durations = append(durations, e.DurationBuckets)
		}
		for _, d := range cfg.Databases {
			if d.Tables != nil && d.Tables.Outbox != nil {
				delays = append(delays, d.Tables.Outbox.PublishDelayBuckets)
			}
		}
	}
	return Buckets{catalog.CamundaExternalTaskDuration: common(durations), catalog.OutboxPublishDelay: common(delays)}
}

// common returns the values every list holds, in the first list's order.
func common(lists [][]float64) []float64 {
	if len(lists) == 0 {
		return nil
	}
	var out []float64
	for _, v := range lists[0] {
		in := true
		for _, l := range lists[1:] {
			in = in && slices.Contains(l, v)
		}
		if in {
			out = append(out, v)
		}
	}
	return out
}

// BudgetBurnRunbook is the runbook every burn-rate alert links by default
// (docs/runbooks/WorkflowSLOBudgetBurn.md), whatever its alert's name.
const BudgetBurnRunbook = "WorkflowSLOBudgetBurn"
