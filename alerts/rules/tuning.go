package rules

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/blocks/yamlkeys"
	"github.com/workflow-exporter/workflow-exporter/catalog"
)

// ForKeys names, per alert, the key of its for: duration (the alerts
// without one fire at the first evaluation that returns them).
func ForKeys() map[string]string {
	return map[string]string{
		WorkflowOutboxBacklogStalled:          "outbox.stalled_for",
		WorkflowOutboxOldestEventTooOld:       "outbox.oldest_age_for",
		WorkflowOutboxEventsFailed:            "outbox.failed_for",
		WorkflowOutboxBacklogGrowing:          "outbox.growing_for",
		WorkflowInboxBacklogStalled:           "inbox.stalled_for",
		WorkflowInboxBacklogGrowing:           "inbox.growing_for",
		WorkflowInboxBacklogOld:               "inbox.for",
		WorkflowUnknownOutcomeRecords:         "idempotency.unknown_outcome_for",
		WorkflowIdempotencyStaleInProgress:    "idempotency.stale_for",
		WorkflowCompletedSideEffectTaskOpen:   "idempotency.completed_task_open_for",
		WorkflowIdempotencyInDoubt:            "idempotency.in_doubt_for",
		WorkflowProcessedJobTaskOpen:          "idempotency.processed_job_task_open_for",
		WorkflowDuplicatePreventionSpike:      "idempotency.duplicates_for",
		CamundaExternalTaskRetriesExhausted:   "camunda.retries_exhausted_for",
		CamundaExternalTaskLockExpirations:    "camunda.lock_expirations_for",
		CamundaExternalTaskDuplicateExecution: "camunda.duplicate_execution_for",
		CamundaExternalTaskRetryStorm:         "camunda.retry_storm_for",
		CamundaExternalTaskBacklogStalled:     "camunda.backlog_stalled_for",
		CamundaIncidentsOpen:                  "camunda.incidents_for",
		CamundaExternalTaskLockHeldTooLong:    "camunda.lock_held_for",
		CamundaExternalTaskWorkerSilent:       "camunda.worker_silent_for",
		CamundaJobExecutorStalled:             "camunda.job_executor_stalled_for",
		CamundaHistoryCleanupFailing:          "camunda.history_cleanup_failing_for",
		CamundaHistoryCleanupBehind:           "camunda.history_cleanup_behind_for",
		WorkflowExporterSourceDown:            "exporter.source_down_for",
		WorkflowExporterCollectorDown:         "exporter.collector_down_for",
		WorkflowExporterDown:                  "exporter.down_for",
		WorkflowExporterTasksUnwatched:        "exporter.unwatched_tasks_for",
		WorkflowDeduplicationWindowExceeded:   "deduplication.for",
	}
}

// noSelectors names the alerts that take no selectors, and why: a
// selector's matchers go on every series of the expression, and these
// join series that do not share the lane's labels (an engine's topic and
// a table's scope), so any matcher empties one side of the join.
func noSelectors() map[string]string {
	return map[string]string{
		WorkflowDeduplicationWindowExceeded: "its expression joins the engine's topics, the outbox and the deduplicating tables, whose series share no label a selector could match on all of them",
	}
}

var (
	labelNameRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
	// oneMatcherRE is one label matcher with a quoted value.
	oneMatcherRE  = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"(?:[^"\\]|\\.)*"\s*$`)
	firstMetricRE = regexp.MustCompile(`\b([a-z_][a-z0-9_]*)\{`)
)

// matcherLabels returns the label names of a list of matchers without
// braces (`topic="a", engine=~"b|c"`), or an error naming what is wrong.
func matcherLabels(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inQuote, escaped := false, false
	flush := func() error {
		m := oneMatcherRE.FindStringSubmatch(cur.String())
		if m == nil {
			return fmt.Errorf("%q is not a label matcher such as topic=\"billing.charge\"", strings.TrimSpace(cur.String()))
		}
		out = append(out, m[1])
		cur.Reset()
		return nil
	}
	for _, r := range s {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && inQuote:
			escaped = true
		case r == '"':
			inQuote = !inQuote
		case r == ',' && !inQuote:
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		cur.WriteRune(r)
	}
	if strings.TrimSpace(cur.String()) != "" || len(out) == 0 {
		if err := flush(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// anchorOf is the first catalog series a rule's expression selects: the
// series a selector is checked against (its labels) and the default rule
// excludes the selector's series by.
func anchorOf(expr string) string {
	for _, m := range firstMetricRE.FindAllStringSubmatch(expr, -1) {
		if catalog.KnownSeries(m[1]) || catalog.StandardSeries(m[1]) {
			return m[1]
		}
	}
	return ""
}

// selectorThresholds returns the thresholds of a selector: the config's,
// with the keys its set: names applied.
func (c Config) selectorThresholds(s SelectorConfig) (Thresholds, error) {
	t := c.Thresholds
	if s.set != nil {
		if err := s.set.Decode(&t); err != nil {
			return Thresholds{}, err
		}
	}
	return t, nil
}

// checkLabels checks extra labels: label names, and none the alert sets
// itself or takes from its series.
func checkLabels(key string, ls map[string]string, a Alert) error {
	for k := range ls {
		switch {
		case !labelNameRE.MatchString(k):
			return fmt.Errorf("alerts config: %s.labels: %q is not a label name", key, k)
		case k == "severity":
			return fmt.Errorf("alerts config: %s.labels: set the severity with %s.severity", key, key)
		case k == "alertname" || k == "job" || k == "instance" || slices.Contains(a.Lane, k):
			return fmt.Errorf("alerts config: %s.labels: %q is a label the alert takes from its series; choose another name (team, service, ...)", key, k)
		}
	}
	return nil
}

func checkSeverity(key, sev string) error {
	if sev != "" && sev != Critical && sev != Warning && sev != Info {
		return fmt.Errorf("alerts config: %s.severity: %q is not one of critical, warning, info", key, sev)
	}
	return nil
}

// validateAlerts checks the alerts: section: known names, severities,
// labels, and selectors that match on the alert's labels and change what
// the alert does for their series.
func (c Config) validateAlerts() error {
	var names []string
	for _, a := range Alerts() {
		names = append(names, a.Name)
	}
	base := builder{c: c}.all()
	for _, name := range slices.Sorted(maps.Keys(c.Alerts)) {
		ac := c.Alerts[name]
		key := "alerts." + name
		a, ok := Lookup(name)
		if !ok {
			msg := "unknown alert"
			if cl := yamlkeys.Closest(name, names); cl != "" {
				msg += "; did you mean " + cl + "?"
			}
			return fmt.Errorf("alerts config: %s: %s", key, msg)
		}
		if a.Severity == None && (ac.Severity != "" || len(ac.Selectors) > 0) {
			return fmt.Errorf("alerts config: %s: the watchdog can be turned off or labelled, nothing else", key)
		}
		if why, ok := noSelectors()[name]; ok && len(ac.Selectors) > 0 {
			return fmt.Errorf("alerts config: %s.selectors: %s; tune its keys for all series, or its severity and labels", key, why)
		}
		if err := checkSeverity(key, ac.Severity); err != nil {
			return err
		}
		if err := checkLabels(key, ac.Labels, a); err != nil {
			return err
		}
		anchor := anchorOf(base[name].Expr)
		for i, s := range ac.Selectors {
			skey := fmt.Sprintf("%s.selectors[%d]", key, i)
			ls, err := matcherLabels(s.Match)
			if err != nil {
				return fmt.Errorf("alerts config: %s.match: %w", skey, err)
			}
			m, _ := catalog.Lookup(anchor)
			for _, l := range ls {
				if !slices.Contains(a.Lane, l) || !slices.Contains(m.Labels, l) {
					return fmt.Errorf("alerts config: %s.match: %s is not a label of %s's series (it has %s)", skey, l, name, strings.Join(m.Labels, ", "))
				}
			}
			if err := checkSeverity(skey, s.Severity); err != nil {
				return err
			}
			if err := checkLabels(skey, s.Labels, a); err != nil {
				return err
			}
			t, err := c.selectorThresholds(s)
			if err != nil {
				return fmt.Errorf("alerts config: %s.set: %w", skey, err)
			}
			if err := t.validate(); err != nil {
				return fmt.Errorf("alerts config: %s.set.%w", skey, err)
			}
			if s.set != nil {
				cs := c
				cs.Thresholds = t
				r := builder{c: cs}.all()[name]
				if r.Expr == base[name].Expr && r.For == base[name].For && r.KeepFiringFor == base[name].KeepFiringFor {
					return fmt.Errorf("alerts config: %s.set: changes nothing %s uses (its keys: %s and the thresholds its description names)", skey, name, ForKeys()[name])
				}
			} else if s.Severity == "" && len(s.Labels) == 0 {
				return fmt.Errorf("alerts config: %s: sets neither set, severity nor labels", skey)
			}
		}
	}
	return nil
}

// validateInhibitionOrder checks that no consequence can fire before its
// root cause (Inhibitions): the longest for: of the root's rules is not
// longer than the shortest of each consequence's.
func (c Config) validateInhibitionOrder() error {
	fors := map[string][]time.Duration{}
	for _, g := range Build(c).Groups {
		for _, r := range g.Rules {
			var d time.Duration
			if r.For != "" {
				md, err := model.ParseDuration(r.For)
				if err != nil {
					return err
				}
				d = time.Duration(md)
			}
			fors[r.Alert] = append(fors[r.Alert], d)
		}
	}
	for _, in := range Inhibitions() {
		src, ok := fors[in.Source]
		if !ok {
			continue // turned off
		}
		longest := slices.Max(src)
		for _, t := range in.Targets {
			tf, ok := fors[t]
			if !ok {
				continue
			}
			if shortest := slices.Min(tf); shortest < longest {
				return fmt.Errorf("alerts config: %s: %s is shorter than %s of %s, which inhibits %s in Alertmanager: %s would notify before its root cause fires; make it at least %s",
					ForKeys()[t], model.Duration(shortest), ForKeys()[in.Source], in.Source, t, t, model.Duration(longest))
			}
		}
	}
	return nil
}

// SelectorThreshold is the thresholds of the series one selector of an
// alert matches (the alerts: section's selectors), for the dashboards.
type SelectorThreshold struct {
	Match      string // label matchers without braces
	Thresholds Thresholds
}

// SelectorThresholds returns, in order, the selectors of the alert that set
// thresholds, each with the config's thresholds and its set: applied. The
// first selector that matches a series wins, as in the rules. The config
// must be valid (Validate).
func (c Config) SelectorThresholds(alert string) []SelectorThreshold {
	var out []SelectorThreshold
	for _, s := range c.Alerts[alert].Selectors {
		if s.set == nil {
			continue
		}
		t, err := c.selectorThresholds(s)
		if err != nil {
			panic(fmt.Sprintf("alerts/rules: %s: a selector's set: %v (Validate first)", alert, err))
		}
		out = append(out, SelectorThreshold{Match: s.Match, Thresholds: t})
	}
	return out
}
