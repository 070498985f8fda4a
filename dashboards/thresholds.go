package dashboards

import (
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
	"github.com/workflow-exporter/workflow-exporter/blocks/promlabel"
)

// The age panels show the alerts config's thresholds (`render dashboards
// --alerts-config`): orange from where an alert's condition starts to hold,
// red from where it notifies. A threshold tuned per selector (the alerts
// config's alerts: <Alert>: selectors:) is drawn as an override of the
// series the selector matches on the panels that show those series one by
// one: their legend names the selector's labels, so the override matches
// the series by display name. A selector on a label the legend does not
// show cannot be mapped, and those series keep the base threshold.

// The legends of the age panels that show series one by one.
const (
	outboxAgeLegend  = "{{database}} {{aggregate_type}} {{event_type}}"
	inboxAgeLegend   = "{{source_system}} {{message_type}}"
	waitingAgeLegend = "{{engine}} {{topic}}"
	relayLegend      = "{{database}} {{slot}}"
)

// secs is a duration in seconds, a panel threshold in unit "s".
func secs(d model.Duration) float64 { return time.Duration(d).Seconds() }

// thresholdOverride gives the series whose display name matches regex their
// own threshold steps.
type thresholdOverride struct {
	regex string
	steps []step
}

// ageSteps returns the steps of an age panel for the thresholds t.
type ageSteps func(t rules.Thresholds) []step

func (d *board) outboxAgeSteps(t rules.Thresholds) []step {
	return []step{{secs(t.Outbox.StalledWindow), "orange"}, {secs(t.Outbox.OldestAge), "red"}}
}

// relayLagSteps: red where WorkflowOutboxRelayBehind notifies, orange from
// its threshold before that when it has a for: (by default it has none).
func (d *board) relayLagSteps(t rules.Thresholds) []step {
	r := t.Relay
	if r.LagFor <= 0 {
		return []step{{secs(r.Lag), "red"}}
	}
	return []step{{secs(r.Lag), "orange"}, {secs(r.Lag + r.LagFor), "red"}}
}

func (d *board) inboxAgeSteps(t rules.Thresholds) []step {
	return []step{{secs(t.Inbox.StalledWindow), "orange"}, {secs(t.Inbox.OldestAge), "red"}}
}

func (d *board) waitingAgeSteps(t rules.Thresholds) []step {
	c := t.Camunda
	return []step{{secs(c.BacklogStalledAge), "orange"}, {secs(c.BacklogStalledAge + c.BacklogStalledFor), "red"}}
}

func (d *board) jobAgeSteps(t rules.Thresholds) []step {
	c := t.Camunda
	return []step{{secs(c.JobExecutorStalledAge), "orange"}, {secs(c.JobExecutorStalledAge + c.JobExecutorStalledFor), "red"}}
}

// steps returns the panel's steps under the config's thresholds.
func (d *board) steps(f ageSteps) []step { return f(d.alerts.Thresholds) }

// overrides returns an override per selector of the alerts that sets its
// own thresholds and that the legend can name, in the order the rules
// apply them (the first matching selector wins, so an earlier override is
// listed later: Grafana applies the last matching override).
func (d *board) overrides(legend string, f ageSteps, alerts ...string) []thresholdOverride {
	var out []thresholdOverride
	for _, a := range alerts {
		for _, s := range d.alerts.SelectorThresholds(a) {
			re, ok := legendRegex(legend, s.Match)
			if !ok {
				continue
			}
			out = append([]thresholdOverride{{regex: re, steps: f(s.Thresholds)}}, out...)
		}
	}
	return out
}

// legendRegex returns a regular expression for the display names a legend
// such as "{{database}} {{event_type}}" gives the series a selector
// matches, or false when a matcher is on a label the legend does not show,
// or is a negative one.
func legendRegex(legend string, match promlabel.Selector) (string, bool) {
	ms, err := match.Matchers()
	if err != nil {
		return "", false
	}
	vals := map[string]string{}
	for _, m := range ms {
		if !strings.Contains(legend, "{{"+m.Name+"}}") {
			return "", false
		}
		switch m.Op {
		case "=":
			vals[m.Name] = regexp.QuoteMeta(m.Value)
		case "=~":
			vals[m.Name] = "(?:" + m.Value + ")"
		default:
			return "", false
		}
	}
	if len(vals) == 0 {
		return "", false
	}
	var b strings.Builder
	b.WriteString("^")
	rest := legend
	for {
		i := strings.Index(rest, "{{")
		j := strings.Index(rest, "}}")
		if i < 0 || j < i {
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:i]))
		if v, ok := vals[rest[i+2:j]]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(".*")
		}
		rest = rest[j+2:]
	}
	b.WriteString("$")
	return b.String(), true
}
