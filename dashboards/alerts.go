package dashboards

import (
	"slices"

	"github.com/workflow-exporter/workflow-exporter/alerts/rulefile"
	"github.com/workflow-exporter/workflow-exporter/alerts/rules"
)

// The alerts the dashboards link to are the bundle's: rules.Alerts(), the
// list alerts/workflow-alerts.yml is generated from. Panels name them by the
// constants of package rules; their runbooks are docs/runbooks/<name>.md.

// alertNamePattern selects the bundle's alerts in Prometheus's ALERTS series
// (a test checks it matches every alert of rules.Alerts()).
const alertNamePattern = "Workflow.*|Camunda.*"

// alertsPagesFirst returns the bundle's alerts by severity, most urgent first,
// and within a severity in the order of the rule file.
func alertsPagesFirst() []rules.Alert {
	as := rules.Alerts()
	sev := rulefile.Severities()
	slices.SortStableFunc(as, func(a, b rules.Alert) int {
		return slices.Index(sev, a.Severity) - slices.Index(sev, b.Severity)
	})
	return as
}

// runbookURL returns the address of an alert's runbook, as the rules'
// runbook_url gives it: under the alerts config's runbook_base_url.
func (d *board) runbookURL(alert string) string {
	return rules.RunbookURL(d.alerts.RunbookBaseURL, alert)
}
