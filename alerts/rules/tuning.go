package rules

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/blocks/promlabel"
	"github.com/workflow-exporter/workflow-exporter/blocks/yamlfile"
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
		WorkflowOutboxEventsRetrying:          "outbox.retrying_for",
		WorkflowOutboxRelayBehind:             "relay.lag_for",
		WorkflowOutboxRelayWALAtRisk:          "relay.wal_risk_for",
		WorkflowInboxBacklogStalled:           "inbox.stalled_for",
		WorkflowInboxBacklogGrowing:           "inbox.growing_for",
		WorkflowInboxBacklogOld:               "inbox.for",
		WorkflowInboxMessagesRetrying:         "inbox.retrying_for",
		WorkflowInboxMessagesFailed:           "inbox.failed_for",
		WorkflowDeliveryEventsLost:            "delivery.lost_for",
		WorkflowDeliveryDuplicateReceipts:     "delivery.duplicates_for",
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

// firstMetricRE finds the series names of an expression.
var firstMetricRE = regexp.MustCompile(`\b([a-z_][a-z0-9_]*)\{`)

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
func checkLabels(key string, ls map[string]string, a Alert, add func(key, format string, args ...any)) {
	for _, k := range slices.Sorted(maps.Keys(ls)) {
		lkey := key + ".labels." + k
		switch {
		case !promlabel.ValidName(k):
			add(lkey, "%v", promlabel.CheckName(k))
		case k == "severity":
			add(lkey, "set the severity with %s.severity", key)
		case k == "alertname" || k == "job" || k == "instance" || slices.Contains(a.Lane, k):
			add(lkey, "%q is a label the alert takes from its series; choose another name (team, service, ...)", k)
		}
	}
}

// checkSeverity checks a severity the config gives ("": the alert's own).
func checkSeverity(key, sev string, add func(key, format string, args ...any)) {
	if sev == "" {
		return
	}
	if err := rulefile.CheckSeverity(sev); err != nil {
		add(key+".severity", "%v", err)
	}
}

// validateAlerts checks the alerts: section: known names, severities,
// labels, and selectors that match on the alert's labels and change what
// the alert does for their series.
func (c Config) validateAlerts(errs *yamlfile.Errors) {
	add := errs.Add
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
			if cl := yamlfile.Closest(name, names); cl != "" {
				msg += "; did you mean " + cl + "?"
			}
			add(key, "%s", msg)
			continue
		}
		if a.Severity == rulefile.None && (ac.Severity != "" || len(ac.Selectors) > 0) {
			add(key, "the watchdog can be turned off or labelled, nothing else")
			continue
		}
		if why, ok := noSelectors()[name]; ok && len(ac.Selectors) > 0 {
			add(key+".selectors", "%s; tune its keys for all series, or its severity and labels", why)
			ac.Selectors = nil
		}
		checkSeverity(key, ac.Severity, add)
		checkLabels(key, ac.Labels, a, add)
		anchor := anchorOf(base[name].Expr)
		m, _ := catalog.Lookup(anchor)
		for i, s := range ac.Selectors {
			skey := fmt.Sprintf("%s.selectors[%d]", key, i)
			switch ms, err := s.Match.Matchers(); {
			case err != nil:
				add(skey+".match", "%v", err)
			case len(ms) == 0:
				add(skey+".match", `must list the label matchers of the series it tunes, e.g. topic="billing.charge"`)
			default:
				for _, l := range ms {
					if !slices.Contains(a.Lane, l.Name) || !slices.Contains(m.Labels, l.Name) {
						add(skey+".match", "%s is not a label of %s's series (it has %s)", l.Name, name, strings.Join(m.Labels, ", "))
					}
				}
			}
			checkSeverity(skey, s.Severity, add)
			checkLabels(skey, s.Labels, a, add)
			if s.set == nil {
				if s.Severity == "" && len(s.Labels) == 0 {
					add(skey, "sets neither set, severity nor labels")
				}
				continue
			}
			t, err := c.selectorThresholds(s)
			if err != nil {
				add(skey+".set", "%v", err)
				continue
			}
			before := errs.Len()
			t.validate(skey+".set.", add)
			if errs.Len() > before {
				continue
			}
			cs := c
			cs.Thresholds = t
			r := builder{c: cs}.all()[name]
			if r.Expr == base[name].Expr && r.For == base[name].For && r.KeepFiringFor == base[name].KeepFiringFor {
				add(skey+".set", "changes nothing %s uses (its keys: %s and the thresholds its description names)", name, ForKeys()[name])
			}
		}
	}
}

// validateInhibitionOrder checks that no consequence can fire before its
// root cause (Inhibitions): the longest for: of the root's rules is not
// longer than the shortest of each consequence's.
func (c Config) validateInhibitionOrder(add func(key, format string, args ...any)) {
	fors := map[string][]time.Duration{}
	for _, g := range Build(c).Groups {
		for _, r := range g.Rules {
			var d time.Duration
			if r.For != "" {
				md, err := model.ParseDuration(r.For)
				if err != nil {
					add(ForKeys()[r.Alert], "%v", err)
					continue
				}
				d = time.Duration(md)
			}
			fors[r.Alert] = append(fors[r.Alert], d)
		}
	}
	// Per consequence, the root with the longest for: it must wait for
	// (the first of them on a tie): making it that long satisfies all.
	type root struct {
		source  string
		longest time.Duration
	}
	var order []string
	worst := map[string]root{}
	for _, in := range Inhibitions() {
		src, ok := fors[in.Source]
		if !ok {
			continue // turned off
		}
		longest := slices.Max(src)
		for _, t := range in.Targets {
			tf, ok := fors[t]
			if !ok || slices.Min(tf) >= longest {
				continue
			}
			if w, seen := worst[t]; !seen {
				order = append(order, t)
			} else if w.longest >= longest {
				continue
			}
			worst[t] = root{in.Source, longest}
		}
	}
	for _, t := range order {
		w := worst[t]
		add(ForKeys()[t], "%s is shorter than %s of %s, which inhibits %s in Alertmanager: %s would notify before its root cause fires; make it at least %s",
			model.Duration(slices.Min(fors[t])), ForKeys()[w.source], w.source, t, t, model.Duration(w.longest))
	}
}

// SelectorThreshold is the thresholds of the series one selector of an
// alert matches (the alerts: section's selectors), for the dashboards.
type SelectorThreshold struct {
	Match      promlabel.Selector
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
